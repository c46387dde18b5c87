"""Accepted tokens per step for chains and trees of drafts (``optaccept.tree``, docs/trees.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from ..real import TreeTable
from ..real._tables import SERIES_STYLES, VERIFIER_NAMES
from ..tree import BudgetCurve
from ..tree._budget import NAMES
from ._style import COLUMN_WIDTH, in_paper_style, integer_ticks, legend_under, new_axes, palette_color

__all__ = ["plot_accepted_tokens", "plot_budget_curve"]


def _zero_in_view(ax: Any, x0: float, legend: bool) -> Any:
    """Bring y = 0 into view at ``x0``, draw the grid and, with ``legend``, the legend below."""
    # 0 in view through the data limits, not set_ylim: set_ylim would switch autoscaling off,
    # and on shared y axes a later panel's larger values would be clipped to this one's range
    ax.update_datalim([(float(x0), 0.0)])
    ax.autoscale_view()
    ax.grid(alpha=0.3)
    if legend:
        legend_under(ax)
    return ax


def finish_budget_axes(ax: Any, budgets: Any, ticks: Any, title: str | None, legend: bool) -> Any:
    """The axes of a plot against the node budget N: a log₂ x axis labelled at ``ticks``,
    the axis labels, the title (when given), y = 0 in view, the grid and the legend below.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The Axes drawn on.
    budgets : array_like
        The budgets plotted (the first is where y = 0 is brought into view).
    ticks : sequence of int
        The budgets labelled on the x axis.
    title : str or None
        Title of the Axes (None or "": none).
    legend : bool
        Draw the legend below the Axes.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.
    """
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("node budget N")
    ax.set_ylabel("expected accepted tokens per step")
    if title:
        ax.set_title(title)
    return _zero_in_view(ax, budgets[0], legend)


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

    Parameters
    ----------
    table : TreeTable
        Rows of (verifier, drafts, length, k, value, std_err), as ``tree_table`` makes them.
    length : int or None
        The draft length shown; None: the largest in the table.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    title : str or None
        Title of the Axes; None: the draft length.
    legend : bool
        Draw the legend below the Axes.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    InputError
        If ``table`` is not a TreeTable or ``length`` is not one of its lengths.

    Examples
    --------
    >>> from optaccept import plots, real
    >>> table = real.tree_table(real.trees_path("iid"), ks=(1, 2), lengths=(1,), progress=False)
    >>> ax = plots.plot_accepted_tokens(table, length=1)
    >>> type(ax).__name__, len(ax.get_lines()) > 0
    ('Axes', True)
    """

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
        color = palette_color(color)
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
    return _zero_in_view(ax, min(ks), legend)


@in_paper_style
def plot_budget_curve(curve: Any, *, ax: Any = None, title: str | None = None, legend: bool = True):
    """Expected accepted tokens per step against the node budget N (log₂ axis), one line
    per tree-building strategy (error bars: ± 2 standard errors over positions).
    Returns the Axes.

    Parameters
    ----------
    curve : BudgetCurve
        Per-position values by strategy and budget, as ``tree.budget_curve`` makes them.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    title : str or None
        Title of the Axes (None: none).
    legend : bool
        Draw the legend below the Axes.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    InputError
        If ``curve`` is not a BudgetCurve.

    Examples
    --------
    >>> from optaccept import plots, tree
    >>> pairs = [tree.synthetic_pair(6, rng=s) for s in range(2)]
    >>> curve = tree.budget_curve(pairs, budgets=(2, 4), strategies=("dynamic",), progress=False)
    >>> ax = plots.plot_budget_curve(curve)
    >>> type(ax).__name__, ax.get_xscale()
    ('Axes', 'log')
    """

    if not isinstance(curve, BudgetCurve):
        raise InputError("curve: must be a BudgetCurve (see tree.budget_curve)")
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.4) if legend else (COLUMN_WIDTH, 2.6))
    styles = {"sequoia": ("s-", "C0"), "dynamic": ("o-", "C1"), "ceiling": ("^--", "k")}
    xs = np.asarray(curve.budgets, dtype=np.float64)
    for j, s in enumerate(curve.values):
        fmt, color = styles[s]
        color = palette_color(color)
        ax.errorbar(
            xs * (1 + 0.03 * (j - 1)),
            curve.mean(s),
            yerr=2 * curve.std_err(s),
            fmt=fmt,
            color=color,
            ms=4,
            capsize=2,
            lw=1.2,
            label=NAMES[s],
        )
    return finish_budget_axes(ax, xs, list(curve.budgets), title, legend)
