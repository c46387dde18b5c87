r"""Compiled kernels of the optimal verifier's line device (float form): the swap scan that
builds the shares, and the selection probabilities of one tuple.

**Layout.** :func:`_device_py` computes the cell masses and runs the scan of both sides;
:func:`shares_py` turns the matches into the shares (CSR by home token, sorted by cell) and the
realised marginal.  The scan (:func:`scan_py`, docs/optimal_verifier.md §3): amounts to move
are queued, and every token with room takes from the head of the queue (first in, first out);
each match is one swap of cell lengths (§5, :mod:`optaccept.optimal._swaps`).  O(m) in all
after the layout's sort.  ``scan_py`` and ``shares_py`` also run uncompiled on Fractions.

**Selection.** P(draft i has the leftmost point | x̄) =
Σ_c π_i(c) ∫₀¹ Π_{j≠i} (1 − A_j(c) − B_j(c) + B_j(c) t) dt (docs/optimal_verifier.md §4), one
pointer per draft walking its sorted cells, so a tuple costs O(k · pieces + k² · pieces).

numba is optional (``pip install optaccept[fast]``): without it the numpy code is used, and
the environment variable ``OPTACCEPT_NO_JIT=1`` forces it (for comparisons).
"""

from __future__ import annotations

import math
import threading
import types

import numpy as np

from .._lib import jit as _jit

__all__ = [
    "accept_probs",
    "available",
    "device",
    "pick_one",
    "scan",
    "scan_py",
    "select_probs",
    "shares",
    "shares_py",
]

_KERNEL = None
_SELECT = None
_SHARES = None
_SCAN = None
_PICK = None
_PICK_HOMES = None
_ACCEPT = None
_LOCK = threading.Lock()
_PURE = None


def available(n: int | None = None) -> bool:
    """Whether the kernels can be used for a row of n tokens (None: any size): compiled
    (numba importable, not disabled, n at least the ``line`` threshold of
    :data:`optaccept._lib.jit.THRESHOLDS`) or, below that threshold, as plain Python."""
    return _impl(n) is not None


def _kernel():
    if not _jit.compiled_for(None, "line"):
        return None
    if _KERNEL is None:
        with _LOCK:  # the batched form builds rows in threads
            _compile()
    return _KERNEL or None


def _impl(n: int | None = None):
    """The kernels for a row of n tokens: the compiled ones, the same functions run as plain
    Python below the family's size threshold (the same operations in the same order: the same
    outputs, without numba), or None (``OPTACCEPT_NO_JIT=1``, or numba missing above the
    threshold: the callers' numpy forms)."""
    if _jit.disabled():
        return None
    if _jit.compiled_for(n, "line"):
        return _compiled() if _kernel() is not None else None
    if n is not None and _jit.small(n, "line"):
        return _pure()
    return None  # numba missing


def _compiled():
    return types.SimpleNamespace(
        KERNEL=_KERNEL, SELECT=_SELECT, SHARES=_SHARES, SCAN=_SCAN, PICK=_PICK, PICK_HOMES=_PICK_HOMES, ACCEPT=_ACCEPT
    )


def _pure():
    """The kernels as plain Python functions calling plain Python helpers."""
    global _PURE
    if _PURE is None:
        helpers = {"_sort_impl": sort_pieces_py, "_swap_impl": swap_length_py}
        homes = _with_globals(_pick_homes_py, **helpers)
        _PURE = types.SimpleNamespace(
            KERNEL=_with_globals(_device_py, _scan_impl=scan_py, _ipow_impl=ipow_py),
            SELECT=_select_probs_py,
            SHARES=_with_globals(shares_py, **helpers),
            SCAN=scan_py,
            PICK=_with_globals(_pick_one_py, _pick_homes_impl=homes),
            PICK_HOMES=homes,
            ACCEPT=_accept_numpy,
        )
    return _PURE


def _accept_numpy(p, s, out):
    """:func:`accept_probs_py` in numpy (the same values)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        acc = np.where(s > p, p / np.where(s > 0, s, 1.0), 1.0)
    out[:] = np.where(p > 0, acc, 0.0)


def _compile() -> None:
    global _KERNEL
    if _KERNEL is None:
        jit = _jit.njit()
        if jit is None:
            _KERNEL = False
        else:
            global _SELECT, _SHARES, _SCAN, _PICK, _PICK_HOMES, _ACCEPT, _scan_impl, _shares_impl, _ipow_impl
            # shares_py and _pick_one_py call _sort_impl and _swap_impl by name: compiled, they
            # see the compiled helpers; uncompiled (Fractions) shares_py keeps the Python ones
            helpers = {"_sort_impl": jit(sort_pieces_py), "_swap_impl": jit(swap_length_py)}
            _SELECT = jit(_select_probs_py)
            _SHARES = _shares_impl = jit(_with_globals(shares_py, **helpers))  # _device_py calls
            _SCAN = _scan_impl = jit(scan_py)  # these two by name
            _ipow_impl = jit(ipow_py)
            _PICK_HOMES = jit(_with_globals(_pick_homes_py, **helpers))
            _PICK = jit(_with_globals(_pick_one_py, _pick_homes_impl=_PICK_HOMES))
            _ACCEPT = jit(accept_probs_py)
            kernel = jit(_device_py)
            # the order (its own module) compiles with this family: announce both at once
            _jit.announce("line", [kernel, _SELECT, _SHARES, _SCAN, _PICK, _PICK_HOMES, _ACCEPT])
            _KERNEL = kernel  # last: it marks "ready"


def _with_globals(fn, **names):
    """A copy of ``fn`` whose module globals are overridden by ``names`` (for compiling a
    kernel against compiled helpers while the plain function keeps the Python ones)."""
    clone = types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__, fn.__defaults__)
    clone.__qualname__ = fn.__qualname__
    clone.__module__ = fn.__module__
    return clone


def _need(n: int | None, what: str):
    impl = _impl(n)
    if impl is None:
        raise RuntimeError(f"the compiled {what} kernel is not available")
    return impl


def select_probs(cells: list, probs: list, n: int | None = None) -> np.ndarray:
    """P(draft i is selected | x̄) for the drafts' (cells, probabilities), cells sorted (n:
    the row's size, which chooses compiled or plain Python: the same values)."""
    impl = _need(n, "selection")
    k = len(cells)
    offs = np.zeros(k + 1, dtype=np.int64)
    offs[1:] = np.cumsum([len(c) for c in cells])
    cc = np.concatenate(cells).astype(np.int64) if k else np.zeros(0, dtype=np.int64)
    pp = np.concatenate(probs).astype(np.float64) if k else np.zeros(0)
    out = np.zeros(k)
    impl.SELECT(cc, pp, offs, out)
    return out


def accept_probs(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """min(1, p_y/s_y), and 0 where p_y = 0, in one compiled pass (:func:`accept_probs_py`;
    numpy below the size threshold: the same values)."""
    impl = _need(p.size, "acceptance")
    out = np.empty(p.size)
    impl.ACCEPT(np.ascontiguousarray(p, dtype=np.float64), np.ascontiguousarray(s, dtype=np.float64), out)
    return out


def accept_probs_py(p, s, out):
    """The speculative step's acceptance probabilities: p_y/s_y where s_y > p_y, 1 where
    s_y ≤ p_y, and 0 where p_y = 0 (a token the target forbids is never accepted, also where
    s_y rounds to 0) — elementwise the same operations as the numpy form in
    :func:`optaccept.optimal._line._accept_probs`, so the same values."""
    for y in range(p.shape[0]):
        py = p[y]
        sy = s[y]
        if py > 0.0:
            out[y] = py / sy if sy > py else 1.0
        else:
            out[y] = 0.0


def scan(x: np.ndarray, n: int | None = None):
    """The compiled swap scan on a float array (see :func:`scan_py`): producers, consumers,
    amounts, and the amounts left unmatched (n: the row's size)."""
    impl = _need(n, "scan")
    x = np.ascontiguousarray(x, dtype=np.float64)
    m = x.size
    qpos = np.empty(m, dtype=np.int64)
    qrem = np.empty(m)
    out_p = np.empty(m + 1, dtype=np.int64)
    out_c = np.empty(m + 1, dtype=np.int64)
    out_a = np.empty(m + 1)
    nm, head, tail = impl.SCAN(x, qpos, qrem, out_p, out_c, out_a)
    return out_p[:nm], out_c[:nm], out_a[:nm], qrem[head:tail]


def shares(
    ell: np.ndarray, dens: np.ndarray, left: np.ndarray, right: np.ndarray, amount: np.ndarray, n: int | None = None
):
    """The compiled share assembly (see :func:`shares_py`): (ptr, pcell, plen, s_home)."""
    impl = _need(n, "share")
    m = ell.size
    nm = left.size
    ptr = np.empty(m + 1, dtype=np.int64)
    pcell = np.empty(m + 2 * nm, dtype=np.int64)
    plen = np.empty(m + 2 * nm)
    f64 = np.float64
    s_home = np.empty(m)
    cnt = impl.SHARES(
        np.ascontiguousarray(ell, dtype=f64),
        np.ascontiguousarray(dens, dtype=f64),
        np.ascontiguousarray(left, dtype=np.int64),
        np.ascontiguousarray(right, dtype=np.int64),
        np.ascontiguousarray(amount, dtype=f64),
        ptr,
        pcell,
        plen,
        s_home,
    )
    return ptr, pcell[:cnt], plen[:cnt], s_home


_scratch = threading.local()


def _scratch_arrays(m: int, name: str = "work"):
    """Arrays kept per thread between calls: fresh megabyte arrays cost their page faults on
    first touch, about as much as the scan itself.  ``work``: the scan's six work arrays;
    ``out``: the outputs of a one-shot layout (``device(..., keep=False)``)."""
    kept = getattr(_scratch, name, None)
    if kept is None or kept[0].size < m + 2:
        size = max(m + 2, 1024)
        if name == "work":
            kept = (
                np.empty(size),
                np.empty(size, dtype=np.int64),
                np.empty(size),
                np.empty(size, dtype=np.int64),
                np.empty(size, dtype=np.int64),
                np.empty(size),
            )
        else:
            kept = (
                np.empty(size),
                np.empty(size),
                np.empty(size, dtype=np.int64),
                np.empty(3 * size, dtype=np.int64),
                np.empty(3 * size),
                np.empty(size),
            )
        if m <= 1 << 21:
            setattr(_scratch, name, kept)
    return kept


def _masses_and_scan(ell: np.ndarray, pl: np.ndarray, k: int, nb: int, keep: bool, impl):
    """The first pass (:func:`_device_py`, compiled or plain per ``impl``): (ell, m, mass, dens,
    work arrays, output scratch or None, number of matches); the matches are in the work
    arrays 3–5."""
    fn = impl.KERNEL
    ell = np.ascontiguousarray(ell, dtype=np.float64)
    pl = np.ascontiguousarray(pl, dtype=np.float64)
    m = ell.size
    work = _scratch_arrays(m)
    out = None if keep else _scratch_arrays(m, "out")
    mass, dens = (np.empty(m), np.empty(m)) if keep else (out[0][:m], out[1][:m])
    nm = fn(ell, pl, k, nb, mass, dens, *work)
    return ell, m, mass, dens, work, out, nm


def device(ell: np.ndarray, pl: np.ndarray, k: int, nb: int, *, keep: bool = True, n: int | None = None):
    """The whole float layout in two compiled passes (:func:`_device_py`, :func:`shares_py`):
    cell masses and densities, the swap scan of both sides, the shares (ptr, pcell, plen) and
    the realised marginal per home index.  ``keep=False``: the outputs are per-thread scratch
    arrays, overwritten by the thread's next call.  n: the row's size (plain Python below the
    size threshold: the same outputs)."""
    impl = _need(n, "device")
    ell, m, mass, dens, (_, _, _, mp, mc, ma), out, nm = _masses_and_scan(ell, pl, k, nb, keep, impl)
    if keep:
        ptr = np.empty(m + 1, dtype=np.int64)
        pcell = np.empty(m + 2 * nm, dtype=np.int64)
        plen = np.empty(m + 2 * nm)
        s_home = np.empty(m)
    else:
        ptr, pcell, plen, s_home = out[2][: m + 1], out[3], out[4], out[5][:m]
    cnt = impl.SHARES(ell, dens, mp[:nm], mc[:nm], ma[:nm], ptr, pcell, plen, s_home)
    return mass, dens, ptr, pcell[:cnt], plen[:cnt], s_home


def pick_one(
    ell: np.ndarray,
    pl: np.ndarray,
    k: int,
    nb: int,
    line: np.ndarray,
    x: np.ndarray,
    u: np.ndarray,
    n: int | None = None,
):
    """One tuple through the layout without building every token's shares: the compiled
    masses and scan (:func:`_device_py`), then the drafts' own pieces (:func:`_pick_one_py`).
    Returns (selected draft, s at its token, ``all_s``): ``all_s()`` assembles the realised
    marginal of every home (for the residual on rejection); call it before the thread's next
    call, which reuses the scratch arrays."""
    impl = _need(n, "device")
    ell, m, mass, dens, (_, qpos, qrem, mp, mc, ma), out, nm = _masses_and_scan(ell, pl, k, nb, False, impl)
    o_ptr, o_cell, o_len, o_s = out[2:]
    mark, ent_s, ent_c, ent_l = _scratch_pick(m)
    # the pieces reuse the scan's queue arrays (m + 2 long), free once the scan is done
    i, sy = impl.PICK(
        np.ascontiguousarray(line, dtype=np.int64),
        np.ascontiguousarray(x, dtype=np.int64),
        np.ascontiguousarray(u, dtype=np.float64),
        ell,
        dens,
        mp,
        mc,
        ma,
        nm,
        mark,
        ent_s,
        ent_c,
        ent_l,
        qpos,
        qrem,
    )

    def all_s() -> np.ndarray:
        ptr, s_home = o_ptr[: m + 1], o_s[:m]
        impl.SHARES(ell, dens, mp[:nm], mc[:nm], ma[:nm], ptr, o_cell, o_len, s_home)
        return s_home

    return int(i), float(sy), all_s


def _scratch_pick(m: int):
    """Per-thread arrays of :func:`_pick_one_py`: a zero int mark array (its user leaves it
    zero) and the match entries (at most 2·m: a match has two ends)."""
    kept = getattr(_scratch, "pick", None)
    if kept is None or kept[0].size < m:
        size = max(m, 1024)
        kept = (
            np.zeros(size, dtype=np.int64),
            np.empty(2 * size, dtype=np.int64),
            np.empty(2 * size, dtype=np.int64),
            np.empty(2 * size),
        )
        if m <= 1 << 21:
            _scratch.pick = kept
    return kept


# ---------------------------------------------------------------------------------------
# the kernels (plain Python that numba compiles; the scan also runs uncompiled on Fractions)
# ---------------------------------------------------------------------------------------


def scan_py(x, qpos, qrem, out_p, out_c, out_a):
    """The swap scan (docs/optimal_verifier.md §3): x in scan order, x > 0 an amount to move
    (queued), x < 0 room to take up to −x from the queue, first in first out.  Writes the
    matches (producer, consumer, amount) and returns (number of matches, queue head, queue
    tail): what is left unmatched is ``qrem[head:tail]``.  Each step subtracts an amount from
    one producer's or one consumer's own remainder, so float rounding stays relative to that
    token's amount; written once for floats (compiled) and Fractions (object arrays)."""
    head = 0
    tail = 0
    nm = 0
    for t in range(x.shape[0]):
        v = x[t]
        if v > 0:
            qpos[tail] = t
            qrem[tail] = v
            tail += 1
        elif v < 0:
            need = -v
            while need > 0 and head < tail:
                r = qrem[head]
                if r <= need:
                    take = r
                    need = need - r
                    qrem[head] = r - r
                    out_p[nm] = qpos[head]
                    head += 1
                else:
                    take = need
                    qrem[head] = r - need
                    need = need - need
                    out_p[nm] = qpos[head]
                out_c[nm] = t
                out_a[nm] = take
                nm += 1
    return nm, head, tail


def swap_length_py(amount, d_left, d_right, ell_left, ell_right):
    """The length L = amount/(d_left − d_right) that a match swaps (docs/optimal_verifier.md
    §5), capped by the two cells; 0 when the density gap is not positive (equal densities to
    rounding: the amount is then of the order of rounding).  Exact on Fractions."""
    gap = d_left - d_right
    if gap > 0:
        v = amount / gap
        cap = ell_left if ell_left < ell_right else ell_right
        return cap if v > cap else v
    return amount - amount


def sort_pieces_py(pcell, plen, a, b):
    """Sort one token's pieces ``a:b`` by cell (distinct cells), its own cell at ``a`` and
    its partners after it in match order.  The partners lie on one side of the token in scan
    order, so their cells are monotone: a decreasing run is reversed, then an insertion sort
    places the own cell, O(pieces) in all."""
    if b - a > 2 and pcell[a + 1] > pcell[b - 1]:
        i = a + 1
        j = b - 1
        while i < j:
            c = pcell[i]
            pcell[i] = pcell[j]
            pcell[j] = c
            v = plen[i]
            plen[i] = plen[j]
            plen[j] = v
            i += 1
            j -= 1
    for i in range(a + 1, b):
        c = pcell[i]
        v = plen[i]
        j = i - 1
        while j >= a and pcell[j] > c:
            pcell[j + 1] = pcell[j]
            plen[j + 1] = plen[j]
            j -= 1
        pcell[j + 1] = c
        plen[j + 1] = v


def shares_py(ell, dens, left, right, amount, ptr, pcell, plen, s_home):
    """The shares of the swap construction in CSR form (docs/optimal_verifier.md §5): token h
    keeps its own cell h less what it swaps away, and match i swaps length
    L = amount_i / (d_left − d_right) of the cells of ``left[i]`` and ``right[i]``.  Fills
    ``ptr`` (m + 1), ``pcell`` and ``plen`` (at most m + 2·matches) with every token's pieces
    sorted by cell, and ``s_home`` (m) with the realised marginal Σ_c θ_{h,c} d_c, and returns
    the number of pieces.  A match whose density gap is not
    positive (equal densities to rounding; its amount is then of the order of rounding) is
    skipped, and lengths are capped by the cells, which exact arithmetic never needs.  Written
    once for floats (compiled) and Fractions (object arrays)."""
    m = ell.shape[0]
    nm = left.shape[0]
    own = ell.copy()
    cnt = np.ones(m, dtype=np.int64)
    L = amount.copy()
    for i in range(nm):
        lt = left[i]
        rt = right[i]
        v = _swap_impl(amount[i], dens[lt], dens[rt], ell[lt], ell[rt])
        L[i] = v
        if v > 0:
            own[lt] = own[lt] - v
            own[rt] = own[rt] - v
            cnt[lt] += 1
            cnt[rt] += 1
    ptr[0] = 0
    for h in range(m):
        ptr[h + 1] = ptr[h] + cnt[h]
    fill = ptr[:m].copy()
    for h in range(m):
        pcell[fill[h]] = h
        plen[fill[h]] = own[h] if own[h] > 0 else own[h] - own[h]
        fill[h] += 1
    for i in range(nm):
        v = L[i]
        if v > 0:
            lt = left[i]
            rt = right[i]
            pcell[fill[lt]] = rt
            plen[fill[lt]] = v
            fill[lt] += 1
            pcell[fill[rt]] = lt
            plen[fill[rt]] = v
            fill[rt] += 1
    for h in range(m):  # sort each token's pieces by cell (own cell first, then partners)
        _sort_impl(pcell, plen, ptr[h], ptr[h + 1])
    for h in range(m):
        a = ptr[h]
        v = plen[a] * dens[pcell[a]]
        for j in range(a + 1, ptr[h + 1]):
            v = v + plen[j] * dens[pcell[j]]
        s_home[h] = v
    return ptr[m]


#: Cells per block of :func:`_device_py`'s masses (the block's tails, powers and sums stay in
#: the first-level cache, and the loops over a block's cells vectorise).
_BLOCK = 256


def _device_py(ell, pl, k, nb, mass, dens, x, qpos, qrem, mp, mc, ma):
    """Cell masses μ(c) = T_c^k − T_{c+1}^k (T the normalised tail of the q's in layout
    order; as ℓ_c Σ_{i<k} T_c^i T_{c+1}^{k−1−i} for k ≤ 16, as in
    :func:`optaccept.optimal._line._cell_masses`), then the scan of side B (cells 0…nb−1, left
    to right) and of side A (right to left).  Writes the matches as (left, right, amount)
    into (mp, mc, ma), line indices, and returns their number.

    The running sums of the q's from the right end (the same additions in the same order as
    the numpy cumsum; the last one is the total) go first into ``dens``; then, block by block
    of :data:`_BLOCK` cells, the tails T = run/total, the Horner sums over the k − 1 powers
    (one pass over the block per power: the same operations per cell, in the same order, as
    one cell at a time, so the same values; the passes vectorise) and the masses and
    densities overwrite them, and the scan's input of the block's cells is written.  A block
    reads the first running sum of the next block, which is overwritten only after it."""
    m = ell.shape[0]
    run = 0.0
    for c in range(m - 1, -1, -1):  # the same order of additions as the numpy cumsum
        run += ell[c]
        dens[c] = run
    tot = run
    if tot <= 0.0:
        tot = 1.0
    tb = np.empty(_BLOCK + 1)
    hb = np.empty(_BLOCK)
    pb = np.empty(_BLOCK)
    for lo in range(0, m, _BLOCK):
        hi = lo + _BLOCK if lo + _BLOCK < m else m
        w = hi - lo
        for j in range(w):
            tb[j] = dens[lo + j] / tot
        tb[w] = (dens[hi] if hi < m else 0.0) / tot  # T after the block's last cell
        if k <= 16:
            for j in range(w):
                hb[j] = 1.0
                pb[j] = 1.0
            for _ in range(k - 1):
                for j in range(w):
                    pb[j] *= tb[j + 1]
                    hb[j] = hb[j] * tb[j] + pb[j]
            for j in range(w):
                c = lo + j
                mv = (ell[c] / tot) * hb[j]
                mass[c] = mv
                dens[c] = mv / ell[c] if ell[c] > 0.0 else 0.0
        else:
            for j in range(w):
                c = lo + j
                t0 = tb[j]
                if t0 > 0.0:
                    frac = (ell[c] / tot) / t0
                    tk = _ipow_impl(t0, k)  # numba's t0**k, also when run as plain Python
                    mass[c] = -tk * math.expm1(k * math.log1p(-frac)) if frac < 1.0 else tk
                else:
                    mass[c] = 0.0
                dens[c] = mass[c] / ell[c] if ell[c] > 0.0 else 0.0
        # the scan's input while the block is in the cache: side B left to right, side A
        # from the right end
        mid = nb if nb < hi else hi
        for c in range(lo, mid):
            x[c] = mass[c] - pl[c]
        for c in range(mid if mid > lo else lo, hi):
            x[nb + m - 1 - c] = pl[c] - mass[c]
    nmb, _, _ = _scan_impl(x[:nb], qpos, qrem, mp, mc, ma)
    nma, _, _ = _scan_impl(x[nb:m], qpos, qrem, mp[nmb:], mc[nmb:], ma[nmb:])
    for i in range(nmb, nmb + nma):  # side A was scanned from the right: consumer on the left
        lt = m - 1 - mc[i]
        mc[i] = m - 1 - mp[i]
        mp[i] = lt
    return nmb + nma


def _pick_one_py(line, x, u, ell, dens, mp, mc, ma, nm, mark, ent_s, ent_c, ent_l, pc, plen):
    """The selected draft of one tuple from its uniforms, and the realised marginal s at the
    selected token, straight from the scan's matches — without the shares of the other
    tokens (:func:`shares_py`).  The same pieces as there: a drafted token's own cell less
    the lengths it swaps (subtracted in match order) and one piece per match, sorted by
    cell; the walk and the sums add in the same order, so the output is exactly that of the
    kept verifier (``_pick`` on the full shares).  ``mark`` is a zero int array of length m
    (left zero on return); ``ent_*`` hold up to 2·nm entries, ``pc``/``plen`` nm + 1 pieces.
    Returns (index of the selected draft, s at its token)."""
    k = x.shape[0]
    m = line.shape[0]
    homes = np.empty(k, dtype=np.int64)
    for i in range(k):
        homes[i] = -1
    for c in range(m):
        t = line[c]
        for i in range(k):
            if x[i] == t:
                homes[i] = c
    return _pick_homes_impl(homes, x, u, ell, dens, mp, mc, ma, nm, mark, ent_s, ent_c, ent_l, pc, plen)


def _pick_homes_py(homes, x, u, ell, dens, mp, mc, ma, nm, mark, ent_s, ent_c, ent_l, pc, plen):
    """:func:`_pick_one_py` once the drafts' cells (``homes``, line indices) are known."""
    k = x.shape[0]
    slot = np.empty(k, dtype=np.int64)
    ns = 0
    for i in range(k):  # one slot per distinct home (i.i.d. drafts may repeat a token)
        h = homes[i]
        if mark[h] == 0:
            mark[h] = ns + 1
            ns += 1
        slot[i] = mark[h] - 1
    ne = 0
    for j in range(nm):
        lt = mp[j]
        rt = mc[j]
        if mark[lt] == 0 and mark[rt] == 0:
            continue
        v = _swap_impl(ma[j], dens[lt], dens[rt], ell[lt], ell[rt])
        if v > 0:
            if mark[lt] != 0:
                ent_s[ne] = mark[lt] - 1
                ent_c[ne] = rt
                ent_l[ne] = v
                ne += 1
            if mark[rt] != 0:
                ent_s[ne] = mark[rt] - 1
                ent_c[ne] = lt
                ent_l[ne] = v
                ne += 1
    best = 0
    best_key = np.inf
    s_best = 0.0
    for i in range(k):
        h = homes[i]
        sl = slot[i]
        own = ell[h]
        npc = 1
        for e in range(ne):
            if ent_s[e] == sl:
                own = own - ent_l[e]
                pc[npc] = ent_c[e]
                plen[npc] = ent_l[e]
                npc += 1
        pc[0] = h
        plen[0] = own if own > 0 else own - own
        _sort_impl(pc, plen, 0, npc)  # the same order as shares_py's
        target = u[i] * ell[h]
        run = 0.0
        pick = npc - 1
        for a in range(npc):
            run = run + plen[a]
            if run > target:
                pick = a
                break
        key = pc[pick] + u[k + i]
        if key < best_key:
            best_key = key
            best = i
            sv = plen[0] * dens[pc[0]]
            for a in range(1, npc):
                sv = sv + plen[a] * dens[pc[a]]
            s_best = sv
    for i in range(k):
        mark[homes[i]] = 0
    return best, s_best


def ipow_py(a, b):
    """aᵇ for an integer b ≥ 0 by repeated squaring: numba's float ** int, bit for bit (the
    plain-Python ``**`` calls the C library's pow, which may round differently)."""
    r = 1.0
    while True:
        if b & 1:
            r *= a
        b >>= 1
        if not b:
            break
        a *= a
    return r


_scan_impl = scan_py  # replaced by the compiled forms in _compile()
_ipow_impl = ipow_py
_sort_impl = sort_pieces_py
_swap_impl = swap_length_py
_pick_homes_impl = _pick_homes_py
_shares_impl = shares_py


def _select_probs_py(cells, probs, offs, out):
    k = offs.size - 1
    ptr = np.empty(k, dtype=np.int64)
    acc = np.empty(k)
    poly = np.empty(k + 1)
    for i in range(k):
        for j in range(k):
            ptr[j] = offs[j]
            acc[j] = 0.0
        tot = 0.0
        for a in range(offs[i], offs[i + 1]):
            c = cells[a]
            poly[0] = 1.0
            deg = 0
            for j in range(k):
                if j == i:
                    continue
                # advance draft j's pointer past its cells before c, accumulating A_j(c)
                while ptr[j] < offs[j + 1] and cells[ptr[j]] < c:
                    acc[j] += probs[ptr[j]]
                    ptr[j] += 1
                B = probs[ptr[j]] if ptr[j] < offs[j + 1] and cells[ptr[j]] == c else 0.0
                alpha = 1.0 - acc[j] - B
                poly[deg + 1] = B * poly[deg]
                for d in range(deg, 0, -1):
                    poly[d] = alpha * poly[d] + B * poly[d - 1]
                poly[0] = alpha * poly[0]
                deg += 1
            integral = 0.0
            for d in range(deg + 1):
                integral += poly[d] / (d + 1)
            tot += probs[a] * integral
        out[i] = tot
    s = 0.0
    for i in range(k):
        s += out[i]
    if s > 0.0:
        for i in range(k):
            out[i] /= s
