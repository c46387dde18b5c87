"""P(first k draws without replacement all land in S), for every prefix S of an order.

Sampling without replacement from q is the order in which independent exponential
clocks T_i ~ Exp(q_i) ring (docs/theory.md §2.2).  With λ = q(Ω∖S) the first ring outside S
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

Quadrature (adaptive Gauss–Kronrod).  Time is first rescaled by an exact power of two
so that no rate is subnormal (masses down to 2^-1074 work; the integral is scale-free).
The half-line is cut into panels [a, b]: b = 2a while some rate r (a token of q or a
live λ_j) has r·a ≤ 50, else the panel jumps to a + 1/r_max of the largest such rate, so
a mass of 1e-300 outside S costs a few dozen panels, not 10^3.  Each panel is integrated
by the 21-point Kronrod rule; where it differs from the embedded 10-point Gauss rule by
more than 1e-13 (in D, over every live prefix) the panel is bisected — this is what
resolves the sharp step of P(N ≤ k−1) at large k (width ~ t/√k).  Integration stops
at the first panel end T where the rigorous tail bound max_j e^{−λ_j T} P(N_{S_j}(T) ≤ k−1)
(the integrand is decreasing in t) is below ``tail_tol``.

k = 1 and k = 2 use closed forms: 1 − D₁(S_j) = λ_j and
1 − D₂(S_j) = λ_j (1 + Σ_{i∈S_j} q_i/(1 − q_i)) (:func:`optaccept._stable.swor2_prefix_complement`),
both free of cancellation.

Cost: O(n · k · G) for G quadrature nodes (G ≈ 21 × #panels; #panels grows like
log(1/λ_min) + O(√k) bisections near the step), memory O(k · 21 + n).  Measured accuracy:
1e-13 or better for k up to the support size (uniform q against C(|S|, k)/C(n, k)).
With numba the recursion is one compiled pass over the tokens, the nodes of a panel as vector
lanes (:func:`_dp_lanes_py`).

α* itself needs only the prefixes that can attain the minimum: :func:`best_prefix`
integrates a window of them (:func:`window_complements`, docs/theory.md §2.2), with the
tokens before the window aggregated through power sums — O(window · k · G) plus
O(G · (heavy · k + 36 · k + k²)) instead of O(n · k · G).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _jit, _stable
from ._errors import SolverError

__all__ = ["best_prefix", "prefix_complements", "prefix_subset_probs", "subset_prob_k2", "window_complements"]

_NODES = 21  # Kronrod nodes per panel (kept for the benchmarks)
_SCALE_LIMIT = 300.0  # block cut: q(block) * t_max <= this, so rescaling stays <= e^600
_CERTAIN = 50.0  # q_i * t beyond this: token i has rung (error < e^-50 per token)
_MAX_PANELS = 20_000
_MAX_DEPTH = 40
_PANEL_TOL = 1e-13  # Kronrod − Gauss difference, in D, above which a panel is bisected
_BLOCK = 2048  # tokens per block (cache-sized)

# Gauss–Kronrod 10/21 nodes on [-1, 1] and weights (QUADPACK's qk21 constants).
_XK = np.array(
    [
        0.995657163025808080735527280689003, 0.973906528517171720077964012084452,
        0.930157491355708226001207180059508, 0.865063366688984510732096688423493,
        0.780817726586416897063717578345042, 0.679409568299024406234327365114874,
        0.562757134668604683339000099272694, 0.433395394129247190799265943165784,
        0.294392862701460198131126603103866, 0.148874338981631210884826001129720,
    ]
)  # fmt: skip
_WK = np.array(
    [
        0.011694638867371874278064396062192, 0.032558162307964727478818972459390,
        0.054755896574351996031381300244580, 0.075039674810919952767043140916190,
        0.093125454583697605535065465083366, 0.109387158802297641899210590325805,
        0.123491976262065851077958109831074, 0.134709217311473325928054001771707,
        0.142775938577060080797094273138717, 0.147739104901338491374841515972068,
    ]
)  # fmt: skip
_WK0 = 0.149445554002916905664936468389821
_WG = np.array(
    [
        0.066671344308688137593568809893332, 0.149451349150580593145776339657697,
        0.219086362515982043995534934228163, 0.269266719309996355091226921569469,
        0.295524224714752870173892994651338,
    ]
)  # fmt: skip
_X21 = np.concatenate([-_XK, [0.0], _XK[::-1]])
_W21 = np.concatenate([_WK, [_WK0], _WK[::-1]])
_W10 = np.zeros(21)
_W10[1:10:2] = _WG  # Gauss nodes are the odd-indexed Kronrod nodes
_W10[11:20:2] = _WG[::-1]


def subset_prob_k2(q: np.ndarray, mask: np.ndarray) -> float:
    """D(set ⊆ S) for two draws without replacement: Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i)."""
    order = np.concatenate([np.flatnonzero(mask), np.flatnonzero(~mask)])
    comp = _stable.swor2_prefix_complement(np.asarray(q, dtype=np.float64)[order])[int(mask.sum())]
    return float(min(1.0, max(0.0, 1.0 - comp)))


def prefix_subset_probs(q_ordered: np.ndarray, k: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """D(first k draws ⊆ S_j) for every prefix S_j of the given token order.

    Parameters
    ----------
    q_ordered : ndarray, shape (n,)
        The draft law q, permuted into the order whose prefixes are wanted
        (sums to 1; at least k positive entries; any positive mass, subnormals included).
    k : int
        Number of draws without replacement (1 ≤ k ≤ the support size).
    tail_tol : float
        Integration stops once the rigorous tail bound is below this.

    Returns
    -------
    f : ndarray, shape (n + 1,)
        f[j] = P(the first k draws all lie in the first j tokens); f[0] = 0, f[n] = 1.
        Accurate to about 1e-13 absolute; O(n · k · G) time (see the module docstring).
    """
    return 1.0 - prefix_complements(q_ordered, k, tail_tol=tail_tol)


def prefix_complements(q_ordered: np.ndarray, k: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """1 − D(first k draws ⊆ S_j) for every prefix, computed directly (no 1 − f cancellation)."""
    q = np.asarray(q_ordered, dtype=np.float64)
    # Rates need not sum to 1 (the integral is scale-free): an exact power-of-two rescaling
    # keeps every positive mass normal, so no product below underflows or loses bits.
    q, _ = _stable.rescale_tiny(q)
    n = q.size
    # λ_j = q(Ω∖S_j) as suffix sums: accurate even when it is tiny.
    lam = _stable.suffix_sums(q, accurate=True).astype(np.float64)
    supp_count = np.concatenate([[0], np.cumsum(q > 0)])
    # Fewer than k support tokens in S: D = 0 exactly.  All the mass in S: D = 1.
    exact_zero = supp_count < k
    full = supp_count == supp_count[-1]
    if k == 1:
        comp = lam / lam[0]
    elif k == 2:
        comp = _stable.swor2_prefix_complement(q)
    else:
        comp = np.ones(n + 1)
        live = ~(exact_zero | full)
        if live.any():
            with np.errstate(over="ignore", under="ignore"):  # e^{-λt} with λt beyond 1e308: 0
                comp = _integral_complements(q, lam, k, live, tail_tol)
    comp[exact_zero] = 1.0
    comp[full] = 0.0
    return np.clip(comp, 0.0, 1.0)


def _integral_complements(q: np.ndarray, lam: np.ndarray, k: int, live: np.ndarray, tail_tol: float) -> np.ndarray:
    """λ_j ∫_0^∞ e^{−λ_j t} P(N_{S_j}(t) ≤ k−1) dt for the live prefixes (others: 1)."""
    n = q.size
    j_hi = int(n - np.argmax(live[::-1]))  # last live prefix
    rq = q[:j_hi]  # rates, in [2^-900, 2^174] after the rescaling
    rl = lam[: j_hi + 1]
    live_h = live[: j_hi + 1]
    rl_live = rl[live_h]
    rates = np.concatenate([rq[rq > 0], rl_live[rl_live > 0]])
    integral = _integrate(lambda t, lo: _panel_values(rq, rl, k, t, lo), rates, rl, live_h, float(lam[0]), tail_tol)
    out = np.ones(n + 1)
    out[: j_hi + 1] = np.where(live_h, rl * integral, 1.0)
    return out


def _integrate(panel, rates: np.ndarray, rl: np.ndarray, live: np.ndarray, total: float, tail_tol: float) -> np.ndarray:
    """∫_0^∞ of ``panel(t, lo)`` (one row per prefix, one column per node) by adaptive
    Gauss–Kronrod on the panels of the module docstring; error and tail are controlled on
    the ``live`` rows, the error weighted by their λ (``rl``)."""
    integral = np.zeros(rl.size)
    a, b = 0.0, 1.0 / total  # every rate is ≤ the total q(Ω): [0, 1/q(Ω)] resolves them
    panels = 0
    while True:
        stack = [(a, b, 0)]
        last_vals = None
        while stack:
            lo, hi, depth = stack.pop()
            panels += 1
            if panels > _MAX_PANELS:
                raise SolverError(
                    "without-replacement integral did not converge within "
                    f"{_MAX_PANELS} quadrature panels ({rl.size} prefixes)"
                )
            half = 0.5 * (hi - lo)
            t = lo + half * (_X21 + 1.0)
            vals = panel(t, lo)
            ik = np.einsum("jg,g->j", vals, _W21) * half  # (einsum: ~10x faster than BLAS gemv here)
            ig = np.einsum("jg,g->j", vals, _W10) * half
            err = float((rl[live] * np.abs(ik - ig)[live]).max())
            if err > _PANEL_TOL and depth < _MAX_DEPTH:
                mid = 0.5 * (lo + hi)
                stack.append((mid, hi, depth + 1))
                stack.append((lo, mid, depth + 1))  # popped first: left to right
                continue
            integral += ik
            if hi == b:
                last_vals = vals[:, -1]
        if float(last_vals[live].max()) < tail_tol:
            return integral
        a = b
        with np.errstate(over="ignore"):  # rate·a = inf (subnormal-scale masses) is simply not active
            active = rates[rates * a <= _CERTAIN]
        width = a if active.size == 0 else max(a, 1.0 / float(active.max()))
        b = a + width


#: Bernstein exponent beyond which a tail is dropped (e^-46 < 1e-20 per node).
_TAIL_EXPONENT = 46.0
#: Smallest k for which nodes and prefixes are screened before the recursion.
_SKIP_MIN_K = 16


def _panel_values(q: np.ndarray, lam: np.ndarray, k: int, t: np.ndarray, a: float) -> np.ndarray:
    """e^{-λ_j t} P(N_{S_j}(t) <= k-1) for prefixes j = 0..len(q) at the nodes t >= a.

    Before the O(n·k) recursion, Bernstein's inequality for the Poisson-binomial count
    (P(|N − μ| ≥ x) ≤ exp(−x²/(2(σ² + x/3)))) settles two cheap cases, with error
    below e^{-46} per node: nodes where even the whole vocabulary has surely fewer than k
    rings (there P(N_j ≤ k−1) = 1 for every j), and prefixes beyond the first j* where
    N_{j*} ≥ k surely (there the integrand is 0).  The recursion then runs only over the
    remaining nodes and tokens — at large k this skips most of the work away from the
    step of P(N ≤ k−1).
    """
    n = q.size
    G = t.size
    if k < _SKIP_MIN_K:  # the recursion is only k passes: the screening would cost as much
        return _panel_dp(q, lam, k, t, a)
    A = -np.expm1(-np.outer(t, q))  # ring probabilities (G, n)
    mu = np.cumsum(A, axis=1)
    var = np.cumsum(A * (1.0 - A), axis=1)
    x_hi = k - mu[:, -1]  # N_n ≥ k needs a deviation x_hi above the mean
    with np.errstate(divide="ignore", invalid="ignore"):
        trivial = (x_hi > 0) & (x_hi * x_hi / (2.0 * (var[:, -1] + x_hi / 3.0)) >= _TAIL_EXPONENT)
        x_lo = mu - (k - 1)  # N_j ≤ k − 1 needs a deviation x_lo below the mean
        sure = (x_lo > 0) & (x_lo * x_lo / (2.0 * (var + x_lo / 3.0)) >= _TAIL_EXPONENT)
    out = np.zeros((n + 1, G))
    if trivial.any():
        out[:, trivial] = np.exp(-np.outer(lam, t[trivial]))
    rest = ~trivial
    if not rest.any():
        return out
    first_sure = np.where(sure[rest].any(axis=1), np.argmax(sure[rest], axis=1) + 1, n)  # j* per node
    j_stop = int(first_sure.max())
    out[: j_stop + 1, rest] = _panel_dp(q[:j_stop], lam[: j_stop + 1], k, t[rest], a)
    return out


def _panel_dp(q: np.ndarray, lam: np.ndarray, k: int, t: np.ndarray, a: float) -> np.ndarray:
    """e^{-λ_j t} P(N_{S_j}(t) <= k-1) for prefixes j = 0..len(q) at the nodes t >= a.

    Returns an array of shape (len(q) + 1, len(t)).  With numba: the recursion of the
    module docstring in its convex form, π_m ← e·π_m + (1 − e)·π_{m−1} with
    e = e^{−q_j t} (:func:`_dp_lanes_py`), one pass over the tokens with nothing allocated but
    the answer; without numba :func:`_panel_dp_numpy`.
    """
    kernel = _dp_kernel()
    if kernel is None:
        return _panel_dp_numpy(q, lam, k, t, a)
    start = np.zeros((t.size, k))
    start[:, 0] = 1.0
    out = np.empty((q.size + 1, t.size))
    kernel[0](np.ascontiguousarray(q), np.ascontiguousarray(lam), start, np.ascontiguousarray(t), out)
    return out


#: Up to this x, 1 − e^{−x} and e^{x} from the Taylor series of sinh and cosh − 1
#: (S = Σ x^{2i+1}/(2i+1)!, C = Σ_{i≥1} x^{2i}/(2i)!; 1 − e^{−x} = S − C, e^{x} = 1 + S + C)
#: cut after x^{2h+1} and x^{2h+2}, h the least with x^{2h+1}/(2h+2)! ≤ 2^-56 at the token's largest x
#: (_POLY_X[h]): the remainder is below 2^-56·x (times e^x ≤ e for e^{x}); S − C loses at
#: most one bit (S ≤ 1.18·x, S − C ≥ 0.63·x for x ≤ 1).
_POLY_RATE = 1.0
_POLY_H = 9
_ODD = np.array([1.0 / math.factorial(2 * i + 1) for i in range(_POLY_H + 1)])
_EVEN = np.array([1.0 / math.factorial(2 * i + 2) for i in range(_POLY_H + 1)])
_POLY_X = np.array([(2.0**-56 * math.factorial(2 * h + 2)) ** (1.0 / (2 * h + 1)) for h in range(_POLY_H + 1)])
#: e^{−λ_j t} is recomputed every this many tokens and carried by e^{q_j t} in between
#: (its Taylor polynomial, or 1/e^{−q_j t} from the ring probability: relative error
#: ≤ 3·_REFRESH units in the last place, 1.1e-14).
_REFRESH = 16
#: Above this q_j·t the factor e^{q_j t} is not carried (e^{−λ_j t} is recomputed).
_CARRY_MAX = 30.0


def _dp_lanes_py(q: np.ndarray, lam: np.ndarray, start: np.ndarray, t: np.ndarray, out: np.ndarray) -> None:
    """out[j, g] = e^{-λ_j t_g} P(N_{S_j}(t_g) <= k-1), by the convex recursion over tokens,
    from the law ``start[g]`` (counts 0..k−1) of the count before the first token; the
    nodes of a panel are the inner loop (vector lanes), the prefixes the rows of ``out``.

    Each update is a convex combination of probabilities, so rounding errors add up
    (≤ one unit in the last place per token and count) and never grow; a token that has
    surely rung (ring probability 1) shifts the count by one, with no special case.  A token
    with q_j·t ≤ _POLY_RATE at every node takes its ring probability and e^{q_j t} from the
    series of sinh and cosh − 1, cut where the token's largest q_j·t allows (arithmetic
    only: one vector pass over the nodes); the others take them node by node (the series,
    expm1 or exp, and 1/e^{−q_j t}).
    """
    n = q.size
    G = t.size
    k = start.shape[1]
    pi = np.empty((k, G))
    sv = np.empty(G)
    s = np.empty(G)
    r = np.empty(G)
    acc_r = np.empty(G)
    acc_g = np.empty(G)
    x = np.empty(G)
    y = np.empty(G)
    t_max = 0.0
    for g in range(G):
        t_max = max(t_max, t[g])
    for g in range(G):
        acc = 0.0
        for m in range(k):
            pi[m, g] = start[g, m]
            acc += start[g, m]
        sv[g] = math.exp(-lam[0] * t[g])
        out[0, g] = sv[g] * acc
    for j in range(n):
        qj = q[j]
        refresh = (j + 1) % _REFRESH == 0
        xm = qj * t_max
        if xm <= _POLY_RATE:  # every node by the series: arithmetic only, one vector pass
            h = 0
            while _POLY_X[h] < xm:
                h += 1
            for g in range(G):
                xg = qj * t[g]
                x[g] = xg
                y[g] = xg * xg
                acc_r[g] = _ODD[h]
                acc_g[g] = _EVEN[h]
            for i in range(h - 1, -1, -1):
                co = _ODD[i]
                ce = _EVEN[i]
                for g in range(G):
                    acc_r[g] = co + y[g] * acc_r[g]
                    acc_g[g] = ce + y[g] * acc_g[g]
            for g in range(G):
                sh = x[g] * acc_r[g]  # sinh x
                ch = y[g] * acc_g[g]  # cosh x − 1
                r[g] = sh - ch
                acc_g[g] = 1.0 + (sh + ch)  # e^{x}
        else:
            for g in range(G):
                xg = qj * t[g]
                if xg <= _POLY_RATE:
                    yg = xg * xg
                    ar = _ODD[_POLY_H]
                    ag = _EVEN[_POLY_H]
                    for i in range(_POLY_H - 1, -1, -1):
                        ar = _ODD[i] + yg * ar
                        ag = _EVEN[i] + yg * ag
                    sh = xg * ar
                    ch = yg * ag
                    r[g] = sh - ch
                    acc_g[g] = 1.0 + (sh + ch)
                elif xg < 1.0:  # e ≥ 1/e: 1 − r loses no bits, and 1/e carries e^{−λ_j t}
                    r[g] = -math.expm1(-xg)
                    acc_g[g] = 1.0 / (1.0 - r[g])
                elif xg < _CARRY_MAX:
                    e_ = math.exp(-xg)
                    r[g] = 1.0 - e_
                    acc_g[g] = 1.0 / e_
                else:
                    r[g] = -math.expm1(-xg)
                    acc_g[g] = 1.0
                    refresh = True
        for g in range(G):
            s[g] = 0.0
        for m in range(k - 1, 0, -1):
            for g in range(G):
                v = (1.0 - r[g]) * pi[m, g] + r[g] * pi[m - 1, g]
                pi[m, g] = v
                s[g] += v
        for g in range(G):
            v = (1.0 - r[g]) * pi[0, g]
            pi[0, g] = v
            s[g] += v
        if refresh:
            lj = lam[j + 1]
            for g in range(G):
                sv[g] = math.exp(-lj * t[g])
        else:
            for g in range(G):
                sv[g] *= acc_g[g]
        for g in range(G):
            out[j + 1, g] = sv[g] * s[g]


_DP = None
_DP_LOCK = threading.Lock()


def _dp_kernel():
    """The compiled (:func:`_dp_lanes_py`, :func:`_aggregate_py`, :func:`_tables_py`), or None (numba missing,
    or ``OPTACCEPT_NO_JIT=1``)."""
    global _DP
    if _jit.disabled():
        return None
    if _DP is None:
        with _DP_LOCK:
            if _DP is None:
                jit = _jit.njit()
                _DP = False if jit is None else (jit(_dp_lanes_py), jit(_aggregate_py), jit(_tables_py))
    return _DP or None


def _panel_dp_numpy(q: np.ndarray, lam: np.ndarray, k: int, t: np.ndarray, a: float) -> np.ndarray:
    """:func:`_panel_dp` in numpy (no numba): the rescaled recursion as cumulative sums.

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
    Qu_acc = _stable.prefix_sums(qu, accurate=True)  # in extended precision where numpy has it
    Qu = Qu_acc.astype(np.float64)
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
        # Q_j − Q_b as a block-local sum: a difference of global prefix sums would carry an
        # absolute error ~1e-16 that t (up to 1e4·n here) turns into a relative error of 1e-12.
        local = (Qu_acc[b0 + 1 : b1 + 1] - Qu_acc[b0]).astype(np.float64)
        expo = lam[b0 + 1 : b1 + 1] + local
        out[:, b0 + 1 : b1 + 1] = total * np.exp(-tcol * expo)
        state *= np.exp(-local[-1] * t)
    return out.T


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

#: Light tokens at a node t: q_i·t ≤ this.
_LIGHT = 0.125
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
    _dp_kernel()[2](heavy, rest, scale, sums)
    return heavy, rest, scale, sums


#: A light token leaves the power sums once its power is below this (each sum is ≥ 1, the
#: largest light mass contributing 1: what is dropped is below 2^-99 per token, relative).
_TABLE_DROP = 2.0**-100


def _tables_py(heavy, rest, scale, sums) -> None:
    """Fill ``scale`` and ``sums`` of :func:`_aggregate_tables` (sums of positive terms, a
    backward recurrence over the cuts: sums[h] = 1 + (scale[h+1]/scale[h])^r · sums[h+1])."""
    H = heavy.size
    terms = sums.shape[1] - 1
    if rest.size:
        top = rest.max()
        scale[H] = top
        x = rest / top
        pw = x.copy()
        live = x.size
        for r in range(1, terms + 1):  # power by power, over the tokens whose powers still count
            acc = 0.0
            kept = 0
            for i in range(live):
                v = pw[i]
                acc += v
                if v >= _TABLE_DROP:  # else x ≤ 1/2 (x^36 ≥ 2^-36 otherwise): the rest < 2·v
                    pw[kept] = v * x[i]
                    x[kept] = x[i]
                    kept += 1
            sums[H, r] = acc
            live = kept
    for h in range(H - 1, -1, -1):
        scale[h] = heavy[h]
        x = scale[h + 1] / scale[h]
        pw = 1.0
        for r in range(1, terms + 1):
            pw *= x
            sums[h, r] = 1.0 + pw * sums[h + 1, r]


def _aggregate_py(heavy, rest, scale, sums, coef, t, out) -> None:
    """out[g, m] = P(N_A(t_g) = m), m < k = out.shape[1], for the tokens A before a window
    (the tables of :func:`_aggregate_tables`)."""
    k = out.shape[1]
    H = heavy.size
    terms = sums.shape[1] - 1
    tm = np.empty(terms + 1)
    ell = np.empty(k)
    f = np.empty(k)
    for g in range(t.size):
        tg = t[g]
        h = 0
        while h < H and heavy[h] * tg > _LIGHT:
            h += 1
        if h == H and rest.size > 0 and scale[H] * tg > _LIGHT:
            # more heavy tokens than kept apart: no light part, the recursion over all of A
            for m in range(k):
                out[g, m] = 0.0
            out[g, 0] = 1.0
            n_rec = H + rest.size
        else:
            u = scale[h] * tg  # ≤ 1/8
            up = 1.0
            for r in range(1, terms + 1):
                up *= u
                tm[r] = up * sums[h, r]  # Σ_light (q_i t)^r
            for s_ in range(1, k):
                acc = 0.0
                for r in range(s_, terms + 1):
                    acc += coef[s_, r] * tm[r]
                ell[s_] = acc / s_ if s_ % 2 == 1 else -acc / s_
            f[0] = 1.0
            for m in range(1, k):
                acc = 0.0
                for s_ in range(1, m + 1):
                    acc += s_ * ell[s_] * f[m - s_]
                f[m] = acc / m
            x = tm[1]  # t · q(light)
            for m in range(k):
                out[g, m] = math.exp(math.log(f[m]) - x) if f[m] > 0.0 else 0.0
            n_rec = h
        for i in range(n_rec):  # heavy tokens (and, above, the rest): the convex recursion
            qi = heavy[i] if i < H else rest[i - H]
            r_ = -math.expm1(-qi * tg)
            e = 1.0 - r_
            for m in range(k - 1, 0, -1):
                out[g, m] = e * out[g, m] + r_ * out[g, m - 1]
            out[g, 0] = e * out[g, 0]


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
        lanes, aggregate, _ = kernels

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


def best_prefix(P: np.ndarray, q_ordered: np.ndarray, k: int) -> tuple[float, int]:
    """min_j P_j + 1 − D(S_j) over the prefixes of the order and a minimiser (h_0 = 1),
    integrating only the window of prefixes that can still attain it.

    Bound: D(S) ≤ q(S)^k for draws without replacement (given earlier draws in S that
    removed mass R, the next lands in S with probability (q(S) − R)/(1 − R) ≤ q(S)), so
    h_j ≥ P_j + 1 − (1 − λ_j)^k.  With u the least of the h known without an integral
    (S_0; prefixes with fewer than k support tokens, D = 0; no mass outside, D = 1) and of
    h at the minimiser j₀ of that bound (one window of width 1), the minimum lies among the
    j whose bound is ≤ u + 1e-12 (the margin is meant to cover the quadrature's error, whose size rests on the adaptive rule's error estimate, not on a proved bound).  Without numba,
    or for k ≤ 2 or k > 16, every prefix is evaluated."""
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
    j0 = int(np.argmin(lower))
    if lower[j0] > u + 1e-12:
        return u, best_known
    h0 = float(P[j0] + _window(q, suffix, k, j0, j0, 1e-15)[0])
    u = min(u, h0)
    cand = np.flatnonzero(lower <= u + 1e-12)
    lo, hi = int(cand[0]), int(cand[-1])
    h = P[lo : hi + 1] + _window(q, suffix, k, lo, hi, 1e-15)
    h[~live[lo : hi + 1]] = known[lo : hi + 1][~live[lo : hi + 1]]
    j = int(np.argmin(h))
    if known[best_known] <= h[j]:
        return float(known[best_known]), best_known
    return float(h[j]), lo + j
