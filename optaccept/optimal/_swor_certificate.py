r"""Rigorous bounds on (★) for drafts without replacement at vocabulary scale, for :func:`verify`.

*Lower bound* (docs/theory.md §2.2, Theorem 2.7 with Lemma 2.6).  α* is the minimum of
F(S) = p(S) + 1 − D(set ⊆ S) over the n + 1 prefixes of the tokens sorted by p/q ascending
(q = 0 last, ties in any order).  The order is taken here on the rounded ratios
φᵢ = fl(pᵢ/qᵢ), which may merge distinct ratios; the theorem is therefore applied to
p̃ᵢ = cᵢ·qᵢ with cᵢ = φᵢ stepped down two units in the last place (0 below 2⁻¹⁰⁰⁰, the
largest double for an overflowed ratio): cᵢ is non-decreasing along the order and at most
pᵢ/qᵢ, so p̃ ≤ p, every token of a merged group ties exactly under p̃, and
α*(p) ≥ min_S F̃(S) = min over this order's prefixes of F̃(S_j) (the theorem's proof needs
no normalisation of p).  p̃ loses about 4e-16 of P_j.

Every prefix is first bounded without an integral, D(S) ≤ (q(S)/q(Ω))ᵏ (Lemma 2.4, rounded
outward); the prefixes whose bound already reaches ``value − tol/16`` are settled.  For the
others 1 − D(S_j) is bounded from below through the exponential-clock integral
1 − D = λ ∫₀^∞ e^{−λt} G_j(t) dt, G_j(t) = P(N_{S_j}(t) ≤ k − 1) (docs/theory.md §2.2), with

* λ_j rounded down (1 − D grows with λ, and is concave in it, which gives the upper side);
* the integrand at each node by the convex recursion π_m ← e·π_m + c·π_{m−1} (all terms
  ≥ 0), its rounding bounded token by token: relative error ≤ exp(Σ εᵢ) − 1, εᵢ = 10.1u for
  a token whose ring probability comes from its alternating Taylor series (x = qᵢt ≤ 1/2,
  cut at x^d/(d+1)! ≤ 2⁻⁵⁶), 5.1u + 1.01·x·u from libm's exp/expm1 (assumed within one ulp)
  for 1/2 < x ≤ 700, and an absolute 1e-300 beyond;
* the half-line cut into panels [0, t₁], [a, 1.5a], … (bisected where needed), each integrated
  by 24-point Gauss–Legendre with a proved error bound: with f analytic in the Bernstein
  ellipse E_ρ of the panel and |f| ≤ M there, its Chebyshev coefficients obey |a_i| ≤ 2Mρ⁻ⁱ
  (Trefethen, ATAP, Thm 8.1), the rule's error on T_i is ≤ E_RULE + 2.02·i²·δ for i < 48
  (E_RULE checked exactly in tests; δ the rounding of the nodes) and ≤ 4.01 beyond, so
  |error| ≤ (h/2)·M·(ε₀ + Σ_{i<48} 2ρ⁻ⁱεᵢ + 8.02ρ⁻⁴⁸/(1 − 1/ρ)).  M comes from the same
  recursion run with majorants over the ellipse's bounding box: |e^{−qτ}| ≤ e^{−q·x_min} =: α̂,
  |1 − e^{−qτ}| ≤ min(q|τ|·max(1, α̂), 1 + α̂) =: β̂, |G(τ)| ≤ Σ_{|A|<k} Π_A β̂ Π_{S∖A} α̂;
* the tail beyond the last panel dropped (the lower bound) or bounded by f(T) ≤ f(last node)
  (the upper bound; f decreases).

k = 1 and k = 2 use the closed forms 1 − D = λ/q(Ω) and
1 − D = (λ/q(Ω))(1 + Σ_{i∈S} qᵢ/q(Ω∖{i})), sums of non-negative terms rounded outward.

*Upper bound.*  (★) at the result's subset, 1 − D(S) bounded from above the same way.

Nothing here calls the solver's quadrature (:mod:`optaccept.drafts._swor`) or its order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._lib import jit as _jit

__all__ = ["swor_lower_bound", "swor_dual_upper", "E_RULE", "GAUSS_M"]

U = 2.0**-53
GAUSS_M = 24
_X, _W = np.polynomial.legendre.leggauss(GAUSS_M)
#: Bound on |Σ_g w_g T_i(x_g) − ∫_{−1}^{1} T_i| for i < 2·GAUSS_M, the nodes and weights as
#: the doubles above (checked exactly in Fractions by tests/optimal/test_swor_certificate.py).
E_RULE = 1e-14
_RHO = 2.4  # ellipse parameter of a top panel [a, 1.5a]
_PANEL_ABS = 1e-14  # a panel whose error bound (in 1 − D) exceeds this is bisected
_TAIL_TOL = 1e-15
_MAX_PANELS = 4000
_MAX_DEPTH = 30


def _gamma(m: float) -> float:
    """A bound on the relative error of m roundings (1.01·m·u, m·u ≪ 1)."""
    return 1.01 * m * U


# ----------------------------------------------------------------------------- the order


def certified_order(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(order, c, s): the tokens with q > 0 by fl(p/q') ascending (ties in any order), then the
    tokens with q = 0, with q' = q·2^:func:`_shift` (the same order as p/q, without overflow);
    c[i] ≤ p_i/q'_i for the i-th token of the order, non-decreasing over the first
    s = #{q > 0} (p̃ = c·q' ≤ p ties every merged group); c = +inf where q = 0."""
    pos = np.flatnonzero(q > 0)
    q = np.ldexp(q, _shift(q))  # every positive rate ≥ 2⁻⁹⁰⁰: p/q cannot overflow for p ≤ 1
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        phi = p[pos] / q[pos]
    o = np.argsort(phi, kind="stable")
    order = np.concatenate([pos[o], np.flatnonzero(q <= 0)])
    phi = phi[o]
    c = np.nextafter(np.nextafter(phi, 0.0), 0.0)
    c[phi < 2.0**-1000] = 0.0
    c[np.isinf(phi)] = np.finfo(np.float64).max
    return order, np.concatenate([c, np.full(order.size - pos.size, np.inf)]), int(pos.size)


def _shift(q: np.ndarray) -> int:
    """The power of two that lifts the smallest positive rate to at least 2⁻⁹⁰⁰."""
    pos = q[q > 0]
    return max(0, -900 - int(np.floor(np.log2(pos.min())))) if pos.size else 0


# ------------------------------------------------------------------- sums rounded outward


def _prefix_lo(x: np.ndarray) -> np.ndarray:
    """Lower bounds on the n + 1 prefix sums of x ≥ 0 (np.cumsum is sequential)."""
    s = np.concatenate([[0.0], np.cumsum(x)])
    return s * (1.0 - _gamma(np.arange(s.size) + 2.0))


def _prefix_hi(x: np.ndarray) -> np.ndarray:
    s = np.concatenate([[0.0], np.cumsum(x)])
    return s * (1.0 + _gamma(np.arange(s.size) + 2.0))


def _suffix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds on λ_j = Σ_{i≥j} x_i for j = 0..n (λ_n = 0)."""
    s = np.concatenate([np.cumsum(x[::-1])[::-1], [0.0]])
    m = np.arange(s.size, 0, -1) + 2.0
    return s * (1.0 - _gamma(m)), s * (1.0 + _gamma(m))


# ------------------------------------------------------------------------ the kernel


def _panel_py(q, j_stop, win_pos, lam, k, t, xmin, tau_max, out_f, out_e, out_m) -> None:
    """One panel: for each prefix j ≤ j_stop with win_pos[j] ≥ 0, out_f[row, g] =
    e^{−lam[j] t_g}·P(N_{S_j}(t_g) ≤ k − 1) (computed), out_e[row] the largest exponent (in
    units of u) of its relative error bound over the nodes, out_m[row] a bound on |f| over
    the panel's ellipse (box x ≥ xmin, |τ| ≤ tau_max)."""
    G = t.size
    pi = np.zeros((k, G))
    for g in range(G):
        pi[0, g] = 1.0
    eg = np.zeros(G)
    e_series = 0.0
    b = np.zeros(k)
    b[0] = 1.0
    e = np.empty(G)
    c = np.empty(G)
    tm = 0.0
    for g in range(G):
        tm = max(tm, t[g])
    for j in range(j_stop + 1):
        if j > 0:
            qj = q[j - 1]
            xm = qj * tm
            if xm <= 0.5:
                d = 1
                term = xm / 2.0  # x^d/(d+1)!
                while term > 2.0**-56:
                    d += 1
                    term = term * xm / (d + 1)
                for g in range(G):
                    x = qj * t[g]
                    y = 1.0
                    for i in range(d, 1, -1):
                        y = 1.0 - (x / i) * y
                    c[g] = x * y
                    e[g] = 1.0 - c[g]
                e_series += 12.2
            else:
                for g in range(G):
                    x = qj * t[g]
                    if x <= 0.5:
                        y = 1.0
                        for i in range(13, 1, -1):  # 0.5^13/14! < 2^-56
                            y = 1.0 - (x / i) * y
                        c[g] = x * y
                        e[g] = 1.0 - c[g]
                        eg[g] += 12.2
                    elif x <= 700.0:
                        e[g] = math.exp(-x)
                        c[g] = -math.expm1(-x)
                        eg[g] += 7.2 + 1.01 * x
                    else:
                        e[g] = 0.0
                        c[g] = 1.0
            for m in range(k - 1, 0, -1):
                for g in range(G):
                    pi[m, g] = e[g] * pi[m, g] + c[g] * pi[m - 1, g]
            for g in range(G):
                pi[0, g] = e[g] * pi[0, g]
            # the majorant over the box
            if xmin >= 0.0:
                ah = math.exp(-qj * xmin)
                bh = min(qj * tau_max, 1.0 + ah)
            else:
                ah = math.exp(-qj * xmin)
                bh = min(qj * tau_max * ah, 1.0 + ah)
            for m in range(k - 1, 0, -1):
                b[m] = ah * b[m] + bh * b[m - 1]
            b[0] = ah * b[0]
        row = win_pos[j]
        if row >= 0:
            lj = lam[j]
            emax = 0.0
            for g in range(G):
                s = 0.0
                for m in range(k):
                    s += pi[m, g]
                out_f[row, g] = s * math.exp(-lj * t[g])
                emax = max(emax, eg[g] + 1.01 * lj * t[g])
            out_e[row] = emax + e_series + k + 8.0
            s = 0.0
            for m in range(k):
                s += b[m]
            out_m[row] = s * math.exp(-lj * xmin) * (1.0 + 1e-6)


_KERNEL: list[Any] = []


def _kernel():
    if not _KERNEL:
        nj = None if _jit.disabled() else _jit.njit()
        _KERNEL.append(_panel_py if nj is None else nj(_panel_py))
    return _KERNEL[0]


def _rule_factor(rho: float, delta: float) -> float:
    """ε₀ + Σ_{1≤i<2m} 2ρ⁻ⁱεᵢ + 8.02ρ⁻²ᵐ/(1 − 1/ρ), εᵢ = E_RULE + 2.02·i²·δ (module docstring)."""
    m2 = 2 * GAUSS_M
    i = np.arange(1, m2)
    eps = E_RULE + 2.02 * i * i * delta
    return 1.01 * (E_RULE + float((2.0 * rho ** (-i.astype(float)) * eps).sum()) + 8.02 * rho**-m2 / (1 - 1 / rho))


def _integrals(q: np.ndarray, rows: np.ndarray, lam: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Lower and upper bounds on ∫₀^∞ e^{−lam_j t} G_j(t) dt for the prefixes ``rows`` of q."""
    rows = np.asarray(rows, dtype=np.int64)
    W = rows.size
    j_stop = int(rows.max())
    win_pos = np.full(j_stop + 1, -1, dtype=np.int64)
    win_pos[rows] = np.arange(W)
    lam_r = lam[: j_stop + 1].copy()
    kern = _kernel()
    qq = np.ascontiguousarray(q[:j_stop], dtype=np.float64)
    lo = np.zeros(W)
    hi = np.zeros(W)
    f = np.empty((W, GAUSS_M))
    ee = np.empty(W)
    mm = np.empty(W)
    lam_w = lam[rows]
    panels = 0
    tail = np.full(W, np.inf)

    def run(a: float, b: float, rho: float, ext: float, depth: int) -> None:
        nonlocal panels, tail
        panels += 1
        hh = 0.5 * (b - a)
        cc = 0.5 * (a + b)
        t = cc + hh * _X
        A = hh * (rho + 1 / rho) / 2 * (1 + 1e-12)
        Bi = hh * (rho - 1 / rho) / 2 * (1 + 1e-12)
        xmin = cc - A - 1e-300
        tau_max = math.hypot(cc + A, Bi) * (1 + 1e-12)
        kern(qq, j_stop, win_pos, lam_r, k, t, xmin, tau_max, f, ee, mm)
        delta = 2.02 * U * (1.0 + b / hh)
        err = hh * mm * _rule_factor(rho, delta)
        if depth < _MAX_DEPTH and panels < _MAX_PANELS and float((lam_w * err).max()) > _PANEL_ABS:
            mid = 0.5 * (a + b)
            for lo_, hi_ in ((a, mid), (mid, b)):
                h2 = 0.5 * (hi_ - lo_)
                kap = 1.0 + ext / h2
                run(lo_, hi_, kap + math.sqrt(kap * kap - 1.0), ext, depth + 1)
            return
        Q = hh * (f @ _W)
        with np.errstate(over="ignore", invalid="ignore"):
            R = np.expm1(np.minimum(ee * U * 1.01, 700.0)) + _gamma(GAUSS_M + 4)
            absf = 1e-290 * (j_stop + 1) * k
            lo_c = Q * (1.0 - R) - err - hh * 2.0 * absf
            lo_c = np.where(np.isfinite(lo_c) & (lo_c > 0.0), lo_c, 0.0)  # the panel's integral is ≥ 0
            hi_c = Q * (1.0 + R) + err + hh * 2.0 * absf
        lo[:] += lo_c
        hi[:] += np.where(np.isfinite(hi_c), hi_c, np.inf)
        if b == top_b[0]:
            with np.errstate(over="ignore", invalid="ignore"):
                tail = f[:, -1] * (1.0 + R) + absf

    top_b = [0.0]
    total = float(q.sum())
    a, b = 0.0, 1.0 / max(total, 1e-300)
    while True:
        top_b[0] = b
        ext = 0.5 * (b - a) * ((_RHO + 1 / _RHO) / 2 - 1)
        run(a, b, _RHO, ext, 0)
        if float(tail.max()) <= _TAIL_TOL or panels >= _MAX_PANELS:
            break
        a, b = b, 1.5 * b
    lo *= 1.0 - _gamma(panels + 2)
    hi = (hi + tail) * (1.0 + _gamma(panels + 3))
    return {"lo": lo, "hi": hi, "panels": panels}


# ----------------------------------------------------------------------- 1 − D bounds


def _complement_k2(qo: np.ndarray, lam_lo, lam_hi, tot_lo, tot_hi, rows) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on 1 − D₂(S_j) = (λ/q(Ω))(1 + Σ_{i∈S_j} qᵢ/q(Ω∖{i})) at the prefixes ``rows``."""
    n = qo.size
    pre = np.concatenate([[0.0], np.cumsum(qo)])[:-1]
    suf = np.concatenate([np.cumsum(qo[::-1])[::-1][1:], [0.0]])
    others = pre + suf
    o_hi = others * (1.0 + _gamma(n + 3))
    o_lo = others * (1.0 - _gamma(n + 3))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = np.where(qo > 0, qo / o_hi, 0.0)
        t_hi = np.where(qo > 0, qo / o_lo, 0.0)
    s_lo = _prefix_lo(t_lo * (1 - U))[rows]
    s_hi = _prefix_hi(t_hi * (1 + U))[rows]
    lo = lam_lo[rows] / tot_hi * (1.0 + s_lo) * (1.0 - _gamma(4))
    hi = lam_hi[rows] / tot_lo * (1.0 + s_hi) * (1.0 + _gamma(4))
    return lo, hi


def _complement_bounds(qo: np.ndarray, k: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(lower, upper, panels): bounds on 1 − D(S_j) for the prefixes ``rows`` of the order
    whose rates are ``qo``; every such prefix holds at least k and not all tokens with q > 0.
    The rates are first scaled by an exact power of two that makes every positive one at least
    2⁻⁹⁰⁰ (1 − D is scale-free), so no product below is subnormal and t stays finite."""
    qo = np.ldexp(qo, _shift(qo))
    lam_lo, lam_hi = _suffix(qo)
    tot_lo, tot_hi = lam_lo[0], lam_hi[0]
    if k == 1:
        return lam_lo[rows] / tot_hi * (1 - U), lam_hi[rows] / tot_lo * (1 + U), 0
    if k == 2:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            lo, hi = _complement_k2(qo, lam_lo, lam_hi, tot_lo, tot_hi, rows)
        if np.isfinite(lo).all() and np.isfinite(hi).all() and hi.max(initial=0.0) < 1e300:
            return np.minimum(lo, 1.0), np.minimum(hi, 1.0), 0
        # qᵢ/q(Ω∖{i}) overflowed (a token holds all but subnormal mass): the integral instead
    r = _integrals(qo, rows, lam_lo, k)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = lam_lo[rows] * r["lo"] * (1.0 - _gamma(2))
        hi = lam_hi[rows] * r["hi"] * (1.0 + _gamma(2))
    lo = np.where(np.isfinite(lo), lo, 0.0)  # never an overflow for a lower bound
    return np.minimum(lo, 1.0), np.minimum(np.where(np.isfinite(hi), hi, 1.0), 1.0), r["panels"]


def _ipow_bound(s_lo: np.ndarray, k: int) -> np.ndarray:
    """A lower bound on 1 − (1 − s)ᵏ = s·Σ_{i<k} (1 − s)ⁱ from a lower bound s_lo on s."""
    w = (1.0 - s_lo) * (1.0 - 2 * U)
    acc = np.ones_like(s_lo)
    for _ in range(k - 1):
        acc = 1.0 + w * acc
    return np.clip(s_lo * acc * (1.0 - _gamma(2 * k + 4)), 0.0, 1.0)


# ------------------------------------------------------------------------- the bounds


def swor_lower_bound(p: np.ndarray, q: np.ndarray, k: int, value: float, tol: float) -> dict[str, Any]:
    """A proved lower bound on α*(p, WithoutReplacement(q, k)) (module docstring): the
    minimum over the n + 1 prefixes of the p/q order of a lower bound on p̃(S_j) + 1 − D(S_j),
    each prefix bounded by Lemma 2.4 where that settles it against ``value − tol/16``, else
    through the integral.  Returns ``lower_bound``, ``windows`` (prefixes integrated),
    ``panels``, ``argmin`` (the prefix size of the minimum)."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    order, c, s = certified_order(p, q)
    qo = q[order]
    with np.errstate(over="ignore", invalid="ignore"):
        pt = np.where(np.arange(order.size) < s, c * np.ldexp(qo, _shift(qo)), p[order])
    P_lo = _prefix_lo(pt * (1 - U)) - np.arange(order.size + 1) * 2.0**-1074
    P_lo = P_lo[: s + 1]
    npos = np.concatenate([[0], np.cumsum(qo > 0)])[: s + 1]
    lam_lo, lam_hi = _suffix(qo)
    tot_hi = lam_hi[0]
    comp = np.empty(s + 1)  # lower bounds on 1 − D(S_j), j = 0..s
    comp[npos < k] = 1.0
    comp[s] = 0.0
    mid = (npos >= k) & (np.arange(s + 1) < s)
    comp[mid] = _ipow_bound(lam_lo[: s + 1][mid] / tot_hi * (1 - U), k)
    h = (P_lo + comp) * (1 - U)
    target = value - tol / 16.0  # a settled prefix reports a bound within tol/16 of the value
    win = np.flatnonzero(mid & (h < target))
    panels = 0
    if win.size:
        lo, _, panels = _complement_bounds(qo, k, win)
        comp[win] = np.maximum(comp[win], lo)
        h = (P_lo + comp) * (1 - U)
    j = int(np.argmin(h))
    return {"lower_bound": float(h[j]), "windows": int(win.size), "panels": panels, "argmin": j}


def swor_dual_upper(p: np.ndarray, q: np.ndarray, k: int, subset) -> float:
    """A proved upper bound on (★) at ``subset``: p(S) + 1 − D(S) rounded up."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    mask = np.zeros(q.size, dtype=bool)
    mask[list(subset)] = True
    ins = np.flatnonzero(mask)
    order = np.concatenate([ins, np.flatnonzero(~mask)])
    m = ins.size
    pS = float(_prefix_hi(p[ins] * (1 + U))[-1]) if m else 0.0
    qo = q[order]
    npos_in = int(np.count_nonzero(q[ins] > 0))
    if npos_in < k:
        comp = 1.0
    elif npos_in == int(np.count_nonzero(q > 0)):
        comp = 0.0
    else:
        _, hi, _ = _complement_bounds(qo, k, np.array([m]))
        comp = float(hi[0])
    return (pS + comp) * (1 + 2 * U)
