r"""Complements of masses close to 1, computed without cancellation — one place for all.

A draft or target law at temperature < 1 often puts 1 − 1e-9 (or 1 − 1e-15) of its mass on
one token.  Every formula of the toolkit that needs 1 − q_a, 1 − Q (Q a partial sum of q),
1/(1 − Q), q/(1 − q) or 1 − (1 − b)ᵏ loses all its digits if it subtracts the rounded mass
from 1: ``1 - (1 - 2e-12)`` keeps only 4 correct digits, and a q_a that rounds to 1.0 gives
1/0.  The complement of a mass is instead computed *directly* from the rest of the law:

* 1 − q_i = Σ_{j≠i} q_j                            → :func:`others_sum`
* 1 − Q_j = q(Ω∖S_j) for the prefixes S_j         → :func:`suffix_sums`
* q_i/(1 − q_i), 1/(1 − Q)                         → :func:`odds`, :func:`safe_div`
* (1 − c)ᵏ and 1 − (1 − c)ᵏ from the complement c  → :func:`pow1m`, :func:`one_minus_pow1m`
  (``exp(k·log1p(−c))`` and ``−expm1(k·log1p(−c))``)

Sums of non-negative terms are accurate to a few ulps *relative to the complement itself*,
however small it is (down to subnormals), while ``1 - Q`` is only accurate to 1e-16
*absolute*.  Every function works on numpy arrays **and** torch tensors (the namespace is
taken from the input; operations are ones both libraries share), so the core, the verifiers
and the batched solver use one formula.  ``axis`` is numpy's ``axis`` and torch's ``dim``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "array_namespace",
    "is_torch",
    "prefix_sums",
    "suffix_sums",
    "others_sum",
    "odds",
    "safe_div",
    "log1m",
    "pow1m",
    "one_minus_pow1m",
    "rescale_tiny",
    "swor2_prefix_complement",
    "ratio_key",
    "ratio_parts",
    "residual",
]


def is_torch(x: Any) -> bool:
    """True when ``x`` is a torch tensor (without importing torch)."""
    return type(x).__module__.startswith("torch")


def array_namespace(x: Any) -> Any:
    """The module whose functions apply to ``x``: ``torch`` for tensors, else ``numpy``."""
    if is_torch(x):
        import torch

        return torch
    return np


_LONG = np.longdouble if np.finfo(np.longdouble).eps < 1e-18 else None


def _cumsum(x: Any, axis: int, accurate: bool = False) -> Any:
    if is_torch(x):
        return x.cumsum(dim=axis)
    if accurate and _LONG is not None:
        return np.cumsum(x.astype(_LONG), axis=axis)
    return np.cumsum(x, axis=axis)


def _flip(x: Any, axis: int) -> Any:
    if is_torch(x):
        return x.flip(dims=(axis,))
    return np.flip(x, axis=axis)


def _pad(x: Any, axis: int, front: bool) -> Any:
    """Concatenate one slice of zeros along ``axis`` in front or at the back."""
    if is_torch(x):
        import torch

        shape = list(x.shape)
        shape[axis] = 1
        z = torch.zeros(shape, dtype=x.dtype, device=x.device)
        return torch.cat([z, x] if front else [x, z], dim=axis)
    shape = list(x.shape)
    shape[axis] = 1
    z = np.zeros(shape, dtype=x.dtype)
    return np.concatenate([z, x] if front else [x, z], axis=axis)


def _as_float(x: Any) -> Any:
    if is_torch(x):
        return x if x.is_floating_point() else x.double()
    x = np.asarray(x)
    return x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)


def prefix_sums(v: Any, axis: int = -1, accurate: bool = False) -> Any:
    """P with P[j] = Σ_{i<j} v_i, j = 0..n (length n + 1 along ``axis``; P[0] = 0).

    ``accurate``: for numpy input, sum in extended precision (x86 long double) and return
    that type — a sequential float64 sum of n terms is off by up to n·1e-16 of the sum,
    which an exponent e^{−Qt} with t ~ 1e4 magnifies.  Torch input ignores it.
    """
    v = _as_float(v)
    return _pad(_cumsum(v, axis, accurate), axis, front=True)


def suffix_sums(v: Any, axis: int = -1, accurate: bool = False) -> Any:
    """R with R[j] = Σ_{i≥j} v_i, j = 0..n (length n + 1; R[n] = 0).

    For a law q in some token order, R[j] = q(Ω∖S_j) = 1 − Q_j is the complement of the
    prefix S_j = {first j tokens}, summed from the small end: relative accuracy a few ulps
    even where 1 − Q_j underflows the spacing of floats near 1.
    """
    v = _as_float(v)
    return _pad(_flip(_cumsum(_flip(v, axis), axis, accurate), axis), axis, front=False)


def others_sum(v: Any, axis: int = -1) -> Any:
    """Σ_{j≠i} v_j for every i (prefix + suffix sums, no subtraction).

    For a law q this is 1 − q_i, correct to a few ulps relative to itself.
    """
    v = _as_float(v)
    before = _pad(_cumsum(v, axis), axis, front=True)
    after = _pad(_flip(_cumsum(_flip(v, axis), axis), axis), axis, front=False)
    n = v.shape[axis]
    return _take(before, 0, n, axis) + _take(after, 1, n + 1, axis)


def _take(x: Any, lo: int, hi: int, axis: int) -> Any:
    if is_torch(x):
        return x.narrow(axis, lo, hi - lo)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(lo, hi)
    return x[tuple(idx)]


def safe_div(num: Any, den: Any) -> Any:
    """num / den with 0 where den = 0 (and num = 0 there by construction: 0/0 → 0)."""
    if is_torch(num) or is_torch(den):
        import torch

        num = torch.as_tensor(num)
        den = torch.as_tensor(den, dtype=num.dtype, device=num.device)
        zero = den == 0
        return torch.where(zero, torch.zeros_like(num), num / torch.where(zero, torch.ones_like(den), den))
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    zero = den == 0
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def odds(q: Any, axis: int = -1, complement: Any = None) -> Any:
    """q_i / (1 − q_i) with the complement 1 − q_i summed from the rest of the law.

    A token holding all the mass (empty rest) has odds +inf; a zero token has odds 0.  The
    quotient overflows to inf when the rest is below ~1e-308 · q_i: callers that need
    finite values keep the largest token apart (see :func:`swor2_prefix_complement`).

    ``complement``: 1 − q_i if the caller has it already (e.g. :func:`others_sum` of the law).
    """
    q = _as_float(q)
    c = others_sum(q, axis) if complement is None else complement
    xp = array_namespace(q)
    inf = xp.full_like(q, float("inf"))
    pos = c > 0
    if is_torch(q):
        return xp.where(pos, q / xp.where(pos, c, xp.ones_like(c)), xp.where(q > 0, inf, xp.zeros_like(q)))
    return np.where(pos, q / np.where(pos, c, 1.0), np.where(q > 0, inf, 0.0))


def log1m(c: Any) -> Any:
    """log(1 − c) = log1p(−c), accurate for tiny c."""
    xp = array_namespace(c)
    return xp.log1p(-c)


def pow1m(c: Any, k: Any) -> Any:
    """(1 − c)ᵏ from the complement c ∈ [0, 1]: exp(k · log1p(−c)) (k may be an array)."""
    xp = array_namespace(c)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = xp.exp(k * xp.log1p(-c))
    return xp.where(out != out, xp.ones_like(out), out)  # 0 · (−inf) = NaN stands for 0⁰ = 1


def one_minus_pow1m(c: Any, k: Any) -> Any:
    """1 − (1 − c)ᵏ from the complement c ∈ [0, 1]: −expm1(k · log1p(−c)).

    Relative accuracy a few ulps for every c, including c ≈ 1e-300 (then ≈ k·c) and c = 1
    (0 when k = 0, also at c = 1 where 0 · log 0 would give NaN).
    """
    xp = array_namespace(c)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -xp.expm1(k * xp.log1p(-c))
    return xp.where(out != out, xp.zeros_like(out), out)  # NaN only from 0 · (−inf): (1 − 1)⁰ = 1


#: Smallest exponent of two a positive mass may have before :func:`rescale_tiny` lifts it.
_TINY_EXP = -900


def rescale_tiny(v: Any) -> tuple[Any, int]:
    """Multiply non-negative masses by 2^e (exact) so that the smallest positive one is ≥ 2^-900.

    Ratios such as q_i/(1 − q(B)) are invariant under a common scale, but products like
    g · q_i lose all precision once q_i is subnormal (3e-323 has two significant bits).
    Masses ≤ 1 with the smallest ≥ 2^-1074 end up in [2^-900, 2^174]: no overflow, no
    subnormal.  Returns (scaled array, e); e = 0 (and the input itself) when nothing is tiny.
    """
    pos = v[v > 0]
    if (pos.numel() if is_torch(v) else pos.size) == 0:
        return v, 0
    m = float(pos.min())
    if m >= 2.0**_TINY_EXP:
        return v, 0
    e = _TINY_EXP - int(np.frexp(m)[1]) + 1  # ≤ 174: 2^e is a float, the product exact
    return v * 2.0**e, e


def swor2_prefix_complement(q_ordered: Any, axis: int = -1) -> Any:
    """1 − D₂(S_j) for two draws without replacement, for every prefix S_j (j = 0..n).

    D₂(S) = Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i).  Writing (q(S) − q_i)/(1 − q_i) =
    1 − λ/(1 − q_i) with λ = q(Ω∖S) gives, without any subtraction,

        1 − D₂(S_j) = λ_j · (1 + Σ_{i∈S_j} q_i/(1 − q_i)),

    with λ_j from :func:`suffix_sums` and 1 − q_i from :func:`others_sum`: relative accuracy
    a few ulps for every prefix, including 1 − q_a ≈ 1e-300.  The largest token a is kept
    apart (its odds q_a/(1 − q_a) may overflow): its term is q_a · (λ_j/(1 − q_a)), and
    λ_j ≤ 1 − q_a once a ∈ S_j.  The law need not be normalised.  Length n + 1 along
    ``axis``; values capped to [0, 1].
    """
    q = _as_float(q_ordered)
    xp = array_namespace(q)
    lam = suffix_sums(q, axis)
    total = _take(lam, 0, 1, axis)
    c = others_sum(q, axis)
    n = q.shape[axis]
    if is_torch(q):
        idx = q.argmax(dim=axis, keepdim=True)
        pos = xp.arange(n, device=q.device).reshape([-1 if d == (axis % q.ndim) else 1 for d in range(q.ndim)])
    else:
        idx = np.expand_dims(np.argmax(q, axis=axis), axis)
        pos = np.arange(n).reshape([-1 if d == (axis % q.ndim) else 1 for d in range(q.ndim)])
    top = pos == idx
    zero = xp.zeros_like(q)
    # every other token has 1 − q_i ≥ q_a ≥ q(Ω)/n: its odds are finite and tame
    odd = safe_div(xp.where(top, zero, q), xp.where(top, xp.ones_like(c), c))
    A = prefix_sums(odd, axis)
    q_a = (xp.where(top, q, zero)).sum(axis) if not is_torch(q) else xp.where(top, q, zero).sum(dim=axis)
    c_a = (xp.where(top, c, zero)).sum(axis) if not is_torch(q) else xp.where(top, c, zero).sum(dim=axis)
    q_a = xp.expand_dims(q_a, axis) if not is_torch(q) else q_a.unsqueeze(axis)
    c_a = xp.expand_dims(c_a, axis) if not is_torch(q) else c_a.unsqueeze(axis)
    after_top = prefix_sums(top.astype(q.dtype) if not is_torch(q) else top.to(q.dtype), axis) > 0
    ratio = safe_div(xp.where(after_top, lam, xp.zeros_like(lam)), c_a + xp.zeros_like(lam))
    out = safe_div(lam * (1.0 + A) + q_a * ratio, total + xp.zeros_like(lam))
    return xp.clip(out, 0.0, 1.0) if not is_torch(out) else out.clamp(0.0, 1.0)


#: Ratios above 2^RATIO_BIG (only reachable with a subnormal q) are mapped, monotonically,
#: into [2^RATIO_BIG, 2^(RATIO_BIG+1)) by their logarithm instead of overflowing to inf.
_RATIO_BIG = 1000.0


def ratio_key(p: Any, q: Any) -> Any:
    """A sort key increasing in p/q, +inf where q = 0 (x/0 and 0/0 go last), never
    overflowing: p/q itself up to 2^1000; beyond (a subnormal q under a normal p, where
    p/q reaches 2^1074 and a float division returns inf for all of them — a false tie),
    2^1000 · (1 + (log2 p − log2 q − 1000)/128), still increasing in p/q.  numpy or torch.
    """
    xp = array_namespace(p)
    pos = q > 0
    one = xp.ones_like(q)
    qs = xp.where(pos, q, one)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = p / qs
        lg = xp.log2(xp.where(p > 0, p, one)) - xp.log2(qs)
    big = lg > _RATIO_BIG
    tail = 2.0**_RATIO_BIG * (1.0 + (lg - _RATIO_BIG) / 128.0)
    r = xp.where(big & (p > 0), tail, r)
    return xp.where(pos, r + 0.0, xp.full_like(r, float("inf")))


def residual(p: Any, s: Any) -> tuple[Any, Any]:
    """The residual law of speculative sampling against s, on the last axis (numpy or torch):
    ((p − s)₊ / m, m) with m = Σ (p − s)₊ (TV(p, s) when both are laws).

    The library's one convention where m = 0 (p ≤ s everywhere, so a rejection has
    probability 0 in exact arithmetic, though rounding can still reach it): the law is p
    itself, normalised — always a law, and a rejection then leaves the output law p."""
    xp = array_namespace(p)
    d = p - s
    pos = xp.where(d > 0, d, 0.0 * d)
    m = pos.sum(-1) if is_torch(pos) else pos.sum(axis=-1)
    ok = m > 0
    tot = p.sum(-1) if is_torch(p) else p.sum(axis=-1)
    num = xp.where(ok[..., None], pos, p) if pos.ndim > 1 else (pos if bool(ok) else p)
    den = xp.where(ok, m, tot)
    den = xp.where(den > 0, den, 1.0 + 0.0 * den)
    return num / (den[..., None] if pos.ndim > 1 else den), m


def ratio_parts(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact p/q sort key: (binary exponent, mantissa ratio in [1, 2)), with no overflow
    or underflow — p = m_p·2^{e_p}, q = m_q·2^{e_q} (frexp), p/q = (m_p/m_q)·2^{e_p − e_q},
    correctly rounded like p/q itself.  p = 0 sorts first (exponent −2^40), q = 0 last
    (+2^40).  Sort with ``np.lexsort((..., m, e))``.  (:func:`ratio_key` is the one-array key
    for vectorised and torch rows; the optimal verifier's layout sorts the bit pattern of p/q
    and falls back to this key where p/q leaves the normal range.)"""
    mp, ep = np.frexp(np.asarray(p, dtype=np.float64))
    mq, eq = np.frexp(np.asarray(q, dtype=np.float64))
    pos = q > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(pos, mp / np.where(pos, mq, 1.0), 0.0)  # in (1/2, 2) where p > 0
    e = (ep - eq).astype(np.int64)
    low = (m > 0) & (m < 1.0)
    m = np.where(low, 2.0 * m, m)
    e = np.where(low, e - 1, e)
    zero_p = pos & (np.asarray(p) == 0)
    big = np.int64(1) << 40
    e = np.where(zero_p, -big, np.where(pos, e, big))  # p = 0 first (ratio 0), q = 0 last
    m = np.where(pos & ~zero_p, m, 0.0)
    return e, m
