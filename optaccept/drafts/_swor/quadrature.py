"""The adaptive Gauss–Kronrod quadrature of 1 − D(S_j) for every prefix S_j of an order.

The integral, its panels and its tail bound are described in :mod:`optaccept.drafts._swor`; this
module holds the rule's constants, the panel loop (:func:`_integrate`, shared with the window
search of :mod:`optaccept.drafts._swor.window`), the integrand at the nodes of a panel
(:func:`_panel_values`: Bernstein screening, then the compiled recursion of
:mod:`optaccept.drafts._swor.kernels` or its numpy form :func:`_panel_dp_numpy`).
"""

from __future__ import annotations

import numpy as np

from ..._errors import SolverError
from ..._lib import stable as _stable
from .kernels import _dp_kernel

__all__ = ["_integral_complements", "_integrate", "_panel_dp", "_panel_dp_numpy", "_panel_values"]

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
