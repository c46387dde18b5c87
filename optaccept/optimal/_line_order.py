r"""The optimal verifier's layout order in one compiled pass, without a full sort.

The layout (docs/optimal_verifier.md §3) lists the tokens with q > 0 by p/q descending, the
tokens outside the minimiser before those in it at equal ratio, then by id — the order of
:func:`optaccept.optimal._sorted.line_order`.  Where every ratio is zero or a normal float,
p/q is correctly rounded and its IEEE-754 bit pattern is monotone in it, so the complement
``~bits(p/q)`` is an unsigned key ascending in the layout order.  :func:`line_order_py`
packs the top bits of ``key − min(key)`` with the token's id in the low bits, orders these
values by three stable counting passes over their top 33 bits (a radix sort), finishes runs
equal in those bits by value, and re-sorts every run of equal keys by (side, id).  The result
is the same total order as one sort of (key, side, id) — O(m) passes for keys that differ in
their top bits, O(m log m) at worst — and it is compiled (numba), so it runs without the GIL.

Where a ratio overflows or is a positive subnormal (a subnormal q or p), the kernel reports it
and the caller takes the exact key of :func:`optaccept.optimal._sorted.line_order`.
"""

from __future__ import annotations

import threading

import numpy as np

from .._lib import jit as _jit
from ._line_kernel import _with_globals

__all__ = ["INFO", "available", "layout_order", "line_order_compiled", "line_order_py", "locate_py"]

_KERNEL = None
_LOCK = threading.Lock()
_TINY = float(np.finfo(np.float64).tiny)
#: Runs sorted by insertion (up to this many tokens) rather than by a merge sort.
_SMALL = 24
#: Counting passes of 11 bits (the values are ordered by their top 11·_PASSES bits).
_PASSES = 3
#: Length of the order's ``info`` output (see :func:`line_order_py`).
INFO = 5


def available(n: int | None = None) -> bool:
    """Whether the compiled order can be used for a row of n tokens (numba importable, not
    disabled, n at least the ``line`` threshold of :data:`optaccept._lib.jit.THRESHOLDS`;
    below it :func:`optaccept.optimal._sorted.line_order` gives the same order)."""
    return _kernel(n) is not None


def _kernel(n: int | None = None):
    global _KERNEL
    if not _jit.compiled_for(n, "line"):
        return None
    if _KERNEL is None:
        with _LOCK:
            if _KERNEL is None:
                jit = _jit.njit()
                if jit is None:
                    _KERNEL = False
                else:
                    helpers = {"_exact_run": jit(_exact_run_py)}
                    kernel = jit(_with_globals(line_order_py, **helpers))
                    _jit.announce("line", [kernel])
                    _KERNEL = kernel
    return _KERNEL or None


def line_order_compiled(p: np.ndarray, q: np.ndarray, side_a: np.ndarray) -> np.ndarray | None:
    """The layout order (ids with q > 0; p/q descending, side B (``side_a`` false) first at
    equal ratio, then id), or None where a ratio leaves the normal range (the caller then
    uses the exact key) or numba is missing."""
    got = layout_order(p, q, side_a)
    return None if got is None else got[0]


def layout_order(p: np.ndarray, q: np.ndarray, side_a: np.ndarray):
    """(order, q in that order, p in that order) as :func:`line_order_compiled`, or None."""
    n = p.size
    fn = _kernel(n)
    if fn is None:
        return None
    out = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.uint64)
    work = np.empty(2 * n + 2, dtype=np.uint64)
    ell = np.empty(n)
    pl = np.empty(n)
    m = fn(
        np.ascontiguousarray(p, dtype=np.float64),
        np.ascontiguousarray(q, dtype=np.float64),
        np.ascontiguousarray(side_a, dtype=np.bool_),
        out,
        keys,
        keys.view(np.float64),
        work,
        ell,
        pl,
        np.empty(INFO, dtype=np.uint64),
    )
    return None if m < 0 else (out[:m], ell[:m], pl[:m])


def line_order_py(p, q, side_a, out, keys, keys_f, work, ell, pl, info):
    """Fill ``out[:m]`` with the layout order of the m tokens with q > 0, and ``ell[:m]``,
    ``pl[:m]`` with their q and p in that order; return m, or −1 where a ratio overflows or
    is a positive subnormal.  ``keys`` (uint64, n), ``keys_f`` (the same memory as float64),
    and ``work`` (uint64, 2n + 2) are scratch; on return ``keys`` holds every token's key and
    ``work`` the sorted values, and ``info`` (uint64, :data:`INFO`) what locates a token in
    them — the smallest key, the key bits cut, the id bits, the offset of the sorted values
    in ``work`` — and the number of tokens of side B (for :func:`locate_py`).

    Each token's value is its key relative to the smallest, cut to its top bits, with the id
    packed into the low ⌈log₂ n⌉ bits.  Three stable counting passes of 11 bits (least
    significant first) order the values by their top 33 bits; runs equal in those bits are
    finished by value, and runs equal in the value's key bits are re-sorted exactly by
    (key, side, id).  q and p are then read once by id, in the order."""
    n = p.shape[0]
    m = 0
    nb = 0
    kmin = np.uint64(0xFFFFFFFFFFFFFFFF)
    kmax = np.uint64(0)
    for i in range(n):
        if q[i] > 0.0:
            r = p[i] / q[i]
            if r == np.inf or (r < _TINY and p[i] > 0.0):
                return -1
            if r == 0.0:
                r = 0.0  # −0.0
            keys_f[i] = r
            kv = ~keys[i]
            keys[i] = kv
            if kv < kmin:
                kmin = kv
            if kv > kmax:
                kmax = kv
            m += 1
            if not side_a[i]:
                nb += 1
    for j in range(INFO):
        info[j] = np.uint64(0)
    if m == 0:
        return 0
    span = kmax - kmin
    width = 0
    while (span >> np.uint64(width)) > np.uint64(0):
        width += 1
    idb = 1
    while (1 << idb) < n:
        idb += 1
    cut = width + idb - 64 if width + idb > 64 else 0  # key bits dropped from the value
    vbits = width - cut + idb  # bits the values use
    low = vbits - 11 * _PASSES if vbits > 11 * _PASSES else 0  # the passes sort bits low … vbits − 1
    src = work[:n]
    dst = work[n : 2 * n]
    soff = 0  # where src lies in work
    hist = np.zeros((_PASSES, 2048), dtype=np.int64)
    w = 0
    for i in range(n):
        if q[i] > 0.0:
            v = (((keys[i] - kmin) >> np.uint64(cut)) << np.uint64(idb)) | np.uint64(i)
            src[w] = v
            w += 1
            for d in range(_PASSES):
                hist[d, int((v >> np.uint64(low + 11 * d)) & np.uint64(2047))] += 1
    for d in range(_PASSES):
        run = 0
        for j in range(2048):
            c = hist[d, j]
            hist[d, j] = run
            run += c
    for d in range(_PASSES):  # stable: ids ascending wherever the sorted bits tie
        sh = np.uint64(low + 11 * d)
        for j in range(m):
            v = src[j]
            g = int((v >> sh) & np.uint64(2047))
            t = hist[d, g]
            dst[t] = v
            hist[d, g] = t + 1
        tmp = src
        src = dst
        dst = tmp
        soff = n - soff
    info[0] = kmin
    info[1] = np.uint64(cut)
    info[2] = np.uint64(idb)
    info[3] = np.uint64(soff)
    info[4] = np.uint64(nb)
    idm = np.uint64((1 << idb) - 1)
    for a in range(m):
        t = int(src[a] & idm)
        out[a] = t
        ell[a] = q[t]
        pl[a] = p[t]
    if low > 0:  # runs equal in the sorted bits: finish by the whole value
        lsh = np.uint64(low)
        a = 0
        while a < m:
            top = src[a] >> lsh
            e = a + 1
            while e < m and (src[e] >> lsh) == top:
                e += 1
            if e - a > 1:
                if e - a > _SMALL:
                    src[a:e] = np.sort(src[a:e])
                else:
                    for b in range(a + 1, e):
                        v = src[b]
                        j = b - 1
                        while j >= a and src[j] > v:
                            src[j + 1] = src[j]
                            j -= 1
                        src[j + 1] = v
                for b in range(a, e):
                    t = int(src[b] & idm)
                    out[b] = t
                    ell[b] = q[t]
                    pl[b] = p[t]
            a = e
    # runs equal in the value's key bits: exact order by (key, side, id)
    a = 0
    while a < m:
        top = src[a] >> np.uint64(idb)
        e = a + 1
        while e < m and (src[e] >> np.uint64(idb)) == top:
            e += 1
        if e - a > 1:
            _exact_run(out, keys, side_a, a, e)
            for b in range(a, e):
                t = out[b]
                ell[b] = q[t]
                pl[b] = p[t]
        a = e
    return m


def locate_py(q, x, out, m, keys, work, info, homes):
    """The drafted tokens' places in the order (``homes``; −1 for a token with q = 0) after
    :func:`line_order_py`, without a pass over the order: a token's sorted value is rebuilt
    from its key and ``info`` and found by a binary search of the sorted values; where it
    shares its key bits with others (their run was re-sorted by side and id in ``out``), the
    run is searched for the token.  Returns the number of tokens of side B."""
    kmin = info[0]
    cut = info[1]
    idb = info[2]
    src = work[int(info[3]) : int(info[3]) + q.shape[0]]
    for i in range(x.shape[0]):
        t = x[i]
        homes[i] = -1
        if not q[t] > 0.0:
            continue
        v = (((keys[t] - kmin) >> cut) << idb) | np.uint64(t)
        lo = 0
        hi = m
        while lo < hi:  # the first sorted value ≥ v: v itself (the values are distinct)
            mid = (lo + hi) >> 1
            if src[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        top = v >> idb
        a = lo
        while a > 0 and (src[a - 1] >> idb) == top:
            a -= 1
        e = lo + 1
        while e < m and (src[e] >> idb) == top:
            e += 1
        if e - a == 1:
            homes[i] = lo
        else:
            for b in range(a, e):
                if out[b] == t:
                    homes[i] = b
    return int(info[4])


def _exact_run_py(out, keys, side_a, lo, hi):
    """Order ``out[lo:hi]`` (ids ascending) by (key, side B first, id)."""
    if hi - lo <= _SMALL:  # insertion sort: stable, so ids stay ascending
        for a in range(lo + 1, hi):
            t = out[a]
            kt = keys[t]
            st = side_a[t]
            j = a - 1
            while j >= lo and (keys[out[j]] > kt or (keys[out[j]] == kt and side_a[out[j]] and not st)):
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = t
        return
    seg = out[lo:hi].copy()
    kk = np.empty(hi - lo, dtype=np.uint64)
    for a in range(hi - lo):
        kk[a] = keys[seg[a]]
    o = np.argsort(kk, kind="mergesort")  # stable: ids ascending at equal key
    a = 0
    while a < hi - lo:  # each run of equal keys: side B, then side A, each by id
        e = a + 1
        while e < hi - lo and kk[o[e]] == kk[o[a]]:
            e += 1
        w = lo + a
        for c in range(a, e):
            if not side_a[seg[o[c]]]:
                out[w] = seg[o[c]]
                w += 1
        for c in range(a, e):
            if side_a[seg[o[c]]]:
                out[w] = seg[o[c]]
                w += 1
        a = e


_exact_run = _exact_run_py  # the compiled form in _kernel()
