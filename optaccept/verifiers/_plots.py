"""Plots of verifier acceptance; each takes ``ax=None`` and returns the Axes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["plot_acceptance_curves", "plot_gap_bars"]


def _axes(ax: Any) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5, 3.6))
    return ax


def plot_acceptance_curves(
    t: Sequence[float], curves: Mapping[str, Sequence[float]], *, title: str = "", xlabel: str = "t", ax: Any = None
) -> Any:
    """Acceptance against a parameter t, one line per entry of ``curves``; a shaded band
    marks where the curve named "optimal" equals 1 (if any)."""
    ax = _axes(ax)
    t = np.asarray(t, dtype=float)
    styles = {
        "optimal": dict(color="k", lw=2.2),
        "K-SEQ": dict(color="tab:orange", ls="--"),
        "RRS": dict(color="tab:blue", ls=":"),
    }
    for name, ys in curves.items():
        ax.plot(t, np.asarray(ys, dtype=float), label=name, **styles.get(name, {}))
    if "optimal" in curves:
        one = np.asarray(curves["optimal"], dtype=float) >= 1.0 - 1e-12
        if one.any():
            ax.axvspan(t[one].min(), t[one].max(), color="0.9", zorder=0, label="α* = 1")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("P(accept)")
    ax.set_title(title)
    ax.legend(loc="lower center", fontsize=8)
    return ax


def plot_gap_bars(mean_gap: Mapping[str, Mapping[int, float]], *, title: str = "", ax: Any = None) -> Any:
    """Grouped bars: mean gap α* − α per verifier (groups) and k (bars)."""
    ax = _axes(ax)
    names = list(mean_gap)
    ks = sorted({k for row in mean_gap.values() for k in row})
    width = 0.8 / max(len(ks), 1)
    x = np.arange(len(names))
    for j, k in enumerate(ks):
        vals = [mean_gap[n].get(k, np.nan) for n in names]
        ax.bar(x + j * width - 0.4 + width / 2, vals, width, label=f"k={k}")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("mean  α*(own law) − α")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax
