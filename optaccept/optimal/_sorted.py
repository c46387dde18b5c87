"""The sorted-prefix algorithms (MATH §2.1–2.3).

IID (Hu et al. §3; MATH §2.1): a minimiser of (★) is a prefix of the tokens sorted
by p/q ascending (q = 0 last), so α* = min_j P_j + 1 − Q_jᵏ over the n+1 prefixes.
The float path avoids a full argsort: tokens are bucketed by the top bits of the
IEEE-754 pattern of p/q (monotone in p/q), (★) is evaluated exactly at every
bucket boundary, and only buckets whose lower bound P(before) + 1 − Q(through)ᵏ
beats the best boundary are sorted token by token.  The result equals the full
prefix scan (the buckets respect the order).

Without replacement (Hu et al.'s claim, tested in the suite): the same prefixes,
with D(first k draws ⊆ S_j) from :func:`optaccept._swor.prefix_subset_probs`.

Greedy / SpecHub (Hu et al. §5, MATH §2.3): α* = p(T) + Σ_{y∉T} min(p(y), q̃(y)),
attained by S = T ∪ {y ∉ T : p(y) < q̃(y)}.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import _swor
from ._result import AcceptanceResult

__all__ = ["iid_sorted", "iid_sorted_exact", "swor_sorted", "greedy_closed_form", "ratio_order"]


def _ipow(x: np.ndarray, k: int) -> np.ndarray:
    """x**k for a positive integer k by repeated squaring (much faster than float pow)."""
    result = None
    base = x
    while k:
        if k & 1:
            result = base.copy() if result is None else result * base
        k >>= 1
        if k:
            base = base * base
    return result


def ratio_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Token order by p/q ascending, q = 0 last, ties by index (stable)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = p / q
    r = np.where(np.isnan(r), np.inf, r)
    return np.argsort(r, kind="stable")


def iid_sorted(p: np.ndarray, law) -> AcceptanceResult:
    q, k = law.q, law.k
    with np.errstate(divide="ignore", invalid="ignore"):
        r = p / q
    if law.q_has_zero:
        r = np.where(q > 0, r, np.inf)  # x/0 and 0/0 go last
    # Buckets: the IEEE-754 bit pattern of a non-negative float is monotone in its value;
    # dropping low bits so that about 2n buckets span the observed range keeps order.
    u = r.view(np.uint64)
    lo, hi = int(u.min()), int(u.max())
    shift = max(0, (hi - lo).bit_length() - max(10, (r.size // 2).bit_length()))
    # (uint64 arithmetic: much faster than signed int64 here; the result is < 2^63)
    bucket = ((u - np.uint64(lo)) >> np.uint64(shift)).view(np.int64)
    nb = ((hi - lo) >> shift) + 1
    Pb = np.bincount(bucket, weights=p, minlength=nb)
    Qb = np.bincount(bucket, weights=q, minlength=nb)
    cP = np.cumsum(Pb)
    cQ = np.minimum(np.cumsum(Qb), 1.0)
    cQk = _ipow(cQ, k)
    h_b = cP + 1.0 - cQk
    b_star = int(np.argmin(h_b))
    best = float(h_b[b_star])
    best_where: tuple = ("bucket", b_star)
    if best >= 1.0:
        best, best_where = 1.0, ("empty",)
    lower = (cP - Pb) + 1.0 - cQk
    cand = lower < best
    if cand.any():
        idx = np.flatnonzero(cand[bucket])
        o = idx[np.argsort(r[idx], kind="stable")]
        bb = bucket[o]
        pp, qq = p[o], q[o]
        cp, cq = np.cumsum(pp), np.cumsum(qq)
        first = np.ones(o.size, dtype=bool)
        first[1:] = bb[1:] != bb[:-1]
        starts = np.flatnonzero(first)
        group = np.cumsum(first) - 1
        base_cp = np.concatenate([[0.0], cp])[starts][group]
        base_cq = np.concatenate([[0.0], cq])[starts][group]
        Pj = (cP[bb] - Pb[bb]) + (cp - base_cp)
        Qj = np.minimum((cQ[bb] - Qb[bb]) + (cq - base_cq), 1.0)
        h_t = Pj + 1.0 - _ipow(Qj, k)
        t_star = int(np.argmin(h_t))
        if h_t[t_star] < best:
            best = float(h_t[t_star])
            best_where = ("token", o, t_star, int(bb[t_star]))

    def subset() -> np.ndarray:
        if best_where[0] == "empty":
            return np.array([], dtype=np.int64)
        if best_where[0] == "bucket":
            return np.flatnonzero(bucket <= best_where[1])
        _, o_, t_, b_ = best_where
        head = np.flatnonzero(bucket < b_)
        tail = o_[: t_ + 1]
        return np.concatenate([head, tail[bucket[tail] == b_]])

    return AcceptanceResult(best, "sorted", law, subset_fn=subset)


def _exact_ratio_key(pi: Fraction, qi: Fraction, i: int):
    if qi == 0:
        return (1, Fraction(0), i)
    return (0, pi / qi, i)


def iid_sorted_exact(
    p: tuple[Fraction, ...], q: tuple[Fraction, ...], k: int, law, method: str = "sorted", two_draft_form: bool = False
) -> AcceptanceResult:
    """Exact prefix scan in Fractions.  With ``two_draft_form`` (k = 2) each prefix is
    evaluated with Khisti et al.'s expression p(S) + q(Sᶜ)² + 2 q(S) q(Sᶜ)."""
    order = sorted(range(len(p)), key=lambda i: _exact_ratio_key(p[i], q[i], i))
    P = Q = Fraction(0)
    best, best_j = Fraction(1), 0
    for j, i in enumerate(order, start=1):
        P += p[i]
        Q += q[i]
        h = P + (1 - Q) ** 2 + 2 * Q * (1 - Q) if two_draft_form else P + 1 - Q**k
        if h < best:
            best, best_j = h, j
    return AcceptanceResult(best, method, law, subset=tuple(sorted(order[:best_j])))


def iid_prefix_float(
    p: np.ndarray, q: np.ndarray, k: int, law, method: str, two_draft_form: bool = False
) -> AcceptanceResult:
    """Plain full prefix scan in floats (argsort); used by the closed form."""
    order = ratio_order(p, q)
    P = np.concatenate([[0.0], np.cumsum(p[order])])
    Q = np.minimum(np.concatenate([[0.0], np.cumsum(q[order])]), 1.0)
    if two_draft_form:
        h = P + (1.0 - Q) ** 2 + 2.0 * Q * (1.0 - Q)
    else:
        h = P + 1.0 - Q**k
    h[0] = 1.0
    j = int(np.argmin(h))
    return AcceptanceResult(float(h[j]), method, law, subset_fn=lambda: order[:j])


def swor_sorted(p: np.ndarray, law) -> AcceptanceResult:
    order = ratio_order(p, law.q)
    f = _swor.prefix_subset_probs(law.q[order], law.k)
    P = np.concatenate([[0.0], np.cumsum(p[order])])
    h = P + 1.0 - f
    h[0] = 1.0
    j = int(np.argmin(h))
    return AcceptanceResult(float(h[j]), "sorted", law, subset_fn=lambda: order[:j])


def greedy_closed_form(p, law, exact: bool) -> AcceptanceResult:
    top = list(law.top)
    if exact:
        qr = law._q_rest_exact
        in_top = set(top)
        value = sum((p[i] for i in top), Fraction(0)) + sum(
            (min(p[y], qr[y]) for y in range(law.n) if y not in in_top), Fraction(0)
        )
        S = sorted(in_top | {y for y in range(law.n) if y not in in_top and p[y] < qr[y]})
        return AcceptanceResult(value, "sorted", law, subset=tuple(S))
    qr = law.q_rest
    off = ~law._in_top
    value = float(p[top].sum() + np.minimum(p, qr)[off].sum())
    return AcceptanceResult(
        min(1.0, value), "sorted", law, subset_fn=lambda: np.flatnonzero(law._in_top | (off & (p < qr)))
    )
