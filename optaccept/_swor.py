"""P(first k draws without replacement all land in S), for every prefix S of an order.

Sampling without replacement from q is the order in which independent exponential
clocks T_i ~ Exp(q_i) ring (MATH §2.2).  With λ = q(Ω∖S) the first ring outside S
comes at an Exp(λ) time, so

.. math::

    1 - D(\\text{set} \\subseteq S) = \\lambda \\int_0^\\infty e^{-\\lambda t}\\,
    P\\bigl(N_S(t) \\le k-1\\bigr)\\,dt,

where N_S(t) is Poisson-binomial over i ∈ S with success probabilities
1 − e^{−q_i t}.  For the prefixes S_j = {o_1, …, o_j} of a token order, the laws
π_m(j, t) = P(N_{S_j}(t) = m), m < k, obey

    π_m(j) = e^{−q_j t} π_m(j−1) + (1 − e^{−q_j t}) π_{m−1}(j−1),

which, after the rescaling s_m(j) = e^{(Q_j − Q_{b})t} π_m(j) inside a block of
tokens starting at b, becomes a plain cumulative sum
s_m = s_m(b) + cumsum(expm1(q_j t) · s_{m−1}(j−1)).  Blocks are cut so that the
rescaling never exceeds e^{600}; one shared quadrature grid then serves all n+1
prefixes in O(n · k · #nodes) vectorised work.

Quadrature: Gauss–Legendre panels [0, 1], [1, 2], [2, 4], … (all rates are ≤ 1
because q sums to 1, so each panel resolves every exponential that is not already
below e^{−40} on it).  Integration stops at the first panel end T where the
rigorous tail bound max_j e^{−λ_j T} P(N_{S_j}(T) ≤ k−1) (the integrand is
decreasing in t) is below ``tail_tol``.
"""

from __future__ import annotations

import numpy as np

from ._errors import SolverError

__all__ = ["prefix_subset_probs", "subset_prob_k2"]

_NODES = 16
_SCALE_LIMIT = 300.0  # block cut: q(block) * t_max <= this, so rescaling stays <= e^600
_CERTAIN = 50.0  # q_i * t beyond this: token i has rung (error < e^-50 per token)
_MAX_PANELS = 240
_BLOCK = 2048  # tokens per block (cache-sized)


def _gauss_legendre(a: float, b: float, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(_NODES if m is None else m)
    half = 0.5 * (b - a)
    return a + half * (x + 1.0), half * w


def subset_prob_k2(q: np.ndarray, mask: np.ndarray) -> float:
    """D(set ⊆ S) for two draws without replacement: Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i)."""
    qs = q[mask]
    # q(S) − q_i and 1 − q_i as sums of the other terms (prefix + suffix): no cancellation.
    others_in = _others(qs)
    rest = q[~mask].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(qs > 0, qs * others_in / (others_in + rest), 0.0)
    return float(min(1.0, max(0.0, terms.sum())))


def _others(v: np.ndarray) -> np.ndarray:
    """Σ_{j≠i} v_j for every i, from prefix and suffix sums."""
    before = np.concatenate([[0.0], np.cumsum(v)[:-1]])
    after = np.concatenate([np.cumsum(v[::-1])[::-1][1:], [0.0]])
    return before + after


def prefix_subset_probs(q_ordered: np.ndarray, k: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """D(first k draws ⊆ S_j) for every prefix S_j of the given token order.

    Parameters
    ----------
    q_ordered : ndarray, shape (n,)
        The draft law q, permuted into the order whose prefixes are wanted
        (sums to 1; at least k positive entries).
    k : int
        Number of draws without replacement.
    tail_tol : float
        Integration stops once the rigorous tail bound is below this.

    Returns
    -------
    f : ndarray, shape (n + 1,)
        f[j] = P(the first k draws all lie in the first j tokens); f[0] = 0, f[n] = 1.
    """
    q = np.asarray(q_ordered, dtype=np.float64)
    n = q.size
    # λ_j = q(Ω∖S_j) as suffix sums: accurate even when it is tiny.
    lam = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
    lam /= lam[0]
    f = np.zeros(n + 1)
    if k == 1:
        return 1.0 - lam
    supp_count = np.concatenate([[0], np.cumsum(q > 0)])
    # Fewer than k support tokens in S: f = 0 exactly.  All the mass in S: f = 1.
    exact_zero = supp_count < k
    full = supp_count == supp_count[-1]
    live = ~(exact_zero | full)
    f[full] = 1.0
    if not live.any():
        return f
    j_hi = int(n - np.argmax(live[::-1]))  # last live prefix
    qq = q[:j_hi]
    lam_live = lam[: j_hi + 1]
    live_h = live[: j_hi + 1]
    integral = np.zeros(j_hi + 1)  # ∫ e^{-λ_j t} P(N_j(t) <= k-1) dt
    a, b = 0.0, 1.0
    for _ in range(_MAX_PANELS):
        t, w = _gauss_legendre(a, b)
        vals = _panel_values(qq, lam_live, k, t, a)
        integral += vals @ w
        if float(vals[live_h, -1].max()) < tail_tol:
            break
        a, b = b, 2.0 * b
    else:
        raise SolverError(
            "without-replacement integral did not converge: q puts all but a vanishing mass on k-1 tokens"
        )
    f_live = np.clip(1.0 - lam_live * integral, 0.0, 1.0)
    idx = np.flatnonzero(live_h)
    f[idx] = f_live[idx]
    return f


def _panel_values(q: np.ndarray, lam: np.ndarray, k: int, t: np.ndarray, a: float) -> np.ndarray:
    """e^{-λ_j t} P(N_{S_j}(t) <= k-1) for prefixes j = 0..len(q) at the nodes t >= a.

    Returns an array of shape (len(q) + 1, len(t)).  Tokens with q_i·a > 50 have rung
    before t with probability > 1 − e^{−50}: they shift the count by one (r_j counts
    them) instead of entering the recursion.  Work is laid out (nodes, tokens) and cut
    into cache-sized blocks.
    """
    n = q.size
    G = t.size
    t_max = float(t.max())
    out = np.empty((G, n + 1))
    out[:, 0] = np.exp(-lam[0] * t)
    certain = q * a > _CERTAIN
    any_certain = bool(certain.any())
    r = np.concatenate([[0], np.cumsum(certain)])
    qu = np.where(certain, 0.0, q) if any_certain else q
    Qu = np.concatenate([[0.0], np.cumsum(qu)])
    seg = np.floor(Qu[1:] * (t_max / _SCALE_LIMIT)).astype(np.int64)
    cut = np.zeros(n, dtype=bool)
    cut[0] = True
    cut[1:] = seg[1:] != seg[:-1]
    cut[::_BLOCK] = True
    starts = np.flatnonzero(cut)
    ends = np.append(starts[1:], n)
    tcol = t[:, None]
    # π'_m at the current block start: law of the number of uncertain rings (m < k)
    state = np.zeros((k, G))
    state[0] = 1.0
    shifted = np.empty((G, _BLOCK))
    for b0, b1 in zip(starts.tolist(), ends.tolist()):
        L = b1 - b0
        w = np.expm1(tcol * qu[b0:b1])  # (G, L)
        total = np.repeat(state[0][:, None], L, axis=1)
        prev = total
        keep = (r[b0 + 1 : b1 + 1] < k - np.arange(k)[:, None]) if any_certain else None
        if any_certain:
            total = np.where(keep[0], total, 0.0)
        sh = shifted[:, :L]
        start_state = state.copy()
        for m in range(1, k):
            sh[:, 0] = start_state[m - 1]
            sh[:, 1:] = prev[:, :-1]
            cur = np.multiply(w, sh)
            np.cumsum(cur, axis=1, out=cur)
            cur += start_state[m][:, None]
            if any_certain:
                total += np.where(keep[m], cur, 0.0)
            else:
                total += cur
            state[m] = cur[:, -1]
            prev = cur
        expo = lam[b0 + 1 : b1 + 1] + (Qu[b0 + 1 : b1 + 1] - Qu[b0])
        out[:, b0 + 1 : b1 + 1] = total * np.exp(-tcol * expo)
        state *= np.exp(-(Qu[b1] - Qu[b0]) * t)
    return out.T
