"""The one style of optaccept's figures: paper sizes, fonts, axes creation, labels, and
reproducible PNG + PDF output.

Figures are drawn at the size they are printed: one column of a two-column paper is
:data:`COLUMN_WIDTH` = 3.3 in wide, the full text width :data:`TEXT_WIDTH` = 7 in, and no font
is smaller than :data:`MIN_FONT_PT` = 7 pt at that size (:data:`PAPER_RC`).  PDFs embed
TrueType fonts (``pdf.fonttype`` 42), which venues' checkers accept; matplotlib's default
(Type 3) is refused by several."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cycler import cycler

from .._lib.validation import check_choice

__all__ = [
    "new_axes",
    "paper_figure",
    "paper_style",
    "in_paper_style",
    "legend_under",
    "save_figure",
    "integer_ticks",
    "VERIFIER_LABELS",
    "QUANTITY_LABELS",
    "COLUMN_WIDTH",
    "TEXT_WIDTH",
    "MIN_FONT_PT",
    "PAPER_RC",
    "PALETTE",
    "palette_color",
]

#: Width (inches) of one column of a two-column paper, and of the full text.
COLUMN_WIDTH = 3.3
TEXT_WIDTH = 7.0
#: The smallest font size (points) of a figure printed at its own size.
MIN_FONT_PT = 7

#: The colour cycle of every figure ("C0", "C1", … under :data:`PAPER_RC`): Okabe and Ito's
#: palette for colour-blind readers (Okabe & Ito, "Color Universal Design", 2002; Wong,
#: Nature Methods 8:441, 2011) — blue, vermillion, bluish green, reddish purple, orange, sky
#: blue, black, grey, yellow — then Tol's wine.  Series also differ by marker and line style.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#999999",
    "#F0E442",
    "#882255",
)


def palette_color(c: Any) -> Any:
    """``"C3"`` as the :data:`PALETTE` colour it names (resolved now, so the figure keeps its
    colours when drawn outside the paper style); any other colour as it is."""
    if isinstance(c, str) and len(c) >= 2 and c[0] == "C" and c[1:].isdigit():
        return PALETTE[int(c[1:]) % len(PALETTE)]
    return c


#: matplotlib settings of every figure: embedded TrueType fonts, sizes for print, the
#: colour-blind-safe :data:`PALETTE`.  Mathtext super- and subscripts print at 70 % of their
#: text's size, so figure text writes α* as ``$\alpha$*`` (a raised asterisk at full size).
PAPER_RC = {
    "axes.prop_cycle": cycler(color=PALETTE),
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "figure.titlesize": 8.5,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.1,
    "lines.markersize": 4,
    "errorbar.capsize": 2,
    "axes.linewidth": 0.6,
    "grid.linewidth": 0.5,
    "legend.frameon": False,
    "savefig.pad_inches": 0.02,
}

#: Paper names of the verifiers of ``optaccept.verifiers`` (legend and tick labels).
VERIFIER_LABELS = {
    "sd": "SD (single draft)",
    "nss": "NSS (ignore drafts)",
    "naive_tree": "SD on first draft",
    "rrs": "RRS (SpecInfer)",
    "rrs_wor": "RRS w/o repl. (Jeon et al.)",
    "kseq": "K-SEQ (SpecTr)",
    "spechub": "SpecHub",
    "khisti_is": "IS + trunc. LP (Khisti et al.)",
    "hu_greedy": "greedy (Hu et al.)",
    "optimal": "optimal verifier",
}

#: Legend labels of the columns of ``optaccept.llm.position_gap_table`` (paper notation).
QUANTITY_LABELS = {
    "alpha_iid": r"$\alpha$*, i.i.d. drafts",
    "alpha_swor": r"$\alpha$*, without replacement",
    "alpha_greedy": r"$\alpha$*, greedy drafts (Hu et al.)",
    "sd": r"$\alpha$, SD (one draft)",
    "nss": r"$\alpha$, NSS (ignore drafts)",
    "rrs": r"$\alpha$, RRS (SpecInfer)",
    "rrs_wor": r"$\alpha$, RRS w/o repl. (Jeon et al.)",
    "kseq": r"$\alpha$, K-SEQ (SpecTr)",
    "kseq_rule": r"$\alpha$, K-SEQ (SpecTr), rule",
    "spechub": r"$\alpha$, SpecHub",
    "greedy_verifier": r"$\alpha$, greedy verifier (Hu et al.)",
}


def paper_style() -> Any:
    """A context in which figures are drawn and saved in the paper style (:data:`PAPER_RC`).

    Returns
    -------
    contextmanager
        ``matplotlib.rc_context(PAPER_RC)``, for a ``with`` statement.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from optaccept import plots
    >>> with plots.paper_style():
    ...     fig, ax = plots.paper_figure()
    ...     _ = ax.plot([0, 1], [0, 1])
    >>> type(ax).__name__
    'Axes'
    """
    import matplotlib

    return matplotlib.rc_context(PAPER_RC)


def in_paper_style(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: the plot function draws every artist under :data:`PAPER_RC`, whether it makes
    its own figure or draws on the caller's Axes."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with paper_style():
            return fn(*args, **kwargs)

    return wrapper


def legend_under(ax: Any, handles: Any = None, **kwargs: Any) -> Any:
    """The Axes' legend in one column just below its x label (never over the data); a
    constrained layout makes room for it."""
    from matplotlib.transforms import ScaledTranslation

    below = ax.transAxes + ScaledTranslation(0, -26 / 72, ax.figure.dpi_scale_trans)
    kw = {"loc": "upper center", "bbox_to_anchor": (0.5, 0.0), "bbox_transform": below, "frameon": False}
    kw.update(kwargs)
    return ax.legend(handles=handles, **kw) if handles is not None else ax.legend(**kw)


def paper_figure(
    nrows: int = 1, ncols: int = 1, *, width: float | str = "column", height: float | None = None, **kwargs: Any
) -> tuple[Any, Any]:
    """``plt.subplots`` at a paper width (one column of a two-column paper, 3.3 in, or its text width, 7.0 in) with the paper fonts; ``height`` defaults to 2.3 in per row.  Draw inside :func:`paper_style` so
    that later text gets the same sizes.

    Parameters
    ----------
    nrows, ncols : int
        The grid of Axes.
    width : {"column", "text"} or float
        ``"column"`` (3.3 in), ``"text"`` (7.0 in), or a width in inches.
    height : float or None
        Figure height in inches; None: 2.3 per row.
    **kwargs
        Passed on to ``plt.subplots`` (``layout``, ``sharex``, ...).

    Returns
    -------
    fig : matplotlib.figure.Figure
        The new figure.
    ax : matplotlib.axes.Axes or ndarray of Axes
        Its Axes, as ``plt.subplots`` returns them.

    Examples
    --------
    >>> from optaccept import plots
    >>> fig, ax = plots.paper_figure(width="column")
    >>> round(float(fig.get_size_inches()[0]), 1)  # one column of a two-column paper, in inches
    3.3
    """
    import matplotlib.pyplot as plt

    if isinstance(width, str):
        width = {"column": COLUMN_WIDTH, "text": TEXT_WIDTH}[check_choice("width", width, ("column", "text"))]
    with paper_style():
        return plt.subplots(nrows, ncols, figsize=(width, height or 2.3 * nrows), **kwargs)


def new_axes(ax: Any = None, figsize: tuple[float, float] = (COLUMN_WIDTH, 2.5)) -> Any:
    """``ax`` itself, or the Axes of a new figure of ``figsize`` inches (one column)."""
    if ax is None:  # constrained layout: labels and titles stay inside the figure
        _, ax = paper_figure(width=figsize[0], height=figsize[1], layout="constrained")
    return ax


def integer_ticks(axis: Any, values: Sequence[int] | None = None) -> None:
    """Integer tick labels on ``axis`` (an ``ax.xaxis``/``ax.yaxis``): exactly ``values`` when
    given (works on log scales too), else at most ~8 integer ticks."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator, ScalarFormatter

    if values is None:
        axis.set_major_locator(MaxNLocator(integer=True))
        return
    axis.set_major_locator(FixedLocator(list(values)))
    axis.set_minor_locator(NullLocator())
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    axis.set_major_formatter(fmt)


def save_figure(
    fig: Any, path: str | os.PathLike, *, formats: Sequence[str] = ("png", "pdf"), dpi: int = 200
) -> list[Path]:
    """Write ``fig`` as ``path`` with each suffix in ``formats`` (default PNG and PDF).

    Metadata that would change from run to run (creation date, software version) is left
    out, so the same figure gives the same bytes on the same machine and library versions.
    Returns the paths written.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to write.
    path : str or os.PathLike
        Target path; its suffix is replaced by each format's (missing folders are made).
    formats : sequence of str
        File formats, as suffixes without the dot.
    dpi : int
        Resolution of raster formats.

    Returns
    -------
    list of pathlib.Path
        The files written, one per format.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import matplotlib.pyplot as plt
    >>> from optaccept import plots
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = plots.save_figure(fig, pathlib.Path(tmp) / "line", formats=("png",), dpi=50)
    ...     print([path.name for path in paths], paths[0].exists())
    ['line.png'] True
    """
    import matplotlib

    path = Path(path)
    out = []
    for ext in formats:
        target = path.with_suffix("." + ext)
        target.parent.mkdir(parents=True, exist_ok=True)
        if ext == "png":
            meta: dict[str, Any] = {"Software": None}
        elif ext == "pdf":
            meta = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
        elif ext == "svg":
            meta = {"Date": None, "Creator": None}
        else:
            meta = {}
        with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):  # TrueType, never Type 3
            fig.savefig(target, dpi=dpi, metadata=meta, bbox_inches="tight", pad_inches=0.01)
        out.append(target)
    return out
