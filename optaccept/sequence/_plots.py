"""Plots of the sequence-level theory.  Every function takes ``ax=None`` and returns the Axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._batch import (
    batch_expected_rejections,
    batch_rejection_limit,
    bernoulli_batch_improvement,
    uniform_batch_improvement,
)
from ._markov import SequencePair
from ._pareto import decoder_losses, pareto_front
from ._sampling import RejectionEstimate

__all__ = [
    "plot_simulation",
    "plot_batch_rejections",
    "plot_batch_improvement",
    "plot_pareto_front",
    "plot_decoder_losses",
]


def _axes(ax: Any) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def plot_simulation(estimate: RejectionEstimate, exact: float, *, ax: Any = None) -> Any:
    """Running mean of simulated rejections against the exact value, with a ±2σ band."""
    ax = _axes(ax)
    counts = np.asarray(estimate.counts, dtype=float)
    k = np.arange(1, counts.size + 1)
    ax.plot(k, np.cumsum(counts) / k, lw=1, label="Monte Carlo running mean")
    sd = estimate.std
    ax.fill_between(k, exact - 2 * sd / np.sqrt(k), exact + 2 * sd / np.sqrt(k), alpha=0.2, label="exact ± 2σ/√runs")
    ax.axhline(exact, color="k", lw=1, label=f"Theorem 1: {exact:.3f}")
    ax.set_xscale("log")
    ax.set_xlabel("runs")
    ax.set_ylabel("rejections")
    ax.legend(fontsize=8)
    return ax


def plot_batch_rejections(
    chain: SequencePair,
    Ms: Sequence[int],
    *,
    continuations: Sequence[str] = ("single", "matching"),
    simulated: dict[tuple[str, int], RejectionEstimate] | None = None,
    ax: Any = None,
) -> Any:
    """Exact expected rejections against the number of drafts M, with the M -> ∞ limits."""
    ax = _axes(ax)
    Ms = list(Ms)
    for i, cont in enumerate(continuations):
        color = f"C{i}"
        vals = [batch_expected_rejections(chain, M, continuation=cont) for M in Ms]
        ax.plot(Ms, vals, "o-", ms=3, color=color, label=f"exact, {cont}")
        lim = batch_rejection_limit(chain, continuation=cont)
        ax.axhline(lim, color=color, ls="--", lw=1, label=f"M → ∞ limit, {cont}: {lim:.3f}")
    for (cont, M), est in (simulated or {}).items():
        i = list(continuations).index(cont) if cont in continuations else 0
        ax.errorbar([M], [est.mean], yerr=[5 * est.stderr], fmt="x", color=f"C{i}", capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel("number of draft sequences M")
    ax.set_ylabel("expected rejections")
    ax.legend(fontsize=7)
    return ax


def plot_batch_improvement(Ms: Sequence[int], *, r: float = 4.0, u: float = 0.9, v: float = 0.3, ax: Any = None) -> Any:
    """The closed-form one-step batch improvements of Yin et al.'s two examples."""
    ax = _axes(ax)
    Ms = list(Ms)
    ax.plot(Ms, [uniform_batch_improvement(r, M) for M in Ms], "o-", ms=3, label=f"uniform, r = {r:g}")
    ax.plot(
        Ms, [bernoulli_batch_improvement(u, v, M) for M in Ms], "s-", ms=3, label=f"Bernoulli, u = {u:g}, v = {v:g}"
    )
    ax.set_xlabel("number of drafts M")
    ax.set_ylabel("one-step batch improvement")
    ax.legend(fontsize=8)
    return ax


def plot_pareto_front(p: Any, q: Any, eps: Any = None, *, ax: Any = None) -> Any:
    """Pareto front R + loss = TV with Decoding-OPT and Decoding-UNO points over ε."""
    ax = _axes(ax)
    front = np.asarray(pareto_front(p, q))
    tv = front[0, 0]
    grid = (
        np.linspace(0, max(float(np.max(np.asarray(q) - np.asarray(p))), 1e-12), 25)
        if eps is None
        else np.asarray(eps, dtype=float)
    )
    d = decoder_losses(p, q, grid)
    ax.fill_between([0, tv], [tv, 0], 0, color="0.85", label="unattainable")
    ax.plot(front[:, 0], front[:, 1], "k-", lw=1.5, label="Pareto front (Thm 5)")
    ax.plot(d.rejection, d.loss_opt, "o", ms=4, label="Decoding-OPT (Thm 4)")
    ax.plot(d.rejection, d.loss_uno, "^", ms=4, label="Decoding-UNO (rejections from p)")
    ax.set_xlabel("rejection probability")
    ax.set_ylabel("bias TV(output, p)")
    ax.set_xlim(0, 1.05 * tv)
    ax.set_ylim(0, None)
    ax.legend(fontsize=8)
    return ax


def plot_decoder_losses(p: Any, q: Any, eps: Any, *, ax: Any = None) -> Any:
    """Bias of Decoding-OPT and Decoding-UNO against the over-acceptance threshold ε."""
    ax = _axes(ax)
    d = decoder_losses(p, q, eps)
    ax.plot(d.eps, d.loss_opt, "o-", ms=3, label="Decoding-OPT")
    ax.plot(d.eps, d.loss_uno, "^-", ms=3, label="Decoding-UNO")
    ax.plot(d.eps, d.rejection, "k:", lw=1, label="rejection probability")
    ax.set_xlabel("over-acceptance threshold ε")
    ax.set_ylabel("bias / probability")
    ax.legend(fontsize=8)
    return ax
