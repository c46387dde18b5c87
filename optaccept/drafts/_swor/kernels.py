"""The compiled kernels of the without-replacement prefix probabilities (:mod:`optaccept.drafts._swor`).

Plain Python functions that numba compiles (:func:`_dp_kernel`): the convex recursion over
tokens with the quadrature nodes as vector lanes (:func:`_dp_lanes_py`), the power-sum tables
of the tokens before a window (:func:`_tables_py`) and the law of their count at each node
(:func:`_aggregate_py`); the formulas are in :mod:`optaccept.drafts._swor.quadrature` and
:mod:`optaccept.drafts._swor.window`.  Without numba (or with ``OPTACCEPT_NO_JIT=1``) :func:`_dp_kernel`
returns None and the callers take their numpy forms.
"""

from __future__ import annotations

import contextvars
import functools
import math
import threading

import numpy as np

from ..._lib import jit as _jit

__all__ = ["_dp_kernel", "_dp_lanes_py", "_aggregate_py", "_first_draw_py", "_tables_py"]

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
#: The vocabulary size of the computation under way (set by :func:`sized` entry points):
#: below the ``swor`` threshold of :data:`optaccept._lib.jit.THRESHOLDS` the numpy forms run.
_SIZE: contextvars.ContextVar = contextvars.ContextVar("optaccept_swor_size", default=None)


def _dp_kernel():
    """The compiled (:func:`_dp_lanes_py`, :func:`_aggregate_py`, :func:`_tables_py`,
    :func:`_first_draw_py`), or None (numba missing, ``OPTACCEPT_NO_JIT=1``, or a computation
    whose vocabulary is below the family's size threshold: the numpy forms, the every-prefix
    quadrature instead of the window search — the same α* to ≈ 1e-15)."""
    global _DP
    if not _jit.compiled_for(_SIZE.get(), "swor"):
        return None
    if _DP is None:
        with _DP_LOCK:
            if _DP is None:
                jit = _jit.njit()
                if jit is None:
                    _DP = False
                else:
                    kernels = (jit(_dp_lanes_py), jit(_aggregate_py), jit(_tables_py), jit(_first_draw_py))
                    _jit.announce("swor", kernels)
                    _DP = kernels
    return _DP or None


def sized(fn):
    """Run ``fn(P_or_q, q?, ...)`` with the computation's vocabulary size (its argument
    ``q_ordered``, else its first) recorded for :func:`_dp_kernel`, unless an outer call did."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _SIZE.get() is not None:
            return fn(*args, **kwargs)
        if "q_ordered" in kwargs:
            q = kwargs["q_ordered"]
        else:
            q = args[1] if fn.__name__ == "best_prefix" else args[0]
        token = _SIZE.set(int(np.size(q)))
        try:
            return fn(*args, **kwargs)
        finally:
            _SIZE.reset(token)

    return wrapper


#: Light tokens at a node t: q_i·t ≤ this (:mod:`optaccept.drafts._swor.window`).
_LIGHT = 0.125

#: A light token leaves the power sums once its power is below this (each sum is ≥ 1, the
#: largest light mass contributing 1: what is dropped is below 2^-99 per token, relative).
_TABLE_DROP = 2.0**-100


def _tables_py(heavy, rest, top, scale, sums) -> None:
    """Fill ``scale`` and ``sums`` of :func:`optaccept.drafts._swor.window._aggregate_tables` (sums of
    positive terms, a backward recurrence over the cuts: sums[h] = 1 + (scale[h+1]/scale[h])^r ·
    sums[h+1]).  The light tokens' power sums sums[len(heavy), r] arrive holding those of the
    tokens that the caller summed (scaled by ``top``, their largest mass); the tokens of
    ``rest`` are added here, power by power while their power still counts."""
    H = heavy.size
    terms = sums.shape[1] - 1
    if top > 0.0:
        scale[H] = top
    if rest.size:
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
            sums[H, r] += acc
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


def _first_draw_py(q, lam, coef, start, out) -> None:
    """out[j] = Σ_{i<j} q_i (1 − λ_j/(1 − q_i))^{k−1} for every prefix j (out[0] = 0), the
    first-draw bound on D(S_j) of :func:`optaccept.drafts._swor.window.first_draw_bound`, in one pass:
    expanded in powers of λ_j, Σ_m coef[m] (−λ_j)^m A_m(j) with A_m(j) = Σ_{i<j} q_i/(1 − q_i)^m
    (running sums) and coef[m] = C(k−1, m), by Horner's rule — raised by a bound on its
    rounding, (j + 4k + 8)·2^-52 times the sum of the terms' absolute values (the same Horner
    at +λ_j) plus 2^-50.  Prefixes j < ``start`` get the trivial bound 1 (only the running sums
    are kept up there).  Needs every q_i ≤ 1/2."""
    k = coef.size
    A = np.zeros(k)
    out[0] = 0.0
    for j in range(q.size):
        qi = q[j]
        inv = 1.0 / (1.0 - qi)
        w = qi
        for m in range(k):
            A[m] += w
            w *= inv
        if j + 1 < start:
            out[j + 1] = 1.0
            continue
        lj = lam[j + 1]
        x = -lj
        acc = coef[k - 1] * A[k - 1]
        tab = acc
        for m in range(k - 2, -1, -1):
            c = coef[m] * A[m]
            acc = acc * x + c
            tab = tab * lj + c
        out[j + 1] = acc + (j + 1 + 4 * k + 8) * 2.0**-52 * tab + 2.0**-50
