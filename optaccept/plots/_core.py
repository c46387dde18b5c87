"""α* against the number of drafts, per draft law."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..optimal import AlphaTable, alpha_table
from ._style import COLUMN_WIDTH, in_paper_style, integer_ticks, legend_under, new_axes, palette_color

__all__ = ["plot_alpha_vs_k", "LAW_STYLES"]

#: law -> (legend label, marker, line style, marker size, filled).  Sizes differ so that
#: coinciding curves stay visible (a smaller marker is drawn on top of a larger one).
LAW_STYLES = {
    "iid": ("i.i.d. drafts (with replacement)", "o", "-", 7.5, True),
    "swor": ("drafts without replacement", "s", "--", 5.5, False),
    "greedy": ("greedy drafts (Hu et al., §5)", "^", ":", 4.0, True),
}


@in_paper_style
def plot_alpha_vs_k(
    p: Any,
    q: Any = None,
    ks: Sequence[int] = tuple(range(1, 9)),
    drafts: Sequence[str] = ("iid", "swor", "greedy"),
    ax: Any = None,
    title: str | None = None,
    legend: bool = True,
) -> Any:
    """α* against the number of drafts k, one curve per draft law.

    At k = 1 every law gives Σ_y min(p(y), q(y)) = 1 − TV(p, q).  Drafting without
    replacement and greedy drafting need k ≤ |supp q|; when ``ks`` goes beyond, the
    curves stop there and the plot says so.  Returns the Axes.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions; or ``p`` an :class:`~optaccept.optimal.AlphaTable`
        already computed (then ``q``, ``ks`` and ``drafts`` are the table's).
    ks : sequence of int
        The numbers of drafts on the x axis (a log scale above 10).
    drafts : sequence of {"iid", "swor", "greedy"}
        One curve per law.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    title : str or None
        Title of the Axes.
    legend : bool
        Draw the legend below the Axes.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import plots
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> ax = plots.plot_alpha_vs_k(p, q, ks=(1, 2, 3), drafts=("iid", "swor"))
    >>> [line.get_label() for line in ax.get_lines()][:2]
    ['i.i.d. drafts (with replacement)', 'drafts without replacement']
    """
    table = p if isinstance(p, AlphaTable) else alpha_table(p, q, ks, tuple(drafts), verify_each=False)
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.1))
    ks, drafts, supp = list(table.ks), table.drafts, table.support
    stopped = [law for law in drafts if None in table.values[law].values()]  # not defined beyond |supp q|
    for z, law in enumerate(drafts):
        label, marker, ls, ms, filled = LAW_STYLES[law]
        xs, ys = table.curve(law)
        ax.plot(
            xs,
            ys,
            marker=marker,
            ls=ls,
            ms=ms,
            lw=1.3,
            label=label,
            zorder=2 + z,
            mfc=None if filled else "white",
            color=palette_color(f"C{z}"),
        )
    ax.set_xlabel("number of drafts $k$")
    ax.set_ylabel(r"optimal acceptance $\alpha$*")
    ax.set_ylim(top=1.005)
    ax.set_xscale("log", base=2) if max(ks) > 10 else None
    integer_ticks(ax.xaxis, ks if max(ks) > 10 else None)
    ax.grid(alpha=0.3)
    if stopped:
        words = " and ".join({"swor": "without replacement", "greedy": "greedy"}[law] for law in stopped)
        ax.text(
            0.98,
            0.04,
            f"{words}:\ndefined for $k \\leq |\\mathrm{{supp}}\\, q| = {supp}$",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            color="0.3",
        )
    if legend:
        legend_under(ax)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
