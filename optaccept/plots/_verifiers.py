"""Verifier figures: acceptance curves (Khisti et al.'s Figure 2) and the gap heat map."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._style import TEXT_WIDTH, VERIFIER_LABELS, in_paper_style, legend_under, new_axes, palette_color

__all__ = ["plot_acceptance_curves", "plot_gap_bars", "plot_gap_heatmap"]

_CURVE_STYLES = {
    "optimal": dict(color="k", lw=2.2, label=r"$\alpha$* (optimal)"),
    "K-SEQ": dict(color=palette_color("C1"), ls="--", lw=1.6, label="K-SEQ (SpecTr)"),
    "RRS": dict(color=palette_color("C0"), ls=":", lw=1.8, label="RRS (SpecInfer)"),
}


@in_paper_style
def plot_acceptance_curves(
    t: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    *,
    title: str = "",
    xlabel: str = "$t$",
    ax: Any = None,
    legend: bool = True,
) -> Any:
    """Acceptance against a parameter t, one line per entry of ``curves`` (keys "optimal",
    "K-SEQ", "RRS" get paper labels); a shaded band marks where "optimal" equals 1.

    Parameters
    ----------
    t : sequence of float
        The parameter on the x axis.
    curves : mapping of str to sequence of float
        Acceptance per value of ``t``, one line per entry.
    title : str
        Title of the Axes ("": none).
    xlabel : str
        Label of the x axis.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    legend : bool
        Draw the legend below the Axes.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import plots
    >>> ax = plots.plot_acceptance_curves([0.0, 0.5, 1.0], {"rrs": [0.6, 0.7, 0.8], "optimal": [0.7, 0.8, 0.9]})
    >>> ax.get_lines()[0].get_label(), len(ax.get_lines()), ax.get_xlabel()
    ('rrs', 2, '$t$')
    """
    ax = new_axes(ax, figsize=(3.3, 3.0))
    t = np.asarray(t, dtype=float)
    for name, ys in curves.items():
        style = dict(_CURVE_STYLES.get(name, {"label": name}))
        ax.plot(t, np.asarray(ys, dtype=float), **style)
    if "optimal" in curves:
        one = np.asarray(curves["optimal"], dtype=float) >= 1.0 - 1e-12
        if one.any():
            ax.axvspan(t[one].min(), t[one].max(), color="0.88", zorder=0, label=r"$\alpha$* = 1")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("acceptance probability")
    ax.set_xlim(t.min(), t.max())
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    if legend:
        legend_under(ax, ncols=2)
    return ax


@in_paper_style
def plot_gap_heatmap(
    mean_gap: Mapping[str, Mapping[int, float | None]],
    stderr: Mapping[str, Mapping[int, float]] | None = None,
    *,
    title: str = "",
    ax: Any = None,
    labels: Mapping[str, str] | None = None,
) -> Any:
    """Verifiers (rows) × k (columns): the mean gap α*(own law) − α, written in each cell
    (± its standard error when ``stderr`` is given).  A cell whose verifier is not defined
    for that k is hatched and reads "n/a"; a gap of exactly 0 reads "0 (optimal)".

    Parameters
    ----------
    mean_gap : mapping of str to mapping of int to float or None
        ``mean_gap[verifier][k]``: the mean gap (None: not defined for k).
    stderr : mapping of str to mapping of int to float, optional
        Standard errors of the same cells.
    title : str
        Title of the Axes ("": none).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    labels : mapping of str to str, optional
        Row labels by verifier name, over the paper's defaults.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import plots
    >>> ax = plots.plot_gap_heatmap({"rrs": {2: 0.08, 3: 0.05}, "kseq": {2: 0.06, 3: None}})
    >>> type(ax).__name__, len(ax.images)
    ('Axes', 1)
    """
    import matplotlib.colors as mcolors
    from matplotlib.patches import Rectangle

    ax = new_axes(ax, figsize=(TEXT_WIDTH, 3.2))
    labels = {**VERIFIER_LABELS, **(labels or {})}
    names = list(mean_gap)
    ks = sorted({int(k) for row in mean_gap.values() for k in row})
    vals = np.full((len(names), len(ks)), np.nan)
    for i, n in enumerate(names):
        for j, k in enumerate(ks):
            v = mean_gap[n].get(k)
            if v is not None:
                vals[i, j] = max(float(v), 0.0)
    vmax = max(float(np.nanmax(vals)) if np.isfinite(vals).any() else 0.0, 1e-3)
    cmap = mcolors.LinearSegmentedColormap.from_list("gap", ["#ffffff", "#fdd49e", "#d7301f"])
    ax.imshow(np.ma.masked_invalid(vals), cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
    for i, n in enumerate(names):
        for j, k in enumerate(ks):
            v = vals[i, j]
            if np.isnan(v):
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.93", hatch="///", edgecolor="0.7", lw=0))
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="0.45")
                continue
            if v < 5e-13:
                text = "0 (optimal)"
            else:
                text = f"{v:.4f}"
                if stderr is not None and stderr.get(n, {}).get(k) is not None:
                    text += f" ± {stderr[n][k]:.4f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7.5, color="white" if v > 0.6 * vmax else "black")
    ax.set_xticks(range(len(ks)), [f"$k = {k}$" for k in ks])
    ax.set_yticks(range(len(names)), [labels.get(n, n) for n in names], fontsize=8.5)
    ax.tick_params(length=0)
    ax.set_xlabel("number of drafts")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


@in_paper_style
def plot_gap_bars(
    mean_gap: Mapping[str, Mapping[int, float | None]],
    *,
    title: str = "",
    ax: Any = None,
    labels: Mapping[str, str] | None = None,
) -> Any:
    """Grouped bars: mean gap α*(own law) − α per verifier (groups) and k (bars).  A bar that
    is not defined for its k is replaced by an "n/a" mark, a zero gap by a "0" mark.

    Parameters
    ----------
    mean_gap : mapping of str to mapping of int to float or None
        ``mean_gap[verifier][k]``: the mean gap (None: not defined for k).
    title : str
        Title of the Axes ("": none).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    labels : mapping of str to str, optional
        Group labels by verifier name, over the paper's defaults.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import plots
    >>> ax = plots.plot_gap_bars({"rrs": {2: 0.08, 3: 0.05}, "kseq": {2: 0.06, 3: 0.04}})
    >>> type(ax).__name__, len(ax.patches)  # one bar per verifier and k
    ('Axes', 4)
    """
    ax = new_axes(ax, figsize=(TEXT_WIDTH, 3.0))
    labels = {**VERIFIER_LABELS, **(labels or {})}
    names = list(mean_gap)
    ks = sorted({int(k) for row in mean_gap.values() for k in row})
    width = 0.8 / max(len(ks), 1)
    x = np.arange(len(names))
    for j, k in enumerate(ks):
        xs = x + j * width - 0.4 + width / 2
        vals = [mean_gap[n].get(k) for n in names]
        ax.bar(xs, [0.0 if v is None else v for v in vals], width, label=f"$k = {k}$", color=palette_color(f"C{j}"))
        for xi, v in zip(xs, vals, strict=True):
            if v is None:
                ax.text(xi, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=7, color="0.5")
            elif abs(v) < 5e-13:
                ax.text(xi, 0, "0", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [labels.get(n, n) for n in names], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(r"mean $\alpha$*(own law) − $\alpha$")
    if title:
        ax.set_title(title, fontsize=10)
    # beside the axes, never over the bars (below them are the rotated verifier names)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax
