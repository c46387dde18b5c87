r"""Compiled kernels of the optimal verifier's line device (float form): the window
construction that builds the shares, and the selection probabilities of one tuple.

**Windows.**
The same construction as :func:`optaccept.optimal._line._windows_float` — each token of
a block, in home order, takes the run of the remaining ("compressed") line whose length is
its q and whose mass is its target; the last token takes what is left
(docs/optimal_verifier.md §5) — written as one loop over the blocks of both sides so
that numba can compile it.  The remaining line is kept in two Fenwick trees (remaining
length and mass per cell), so locating a point of the compressed line costs O(log m); the
run start β solves g(β) = s for the non-increasing, piecewise-linear run mass g: galloping
from the previous run's start brackets it, bisection narrows the bracket until both ends of
the run stay in one cell each, and one linear step solves that piece; the run's two end
pieces are then solved so that its length and mass are q and s to rounding of their own
size.  Dead cells are skipped with a "next alive cell" forest (path halving).

**Selection.** P(draft i has the leftmost point | x̄) =
Σ_c π_i(c) ∫₀¹ Π_{j≠i} (1 − A_j(c) − B_j(c) + B_j(c) t) dt (docs/optimal_verifier.md §4), one
pointer per draft walking its sorted cells, so a tuple costs O(k · pieces + k² · pieces).

numba is optional (``pip install optaccept[fast]``): without it the numpy code is used, and
the environment variable ``OPTACCEPT_NO_JIT=1`` forces it (for comparisons).
"""

from __future__ import annotations

import os
import threading

import numpy as np

__all__ = ["available", "windows_blocks", "select_probs"]

_KERNEL = None
_SELECT = None
_LOCK = threading.Lock()


def available() -> bool:
    """Whether the compiled kernel can be used (numba importable, not disabled)."""
    return _kernel() is not None


def _kernel():
    if os.environ.get("OPTACCEPT_NO_JIT", "") not in ("", "0"):
        return None
    if _KERNEL is None:
        with _LOCK:  # the batched form builds rows in threads
            _compile()
    return _KERNEL or None


def _compile() -> None:
    global _KERNEL
    if _KERNEL is None:
        try:
            import numba
        except ImportError:
            _KERNEL = False
        else:
            g = globals()
            for name in ("_fen_add", "_locate", "_find", "_mass_to", "_run_mass"):  # helpers first
                g[name] = numba.njit(cache=True, nogil=True)(g[name])
            global _SELECT
            _SELECT = numba.njit(cache=True, nogil=True)(_select_probs_py)
            _KERNEL = numba.njit(cache=True, nogil=True)(_windows_blocks_py)  # last: it marks "ready"


def select_probs(cells: list, probs: list) -> np.ndarray:
    """P(draft i is selected | x̄) for the drafts' (cells, probabilities), cells sorted."""
    if _kernel() is None:
        raise RuntimeError("the compiled selection kernel is not available")
    k = len(cells)
    offs = np.zeros(k + 1, dtype=np.int64)
    offs[1:] = np.cumsum([len(c) for c in cells])
    cc = np.concatenate(cells).astype(np.int64) if k else np.zeros(0, dtype=np.int64)
    pp = np.concatenate(probs).astype(np.float64) if k else np.zeros(0)
    out = np.zeros(k)
    _SELECT(cc, pp, offs, out)
    return out


def windows_blocks(ell: np.ndarray, mass: np.ndarray, ts: np.ndarray, offsets: np.ndarray):
    """Realise every block at once.  Block b is cells (= tokens) ``offsets[b]:offsets[b+1]``
    of the concatenated arrays; token j's length is its own cell's ``ell[j]``.  Returns
    (token, cell, length) arrays with global indices into the concatenated arrays."""
    fn = _kernel()
    if fn is None:
        raise RuntimeError("the compiled window kernel is not available")
    ell = np.ascontiguousarray(ell, dtype=np.float64)
    mass = np.ascontiguousarray(mass, dtype=np.float64)
    ts = np.ascontiguousarray(ts, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    cap_out = 3 * ell.size + 8
    tok = np.empty(cap_out, dtype=np.int64)
    cell = np.empty(cap_out, dtype=np.int64)
    length = np.empty(cap_out, dtype=np.float64)
    cnt = fn(ell, mass, ts, offsets, tok, cell, length)
    return tok[:cnt], cell[:cnt], length[:cnt]


# ---------------------------------------------------------------------------------------
# the kernel (plain Python that numba compiles; also runs uncompiled, slowly, in tests)
# ---------------------------------------------------------------------------------------
def _fen_add(tree, i, v):
    m = tree.size - 1
    i += 1
    while i <= m:
        tree[i] += v
        i += i & (-i)


def _locate(fc, fm, top_bit, x):
    """First alive cell c with prefix length ≤ x < prefix length + cap[c] (c = m past the
    end), and the prefix length and mass before it."""
    m = fc.size - 1
    pos = 0
    pc = 0.0
    pm = 0.0
    step = top_bit
    while step > 0:
        nxt = pos + step
        if nxt <= m and pc + fc[nxt] <= x:
            pos = nxt
            pc += fc[nxt]
            pm += fm[nxt]
        step >>= 1
    return pos, pc, pm


def _mass_to(fc, fm, top_bit, dens, total_m, x):
    c, pc, pm = _locate(fc, fm, top_bit, x)
    if c >= fc.size - 1:
        return total_m, c
    return pm + (x - pc) * dens[c], c


def _run_mass(fc, fm, top_bit, dens, total_m, x, q):
    """g(x) = F(x + q) − F(x) and the cells holding both ends of the run."""
    fa, ca = _mass_to(fc, fm, top_bit, dens, total_m, x)
    fb, cb = _mass_to(fc, fm, top_bit, dens, total_m, x + q)
    return fb - fa, ca, cb


def _find(nxt, i):
    """Smallest alive cell ≥ i (path halving)."""
    while nxt[i] != i:
        nxt[i] = nxt[nxt[i]]
        i = nxt[i]
    return i


def _windows_blocks_py(ell, mass, ts, offsets, out_t, out_c, out_l):
    cnt = 0
    nb = offsets.size - 1
    for b in range(nb):
        o0 = offsets[b]
        m = offsets[b + 1] - o0
        if m <= 0:
            continue
        cap = np.empty(m)
        dens = np.empty(m)
        for c in range(m):
            cap[c] = ell[o0 + c]
            dens[c] = mass[o0 + c] / ell[o0 + c] if ell[o0 + c] > 0 else 0.0
        fc = np.zeros(m + 1)
        fm = np.zeros(m + 1)
        for c in range(m):  # O(m) Fenwick build
            i = c + 1
            fc[i] += cap[c]
            fm[i] += cap[c] * dens[c]
            j = i + (i & (-i))
            if j <= m:
                fc[j] += fc[i]
                fm[j] += fm[i]
        top_bit = 1
        while top_bit * 2 <= m:
            top_bit *= 2
        nxt = np.empty(m + 1, dtype=np.int64)
        for c in range(m + 1):
            nxt[c] = c
        for c in range(m):
            if cap[c] <= 0.0:
                nxt[c] = c + 1
        hint = 0.0
        last = -1
        for t in range(m):
            if ell[o0 + t] > 0:
                last = t
        for t in range(m):
            q = ell[o0 + t]
            if q <= 0:
                continue
            s = ts[o0 + t]
            total_c = 0.0
            total_m = 0.0
            # totals from the tree root path (sum of all)
            i = m
            while i > 0:
                total_c += fc[i]
                total_m += fm[i]
                i -= i & (-i)
            top = total_c - q
            if t == last or top <= 0.0:
                c = _find(nxt, 0)
                while c < m:
                    if cap[c] > 0.0:
                        out_t[cnt] = o0 + t
                        out_c[cnt] = o0 + c
                        out_l[cnt] = cap[c]
                        cnt += 1
                        _fen_add(fc, c, -cap[c])
                        _fen_add(fm, c, -cap[c] * dens[c])
                        cap[c] = 0.0
                    nxt[c] = c + 1
                    c = _find(nxt, c + 1)
                continue
            # run mass g(β) = F(β + q) − F(β), non-increasing in β ∈ [0, top]: bracket the
            # root by galloping from the previous run's start (consecutive runs are usually
            # close), then bisect until both ends of the run stay in one cell each
            h = min(max(hint, 0.0), top)
            gh, ah, bh = _run_mass(fc, fm, top_bit, dens, total_m, h, q)
            done = False
            beta = h
            lo, g_lo, a_lo, b_lo = h, gh, ah, bh
            hi, g_hi, a_hi, b_hi = h, gh, ah, bh
            step = q
            if gh >= s:
                while True:
                    x = lo + step
                    if x >= top:
                        gx, ax, bx = _run_mass(fc, fm, top_bit, dens, total_m, top, q)
                        if gx >= s:
                            beta, done = top, True
                        else:
                            hi, g_hi, a_hi, b_hi = top, gx, ax, bx
                        break
                    gx, ax, bx = _run_mass(fc, fm, top_bit, dens, total_m, x, q)
                    if gx >= s:
                        lo, g_lo, a_lo, b_lo = x, gx, ax, bx
                        step *= 2.0
                    else:
                        hi, g_hi, a_hi, b_hi = x, gx, ax, bx
                        break
            else:
                while True:
                    x = hi - step
                    if x <= 0.0:
                        gx, ax, bx = _run_mass(fc, fm, top_bit, dens, total_m, 0.0, q)
                        if gx <= s:
                            beta, done = 0.0, True
                        else:
                            lo, g_lo, a_lo, b_lo = 0.0, gx, ax, bx
                        break
                    gx, ax, bx = _run_mass(fc, fm, top_bit, dens, total_m, x, q)
                    if gx < s:
                        hi, g_hi, a_hi, b_hi = x, gx, ax, bx
                        step *= 2.0
                    else:
                        lo, g_lo, a_lo, b_lo = x, gx, ax, bx
                        break
            if not done:
                beta = lo
                for _ in range(200):
                    if a_lo == a_hi and b_lo == b_hi:  # one linear piece: solve it
                        beta = lo + (g_lo - s) / (g_lo - g_hi) * (hi - lo) if g_lo > g_hi else lo
                        break
                    mid = 0.5 * (lo + hi)
                    if not (lo < mid < hi):
                        beta = lo if g_lo - s <= s - g_hi else hi
                        break
                    gm, am, bm = _run_mass(fc, fm, top_bit, dens, total_m, mid, q)
                    if gm >= s:
                        lo, g_lo, a_lo, b_lo = mid, gm, am, bm
                        if gm == s:
                            beta = mid
                            break
                    else:
                        hi, g_hi, a_hi, b_hi = mid, gm, am, bm
                beta = min(max(beta, 0.0), top)
            hint = beta
            # the run [β, β + q]: its cells, middle ones whole, end pieces solved
            i0, pc0, pm0 = _locate(fc, fm, top_bit, beta)
            i0 = _find(nxt, min(i0, m))
            if i0 >= m:  # β at the very end (rounding): step back to the last alive cell
                i0 = m - 1
                while i0 > 0 and cap[i0] <= 0.0:
                    i0 -= 1
                pc0 = total_c - cap[i0]
            off0 = min(max(beta - pc0, 0.0), cap[i0])
            start = cnt
            remaining = q
            c = i0
            first = True
            while c < m and remaining > 0.0:
                avail = cap[c] - off0 if first else cap[c]
                if avail < 0.0:
                    avail = 0.0
                take = avail if avail < remaining else remaining
                if take > 0.0:
                    out_t[cnt] = o0 + t
                    out_c[cnt] = o0 + c
                    out_l[cnt] = take
                    cnt += 1
                    remaining -= take
                first = False
                c = _find(nxt, c + 1)
            if remaining > 0.0 and cnt > start:  # rounding at the end of the line
                out_l[cnt - 1] += min(remaining, cap[out_c[cnt - 1] - o0] - out_l[cnt - 1])
            npieces = cnt - start
            if npieces >= 2:
                c0 = out_c[start] - o0
                c1 = out_c[cnt - 1] - o0
                d0 = dens[c0]
                d1 = dens[c1]
                if d0 > d1:
                    ml = 0.0
                    mm = 0.0
                    for j in range(start + 1, cnt - 1):
                        ml += out_l[j]
                        mm += out_l[j] * dens[out_c[j] - o0]
                    rest_len = q - ml
                    rest_mass = s - mm
                    x0 = (rest_mass - d1 * rest_len) / (d0 - d1)
                    x1 = rest_len - x0
                    if 0.0 <= x0 <= cap[c0] and 0.0 <= x1 <= cap[c1]:
                        out_l[start] = x0
                        out_l[cnt - 1] = x1
            # remove the run from the line
            w = start
            for j in range(start, cnt):
                c = out_c[j] - o0
                ln = min(out_l[j], cap[c])
                new = cap[c] - ln
                if new <= 1e-15 * ell[o0 + c]:
                    new = 0.0
                delta = new - cap[c]
                if delta != 0.0:
                    _fen_add(fc, c, delta)
                    _fen_add(fm, c, delta * dens[c])
                cap[c] = new
                if new == 0.0:
                    nxt[c] = c + 1
                if ln > 0.0:
                    out_t[w] = out_t[j]
                    out_c[w] = out_c[j]
                    out_l[w] = ln
                    w += 1
            cnt = w
    return cnt


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
