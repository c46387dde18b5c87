r"""Batch speculative decoding with k draft sequences (Yin et al., Theorem 3 and Proposition 1).

One token with k i.i.d. drafts verified by recursive rejection sampling (RRS, residuals
:math:`p^1 = p`, :math:`p^{m+1} = (p^m - q)_+ / \mathrm{TV}(p^m, q)`) outputs p and

.. math::  P(\text{all } k \text{ rejected}) = \prod_{m=1}^{k} \mathrm{TV}(p^m, q),
           \qquad \mathrm{BI} = \mathrm{TV}(p, q) - \prod_{m=1}^{k} \mathrm{TV}(p^m, q)

(Yin et al., Theorem 3, whose target is q and draft p).  Over a sequence a round starts
after each rejection; ``continuation`` says which draft sequences stay candidates after an
acceptance: ``"single"`` (default; Yin et al.'s algorithm: only the accepted sequence,
whose limit as k grows stays positive, Proposition 1) or ``"matching"`` (every sequence
agreeing with the accepted prefix: a token tree).  The exact expected rejections come from
a forward recursion over (context, number of candidates), O(T C n k) for ``"single"`` and
O(T C n k²) for ``"matching"`` (C contexts, n tokens).

Proofs: docs/theory.md §6.2 (one token), §6.3 (the recursion), §6.4 (the limit).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from scipy.stats import binom
from tqdm.auto import tqdm

from .._errors import InputError
from .._lib.sampling import RowSampler
from .._lib.stable import residual
from .._lib.validation import as_distribution_pair, check_choice, check_rng
from ._markov import SequencePair
from ._rejections import _check_pair, _check_runs
from ._sampling import RejectionEstimate

__all__ = [
    "residual_chain",
    "batch_rejection_probability",
    "batch_improvement",
    "uniform_batch_improvement",
    "bernoulli_batch_improvement",
    "batch_expected_rejections",
    "batch_rejection_profile",
    "batch_rejection_limit",
    "round_start_measure",
    "simulate_batch_rejections",
    "CONTINUATIONS",
]

CONTINUATIONS = ("single", "matching")


def _check_m(M: Any) -> int:
    if isinstance(M, bool) or not isinstance(M, numbers.Integral):
        raise InputError(f"k: must be an integer number of drafts, got {M!r}")
    if M < 1:
        raise InputError(f"k: must be at least 1, got {M}")
    return int(M)


def _check_continuation(continuation: Any) -> str:
    check_choice("continuation", continuation, CONTINUATIONS)
    return continuation


def _residuals(p: np.ndarray, q: np.ndarray, M: int) -> tuple[np.ndarray, np.ndarray]:
    """Residuals p^1..p^{M+1} of rows (..., n) -> (..., M+1, n) and TV(p^m, q) -> (..., M+1)."""
    res = np.empty(p.shape[:-1] + (M + 1, p.shape[-1]))
    tv = np.empty(p.shape[:-1] + (M + 1,))
    cur = p
    for m in range(M + 1):
        res[..., m, :] = cur
        nxt, t = residual(cur, q)
        tv[..., m] = t
        if m < M:
            cur = nxt
    return res, tv


def residual_chain(p: Any, q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The RRS residuals :math:`p^1 = p,\ p^{m+1} = (p^m - q)_+ / \mathrm{TV}(p^m, q)`.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    k : int
        Number of drafts, at least 1.

    Returns
    -------
    residuals : ndarray, shape (k + 1, n)
        Row m - 1 is :math:`p^m`.  Once :math:`\mathrm{TV}(p^m, q) = 0` (never reached
        with positive probability) the rows repeat :math:`p^m`.
    tv : ndarray, shape (k + 1,)
        :math:`\mathrm{TV}(p^m, q)`, m = 1..k+1.

    Raises
    ------
    InputError
        If p or q is not a distribution, they differ in length, or k is not a positive integer.
    """
    p, q = as_distribution_pair(p, q)
    return _residuals(p, q, _check_m(k))


def batch_rejection_probability(p: Any, q: Any, k: int) -> float:
    r"""Probability that RRS rejects all k i.i.d. drafts: :math:`\prod_{m=1}^{k}\mathrm{TV}(p^m, q)`.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    k : int
        Number of drafts, at least 1.

    Returns
    -------
    float
        The probability that every draft is rejected.
    """
    _, tv = residual_chain(p, q, k)
    return float(np.prod(tv[:-1]))


def batch_improvement(p: Any, q: Any, k: int) -> float:
    r"""One-step batch improvement (Yin et al., Theorem 3; their q is our p).

    .. math::  \mathrm{BI}_k(p, q) = \mathrm{TV}(p, q) - \prod_{m=1}^{k} \mathrm{TV}(p^m, q),

    the drop in rejection probability of one token when k i.i.d. drafts are verified by
    RRS instead of one draft by speculative decoding.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    k : int
        Number of drafts, at least 1 (BI_1 = 0).

    Returns
    -------
    float
        BI_k(p, q), in [0, TV(p, q)].

    Examples
    --------
    >>> from optaccept.sequence import batch_improvement
    >>> round(batch_improvement([0.5, 0.5, 0, 0], [0.25] * 4, 3), 12)  # r = 2: (1 - 1/2) - (1 - 1/2)**3
    0.375
    """
    _, tv = residual_chain(p, q, k)
    return float(tv[0] - np.prod(tv[:-1]))


def uniform_batch_improvement(r: float, k: int) -> float:
    r"""Closed form for q uniform on V, p uniform on V' in V, r = |V|/|V'| (Yin et al.):
    :math:`\mathrm{BI} = (1 - 1/r) - (1 - 1/r)^k`.  Proof: docs/theory.md §6.2.

    Parameters
    ----------
    r : float
        |V| / |V'|, at least 1.
    k : int
        Number of drafts, at least 1.

    Returns
    -------
    float
        BI_k for this pair.

    Raises
    ------
    InputError
        If r < 1 or k is not a positive integer.

    Examples
    --------
    >>> from optaccept import sequence
    >>> round(sequence.uniform_batch_improvement(2, 3), 4)  # (1 - 1/2) - (1 - 1/2)**3
    0.375
    >>> round(sequence.batch_improvement([.5, .5, 0, 0], [.25] * 4, 3), 4)
    0.375
    """
    r = float(r)
    if not r >= 1:
        raise InputError(f"r: must be at least 1 (|V| / |V'|), got {r!r}")
    k = _check_m(k)
    return (1 - 1 / r) - (1 - 1 / r) ** k


def bernoulli_batch_improvement(u: float, v: float, k: int) -> float:
    r"""Closed form for draft Ber(u), target Ber(v) (Yin et al., u >= v):
    :math:`\mathrm{BI} = (u - v)(1 - u^{k-1})`; for u < v,
    :math:`(v - u)(1 - (1 - u)^{k-1})`.  Proof: docs/theory.md §6.2.

    Parameters
    ----------
    u : float
        Draft's probability of token 1, in [0, 1].
    v : float
        Target's probability of token 1, in [0, 1].
    k : int
        Number of drafts, at least 1.

    Returns
    -------
    float
        BI_k for this pair.

    Raises
    ------
    InputError
        If u or v lies outside [0, 1] or k is not a positive integer.

    Examples
    --------
    >>> from optaccept import sequence
    >>> round(sequence.bernoulli_batch_improvement(0.2, 0.5, 2), 4)  # (0.5 - 0.2) * (1 - 0.8)
    0.06
    >>> round(sequence.batch_improvement([.5, .5], [.8, .2], 2), 4)  # the same from p, q: 0.3 - 0.3 * 0.8
    0.06
    """
    u, v = float(u), float(v)
    for name, x in (("u", u), ("v", v)):
        if not 0 <= x <= 1:
            raise InputError(f"{name}: must lie in [0, 1], got {x!r}")
    k = _check_m(k)
    if u >= v:
        return (u - v) * (1 - u ** (k - 1))
    return (v - u) * (1 - (1 - u) ** (k - 1))


def _step(mu: np.ndarray, p: np.ndarray, q: np.ndarray, M: int, continuation: str) -> tuple[float, np.ndarray]:
    """One step of the (context, candidates) recursion.

    mu : (C, M) weights of (context c, a = index + 1 candidates).
    Returns the step's rejection probability and nu : (C, n, M), the joint weight of
    (context, output token, next number of candidates).
    """
    res, tv = _residuals(p, q, M)  # (C, M+1, n), (C, M+1)
    none = np.concatenate([np.ones(tv.shape[:-1] + (1,)), np.cumprod(tv[..., :M], axis=-1)], -1)
    # none[c, j] = P(first j drafts rejected), j = 0..M
    rejected = float((mu * none[:, 1:]).sum())
    C, n = p.shape
    nu = np.zeros((C, n, M))
    # all a candidates rejected: token ~ p^{a+1}, new round with M candidates
    nu[:, :, M - 1] += np.einsum("ca,ca,can->cn", mu, none[:, 1:], res[:, 1:, :])
    # draft j + 1 (0-based j) accepted with token y
    acc = none[:, :M, None] * np.minimum(res[:, :M, :], q[:, None, :])  # (C, M, n)
    if continuation == "single":
        tail = np.cumsum(mu[:, ::-1], axis=1)[:, ::-1]  # tail[c, j] = sum_{a > j} mu[c, a - 1]
        nu[:, :, 0] += np.einsum("cj,cjn->cn", tail, acc)
    else:
        # V[c, d, y] = sum_j mu[c, j + d] acc[c, j, y]: d = unexamined drafts after the accepted
        V = np.empty((C, M, n))
        for d in range(M):
            V[:, d, :] = np.einsum("cj,cjn->cn", mu[:, d:], acc[:, : M - d, :])
        dd = np.arange(M)[:, None, None, None]
        kk = np.arange(M)[None, :, None, None]
        pmf = binom.pmf(kk, dd, q[None, None, :, :])  # (d, k, C, n)
        nu += np.einsum("cdn,dkcn->cnk", V, pmf)
    return rejected, nu


def batch_rejection_profile(
    chain: SequencePair, k: int, *, continuation: str = "single", progress: bool = False
) -> np.ndarray:
    """Per-step rejection probabilities of batch speculative decoding, shape (T,).

    See :func:`batch_expected_rejections`.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    k : int
        Number of draft sequences, at least 1.
    continuation : {"single", "matching"}
        Which draft sequences stay candidates after an acceptance.
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    ndarray of float64, shape (T,)
        The rejection probability at each step; their sum is
        :func:`batch_expected_rejections`.

    Raises
    ------
    InputError
        If ``chain`` is not a sequence pair, k is not a positive integer, or
        ``continuation`` is unknown.
    """
    chain = _check_pair(chain)
    k = _check_m(k)
    continuation = _check_continuation(continuation)
    mu = np.zeros((chain.contexts, k))
    mu[:, k - 1] = chain._initial_contexts()
    out = np.empty(chain.horizon)
    for t in tqdm(range(chain.horizon), disable=not progress, desc=f"batch DP k={k}"):
        p, q = chain._laws(t)
        out[t], nu = _step(mu, p, q, k, continuation)
        mu = chain._next(nu)
    return out


def round_start_measure(chain: SequencePair, k: int) -> np.ndarray:
    r"""Measure of the contexts at which a round of batch SD (``"single"``) starts, shape (T, C).

    Row t - 1, entry c is :math:`f_t(c) = P(x_{t-1} = c \text{ and a round starts at } t)`
    (a sub-probability; C = 1 for a position pair), and
    :math:`E[N_{rej}] = \sum_t E_{p}[\mathrm{TV}(p_t, q_t)] - \sum_t \sum_c f_t(c)\,
    \mathrm{BI}_M(p_t(\cdot \mid c), q_t(\cdot \mid c))` (docs/theory.md §6.3).

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    k : int
        Number of draft sequences, at least 1.

    Returns
    -------
    ndarray of float64, shape (T, C)
        f_t(c) in row t − 1, column c.

    Raises
    ------
    InputError
        If ``chain`` is not a sequence pair or k is not a positive integer.
    """
    chain = _check_pair(chain)
    k = _check_m(k)
    mu = np.zeros((chain.contexts, k))
    mu[:, k - 1] = chain._initial_contexts()
    out = np.empty((chain.horizon, chain.contexts))
    for t in range(chain.horizon):
        out[t] = mu[:, k - 1]
        p, q = chain._laws(t)
        _, nu = _step(mu, p, q, k, "single")
        mu = chain._next(nu)
    return out


def batch_expected_rejections(
    chain: SequencePair, k: int, *, continuation: str = "single", progress: bool = False
) -> float:
    r"""Exact expected rejections of batch speculative decoding with k drafts (Yin et al., Thm 3).

    .. math::  E[N_{rej}] = \sum_{t=1}^{T} \sum_{c, a} \mu_{t-1}(c, a)
               \prod_{m=1}^{a} \mathrm{TV}(p_t^m, q_t)(c)

    where :math:`\mu_{t-1}(c, a)` is the law of the context (previous token) and of the
    number a of candidate drafts at step t, obtained by a forward recursion.  Proof:
    docs/theory.md §6.3.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
    k : int
        Number of draft sequences, at least 1 (k = 1 is Theorem 1).
    continuation : {"single", "matching"}
        Which draft sequences stay candidates after an acceptance.
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    float

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> round(sequence.batch_expected_rejections(chain, 1), 4)  # k = 1: Theorem 1's 3 TV
    0.9
    >>> round(sequence.batch_expected_rejections(chain, 2), 4)
    0.8085
    """
    return float(batch_rejection_profile(chain, k, continuation=continuation, progress=progress).sum())


def batch_rejection_limit(chain: SequencePair, *, continuation: str = "single") -> float:
    r"""Exact limit of :func:`batch_expected_rejections` as k -> infinity (Proposition 1).

    With infinitely many i.i.d. drafts, RRS rejects with probability p(O), O = {x : q(x) = 0}.
    ``"single"``: the first token of a round rejects with probability p(O), the later ones
    with TV(p, q), and the limit stays positive (Yin et al.'s Proposition 1);
    ``"matching"``: the limit is :math:`\sum_t E_{x_{<t}\sim p}[p_t(q_t = 0)]`, 0 when the
    draft's support covers the target's.  Proof: docs/theory.md §6.4.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    continuation : {"single", "matching"}
        Which draft sequences stay candidates after an acceptance.

    Returns
    -------
    float
        The limit of the expected number of rejections as M → ∞.

    Raises
    ------
    InputError
        If ``chain`` is not a sequence pair or ``continuation`` is unknown.

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> [round(sequence.batch_expected_rejections(chain, k), 4) for k in (1, 2, 8)]
    [0.9, 0.8085, 0.5804]
    >>> round(sequence.batch_rejection_limit(chain), 4)
    0.51
    """
    chain = _check_pair(chain)
    continuation = _check_continuation(continuation)
    C = chain.contexts
    mu = np.zeros((C, 2))  # columns: round start, inside a round
    mu[:, 0] = chain._initial_contexts()
    total = 0.0
    for t in range(chain.horizon):
        p, q = chain._laws(t)
        off = np.where(q > 0, 0.0, p)  # target mass where the draft never goes
        p_off = off.sum(axis=-1)
        on = p - off
        if continuation == "matching":
            total += float(mu.sum(axis=1) @ p_off)
            nu = np.zeros((C, p.shape[1], 2))
            nu[:, :, 0] = mu.sum(axis=1)[:, None] * p
            mu = chain._next(nu)
            continue
        pos = np.clip(p - q, 0.0, None)
        tv = pos.sum(axis=-1)
        total += float(mu[:, 0] @ p_off + mu[:, 1] @ tv)
        nu = np.zeros((C, p.shape[1], 2))
        nu[:, :, 0] = mu[:, 0:1] * off + mu[:, 1:2] * pos
        nu[:, :, 1] = mu[:, 0:1] * on + mu[:, 1:2] * np.minimum(p, q)
        mu = chain._next(nu)
    return total


def simulate_batch_rejections(
    chain: SequencePair,
    k: int,
    samples: int = 1000,
    rng: Any = None,
    *,
    continuation: str = "single",
    progress: bool = False,
) -> RejectionEstimate:
    """Monte Carlo of batch speculative decoding with k draft sequences.

    Runs are simulated together.  Each draft sequence's token at position t is drawn from
    q given that sequence's own prefix when it is needed; only sequences whose prefix equals
    the accepted one are ever needed, so this is the algorithm run on k full-lookahead
    drafts.  Candidates are verified in index order by RRS; if all are rejected the token
    comes from the last residual, one rejection is counted and k fresh drafts start.

    Parameters
    ----------
    chain : MarkovPair or PositionPair
        The target and draft sequence models.
    k : int
        Number of draft sequences, at least 1.
    samples : int
        Number of independent sequences, at least 1.
    rng : numpy.random.Generator or int or None
        Source of randomness (an int is a seed; None: fresh entropy).
    continuation : {"single", "matching"}
        Which draft sequences stay candidates after an acceptance.
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    RejectionEstimate
        A float (mean rejections) with ``.counts``, ``.tokens``, ``.std_err``.

    Raises
    ------
    InputError
        If ``chain`` is not a sequence pair, k or ``samples`` is not a positive integer,
        ``continuation`` is unknown, or ``rng`` is neither a Generator, a seed nor None.

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> est = sequence.simulate_batch_rejections(chain, k=2, samples=500, rng=0)
    >>> est.runs, round(sequence.batch_expected_rejections(chain, 2), 4)  # the exact value it estimates
    (500, 0.8085)
    >>> abs(est.mean - sequence.batch_expected_rejections(chain, 2)) < 5 * est.std_err
    True
    """
    chain = _check_pair(chain)
    k = _check_m(k)
    samples = _check_runs(samples)
    continuation = _check_continuation(continuation)
    gen = check_rng(rng)
    counts = np.zeros(samples, dtype=np.int64)
    tokens = np.empty((samples, chain.horizon), dtype=np.int64)
    init = chain._initial_contexts()
    ctx = RowSampler(init[None, :]).sample(np.zeros(samples, dtype=np.int64), gen.random(samples))
    alive = np.ones((samples, k), dtype=bool)
    rows = np.arange(samples)
    for t in tqdm(range(chain.horizon), disable=not progress, desc=f"simulate batch SD k={k}"):
        p, q = chain._laws(t)
        res, _ = _residuals(p, q, k)  # (C, k+1, n)
        draft_tokens = RowSampler(q).sample(np.repeat(ctx, k), gen.random(samples * k)).reshape(samples, k)
        rejected = np.zeros(samples, dtype=np.int64)  # rejections so far at this position
        out = np.full(samples, -1, dtype=np.int64)
        slot = np.full(samples, -1, dtype=np.int64)
        u = gen.random((samples, k))
        for m in range(k):
            act = alive[:, m] & (out < 0)
            if not act.any():
                continue
            c, y, kk = ctx[act], draft_tokens[act, m], rejected[act]
            ok = u[act, m] * q[c, y] < res[c, kk, y]
            idx = np.flatnonzero(act)
            out[idx[ok]] = y[ok]
            slot[idx[ok]] = m
            rejected[idx[~ok]] += 1
        rej = out < 0
        if rej.any():
            c = ctx[rej]
            out[rej] = RowSampler(res).sample(c * (k + 1) + rejected[rej], gen.random(int(rej.sum())))
            counts += rej
        new_alive = np.zeros_like(alive)
        new_alive[rej] = True
        acc = ~rej
        if continuation == "single":
            new_alive[rows[acc], slot[acc]] = True
        else:
            new_alive[acc] = alive[acc] & (draft_tokens[acc] == out[acc, None])
        alive = new_alive
        tokens[:, t] = out
        ctx = out if chain._markov else ctx
    return RejectionEstimate(counts, tokens)
