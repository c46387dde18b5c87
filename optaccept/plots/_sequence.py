"""Figures of the sequence-level theory (Yin et al., arXiv:2411.00841; docs/theory.md §6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._style import COLUMN_WIDTH, in_paper_style, integer_ticks, legend_under, new_axes, palette_color

__all__ = [
    "plot_simulation",
    "plot_batch_rejections",
    "plot_batch_improvement",
    "plot_pareto_front",
    "plot_decoder_losses",
    "CONTINUATION_LABELS",
]

#: Legend words for the two batch algorithms (``continuation=`` of ``optaccept.sequence``).
CONTINUATION_LABELS = {
    "single": "Yin et al.'s batch SD\n(only the accepted draft continues)",
    "matching": "token tree (every draft matching\nthe accepted text continues)",
}


def _plain_log_ticks(axis: Any) -> None:
    """Decade ticks of a log axis written as plain numbers (10, 100, 1,000)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


@in_paper_style
def plot_simulation(estimate: Any, exact: float, *, ax: Any = None) -> Any:
    """Running mean of simulated rejections (Monte Carlo of speculative decoding) against the
    exact value of Theorem 1, with the band exact ± 2σ/√runs.

    Parameters
    ----------
    estimate : RejectionEstimate
        Simulated rejections (``counts`` per run and their ``std``), as
        :func:`optaccept.sequence.simulate_rejections` returns them.
    exact : float
        The exact expected number of rejections.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import plots, sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> est = sequence.simulate_rejections(chain, samples=200, rng=0)
    >>> ax = plots.plot_simulation(est, sequence.expected_rejections(chain))
    >>> type(ax).__name__, len(ax.lines) >= 2
    ('Axes', True)
    """
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.2))
    counts = np.asarray(estimate.counts, dtype=float)
    k = np.arange(1, counts.size + 1)
    sd = estimate.std
    ax.fill_between(
        k,
        exact - 2 * sd / np.sqrt(k),
        exact + 2 * sd / np.sqrt(k),
        color=palette_color("C0"),
        alpha=0.18,
        lw=0,
        label=r"exact $\pm\, 2\sigma/\sqrt{\mathrm{runs}}$",
    )
    ax.plot(k, np.cumsum(counts) / k, lw=1, color=palette_color("C0"), label="Monte Carlo, running mean")
    ax.axhline(exact, color="k", lw=1.2, label=f"exact (Theorem 1): {exact:.3f}")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)  # 10, 100, 1000: no superscripts (they print below 7 pt)
    ax.set_xlabel("number of simulated runs")
    ax.set_ylabel("rejections per sequence")
    ax.grid(alpha=0.3)
    legend_under(ax)
    return ax


@in_paper_style
def plot_batch_rejections(
    chain: Any,
    Ms: Sequence[int],
    *,
    continuations: Sequence[str] = ("single", "matching"),
    simulated: Mapping[tuple[str, int], Any] | None = None,
    ax: Any = None,
) -> Any:
    """Exact expected rejections of batch speculative decoding against the number of draft
    sequences M (log scale, integer ticks), one curve per algorithm, with their M → ∞ limits
    (dashed) and Monte Carlo estimates ± 5 standard errors (crosses).

    Parameters
    ----------
    chain : SequencePair
        The target and draft sequence models (a ``MarkovPair`` or ``PositionPair``).
    Ms : sequence of int
        The numbers of draft sequences on the x axis.
    continuations : sequence of {"single", "matching"}
        One curve per batch algorithm.
    simulated : mapping of (str, int) to RejectionEstimate, optional
        Monte Carlo estimates keyed by (continuation, M).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> from optaccept import plots, sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> ax = plots.plot_batch_rejections(chain, Ms=[1, 2, 4])
    >>> type(ax).__name__, len(ax.lines) >= 2  # one line per continuation
    ('Axes', True)
    """
    from ..sequence import batch_expected_rejections
    from ..sequence._batch import batch_rejection_limit

    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.3))
    Ms = [int(m) for m in Ms]
    for i, cont in enumerate(continuations):
        color = palette_color(f"C{i}")
        vals = [batch_expected_rejections(chain, M, continuation=cont) for M in Ms]
        ax.plot(Ms, vals, "o-", ms=3.5, color=color, label=CONTINUATION_LABELS.get(cont, cont))
        lim = batch_rejection_limit(chain, continuation=cont)
        ax.axhline(lim, color=color, ls="--", lw=1, label=f"its limit as $M \\to \\infty$: {lim:.3f}")
    first = True
    for (cont, M), est in (simulated or {}).items():
        i = list(continuations).index(cont) if cont in continuations else 0
        ax.errorbar(
            [M],
            [est.mean],
            yerr=[5 * est.std_err],
            fmt="_",
            ms=6,
            mew=1.2,
            color="k",
            ecolor="k",
            elinewidth=1.0,
            capsize=3,
            label=r"Monte Carlo $\pm\, 5$ s.e." if first else None,
            zorder=5,
        )
        first = False
    ax.set_xscale("log", base=2)
    ticks = [m for m in Ms if m & (m - 1) == 0] or Ms
    while len(ticks) > 6:  # at a column's width, more integer labels collide
        ticks = ticks[::2]
    integer_ticks(ax.xaxis, ticks)
    ax.set_xlabel("number of draft sequences $M$")
    ax.set_ylabel("expected rejections per sequence")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend_under(ax)
    return ax


@in_paper_style
def plot_batch_improvement(Ms: Sequence[int], *, r: float = 4.0, u: float = 0.9, v: float = 0.3, ax: Any = None) -> Any:
    """Yin et al.'s closed-form one-step batch improvements BI(M) for their two examples.

    Parameters
    ----------
    Ms : sequence of int
        The numbers of drafts on the x axis.
    r : float
        Ratio |V|/|V'| of the uniform example's supports.
    u, v : float
        Success probabilities of the Bernoulli example's draft and target.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    from ..sequence._batch import bernoulli_batch_improvement, uniform_batch_improvement

    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.0))
    Ms = [int(m) for m in Ms]
    ax.plot(
        Ms,
        [uniform_batch_improvement(r, M) for M in Ms],
        "o-",
        ms=3.5,
        label=f"uniform: draft on $V$, target on $V'$, $|V|/|V'| = {r:g}$",
    )
    ax.plot(
        Ms,
        [bernoulli_batch_improvement(u, v, M) for M in Ms],
        "s-",
        ms=3.5,
        label=f"Bernoulli: draft {u:g}, target {v:g}",
    )
    integer_ticks(ax.xaxis)
    ax.set_xlabel("number of drafts $M$")
    ax.set_ylabel("one-step batch improvement BI")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend_under(ax)
    return ax


@in_paper_style
def plot_pareto_front(p: Any, q: Any, eps: Any = None, *, ax: Any = None) -> Any:
    """Theorem 5's Pareto front P(reject) + bias = TV(p, q) with Decoding-OPT (on the front)
    and Decoding-UNO (above it) over the over-acceptance thresholds ``eps``.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    eps : array_like of float, optional
        The thresholds; None: 25 from 0 to max(q − p).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import plots
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> ax = plots.plot_pareto_front(p, q)
    >>> type(ax).__name__, ax.get_xlabel() != ""
    ('Axes', True)
    """

    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.4))
    from ..sequence import decoder_losses, pareto_front  # (scipy, tqdm)

    front = np.asarray(pareto_front(p, q))
    tv = front[0, 0]
    grid = (
        np.linspace(0, max(float(np.max(np.asarray(q) - np.asarray(p))), 1e-12), 25)
        if eps is None
        else np.asarray(eps, dtype=float)
    )
    d = decoder_losses(p, q, grid)
    ax.fill_between([0, tv], [tv, 0], 0, color="0.88", label="unattainable (Theorem 5)")
    ax.plot(
        front[:, 0], front[:, 1], "k-", lw=1.5, label=r"front: $P(\mathrm{reject}) + \mathrm{bias} = \mathrm{TV}(p, q)$"
    )
    ax.plot(d.rejection, d.loss_opt, "o", ms=4, label="Decoding-OPT (Theorem 4)")
    ax.plot(d.rejection, d.loss_uno, "^", ms=4, label="Decoding-UNO (rejections from $p$)")
    ax.set_xlabel("rejection probability")
    ax.set_ylabel(r"bias $\mathrm{TV}(\mathrm{output}, p)$")
    ax.set_xlim(0, 1.05 * tv)
    ax.set_ylim(0, None)
    ax.grid(alpha=0.3)
    legend_under(ax)
    return ax


@in_paper_style
def plot_decoder_losses(p: Any, q: Any, eps: Any, *, ax: Any = None, rejection: bool = True) -> Any:
    """Bias of Decoding-OPT and Decoding-UNO against the over-acceptance threshold ε (left
    axis); with ``rejection``, the rejection probability on its own right-hand axis.
    Returns the left Axes (the right one is ``ax.right_axis``).

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    eps : array_like of float
        The over-acceptance thresholds ε.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; None: a new figure in the paper style.
    rejection : bool
        Also draw the rejection probability on a right-hand axis.

    Returns
    -------
    matplotlib.axes.Axes
        The left Axes drawn on.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import plots
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> ax = plots.plot_decoder_losses(p, q, eps=np.linspace(0, 0.2, 5))
    >>> type(ax).__name__
    'Axes'
    """

    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.2))
    from ..sequence import decoder_losses  # (scipy, tqdm)

    d = decoder_losses(p, q, eps)
    h1 = ax.plot(d.eps, d.loss_opt, "o-", ms=3, color=palette_color("C1"), label="bias, Decoding-OPT")
    h2 = ax.plot(d.eps, d.loss_uno, "^-", ms=3, color=palette_color("C2"), label="bias, Decoding-UNO")
    ax.set_xlabel(r"over-acceptance threshold $\varepsilon$")
    ax.set_ylabel(r"bias $\mathrm{TV}(\mathrm{output}, p)$")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    handles = h1 + h2
    if rejection:
        right = ax.twinx()
        handles += right.plot(d.eps, d.rejection, "k:", lw=1.3, label="rejection probability (right)")
        right.set_ylabel("rejection probability", color="0.25")
        right.set_ylim(bottom=0)
        ax.right_axis = right
    legend_under(ax, handles)
    return ax
