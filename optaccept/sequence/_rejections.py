r"""Expected rejections of speculative decoding over a sequence (Yin et al., Theorems 1-2).

Speculative decoding with unlimited lookahead: the draft proposes
:math:`\tilde x_t \sim q_t(\cdot \mid x_{<t})`, the target accepts it with probability
:math:`\min(1, p_t(\tilde x_t)/q_t(\tilde x_t))` and otherwise replaces it by a draw from
the residual :math:`(p_t - q_t)_+ / \mathrm{TV}(p_t, q_t)`; each replacement is one
rejection (one more call of the large model).  Then (Yin et al., Theorem 1; their q is our p)

.. math::  E[N_{rej}] = \sum_{t=1}^{T} E_{x_{<t} \sim p}\,\mathrm{TV}(p_t(\cdot\mid x_{<t}),
           q_t(\cdot\mid x_{<t})).

It is computed by a forward recursion over the target marginal of :math:`x_{t-1}`,
O(T S^2) for a Markov pair.  Proofs of Theorems 1 and 2: docs/theory.md §6.1.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from .._errors import InputError
from .._lib.sampling import RowSampler
from .._lib.validation import check_rng
from ._markov import SequencePair
from ._sampling import RejectionEstimate, residual_rows, tv_rows

__all__ = [
    "expected_rejections",
    "rejection_profile",
    "acceleration",
    "simulate_rejections",
    "unbiased_rejections",
    "scaled_rule",
    "AcceptanceRule",
]

#: An acceptance rule: ``rule(p, q) -> b`` on (C, n) arrays of target and draft rows,
#: b[c, x] = probability of accepting draft token x in context c.
AcceptanceRule = Callable[[np.ndarray, np.ndarray], np.ndarray]

_UNBIASED_TOL = 1e-12


def _check_pair(chain: Any) -> SequencePair:
    if not isinstance(chain, SequencePair):
        raise InputError(f"chain: must be a MarkovPair or PositionPair, got {type(chain).__name__}")
    return chain


def _check_runs(runs: Any) -> int:
    if isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs < 1:
        raise InputError(f"samples: must be an integer >= 1, got {runs!r}")
    return int(runs)


def _rule_rows(rule: AcceptanceRule, p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Acceptance b and the unbiased rejection law (p - b q)/(1 - sum b q) of a rule, checked."""
    b = np.asarray(rule(p, q), dtype=np.float64)
    if b.shape != p.shape:
        raise InputError(f"acceptance: returned shape {b.shape}, expected {p.shape}")
    if not np.all(np.isfinite(b)) or b.min() < 0 or b.max() > 1:
        raise InputError("acceptance: probabilities must lie in [0, 1]")
    bq = b * q
    if np.any(bq > p + _UNBIASED_TOL):
        raise InputError(
            "acceptance: accepts some token more often than the target allows (b q > p), "
            "so no rejection law keeps the output distributed as the target"
        )
    rest = np.clip(p - bq, 0.0, None)
    r = rest.sum(axis=-1)
    law = np.where((r > 0)[:, None], rest / np.where(r > 0, r, 1.0)[:, None], p)
    return b, law


def _sd_rule(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, np.minimum(1.0, p / np.where(q > 0, q, 1.0)), 1.0)


def scaled_rule(scale: float) -> AcceptanceRule:
    r"""The unbiased rule :math:`b = \lambda \min(1, p/q)`, 0 <= lambda <= 1.

    Its rejection law is :math:`(p - b q) / (1 - \sum b q)`; lambda = 1 is speculative
    decoding.  Used to illustrate Yin et al.'s Theorem 2 (no unbiased rejection rule has
    fewer expected rejections).

    Parameters
    ----------
    scale : float
        λ, in [0, 1].

    Returns
    -------
    callable
        The rule ``rule(p, q) -> b``, rows of acceptance probabilities.

    Raises
    ------
    InputError
        If ``scale`` lies outside [0, 1].

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> half = sequence.scaled_rule(0.5)  # accept with half of min(1, p/q)
    >>> round(sequence.unbiased_rejections(chain, half), 4)  # 3 steps of 1 - 0.5 * (1 - TV), TV = 0.3
    1.95
    >>> round(sequence.unbiased_rejections(chain, sequence.scaled_rule(1.0)), 4)  # speculative decoding: 3 TV
    0.9
    """
    lam = float(scale)
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"scale: must lie in [0, 1], got {scale!r}")

    def rule(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return lam * _sd_rule(p, q)

    return rule


def rejection_profile(chain: SequencePair, acceptance: AcceptanceRule | None = None) -> np.ndarray:
    r"""Per-step rejection probabilities :math:`E_{x_{<t}\sim p}[1 - \sum_x b_t(x) q_t(x)]`, t = 1..T.

    With the default (speculative decoding, :math:`b = \min(1, p/q)`) the summand is
    :math:`\mathrm{TV}(p_t, q_t)` (Yin et al., Theorem 1); an unbiased rule keeps the
    prefix distributed as p, so the same recursion applies (docs/theory.md §6.1).

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    acceptance : callable, optional
        An unbiased acceptance rule ``b = acceptance(p, q)`` (rows); None: speculative decoding.

    Returns
    -------
    ndarray, shape (T,)
        The rejection probability at each step.

    Raises
    ------
    InputError
        If ``chain`` is not a sequence pair, or the rule is not unbiased-compatible.
    """
    chain = _check_pair(chain)
    mu = chain._initial_contexts()
    out = np.empty(chain.horizon)
    for t in range(chain.horizon):
        p, q = chain._laws(t)
        if acceptance is None:
            rej = tv_rows(p, q)
        else:
            b, _ = _rule_rows(acceptance, p, q)
            rej = np.clip(1.0 - (b * q).sum(axis=-1), 0.0, None)
        out[t] = mu @ rej
        mu = chain._next(mu[:, None] * p)
    return out


def expected_rejections(chain: SequencePair) -> float:
    r"""Exact expected number of rejections of speculative decoding (Yin et al., Theorem 1).

    .. math::  E[N_{rej}] = \sum_{t=1}^{T} \sum_s P_p(x_{t-1} = s)\,
               \mathrm{TV}(p_t(\cdot \mid s), q_t(\cdot \mid s))

    computed by a forward recursion over the target marginals (O(T S^2) for a Markov
    pair, O(T n) for a position pair).

    Parameters
    ----------
    chain : MarkovPair or PositionPair

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept.sequence import MarkovPair, expected_rejections
    >>> chain = MarkovPair([1.0, 0.0], [[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]], horizon=3)
    >>> round(expected_rejections(chain), 12)
    1.5
    """
    return float(rejection_profile(chain).sum())


def unbiased_rejections(chain: SequencePair, acceptance: AcceptanceRule) -> float:
    r"""Exact expected rejections of an unbiased acceptance rule b (Yin et al., Theorem 2).

    The rule accepts draft token x with probability :math:`b_t(x) \le \min(1, p_t(x)/q_t(x))`
    and otherwise draws from :math:`(p_t - b_t q_t)/(1 - \sum_x b_t q_t)`; then
    :math:`E[N_{rej}] = \sum_t E_p[1 - \sum_x b_t q_t] \ge` :func:`expected_rejections`
    (Theorem 2), with equality for speculative decoding.  Proof: docs/theory.md §6.1.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    acceptance : callable
        The rule ``b = acceptance(p, q)``, rows of acceptance probabilities.

    Returns
    -------
    float
        The expected number of rejections over the T steps.

    Raises
    ------
    InputError
        The rule is not unbiased-compatible (b q > p somewhere) or leaves [0, 1].

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> rule = sequence.scaled_rule(0.5)
    >>> round(sequence.unbiased_rejections(chain, rule), 4) >= round(sequence.expected_rejections(chain), 4)
    True
    """
    return float(rejection_profile(chain, acceptance).sum())


def acceleration(chain: SequencePair) -> float:
    """T / E[N_rej]: generated tokens per large-model call (infinite when the models agree).

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.

    Returns
    -------
    float
        T / :func:`expected_rejections` (``inf`` when there are none).

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> round(sequence.acceleration(chain), 4)  # T / E[N_rej] = 3 / 0.9
    3.3333
    """
    e = expected_rejections(chain)
    return float(chain.horizon / e) if e > 0 else float("inf")


def simulate_rejections(
    chain: SequencePair,
    samples: int = 1000,
    rng: Any = None,
    *,
    acceptance: AcceptanceRule | None = None,
    progress: bool = False,
) -> RejectionEstimate:
    """Monte Carlo of the speculative decoding algorithm over a whole sequence.

    Each run draws every draft token from q given the accepted prefix, accepts it with
    probability b (default ``min(1, p/q)``), otherwise draws the replacement from the
    rule's rejection law and counts one rejection.  Runs are simulated together.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
    samples : int
        Number of independent sequences.
    rng : numpy.random.Generator or int or None
    acceptance : callable, optional
        An unbiased acceptance rule (see :func:`unbiased_rejections`).
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    RejectionEstimate
        A float (the mean number of rejections) with ``.counts``, ``.tokens``,
        ``.std_err``.

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> est = sequence.simulate_rejections(chain, samples=400, rng=0)
    >>> round(est.mean, 4), round(est.std_err, 4)  # the exact value: 0.9
    (0.8525, 0.0393)
    """
    chain = _check_pair(chain)
    samples = _check_runs(samples)
    gen = check_rng(rng)
    counts = np.zeros(samples, dtype=np.int64)
    tokens = np.empty((samples, chain.horizon), dtype=np.int64)
    init = chain._initial_contexts()
    ctx = RowSampler(init[None, :]).sample(np.zeros(samples, dtype=np.int64), gen.random(samples))
    rule = _sd_rule if acceptance is None else acceptance
    for t in tqdm(range(chain.horizon), disable=not progress, desc="simulate SD"):
        p, q = chain._laws(t)
        if acceptance is None:
            b = _sd_rule(p, q)
            law, _ = residual_rows(p, q)
        else:
            b, law = _rule_rows(rule, p, q)
        y = RowSampler(q).sample(ctx, gen.random(samples))
        accept = gen.random(samples) < b[ctx, y]
        rej = ~accept
        if rej.any():
            y[rej] = RowSampler(law).sample(ctx[rej], gen.random(int(rej.sum())))
        counts += rej
        tokens[:, t] = y
        ctx = y if chain._markov else ctx
    return RejectionEstimate(counts, tokens)
