"""Figures of gap tables on real next-token distributions (``optaccept.llm``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._lib.statistics import std_err as sample_std_err
from ._style import (
    COLUMN_WIDTH,
    PAPER_RC,
    QUANTITY_LABELS,
    in_paper_style,
    integer_ticks,
    legend_under,
    new_axes,
    palette_color,
)

__all__ = ["plot_gaps", "plot_position_gaps", "legend_below", "describe_pair"]

# name -> (marker, line style, colour, marker size); optima solid, verifiers dashed, k = 2-only
# verifiers as large unconnected markers.
_STYLE = {
    "alpha_swor": ("s", "-", palette_color("C0"), 6),
    "alpha_iid": ("o", "-", palette_color("C1"), 5),
    "alpha_greedy": ("^", "-", palette_color("C2"), 5),
    "kseq": ("D", "--", palette_color("C3"), 4.5),
    "rrs": ("o", "--", palette_color("C4"), 4.5),
    "greedy_verifier": ("v", "--", palette_color("C5"), 4.5),
    "nss": ("x", ":", palette_color("C7"), 5),
    "rrs_wor": ("*", "none", palette_color("C6"), 11),
    "spechub": ("P", "none", palette_color("C9"), 9),
}
_DEFAULT = ("alpha_swor", "alpha_iid", "alpha_greedy", "kseq", "rrs", "greedy_verifier", "nss", "rrs_wor", "spechub")


def describe_pair(meta: dict[str, Any]) -> str:
    """'SmolLM2-135M-Instruct: target T = 1, top-p 0.95; draft T = 0.7, top-p 0.95' from a
    Distributions / PositionGapTable provenance record.

    Parameters
    ----------
    meta : dict
        The provenance record: ``target_model``, ``draft_model``, ``target_warp`` and
        ``draft_warp`` (missing entries read "?"; no draft model: the target's).

    Returns
    -------
    str
        One line naming the models and their temperature, top-k and top-p.
    """

    def warp(w: dict[str, Any] | None) -> str:
        if not w:
            return "?"
        s = f"T = {w.get('temperature', '?'):g}" if isinstance(w.get("temperature"), int | float) else "T = ?"
        if w.get("top_k"):
            s += f", top-{w['top_k']}"
        if w.get("top_p") not in (None, 1, 1.0):
            s += f", top-p {w['top_p']:g}"
        return s

    def name(s: Any) -> str:
        return str(s).split(" (")[0].rstrip("/").split("/")[-1].removesuffix(".gguf").split(".Q")[0]

    model = name(meta.get("target_model", "?"))
    draft = name(meta.get("draft_model", model))
    same = draft == model
    return (
        f"{model}: target {warp(meta.get('target_warp'))}; draft "
        + ("" if same else f"{draft} ")
        + warp(meta.get("draft_warp"))
    )


def _temperature(table: Any, draft_temperature: float | None) -> float:
    """The draft temperature shown: the one given, or the table's lowest."""
    return min(t for t, _, _ in table.values) if draft_temperature is None else draft_temperature


@in_paper_style
def plot_gaps(
    table: Any,
    draft_temperature: float | None = None,
    ax: Any = None,
    *,
    names: Sequence[str] = _DEFAULT,
    legend: bool = True,
    title: str | None = None,
) -> Any:
    """Mean α* per draft law and mean α per verifier against k, at one draft temperature of an
    ``optaccept.llm.PositionGapTable``, with error bars of ± 1 standard error over positions
    (the default title says so; the legend is below the axes).

    Optima are solid lines, verifiers dashed; verifiers defined only at k = 2 (RRS without
    replacement, SpecHub) are large unconnected markers; series are shifted slightly in k
    so that equal values stay visible.  Returns the Axes.

    Parameters
    ----------
    table : PositionGapTable
        Per-position values, keyed by (draft temperature, k, name).
    draft_temperature : float or None
        The draft temperature shown; None: the lowest in the table.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    names : sequence of str
        The series drawn, in order (those absent from the table are skipped).
    legend : bool
        Draw the legend below the Axes.
    title : str or None
        Title of the Axes; None: the temperature and what the error bars mean.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import llm, plots, real
    >>> data = real.Distributions.load(real.sample_path()).subset(range(4))
    >>> table = llm.position_gap_table(data, ks=(2, 4), progress=False)
    >>> ax = plots.plot_gaps(table)
    >>> ax.get_title()
    'draft temperature 0.7; error bars ± 1 s.e.'
    >>> len(ax.containers)  # one error-bar series per quantity in the table
    9
    """
    t = _temperature(table, draft_temperature)
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 4.4) if legend else (COLUMN_WIDTH, 2.6))
    present = [n for n in names if any(tt == t and n == nn for tt, _, nn in table.values)]
    width = 0.06
    for i, name in enumerate(present):
        ks = sorted(k for tt, k, n in table.values if tt == t and n == name)
        means = np.array([table.values[(t, k, name)].mean() for k in ks])
        sems = np.array([sample_std_err(table.values[(t, k, name)]) for k in ks])
        marker, ls, color, ms = _STYLE.get(name, ("o", "-", None, 5))
        x = np.array(ks, dtype=float) * (1 + width * (i - (len(present) - 1) / 2) / 4)
        ax.errorbar(
            x,
            means,
            yerr=sems,
            marker=marker,
            ls=ls,
            color=color,
            ms=ms,
            capsize=2,
            lw=1.2,
            mfc="white" if name == "alpha_swor" else None,
            label=QUANTITY_LABELS.get(name, name),
        )
    all_ks = sorted({k for tt, k, _ in table.values if tt == t})
    ax.set_xscale("log", base=2)
    integer_ticks(ax.xaxis, all_ks)
    ax.set_xlabel("number of drafts $k$")
    ax.set_ylabel("mean acceptance over positions")
    ax.grid(alpha=0.3)
    ax.set_title(f"draft temperature {t:g}; error bars ± 1 s.e." if title is None else title)
    if legend:
        legend_under(ax)
    return ax


@in_paper_style
def plot_position_gaps(
    table: Any, k: int, verifier: str = "rrs", draft_temperature: float | None = None, ax: Any = None
) -> Any:
    """One point per position: α* of i.i.d. drafts (x) against its gap α* − α to a verifier
    (y), at k drafts.  Positions with α* = 1 (to 1e-9) are drawn in grey.

    Parameters
    ----------
    table : PositionGapTable
        Per-position values, keyed by (draft temperature, k, name).
    k : int
        Number of drafts.
    verifier : str
        The verifier compared with α* (a name of the table's columns).
    draft_temperature : float or None
        The draft temperature shown; None: the lowest in the table.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import llm, plots, real
    >>> data = real.Distributions.load(real.sample_path()).subset(range(4))
    >>> table = llm.position_gap_table(data, ks=(2,), progress=False)
    >>> ax = plots.plot_position_gaps(table, k=2, verifier="rrs")
    >>> print(ax.get_xlabel())
    $\\alpha$*, i.i.d. drafts, $k = 2$
    >>> len(ax.collections)  # α* < 1 at all 4 positions: one series
    1
    """
    t = _temperature(table, draft_temperature)
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 2.6))
    a = table.values[(t, k, "alpha_iid")]
    r = table.values[(t, k, verifier)]
    one = a >= 1 - 1e-9
    # a series without points gets no legend entry
    if (~one).any():
        ax.scatter(
            a[~one],
            (a - r)[~one],
            s=9,
            alpha=0.7,
            color=palette_color("C3"),
            label=rf"$\alpha$* < 1 ({(~one).sum()} positions)",
        )
    if one.any():
        ax.scatter(a[one], (a - r)[one], s=9, alpha=0.5, color="0.6", label=rf"$\alpha$* = 1 ({one.sum()} positions)")
    ax.set_xlabel(rf"$\alpha$*, i.i.d. drafts, $k = {k}$")
    ax.set_ylabel(r"gap $\alpha$* − $\alpha$, " + QUANTITY_LABELS.get(verifier, verifier).split(", ", 1)[-1])
    ax.grid(alpha=0.3)
    legend_under(ax, ncols=2)
    return ax


def legend_below(fig: Any, ax: Any, ncols: int = 3) -> Any:
    """One legend for the whole figure, below the axes (no legend over data).  With a
    constrained layout (``paper_figure(..., layout="constrained")``) the layout makes room for it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure that holds the legend.
    ax : matplotlib.axes.Axes
        The Axes whose handles and labels the legend shows.
    ncols : int
        Number of legend columns.

    Returns
    -------
    matplotlib.legend.Legend
        The figure legend.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from optaccept import plots
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1], label="a"), ax.plot([0, 1], [1, 0], label="b")
    >>> legend = plots.legend_below(fig, ax, ncols=2)
    >>> [t.get_text() for t in legend.get_texts()]
    ['a', 'b']
    """

    handles, labels = ax.get_legend_handles_labels()
    kw = {"ncols": ncols, "frameon": False, "fontsize": PAPER_RC["legend.fontsize"]}
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        return fig.legend(handles, labels, loc="outside lower center", **kw)
    return fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, -0.02), **kw)
