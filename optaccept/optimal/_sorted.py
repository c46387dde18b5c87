"""The sorted-prefix algorithms (docs/theory.md §2.1–2.3).

IID (Hu et al. §3; docs/theory.md §2.1): a minimiser of (★) is a prefix of the tokens sorted
by p/q ascending (q = 0 last), so α* = min_j P_j + 1 − Q_jᵏ over the n+1 prefixes.
The float path avoids a full argsort: tokens are bucketed by the top bits of the
IEEE-754 pattern of p/q (monotone in p/q), (★) is evaluated exactly at every
bucket boundary, and only buckets whose lower bound P(before) + 1 − Q(through)ᵏ
beats the best boundary are sorted token by token.  The result equals the full
prefix scan (the buckets respect the order).

Without replacement (stated by Hu et al.; proved in docs/theory.md §2.2, Theorem 2.7): the same prefixes,
with D(first k draws ⊆ S_j) from :func:`optaccept.drafts._swor.prefix_subset_probs`.

Greedy / SpecHub (Hu et al. §5, docs/theory.md §2.3): α* = p(T) + Σ_{y∉T} min(p(y), q̃(y)),
attained by S = T ∪ {y ∉ T : p(y) < q̃(y)}.
"""

from __future__ import annotations

import threading
from fractions import Fraction

import numpy as np

from .._lib import jit as _jit
from .._lib.stable import one_minus_pow1m, ratio_parts
from ..drafts import _swor
from ._result import AcceptanceResult

__all__ = [
    "iid_scan",
    "iid_sorted",
    "iid_sorted_exact",
    "swor_sorted",
    "greedy_closed_form",
    "line_order",
    "ratio_order",
]


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
    """Token order by p/q ascending, q = 0 last, ties by index (stable).

    p/q overflows for a subnormal q (0.1/1e-322) and underflows for a subnormal p, which
    would turn distinct ratios into ties at inf or 0; the order is therefore taken on
    :func:`ratio_parts` (exponent, mantissa ratio).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    pos = q > 0
    if not pos.all():  # q = 0 last, by index
        ids = np.flatnonzero(pos)
        return np.concatenate([ids[ratio_order(p[ids], q[ids])], np.flatnonzero(~pos)])
    with np.errstate(over="ignore", under="ignore"):
        r = p / q
    tiny = np.finfo(np.float64).tiny
    if r.size == 0 or r.max() == np.inf or (r.min() < tiny and ((r < tiny) & (p != 0)).any()):
        # p/q overflows or leaves the normal range: the exact key
        e, m = ratio_parts(p, q)
        return np.lexsort((np.arange(e.size), m, e))
    # Normal or zero ratios: p/q is correctly rounded and equals the (exponent, mantissa)
    # key of :func:`ratio_parts`, and its bit pattern is monotone in it, so one value sort
    # of the pattern with the index packed into its low bits gives the order (as in
    # :func:`line_order`); runs equal in the top bits are re-sorted by (pattern, id).
    r[r == 0] = 0.0  # −0.0
    key = r.view(np.uint64)
    b = max(int(r.size - 1).bit_length(), 1)
    packed = np.sort((key >> np.uint64(b)) << np.uint64(b) | np.arange(r.size, dtype=np.uint64))
    o = (packed & np.uint64((1 << b) - 1)).astype(np.int64)
    top = packed >> np.uint64(b)
    eq = top[1:] == top[:-1]
    if eq.any():
        mark = np.zeros(top.size, dtype=bool)
        mark[1:] |= eq
        mark[:-1] |= eq
        pos_ = np.flatnonzero(mark)
        sub = o[pos_]
        o[pos_] = sub[np.lexsort((sub, key[sub]))]
    return o


def line_order(p: np.ndarray, q: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The ids with q > 0 by p/q descending; at equal ratio the tokens with ``first`` set
    come before the others, then ties by id.  (The optimal verifier's layout: the tokens
    outside the minimiser, then those in it, each by p/q descending.)

    Fast path: the IEEE-754 bit pattern of p/q is monotone in p/q, so one sort of its
    complement orders the tokens (a value sort, the index packed into the key's low bits),
    and only runs of keys equal in their top bits are re-sorted by (key, ``first``, id).  Where p/q overflows or leaves the normal range (a subnormal q or p)
    the order is taken on :func:`ratio_parts` instead, which has no overflow."""
    p = np.asarray(p, dtype=np.float64)
    if q.min() > 0:  # the common case: no gather
        ids, pp, qq, fl = None, p, q, first
    else:
        ids = np.flatnonzero(q > 0)
        pp, qq, fl = p[ids], q[ids], first[ids]
    with np.errstate(over="ignore", under="ignore"):
        r = pp / qq
    lo, hi = r.min(initial=np.inf), r.max(initial=0.0)
    if hi == np.inf or (lo < np.finfo(np.float64).tiny and ((r < np.finfo(np.float64).tiny) & (pp > 0)).any()):
        e, m = ratio_parts(pp, qq)
        o = np.lexsort((np.arange(r.size), ~fl, -m, -e))
    else:
        if lo == 0:
            r[r == 0] = 0.0  # −0.0
        key = ~r.view(np.uint64)
        # One value sort instead of an argsort (3x faster here): the key's top bits with
        # the index packed into its low b bits, then every run of equal top bits re-sorted
        # exactly by (full key, first, id).  The order is the same total order as sorting
        # the full keys with ties by (first, id).
        b = max(int(r.size - 1).bit_length(), 1)
        packed = np.sort((key >> np.uint64(b)) << np.uint64(b) | np.arange(r.size, dtype=np.uint64))
        o = (packed & np.uint64((1 << b) - 1)).astype(np.int64)
        top = packed >> np.uint64(b)
        eq = top[1:] == top[:-1]
        if eq.any():
            mark = np.zeros(top.size, dtype=bool)
            mark[1:] |= eq
            mark[:-1] |= eq
            pos = np.flatnonzero(mark)
            sub = o[pos]
            o[pos] = sub[np.lexsort((sub, ~fl[sub], key[sub]))]
    return o if ids is None else ids[o]


#: log2 of the number of ratio buckets of :func:`iid_scan` (small enough for the
#: per-bucket sums to stay in the first-level cache).
_LOG2_BUCKETS = 12
#: Largest n whose scratch arrays :func:`iid_scan` keeps between calls (per thread).
_KEEP_SCRATCH = 1 << 20
_scratch = threading.local()


def _scratch_arrays(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(float64, int64, bool) work arrays of length n, reused between calls of the same
    thread: a fresh 1 MB array costs its page faults on first touch, about as much as
    the arithmetic of the scan itself."""
    kept = getattr(_scratch, "arrays", None)
    if kept is not None and kept[0].size == n:
        return kept
    arrays = (np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=bool))
    if n <= _KEEP_SCRATCH:
        _scratch.arrays = arrays
    return arrays


def _stamp() -> int:
    """A new mark for this thread's scratch ratio array: every write of ratios into it takes
    one, so a reader can tell whether the ratios it left there are still there."""
    mark = getattr(_scratch, "mark", 0) + 1
    _scratch.mark = mark
    return mark


def _one_minus_pow(lam: np.ndarray, k: int) -> np.ndarray:
    """1 − Qᵏ from the complement λ = 1 − Q (a suffix sum): −expm1(k·log1p(−λ))."""
    return one_minus_pow1m(np.clip(lam, 0.0, 1.0), k)


def _ratio_bits(p: np.ndarray, q: np.ndarray, q_has_zero: bool, out: np.ndarray) -> np.ndarray:
    """r = p/q into ``out`` (q = 0 → +inf, −0.0 → +0.0), returned as its uint64 bit pattern,
    which is monotone in r for r ≥ 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # subnormal q: +inf
        r = np.divide(p, q, out=out)
    if q_has_zero:
        r[q == 0] = np.inf  # x/0 and 0/0 go last
    u = r.view(np.uint64)
    if int(u.max()) >= 1 << 63:  # p = −0.0 entries: the same ratio as +0.0
        r[r == 0] = 0.0
    return u


def _range_pass_py(u, out) -> None:
    """out = (smallest, smallest nonzero, largest) of the bit patterns ``u``, in one pass."""
    lo = u.dtype.type(0xFFFFFFFFFFFFFFFF)
    big = lo
    lo_pos = lo
    hi = u.dtype.type(0)
    for i in range(u.size):
        b = u[i]
        lo = min(lo, b)
        hi = max(hi, b)
        lo_pos = min(lo_pos, b if b != 0 else big)
    out[0] = lo
    out[1] = lo_pos
    out[2] = hi


def _bucket_pass_py(p, q, u, shift, base, over, bucket, Pb, Qb) -> None:
    """bucket[i] = clip((u_i >> shift) − base, 0, over) and the p and q mass per bucket, summed in
    index order (the sums of ``np.bincount`` with weights, bit for bit)."""
    for i in range(p.size):
        b = np.int64(u[i] >> shift) - base
        bucket[i] = min(max(b, 0), over)
    for i in range(p.size):
        b = np.uint64(bucket[i])  # unsigned: no wrap-around test in the loop
        Pb[b] += p[i]
        Qb[b] += q[i]


def _candidates_py(cand, bucket, out) -> int:
    """The ids whose bucket is a candidate, ascending, into ``out``; returns their number."""
    m = 0
    for i in range(bucket.size):
        if cand[bucket[i]]:
            out[m] = i
            m += 1
    return m


_SCAN = None
_SCAN_LOCK = threading.Lock()


def _scan_kernels(n: int | None = None):
    """The compiled (:func:`_range_pass_py`, :func:`_bucket_pass_py`, :func:`_candidates_py`),
    or None (numba missing, ``OPTACCEPT_NO_JIT=1``, or n below the family's size threshold
    ``optaccept._lib.jit.THRESHOLDS["scan"]``: the numpy passes, the same result bit for bit)."""
    global _SCAN
    if not _jit.compiled_for(n, "scan"):
        return None
    if _SCAN is None:
        with _SCAN_LOCK:
            if _SCAN is None:
                jit = _jit.njit()
                if jit is None:
                    _SCAN = False
                else:
                    kernels = (jit(_range_pass_py), jit(_bucket_pass_py), jit(_candidates_py))
                    _jit.announce("scan", kernels)
                    _SCAN = kernels
    return _SCAN or None


def iid_scan(p: np.ndarray, q: np.ndarray, k: int, q_has_zero: bool | None = None):
    """min over the ratio-order prefixes S_j of P_j + 1 − Q_jᵏ, without a full sort.

    One pass computes r = p/q and a bucket per token from the top bits of r's IEEE-754
    bit pattern (monotone in r, so every bucket is a run of the ratio order and ties
    share a bucket); two weighted ``bincount`` give p and q per bucket.  (★) is
    evaluated at every bucket boundary, with 1 − Qᵏ from the suffix mass λ = q(Ω∖S)
    (``−expm1(k·log1p(−λ))``: relative accuracy even when λ is tiny).  A prefix ending
    inside bucket b is at least P(before b) + 1 − Q(through b)ᵏ; only buckets whose bound
    reaches the best boundary value have their tokens sorted (the bound uses the bucket's
    smallest ratio, so usually one or two buckets).  Tokens with r > k never end
    a minimising prefix (adding such a token raises (★): p_i > k·q_i ≥ (Q + q_i)ᵏ − Qᵏ),
    so they share one overflow bucket that is never opened.

    Returns ``(value, subset)`` with ``subset()`` the token ids of a minimising prefix
    (recomputed on demand from p and q, which must stay unchanged).  Cost: about ten
    vectorised passes over the n tokens plus a sort of the candidate tokens (typically
    a few per cent of them; all of them in the worst case, which is then O(n log n)).
    With numba, four passes: the ratio (numpy's division), then compiled (:func:`_scan_kernels`)
    the range of its bit pattern, the buckets with their p and q sums (the sums of
    ``np.bincount``, bit for bit), and the candidate tokens; the result is the same.
    """
    n = p.size
    if q_has_zero is None:
        q_has_zero = bool(q.min() == 0.0)
    r_buf, b_buf, m_buf = _scratch_arrays(n)
    kernels = _scan_kernels(n) if n else None
    u = _ratio_bits(p, q, q_has_zero, r_buf)
    written = _stamp()  # the ratios stay in r_buf until this thread's next write (see mask())
    if kernels is not None:  # the same passes compiled: the range in one, buckets and their sums in one
        ext = np.empty(3, dtype=np.uint64)
        kernels[0](u, ext)
        lo, lo_pos, hi_all = int(ext[0]), int(ext[1]), int(ext[2])
        if lo == 0 and hi_all > 0:  # p = 0 tokens: range from the smallest positive ratio
            lo = lo_pos
    else:
        hi_all = int(u.max())
        lo = int(u.min())
        if lo == 0 and hi_all > 0:  # p = 0 tokens: range from the smallest positive ratio
            lo = int(u[u != 0].min())
    r = r_buf
    top = int(np.array(float(k)).view(np.uint64))  # bit pattern of the ratio k
    hi = max(min(hi_all, top), lo)
    shift = max(0, (hi - lo).bit_length() - _LOG2_BUCKETS)
    base = lo >> shift
    over = (hi >> shift) - base + 1  # overflow bucket: r above hi's bucket (r > k if hi = top)
    nb = over + 1
    if kernels is not None:
        bucket = b_buf
        Pb = np.zeros(nb)
        Qb = np.zeros(nb)
        kernels[1](p, q, u, np.uint64(shift), base, over, bucket, Pb, Qb)
    else:
        bucket = np.right_shift(u, np.uint64(shift), out=b_buf.view(np.uint64)).view(np.int64)
        bucket -= base
        np.clip(bucket, 0, over, out=bucket)
        Pb = np.bincount(bucket, weights=p, minlength=nb)
        Qb = np.bincount(bucket, weights=q, minlength=nb)
    P_before = np.zeros(nb)  # p mass of the buckets before b
    np.cumsum(Pb[:-1], out=P_before[1:])
    P_through = P_before + Pb
    lam_after = np.empty(nb)  # q mass of the buckets after b
    lam_after[-1] = 0.0
    np.cumsum(Qb[:0:-1], out=lam_after[-2::-1])
    loss_after = _one_minus_pow(lam_after, k)  # 1 − Q(through b)ᵏ
    h_b = P_through + loss_after
    b_star = int(np.argmin(h_b))
    best = float(h_b[b_star])
    # the prefix: u below a bit pattern (the end of a bucket), or a bucket start plus tokens
    where: tuple = ("below", (b_star + base + 1) << shift if b_star < over else None)
    if best >= 1.0:
        best, where = 1.0, ("empty",)
    # A prefix ending inside bucket b takes q-mass x ∈ [0, Qb] from it at ratios ≥ r_lo(b):
    # (★) ≥ P(before b) + r_lo·x + 1 − (Q(before b) + x)ᵏ, concave in x, so at least the
    # smaller end value; x = 0 is the previous boundary, already evaluated.
    r_lo = ((np.arange(nb, dtype=np.uint64) + np.uint64(base)) << np.uint64(shift)).view(np.float64)
    r_lo[0] = 0.0  # bucket 0 also holds the ratios below lo (p = 0)
    with np.errstate(invalid="ignore"):  # inf·0 = NaN (a bucket of q = 0 tokens): never opened
        cand = P_before + r_lo * Qb + loss_after <= best * (1.0 + 4.0 * np.finfo(float).eps)
    if hi == top:
        cand[over] = False
    if cand.any():
        if kernels is not None:
            idx = np.empty(n, dtype=np.int64)
            idx = idx[: kernels[2](cand, bucket, idx)]
        else:
            idx = np.flatnonzero(np.take(cand, bucket, out=m_buf))
        if idx.size:  # candidate buckets may hold no token at all (few distinct ratios)
            o = idx[np.argsort(r[idx], kind="stable")]
            bb = bucket[o]
            cp = np.cumsum(p[o])
            rq = np.zeros(o.size + 1)  # rq[t] = q mass of candidates t, t+1, ...
            np.cumsum(q[o][::-1], out=rq[-2::-1])
            first = np.ones(o.size, dtype=bool)
            first[1:] = bb[1:] != bb[:-1]
            starts = np.flatnonzero(first)
            ends = np.append(starts[1:], o.size)
            group = np.cumsum(first) - 1
            # P_j = P(before the bucket) + candidates of the bucket up to j;
            # λ_j = q(after the bucket) + candidates of the bucket after j (differences of
            # sums over later candidates only, which all lie outside S_j: no cancellation).
            Pj = P_before[bb] + (cp - np.concatenate([[0.0], cp])[starts][group])
            lamj = lam_after[bb] + (rq[1:] - rq[ends][group])
            h_t = Pj + _one_minus_pow(lamj, k)
            t_star = int(np.argmin(h_t))
            if h_t[t_star] < best:
                best = float(h_t[t_star])
                b_t = int(bb[t_star])
                where = ("tokens", (b_t + base) << shift if b_t > 0 else 0, o[: t_star + 1][bb[: t_star + 1] == b_t])

    def subset() -> np.ndarray:
        if where[0] == "empty":
            return np.array([], dtype=np.int64)
        if where[0] == "below":
            if where[1] is None:
                return np.arange(n)
            bits = _ratio_bits(p, q, q_has_zero, np.empty(n))
            return np.flatnonzero(bits < np.uint64(where[1]))
        _, start, tail = where
        bits = _ratio_bits(p, q, q_has_zero, np.empty(n))
        return np.concatenate([np.flatnonzero(bits < np.uint64(start)), tail])

    def mask() -> np.ndarray:
        """The indicator of ``subset()`` (a bool array of n), without the list of ids: the
        same comparison of the ratio's bit pattern — the scan's own bits where this thread's
        scratch memory still holds them, else recomputed there."""
        if where[0] == "empty":
            return np.zeros(n, dtype=bool)
        if where[0] == "below" and where[1] is None:
            return np.ones(n, dtype=bool)
        kept = _scratch_arrays(n)[0]
        if kept is r_buf and getattr(_scratch, "mark", 0) == written:
            bits = u  # the scan's ratios, still in the scratch array (p and q are unchanged)
        else:
            bits = _ratio_bits(p, q, q_has_zero, kept)
            _stamp()
        out = np.less(bits, np.uint64(where[1]))
        if where[0] == "tokens":
            out[where[2]] = True
        return out

    subset.mask = mask
    return best, subset


def iid_sorted(p: np.ndarray, law) -> AcceptanceResult:
    """IID α* by :func:`iid_scan` (value and minimising prefix)."""
    value, subset = iid_scan(p, law.q, law.k, law.q_has_zero)
    return AcceptanceResult(value, "sorted", law, subset_fn=subset)


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
    P = np.concatenate([[0.0], np.cumsum(p[order])])
    value, j = _swor.best_prefix(P, law.q[order], law.k)  # 1 − D(S_j) on the prefixes that can win
    return AcceptanceResult(value, "sorted", law, subset_fn=lambda: order[:j])


def greedy_closed_form(p, law, exact: bool) -> AcceptanceResult:
    top = list(law.top)
    if exact:
        qr = law.q_rest_exact
        in_top = set(top)
        value = sum((p[i] for i in top), Fraction(0)) + sum(
            (min(p[y], qr[y]) for y in range(law.n) if y not in in_top), Fraction(0)
        )
        S = sorted(in_top | {y for y in range(law.n) if y not in in_top and p[y] < qr[y]})
        return AcceptanceResult(value, "sorted", law, subset=tuple(S))
    qr = law.q_rest
    off = ~law.in_top
    value = float(p[top].sum() + np.minimum(p, qr)[off].sum())
    return AcceptanceResult(
        min(1.0, value), "sorted", law, subset_fn=lambda: np.flatnonzero(law.in_top | (off & (p < qr)))
    )
