"""α* over the prefixes of an order, integrating only the prefixes that can still win.

:func:`best_prefix` bounds every prefix from below without an integral, keeps the window of
those whose bound reaches an upper bound of the minimum, and integrates that window alone
(:func:`window_complements`), the tokens before it aggregated through power sums (docs/theory.md
§2.2; the method in :mod:`optaccept.drafts._swor`).
"""

from __future__ import annotations

import math

import numpy as np

from ..._lib import stable as _stable
from .kernels import _dp_kernel, sized
from .prefixes import prefix_complements
from .quadrature import _integrate

__all__ = ["best_prefix", "first_draw_bound", "window_complements"]

# --------------------------------------------------------------------------- windows
#
# Only the prefixes that can still attain the minimum need their complements: a window
# [j_lo, j_hi] of the order.  Tokens after j_hi enter only through λ_j (the law of draws
# inside S_j does not depend on how the mass outside is split), and the tokens before j_lo
# only through the law of their count N_A(t), truncated to 0..k−1, which
# :func:`_aggregate_py` computes at each node without a pass over them: the tokens with
# q_i·t > 1/8 ("heavy", at most 8t of them) by the convex recursion, the light ones through
# the power sums P_s = Σ_i w_i^s of w_i = e^{q_i t} − 1, since
#     Π_i (e^{−q_i t} + (1 − e^{−q_i t}) z) = e^{−t·q(light)} · exp(Σ_s (−1)^{s+1} P_s z^s / s)
# and P_s = Σ_r c_{s,r} t^r Σ_i q_i^r with (e^x − 1)^s = Σ_r c_{s,r} x^r (c ≥ 0; 36 terms:
# the remainder is below 1.2e-17 of the leading term for s ≤ 15, x ≤ 1/8).  The sums
# Σ_i q_i^r over the light tokens are kept for every cut between heavy and light, each
# scaled by the largest light mass (no overflow or underflow for any t), built once.

#: Terms kept of the series (e^x − 1)^s = Σ_r c_{s,r} x^r.
_SERIES = 36
#: Largest k whose tokens before a window are aggregated (else the window starts at 0).
_AGG_MAX_K = 16
#: Tokens before a window that can be heavy at some node: the largest this many are kept
#: apart (a node with more heavy tokens runs the recursion over all of them).
_HEAVY_CAP = 4096


def _series_coefficients(kmax: int, terms: int) -> np.ndarray:
    """c[s, r] with (e^x − 1)^s = Σ_r c[s, r] x^r, s < kmax, r ≤ terms (all ≥ 0)."""
    one = np.zeros(terms + 1)
    fact = 1.0
    for r in range(1, terms + 1):
        fact *= r
        one[r] = 1.0 / fact
    c = np.zeros((kmax, terms + 1))
    c[0, 0] = 1.0
    for s_ in range(1, kmax):
        c[s_] = np.convolve(c[s_ - 1], one)[: terms + 1]
    return c


_COEF = _series_coefficients(_AGG_MAX_K, _SERIES)


def _aggregate_tables(q_before: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(heavy, rest, scale, sums) for the tokens before a window: ``heavy`` the largest
    masses (at most _HEAVY_CAP, descending), ``rest`` the others, and for every cut
    h = 0..len(heavy) the light tokens' largest mass ``scale[h]`` and
    ``sums[h, r] = Σ_light (q_i/scale[h])^r``."""
    qa = q_before[q_before > 0]
    if qa.size > _HEAVY_CAP:
        part = np.partition(qa, qa.size - _HEAVY_CAP)
        heavy = np.sort(part[qa.size - _HEAVY_CAP :])[::-1].copy()
        rest = part[: qa.size - _HEAVY_CAP]
    else:
        heavy = np.sort(qa)[::-1].copy()
        rest = qa[:0]
    H = heavy.size
    scale = np.zeros(H + 1)
    sums = np.zeros((H + 1, _SERIES + 1))
    rest = np.ascontiguousarray(rest)
    top = float(rest.max()) if rest.size else 0.0
    small = rest
    if rest.size:
        # The light tokens' power sums Σ (q_i/top)^r: those with q_i/top ≥ 2^-27 by numpy's
        # vector passes (x^36 ≥ 2^-972: no subnormal on the way), the others in the kernel,
        # which drops each once its power no longer counts (within four powers).
        x = rest / top
        dense = x >= _DENSE_MIN
        xd = x[dense]
        small = np.ascontiguousarray(rest[~dense])
        pw = xd.copy()
        for r in range(1, _SERIES + 1):
            sums[H, r] = pw.sum()
            if r < _SERIES:
                pw *= xd
    _dp_kernel()[2](heavy, small, top, scale, sums)
    return heavy, rest, scale, sums


#: Light tokens with q_i/top at least this take numpy's passes in :func:`_aggregate_tables`.
_DENSE_MIN = 2.0**-27


@sized
def window_complements(q_ordered: np.ndarray, k: int, j_lo: int, j_hi: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """1 − D(first k draws ⊆ S_j) for the prefixes j_lo ≤ j ≤ j_hi of the given order:
    ``prefix_complements(q_ordered, k)[j_lo : j_hi + 1]`` at a cost O((j_hi − j_lo)·k·G)
    plus O(G·(heavy·k + 36·k + k²)) for the tokens before j_lo (G quadrature nodes; see the
    comment above) and one partial sort.  Needs numba and 3 ≤ k ≤ 16; otherwise it slices
    the full computation over the first j_hi tokens (the rest merged into one)."""
    q = np.asarray(q_ordered, dtype=np.float64)
    q, _ = _stable.rescale_tiny(q)
    n = q.size
    if not 0 <= j_lo <= j_hi <= n:
        raise ValueError("window out of range")
    lam = _stable.suffix_sums(q, accurate=True).astype(np.float64)
    return _window(q, lam, k, j_lo, j_hi, tail_tol)


def _window(q: np.ndarray, lam: np.ndarray, k: int, j_lo: int, j_hi: int, tail_tol: float) -> np.ndarray:
    """:func:`window_complements` for a rescaled order ``q`` (no subnormal mass) and its
    suffix sums ``lam``, computed once by the caller."""
    n = q.size
    kernels = _dp_kernel()
    if kernels is None or k < 3 or k > _AGG_MAX_K:
        tail = float(lam[j_hi])
        head = q[:j_hi]
        q_cut = np.append(head, tail) if tail > 0 and j_hi < n else head
        return prefix_complements(q_cut, k, tail_tol=tail_tol)[j_lo : j_hi + 1]
    supp = np.concatenate([[0], np.cumsum(q > 0)])[j_lo : j_hi + 1]
    rl = lam[j_lo : j_hi + 1]
    exact_zero = supp < k
    full = rl == 0
    live = ~(exact_zero | full)
    comp = np.ones(rl.size)
    if live.any():
        before = q[:j_lo]
        heavy, rest, scale, sums = _aggregate_tables(before)
        win = np.ascontiguousarray(q[j_lo:j_hi])
        rl_c = np.ascontiguousarray(rl)
        lanes, aggregate = kernels[0], kernels[1]

        def panel(t, lo):
            start = np.empty((t.size, k))
            aggregate(heavy, rest, scale, sums, _COEF, t, start)
            out = np.empty((win.size + 1, t.size))
            lanes(win, rl_c, start, np.ascontiguousarray(t), out)
            return out

        rates_q = q[:j_hi]
        rl_live = rl[live]
        rates = np.concatenate([rates_q[rates_q > 0], rl_live[rl_live > 0]])
        integral = _integrate(panel, rates, rl, live, float(lam[0]), tail_tol)
        comp = np.where(live, rl * integral, 1.0)
    comp[exact_zero] = 1.0
    comp[full] = 0.0
    return np.clip(comp, 0.0, 1.0)


def first_draw_bound(q: np.ndarray, lam: np.ndarray, k: int, start: int = 0) -> np.ndarray | None:
    """An upper bound on D(first k draws ⊆ S_j) for every prefix S_j, or None where it does
    not apply (numba missing, or a mass above 1/2).

    Conditioning on the first draw i ∈ S_j, the other k − 1 draws are without replacement from
    q on Ω∖{i}, renormalised, and must land in S_j∖{i}, of mass 1 − λ_j/(1 − q_i) there; by
    Lemma 2.4 of docs/theory.md, D(S_j) ≤ B_j = Σ_{i∈S_j} q_i (1 − λ_j/(1 − q_i))^{k−1} (Lemma
    2.4b; equality for k ≤ 2).  B_j is evaluated in one compiled pass
    (:func:`optaccept.drafts._swor.kernels._first_draw_py`) and returned plus a bound on its rounding
    error: its k terms C(k−1, m) λ_j^m Σ_{i<j} q_i/(1 − q_i)^m (alternating in sign) each carry
    a relative error below (j + 2k + 4)·2^-53 (j additions, m divisions and powers) and Horner's
    rule adds at most 2k·2^-53 of the sum of their absolute values T_j, so B_j is raised by
    (j + 4k + 8)·2^-52·T_j + 2^-50; with every q_i ≤ 1/2, T_j ≤ (1 + 2λ_j)^{k−1}.

    Parameters
    ----------
    q : ndarray, shape (n,)
        The draft law in the order of the prefixes, summing to 1.
    lam : ndarray, shape (n + 1,)
        λ_j = q(Ω∖S_j), in [0, 1].
    k : int
        Number of draws, 1 ≤ k ≤ 16.
    start : int
        The prefixes j < start get the trivial bound 1 (D ≤ 1), which costs nothing.

    Returns
    -------
    ndarray, shape (n + 1,), or None
    """
    kernels = _dp_kernel()
    if kernels is None or q.size == 0 or float(q.max()) > 0.5:
        return None
    out = np.empty(q.size + 1)
    kernels[3](np.ascontiguousarray(q), np.ascontiguousarray(lam), _BINOMIAL[k - 1, :k].copy(), start, out)
    return out


#: C(r, m) for r, m < _AGG_MAX_K.
_BINOMIAL = np.array([[math.comb(r, m) for m in range(_AGG_MAX_K)] for r in range(_AGG_MAX_K)], dtype=np.float64)


@sized
def best_prefix(P: np.ndarray, q_ordered: np.ndarray, k: int) -> tuple[float, int]:
    """min_j P_j + 1 − D(S_j) over the prefixes of the order and a minimiser (h_0 = 1),
    integrating only the window of prefixes that can still attain it.

    Bounds: D(S) ≤ q(S)^k for draws without replacement (given earlier draws in S that
    removed mass R, the next lands in S with probability (q(S) − R)/(1 − R) ≤ q(S)), and
    D(S_j) ≤ B_j, that bound applied after the first draw (:func:`first_draw_bound`), so
    h_j ≥ P_j + 1 − min((1 − λ_j)^k, B_j).  With u the least of the h known without an integral
    (S_0; prefixes with fewer than k support tokens, D = 0; no mass outside, D = 1) and of
    h at the minimiser j₀ of that bound, the minimum lies among the j whose bound is
    ≤ u + 1e-12 (the margin is meant to cover the quadrature's error, whose size rests on the
    adaptive rule's error estimate, not on a proved bound).  Where the first-draw bound applies,
    h at j₀ is not integrated alone: u is guessed from the two bounds at j₀ (``_GAP_FACTOR``),
    the window of that guess integrated, and its minimum kept when it is below the guess (no
    prefix outside the window can then attain it); otherwise that minimum is u and the window
    of u is integrated.  Without numba, or for k ≤ 2 or k > 16, every prefix is evaluated."""
    q = np.asarray(q_ordered, dtype=np.float64)
    if k < 3 or k > _AGG_MAX_K or _dp_kernel() is None:  # closed forms, or no window to gain
        h = P + prefix_complements(q, k)
        h[0] = 1.0
        j = int(np.argmin(h))
        return float(h[j]), j
    # One rescaling and one accurate suffix sum serve the bound and both windows (the
    # rescaling is by an exact power of two: the bound's λ/q(Ω) is unchanged by it).
    q, _ = _stable.rescale_tiny(q)
    suffix = _stable.suffix_sums(q, accurate=True).astype(np.float64)
    supp = np.concatenate([[0], np.cumsum(q > 0)])
    # Prefixes whose h is known without an integral: S_0 (h = 1), fewer than k support
    # tokens in S (D = 0: h = P + 1), no mass outside S (D = 1: h = P).
    known = np.full(P.size, np.inf)
    known[supp < k] = P[supp < k] + 1.0
    known[suffix == 0] = P[suffix == 0]
    known[0] = 1.0
    live = ~np.isfinite(known)
    best_known = int(np.argmin(known))
    u = float(known[best_known])
    if not live.any():
        return u, best_known
    lam = np.clip(suffix / float(q.sum()), 0.0, 1.0)
    lower = np.where(live, P + _stable.one_minus_pow1m(lam, k), np.inf)
    reach = np.flatnonzero(lower <= u + 1e-12)
    if reach.size == 0:
        return u, best_known
    # the sharper bound is needed only from the first prefix that q(S)ᵏ leaves in play
    bound = first_draw_bound(q / float(q.sum()), lam, k, int(reach[0]))
    gain = None
    if bound is not None:  # the sharper bound where it is sharper (P + 1 − B rounds by < 2^-51)
        lower_b = np.where(live, P + (1.0 - bound) - 2.0**-50, np.inf)
        with np.errstate(invalid="ignore"):  # inf − inf at the known prefixes
            gain = lower_b - lower
        lower = np.maximum(lower, lower_b)
    j0 = int(np.argmin(lower))
    if lower[j0] > u + 1e-12:
        return u, best_known
    if gain is not None:
        # One window instead of two: guess u from the bounds alone, integrate every prefix whose
        # bound is below the guess, and keep the answer when the minimum found there is below the
        # guess (then no prefix outside can attain it); else go on with that minimum as u.
        delta = _GAP_FACTOR * (k - 2) / 2 * max(float(gain[j0]), 0.0)
        guess = min(u, float(lower[j0]) + delta)
        cand = np.flatnonzero(lower <= guess + 1e-12)
        lo, hi = int(cand[0]), int(cand[-1])
        h = _window_values(P, q, suffix, k, lo, hi, live, known)
        j = int(np.argmin(h))
        if min(u, float(h[j])) <= guess:
            if known[best_known] <= h[j]:
                return float(known[best_known]), best_known
            return float(h[j]), lo + j
        u = min(u, float(h[j]))
    else:
        u = min(u, float(P[j0] + _window(q, suffix, k, j0, j0, 1e-15)[0]))
    cand = np.flatnonzero(lower <= u + 1e-12)
    lo, hi = int(cand[0]), int(cand[-1])
    h = _window_values(P, q, suffix, k, lo, hi, live, known)
    j = int(np.argmin(h))
    if known[best_known] <= h[j]:
        return float(known[best_known]), best_known
    return float(h[j]), lo + j


#: The gap h_j − ℓ_j left by the first-draw bound is guessed as this times (k − 2)/2 times what
#: that bound gained over q(S)ᵏ at the same prefix (of the k(k−1)/2 pairs of draws that q(S)ᵏ
#: treats as independent the first draw takes part in k − 1, the rest are (k − 1)(k − 2)/2; on
#: softmax, Zipf and Dirichlet rows of 49,152 tokens, k = 3 to 16, the factor needed was 0.47–1.0).  Only the
#: speed depends on it: a guess too low costs a second window.
_GAP_FACTOR = 1.15


def _window_values(P, q, suffix, k, lo, hi, live, known) -> np.ndarray:
    """h_j = P_j + 1 − D(S_j) for lo ≤ j ≤ hi, the known values where no integral is needed."""
    h = P[lo : hi + 1] + _window(q, suffix, k, lo, hi, 1e-15)
    dead = ~live[lo : hi + 1]
    h[dead] = known[lo : hi + 1][dead]
    return h
