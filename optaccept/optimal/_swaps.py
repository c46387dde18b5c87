"""The swap construction of the optimal verifier's cell shares (docs/optimal_verifier.md §3–§5).

Every token starts with its own cell.  On each side of the minimiser, one scan along the
layout meets the tokens whose own cell is too heavy or too light for their bound; each unit of
mass that has to move right along the line (from a cell that is too heavy on side B, from a
token with surplus on side A) is matched, first in first out, with the nearest token after it
that can take it, and the two tokens *swap* equal lengths of their cells: the left one gives
length L of its own (denser) cell and receives length L of the right one's cell, which moves
mass a = L (d_left − d_right) to the right.  docs/optimal_verifier.md §5 proves that the
lengths fit in the cells and that the realised marginal is optimal.  Cost: one scan, O(m)
after the layout's sort; every token has its own cell plus one piece per match, and there are
fewer matches than tokens on the move.

The scan is one loop (:func:`optaccept.optimal._line_kernel.scan_py`), compiled for floats when numba is
present and run as it is on Fractions; without numba a vectorised form gives the same matches.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import _line_kernel

__all__ = ["side_matches", "shares"]


def side_matches(mass, pl, *, upper: bool, exact: bool = False):
    """Matches (left, right, a) of one side, local indices in layout order: mass a moves from
    the cell of ``left`` to the token ``right`` (left < right), and the amount left unmatched
    (0 in exact arithmetic, docs/optimal_verifier.md §3; of the order of rounding in floats).

    Side B (``upper``): the excess e = μ − p of a heavy cell is absorbed by later tokens with
    room (μ < p), each up to p − μ; side A: the deficit p − μ of a light token is covered by
    earlier tokens with surplus (μ > p), each down to p.  One scan (left to right on side B,
    right to left on side A) with a first-in-first-out queue of the amounts to move
    (:func:`optaccept.optimal._line_kernel.scan_py`; compiled for floats when numba is present, else
    :func:`_matches_vectorised`).
    """
    m = len(pl)
    if exact:
        x = np.empty(m, dtype=object)
        x[:] = [(mass[t] - pl[t]) if upper else (pl[m - 1 - t] - mass[m - 1 - t]) for t in range(m)]
        qpos = np.empty(m, dtype=np.int64)
        qrem = np.empty(m, dtype=object)
        out_p = np.empty(m + 1, dtype=np.int64)
        out_c = np.empty(m + 1, dtype=np.int64)
        out_a = np.empty(m + 1, dtype=object)
        nm, head, tail = _line_kernel.scan_py(x, qpos, qrem, out_p, out_c, out_a)
        prod, cons, a = out_p[:nm], out_c[:nm], list(out_a[:nm])
        left = sum(qrem[head:tail].tolist(), Fraction(0))
    else:
        x = mass - pl if upper else (pl - mass)[::-1]
        if _line_kernel.available():
            prod, cons, a, rest = _line_kernel.scan(x)
        else:
            prod, cons, a, rest = _matches_vectorised(x)
        left = float(rest.sum())
    if upper:
        return prod, cons, a, left
    return m - 1 - cons, m - 1 - prod, a, left  # scanned from the right: the consumer is on the left


def _matches_vectorised(x: np.ndarray):
    """The scan's matches without a loop: the queue is the reflected walk
    W_t = max(W_{t−1} + x_t, 0) = E_t − min(0, min_{i≤t} E_i) (E the prefix sums of x), a token
    with x < 0 takes W_{t−1} − W_t, and first-in-first-out pairs the produced and taken amounts
    by their cumulative levels (causal: the taken total never exceeds the produced total).
    The levels are summed in extended precision where the platform has it, since an amount is
    a difference of two levels."""
    m = x.size
    z = np.zeros(0, dtype=np.int64)
    if m == 0:
        return z, z, np.zeros(0), np.zeros(0)
    xl = x.astype(np.longdouble)
    E = np.cumsum(xl)
    W = E - np.minimum(np.minimum.accumulate(E), 0.0)
    prev = np.concatenate([np.zeros(1, dtype=np.longdouble), W[:-1]])
    prod_i = np.flatnonzero(x > 0)
    absorb = np.where(x < 0, np.maximum(np.minimum(prev - W, -xl), 0.0), 0.0)
    cons_i = np.flatnonzero(absorb > 0)
    if prod_i.size == 0 or cons_i.size == 0:
        return z, z, np.zeros(0), x[prod_i]
    X = np.cumsum(xl[prod_i])
    Y = np.minimum(np.cumsum(absorb[cons_i]), X[-1])
    Y0 = np.concatenate([np.zeros(1, dtype=np.longdouble), Y[:-1]])
    lo = np.searchsorted(X, Y0, side="right")
    hi = np.minimum(np.searchsorted(X, Y, side="left"), X.size - 1)
    cnt = np.where(Y > Y0, np.maximum(hi - lo + 1, 0), 0)
    c_rep = np.repeat(np.arange(cons_i.size), cnt)
    start = np.repeat(lo - np.concatenate([[0], np.cumsum(cnt)[:-1]]), cnt)
    j_rep = start + np.arange(c_rep.size)
    X0 = np.concatenate([np.zeros(1, dtype=np.longdouble), X[:-1]])
    a = np.minimum(X[j_rep], Y[c_rep]) - np.maximum(X0[j_rep], Y0[c_rep])
    keep = a > 0
    taken = np.bincount(j_rep[keep], weights=a[keep].astype(np.float64), minlength=prod_i.size)
    rest = np.maximum(x[prod_i] - taken, 0.0)
    return prod_i[j_rep[keep]], cons_i[c_rep[keep]], a[keep].astype(np.float64), rest


def shares(ell, dens, left, right, amount, *, exact: bool = False):
    """The shares (ptr, pcell, plen) in CSR form by home index, each token's pieces sorted by
    cell, and the realised marginal s_home[h] = Σ_c θ_{h,c} d_c: every token keeps its own cell less what it swaps away, and each match (l, r, a)
    swaps length L = a / (d_l − d_r) of the two cells (:func:`optaccept.optimal._line_kernel.shares_py`;
    compiled for floats when numba is present, else :func:`_shares_vectorised`)."""
    m = len(ell)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    if exact:
        obj = np.empty(m, dtype=object)
        obj[:] = list(ell)
        dn = np.empty(m, dtype=object)
        dn[:] = list(dens)
        am = np.empty(len(amount), dtype=object)
        am[:] = list(amount)
        ptr = np.empty(m + 1, dtype=np.int64)
        pcell = np.empty(m + 2 * left.size, dtype=np.int64)
        plen = np.empty(m + 2 * left.size, dtype=object)
        s_home = np.empty(m, dtype=object)
        cnt = _line_kernel.shares_py(obj, dn, left, right, am, ptr, pcell, plen, s_home)
        return ptr, pcell[:cnt], plen[:cnt], s_home.tolist()
    if _line_kernel.available():
        return _line_kernel.shares(ell, dens, left, right, amount)
    return _shares_vectorised(ell, dens, left, right, amount)


def _shares_vectorised(ell: np.ndarray, dens: np.ndarray, left: np.ndarray, right: np.ndarray, a: np.ndarray):
    """numpy form of :func:`optaccept.optimal._line_kernel.shares_py` (the same pieces)."""
    m = ell.size
    gap = dens[left] - dens[right]
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.where(gap > 0, a / np.where(gap > 0, gap, 1.0), 0.0)
    L = np.minimum(L, np.minimum(ell[left], ell[right]))
    ok = L > 0
    left, right, L = left[ok], right[ok], L[ok]
    own = ell - np.bincount(left, weights=L, minlength=m) - np.bincount(right, weights=L, minlength=m)
    np.maximum(own, 0.0, out=own)
    tok = np.concatenate([np.arange(m), left, right])
    cell = np.concatenate([np.arange(m), right, left])
    lens = np.concatenate([own, L, L])
    order = np.argsort(tok * np.int64(m) + cell)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(tok, minlength=m))])
    s_home = np.bincount(tok, weights=lens * dens[cell], minlength=m)
    return ptr, cell[order], lens[order], s_home
