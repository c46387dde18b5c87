"""Accepted tokens per step for chains and trees of drafts (``optaccept.tree``, docs/trees.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from ._style import COLUMN_WIDTH, in_paper_style, integer_ticks, legend_under, new_axes

__all__ = ["plot_accepted_tokens"]


@in_paper_style
def plot_accepted_tokens(
    table: Any,
    length: int | None = None,
    *,
    ax: Any = None,
    title: str | None = None,
    legend: bool = True,
):
    """Expected accepted tokens per step against the number of chains k, one line per
    verifier (error bars: ± 2 standard errors), for one draft length.

    ``length=None`` takes the largest length in the table.  Returns the Axes.
    """
    from ..tree._real import SERIES_STYLES, VERIFIER_NAMES, TreeTable

    if not isinstance(table, TreeTable):
        raise InputError("table: must be a TreeTable (see tree_table)")
    lengths = sorted({r["length"] for r in table.rows})
    if length is None:
        length = lengths[-1]
    if length not in lengths:
        raise InputError(f"length: the table has lengths {lengths}, got {length!r}")
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.6) if legend else (COLUMN_WIDTH, 2.6))
    for v, d in table.series():
        pts = sorted(
            (r["k"], r["value"], r["std_err"])
            for r in table.rows
            if (r["verifier"], r["drafts"], r["length"]) == (v, d, length)
        )
        if not pts:
            continue
        xs, ys, es = zip(*pts, strict=True)
        style, color = SERIES_STYLES[(v, d)]
        offset = {"iid": -0.06, "swor": 0.06}[d] if v not in ("block", "batch") else 0.0
        ax.errorbar(
            np.array(xs) + offset,
            ys,
            yerr=2 * np.array(es),
            fmt=style,
            color=color,
            ms=4,
            capsize=2,
            lw=1.2,
            label=VERIFIER_NAMES[(v, d)],
        )
    ax.set_xlabel("number of draft chains k")
    ax.set_ylabel("expected accepted tokens per step")
    ax.set_title(title if title is not None else f"draft length L = {length}")
    ks = sorted({r["k"] for r in table.rows})
    integer_ticks(ax.xaxis, ks)
    # 0 in view through the data limits, not set_ylim: set_ylim would switch autoscaling off,
    # and on shared y axes a later panel's larger values would be clipped to this one's range
    ax.update_datalim([(float(min(ks)), 0.0)])
    ax.autoscale_view()
    ax.grid(alpha=0.3)
    if legend:
        legend_under(ax)
    return ax
