"""The optimal verifier for i.i.d. drafts: the line device of cells (docs/optimal_verifier.md §3–§5),
in floats and, on Fraction input, in exact arithmetic."""

from __future__ import annotations

import bisect
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _line_kernel
from .._errors import InputError
from ..drafts import IID
from ._verifier_base import (
    OptimalVerifier,
    _ratio_desc,
    _ratio_desc_ids,
    _residual,
    _speculative_step,
    _subset_ids,
)


class _LineVerifier(OptimalVerifier):
    kind = "line"

    def __init__(self, p, law: IID, exact: bool) -> None:
        self.law, self.exact, self.p = law, exact, p
        k, n = law.k, law.n
        q = law._exact if exact else law.q
        from . import optimal_acceptance  # (the package imports this module)

        res = optimal_acceptance(p, law)
        self.value = res.value
        in_a = np.zeros(n, dtype=bool)
        if exact:
            self.subset = res.subset
            in_a[list(self.subset)] = True
        else:  # the tuple of ids is made on first access (it costs more than the solve)
            self._result = res
            in_a[_subset_ids(res)] = True
        if exact:
            b_ids = _ratio_desc(p, q, np.flatnonzero(~in_a).tolist(), exact)
            a_ids = _ratio_desc(p, q, np.flatnonzero(in_a).tolist(), exact)
            # drop q = 0 tokens: they are never drafted and own no cell
            b_ids = [i for i in b_ids if q[i] > 0]
            a_ids = [i for i in a_ids if q[i] > 0]
            line = np.array(b_ids + a_ids, dtype=np.int64)
            nb = len(b_ids)
        else:
            qa = np.asarray(q)
            live = qa > 0
            b_arr = _ratio_desc_ids(p, qa, np.flatnonzero(~in_a & live))
            a_arr = _ratio_desc_ids(p, qa, np.flatnonzero(in_a & live))
            line = np.concatenate([b_arr, a_arr])
            nb = b_arr.size
        self._line = line  # cell c belongs to token line[c] (its home)
        if exact:
            ell, mass = _cell_masses([q[i] for i in line.tolist()], k, exact)
            pl = [p[i] for i in line.tolist()]
        else:
            ell, mass = _cell_masses(np.asarray(q)[line], k, exact)
            pl = np.asarray(p, dtype=np.float64)[line]
        self._ell, self._mass = ell, mass
        # realise the targets: a token alone keeps its own cell; a block of tokens that
        # trade mass is realised by the window construction on its cells
        if exact:
            tb, gb = _side_groups(pl[:nb], mass[:nb], upper=True)
            ta, ga = _side_groups(pl[nb:], mass[nb:], upper=False)
            targets = tb + ta
            toks, cells, lens = [], [], []
            for g in gb + [g + nb for g in ga]:
                gl = g.tolist()
                t, c, ln = _windows(
                    [ell[i] for i in gl], [mass[i] for i in gl], [ell[i] for i in gl], [targets[i] for i in gl], exact
                )
                toks.append(g[np.asarray(t, dtype=np.int64)])
                cells.append(g[np.asarray(c, dtype=np.int64)])
                lens.append(ln)
        else:
            tb, sb, bb, ob = _side_groups_float(pl[:nb], mass[:nb], upper=True)
            ta, sa, ba, oa_ = _side_groups_float(pl[nb:], mass[nb:], upper=False)
            targets = np.concatenate([tb, ta])
            singles = np.concatenate([sb, sa + nb])
            blocks = np.concatenate([bb, ba + nb])
            offsets = np.concatenate([ob, oa_[1:] + ob[-1]])
            toks, cells, lens = [singles], [singles], [ell[singles]]
            if blocks.size and _line_kernel.available():
                t, c, ln = _line_kernel.windows_blocks(ell[blocks], mass[blocks], targets[blocks], offsets)
                toks.append(blocks[t])
                cells.append(blocks[c])
                lens.append(ln)
            else:
                for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
                    g = blocks[lo:hi]
                    t, c, ln = _windows(ell[g], mass[g], ell[g], targets[g], exact)
                    toks.append(g[t])
                    cells.append(g[c])
                    lens.append(ln)
        self._targets = targets
        tok_local = np.concatenate(toks) if toks else np.zeros(0, dtype=np.int64)
        cell_arr = np.concatenate(cells) if cells else np.zeros(0, dtype=np.int64)
        if exact:
            len_arr = np.array([v for part in lens for v in part], dtype=object)
        else:
            len_arr = np.concatenate(lens) if lens else np.zeros(0)
        if exact:
            order = np.lexsort((cell_arr, tok_local))
        else:  # each token's pieces come in cell order, the tokens in two sorted runs
            order = np.argsort(tok_local, kind="stable")
        tok_local, cell_arr, len_arr = tok_local[order], cell_arr[order], len_arr[order]
        m = len(line)
        self._ptr = np.searchsorted(tok_local, np.arange(m + 1))  # CSR by home index
        self._pcell = cell_arr
        self._plen = len_arr
        self._home = np.full(n, -1, dtype=np.int64)
        self._home[self._line] = np.arange(m)
        # realised selection marginal, recomputed from the shares (not from the targets)
        if exact:
            dens = [mass[c] / ell[c] for c in range(m)]
            s_home = [Fraction(0)] * m
            for t, c, ln in zip(tok_local.tolist(), cell_arr.tolist(), len_arr.tolist()):
                s_home[t] += ln * dens[c]
            s = [Fraction(0)] * n
            for h, tok in enumerate(line.tolist()):
                s[tok] = s_home[h]
            self.s = tuple(s)
            acc = [min(p[y], s[y]) if s[y] > 0 else Fraction(0) for y in range(n)]
            self._accept = tuple(Fraction(1) if s[y] <= p[y] else p[y] / s[y] for y in range(n))
            resid = [max(p[y] - s[y], Fraction(0)) for y in range(n)]
            tot = sum(resid, Fraction(0))
            self._resid = tuple(r / tot for r in resid) if tot > 0 else tuple(resid)
            self.acceptance = sum(acc, Fraction(0))
        else:
            dens = np.where(ell > 0, mass / np.where(ell > 0, ell, 1.0), 0.0)
            s_home = np.bincount(tok_local, weights=len_arr * dens[cell_arr], minlength=m)
            s = np.zeros(n)
            s[self._line] = s_home
            self.s = s
            pf = np.asarray(p, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                self._accept = np.where(s > pf, pf / np.where(s > 0, s, 1.0), 1.0)
            self._resid = _residual(pf, s)
            self.acceptance = float(np.minimum(pf, s).sum())
        # positions of the cells on the unit line (for sampling)
        self._cell_start = np.concatenate([[0.0], np.cumsum(np.asarray(ell, dtype=np.float64))])[:-1]

    @property
    def subset(self) -> tuple[int, ...]:
        if "_subset" not in self.__dict__:
            self.__dict__["_subset"] = self._result.subset
        return self.__dict__["_subset"]

    @subset.setter
    def subset(self, value) -> None:
        self.__dict__["_subset"] = tuple(value)

    # -- layout check ----------------------------------------------------------------
    def _layout_violation(self):
        """Largest |row sum − q| or |column sum − cell length| of the shares, and any
        negative share (0 exactly in exact mode)."""
        m = self._line.size
        if self.exact:
            row = [Fraction(0)] * m
            col = [Fraction(0)] * m
            for h in range(m):
                for j in range(self._ptr[h], self._ptr[h + 1]):
                    row[h] += self._plen[j]
                    col[self._pcell[j]] += self._plen[j]
            viol = [abs(row[h] - self._ell[h]) for h in range(m)] + [abs(col[c] - self._ell[c]) for c in range(m)]
            neg = [-v for v in self._plen.tolist() if v < 0]
            return max(viol + neg + [Fraction(0)])
        tok = np.repeat(np.arange(m), np.diff(self._ptr))
        row = np.bincount(tok, weights=self._plen, minlength=m)
        col = np.bincount(self._pcell, weights=self._plen, minlength=m)
        return float(
            max(
                np.abs(row - self._ell).max(initial=0.0),
                np.abs(col - self._ell).max(initial=0.0),
                -self._plen.min(initial=0.0),
            )
        )

    # -- selection probabilities for one tuple ----------------------------------------
    def _pieces(self, tok: int):
        h = self._home[tok]
        if h < 0:
            return [], []
        a, b = self._ptr[h], self._ptr[h + 1]
        qy = self._ell[h]
        cells = self._pcell[a:b].tolist()
        probs = [v / qy for v in self._plen[a:b].tolist()]
        return cells, probs

    def selection(self, drafts: Any) -> list:
        """P(draft i is selected | x̄), i = 1..k (sums to 1)."""
        return self._selection(self._check_tuple(drafts))

    def _selection(self, x) -> list:
        if not self.exact and _line_kernel.available():
            h = self._home[np.asarray(x, dtype=np.int64)]
            if (h >= 0).all():
                a, b = self._ptr[h], self._ptr[h + 1]
                cells = [self._pcell[i:j] for i, j in zip(a.tolist(), b.tolist())]
                probs = [self._plen[i:j] / self._ell[hh] for i, j, hh in zip(a.tolist(), b.tolist(), h.tolist())]
                return _line_kernel.select_probs(cells, probs).tolist()
        return _select_probs([self._pieces(t) for t in x], self.exact)

    def _conditional(self, x):
        sel = self._selection(x)
        if self.exact:
            out = np.array([Fraction(0)] * self.law.n, dtype=object)
            rej = Fraction(0)
        else:
            out = np.zeros(self.law.n)
            rej = 0.0
        for t, w in zip(x, sel):
            a = self._accept[t]
            out[t] += w * a
            rej += w * (1 - a)
        if rej:
            if self.exact:
                out = out + np.array([rej * r for r in self._resid], dtype=object)
            else:
                out += rej * self._resid
        return out

    def _respond(self, d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows, k = d.shape
        if rows == 0:
            return np.zeros(0, dtype=np.int64)
        plen = np.asarray(self._plen, dtype=np.float64)
        ell = np.asarray(self._ell, dtype=np.float64)
        home = self._home[d]
        if (home < 0).any():
            raise InputError("drafts: a drafted token has q = 0 under this draft law")
        # choose a share (cell) for every draft: walk the token's shares a few steps,
        # then finish the drafts of tokens with many shares by a search per token
        u = (rng.random(d.shape) * ell[home]).ravel()
        hf = home.ravel()
        j = self._ptr[hf].copy()
        end = self._ptr[hf + 1] - 1
        acc = plen[j].copy()
        move = (u >= acc) & (j < end)
        for _ in range(8):
            if not move.any():
                break
            j[move] += 1
            acc[move] += plen[j[move]]
            move = (u >= acc) & (j < end)
        if move.any():
            idx = np.flatnonzero(move)
            for h in np.unique(hf[idx]).tolist():
                rows_h = idx[hf[idx] == h]
                a, b = self._ptr[h], self._ptr[h + 1]
                local = np.cumsum(plen[a:b])
                pos = np.searchsorted(local, u[rows_h], side="right")
                j[rows_h] = a + np.minimum(pos, b - a - 1)
        j = j.reshape(d.shape)
        key = self._pcell[j] + rng.random(d.shape)  # cell order first, uniform point inside
        pick = np.argmin(key, axis=1)
        return _speculative_step(d[np.arange(rows), pick], self._accept, self._resid, rng)

    def _respond_uniform(self, x: np.ndarray, u: np.ndarray) -> int:
        """One output for one tuple from given uniforms (3k + 2 of them)."""
        k = x.size
        home = self._home[x]
        keys = np.empty(k)
        plen = self._plen
        for i in range(k):
            h = home[i]
            a, b = self._ptr[h], self._ptr[h + 1]
            target = u[i] * float(self._ell[h])
            acc = 0.0
            j = a
            while j < b - 1 and acc + float(plen[j]) <= target:
                acc += float(plen[j])
                j += 1
            keys[i] = self._pcell[j] + u[k + i]
        y = int(x[int(np.argmin(keys))])
        if u[2 * k] < float(self._accept[y]):
            return y
        res = np.asarray(self._resid, dtype=np.float64)
        cdf = np.cumsum(res)
        return int(min(np.searchsorted(cdf, u[2 * k + 1] * cdf[-1], side="right"), res.size - 1))


def _cell_masses(ql: list, k: int, exact: bool):
    """Cell lengths and masses μ(c) = T_c^k − T_{c+1}^k, T_c = 1 − (start of cell c)."""
    if exact:
        ell = list(ql)
        tails = [Fraction(0)] * (len(ell) + 1)
        for c in range(len(ell) - 1, -1, -1):
            tails[c] = tails[c + 1] + ell[c]
        mass = [tails[c] ** k - tails[c + 1] ** k for c in range(len(ell))]
        return ell, mass
    ell = np.asarray(ql, dtype=np.float64)
    tails = np.concatenate([np.cumsum(ell[::-1])[::-1], [0.0]])
    tails = tails / tails[0] if tails.size > 1 and tails[0] > 0 else tails
    t0 = tails[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(t0 > 0, ell / np.where(t0 > 0, t0, 1.0), 0.0)
        # T_c^k (1 − (1 − ℓ_c/T_c)^k), accurate for tiny cells
        mass = np.where(frac < 1.0, -(t0**k) * np.expm1(k * np.log1p(-np.minimum(frac, 1.0 - 1e-300))), t0**k)
    return ell, mass


def _side_groups(pl: list, mass: list, *, upper: bool):
    """Targets on one side and the groups realised independently (local indices), in
    exact arithmetic (floats: :func:`_side_groups_float`, the same scan vectorised).

    A token whose own cell already respects its bound (μ(c) ≤ p on side B, ≥ p on side A)
    keeps its cell (target μ(c)).  The others (violators) trade mass with the nearest
    tokens that have room — to their right on side B (lower density), to their left on
    side A — chosen by one greedy scan; on the line of the cells of this set N the
    targets are the truncated-polymatroid greedy vertex of :func:`_targets`, and N splits
    into blocks at its contacts (docs/optimal_verifier.md §3)."""
    m = len(pl)
    if m == 0:
        return [], []
    zero = Fraction(0)
    excess = [mass[j] - pl[j] for j in range(m)]  # > 0: the cell is too heavy for p
    inN = [False] * m
    if upper:  # side B: violators have excess > 0; absorbed by slack (excess < 0) to the right
        out = zero
        for j in range(m):
            e = excess[j]
            if e > 0:
                inN[j] = True
                out += e
            elif e < 0 and out > 0:
                inN[j] = True
                out = max(out + e, zero)
    else:  # side A: violators have excess < 0; covered by surplus (excess > 0) to the left
        out = zero
        for j in range(m - 1, -1, -1):
            e = excess[j]
            if e < 0:
                inN[j] = True
                out -= e
            elif e > 0 and out > 0:
                inN[j] = True
                out = max(out - e, zero)
    targets = list(mass)
    groups = [np.array([j]) for j in range(m) if not inN[j]]
    nidx = np.array([j for j in range(m) if inN[j]], dtype=np.int64)
    if nidx.size:
        nl = nidx.tolist()
        tn, cn = _targets([pl[j] for j in nl], [mass[j] for j in nl], upper=upper, exact=True)
        for j, v in zip(nl, tn):
            targets[j] = v
        groups += [nidx[lo:hi] for lo, hi in zip(cn[:-1], cn[1:])]
    return targets, groups


def _side_groups_float(pl: np.ndarray, mass: np.ndarray, *, upper: bool):
    """Vectorised float form of :func:`_side_groups`: (targets, tokens alone, blocks'
    tokens concatenated, block offsets), local indices.

    The balancing scan is a reflected walk: on side B the outstanding excess after token j
    is W_j = max(W_{j−1} + e_j, 0) (e = μ − p), i.e. W = E − min(0, running min of E) for
    E = cumsum(e); a token joins N if it is a violator or meets outstanding excess.  (A
    token taken in by rounding of W only adds room to N, which keeps the condition of §3.)
    Side A is the mirror image, scanned from the right."""
    m = pl.size
    if m == 0:
        z = np.zeros(0, dtype=np.int64)
        return np.zeros(0), z, z, np.zeros(1, dtype=np.int64)
    e = mass - pl
    if not upper:
        e = -e[::-1]
    E = np.cumsum(e)
    W = E - np.minimum(np.minimum.accumulate(E), 0.0)
    before = np.concatenate([[0.0], W[:-1]])
    inN = (e > 0) | ((e < 0) & (before > 0))
    if not upper:
        inN = inN[::-1]
    targets = np.array(mass, dtype=np.float64)
    nidx = np.flatnonzero(inN)
    singles = np.flatnonzero(~inN)
    if nidx.size == 0:
        return targets, singles, nidx, np.zeros(1, dtype=np.int64)
    pn, mn = pl[nidx], mass[nidx]
    P = np.concatenate([[0.0], np.cumsum(pn)])
    M = np.concatenate([[0.0], np.cumsum(mn)])
    contacts = np.asarray(_contacts_float(M - P, upper), dtype=np.int64)
    c0, c1 = contacts[:-1], contacts[1:]
    closing = c1 - 1 if upper else c0
    tn = pn.copy()
    blk = (M[c1] - M[c0]) - ((P[c1] - P[c0]) - pn[closing])
    tn[closing] = np.maximum(blk, 0.0)
    targets[nidx] = tn
    sizes = c1 - c0
    one = sizes == 1
    singles = np.sort(np.concatenate([singles, nidx[c0[one]]]))
    keep = np.repeat(~one, sizes)
    blocks = nidx[keep]
    offsets = np.concatenate([[0], np.cumsum(sizes[~one])])
    return targets, singles, blocks, offsets


def _targets(pl: list, mass, *, upper: bool, exact: bool) -> list:
    """Target selection marginal on one side, in cell (home) order.

    upper (side B, s ≤ p): C_j = P_j + min_{i ≤ j}(M_i − P_i), s_j = C_j − C_{j−1};
    lower (side A, s ≥ p): S_j = P_j + min_{i ≥ j}(M_i − P_i).
    Both are greedy vertices of the coverage polymatroid truncated by p
    (docs/optimal_verifier.md §3).  Within a block between contact points the targets
    are p, except one token that closes the block's mass exactly.
    """
    m = len(pl)
    if m == 0:
        return [], [0]
    if exact:
        P = [Fraction(0)]
        M = [Fraction(0)]
        for j in range(m):
            P.append(P[-1] + pl[j])
            M.append(M[-1] + mass[j])
        G = [M[j] - P[j] for j in range(m + 1)]
        contacts = _contacts_exact(G, upper)
        s = list(pl)
        for c0, c1 in zip(contacts[:-1], contacts[1:]):
            closing = c1 - 1 if upper else c0  # the token that closes the block
            others = sum((pl[j] for j in range(c0, c1) if j != closing), Fraction(0))
            s[closing] = (M[c1] - M[c0]) - others
        return s, contacts
    pl = np.asarray(pl, dtype=np.float64)
    mass = np.asarray(mass, dtype=np.float64)
    P = np.concatenate([[0.0], np.cumsum(pl)])
    M = np.concatenate([[0.0], np.cumsum(mass)])
    G = M - P
    contacts = _contacts_float(G, upper)
    s = pl.copy()
    for c0, c1 in zip(contacts[:-1], contacts[1:]):
        closing = c1 - 1 if upper else c0
        blk = mass[c0:c1].sum() - (pl[c0:c1].sum() - pl[closing])
        s[closing] = max(blk, 0.0)
    return s.tolist(), contacts


def _contacts_exact(G: list, upper: bool) -> list[int]:
    m = len(G) - 1
    out = [0]
    if upper:  # running minimum of G attained (from the left)
        best = G[0]
        for j in range(1, m + 1):
            if G[j] <= best:
                best = G[j]
                out.append(j)
        if out[-1] != m:
            out.append(m)
        return out
    best = G[m]  # suffix minimum attained (from the right)
    rev = [m]
    for j in range(m - 1, -1, -1):
        if G[j] <= best:
            best = G[j]
            rev.append(j)
    if rev[-1] != 0:
        rev.append(0)
    return sorted(set(rev))


def _contacts_float(G: np.ndarray, upper: bool) -> list[int]:
    m = G.size - 1
    if upper:
        run = np.minimum.accumulate(G)
        hit = np.flatnonzero(G[1:] <= run[:-1]) + 1
        out = [0] + hit.tolist()
        if out[-1] != m:
            out.append(m)
        return out
    suf = np.minimum.accumulate(G[::-1])[::-1]
    hit = np.flatnonzero(G[:-1] <= suf[1:])
    out = sorted(set([0, m] + hit.tolist()))
    return out


def _windows(ell, mass, tq, ts, exact: bool):
    """Realise targets ts (lengths tq) on cells (ell, mass) whose densities decrease.

    Tokens are taken in home order; each takes the contiguous run (in the line with the
    cells already taken removed) of length tq whose mass is ts; the last takes the rest.
    Any point of the base polytope of the cells' coverage polymatroid is realised
    (docs/optimal_verifier.md §4).  Returns (token, cell, length) triples (local indices).
    """
    if exact:
        return _windows_exact(list(ell), list(mass), list(tq), list(ts))
    return _windows_float(np.asarray(ell, float), np.asarray(mass, float), np.asarray(tq, float), np.asarray(ts, float))


_REACH = 16  # initial search reach (cells) around the previous window
try:  # the compiled interpolation, without the wrapper's per-call checks (tiny arrays, many calls)
    from numpy._core.multiarray import interp as _interp
except ImportError:  # pragma: no cover - other numpy layouts
    _interp = np.interp


def _windows_float(ell, mass, tq, ts):
    """Float window construction, tokens in home order.  Each window is searched in a
    range of the remaining cells around the previous one, doubled until it brackets
    the root (the window mass is monotone in its position), so the work per token is
    proportional to the cells it spans; its two end pieces are then solved so that its
    length and mass are q and s to rounding of their own size.

    The loop runs once per token, so it is written for small arrays: ufuncs with ``out=``
    instead of wrappers that allocate (``np.clip``, ``np.concatenate``), scalar root
    bracketing, and the token column built once at the end."""
    cap = ell.copy()
    dens = np.where(ell > 0, mass / np.where(ell > 0, ell, 1.0), 0.0)
    tql, tsl = tq.tolist(), ts.tolist()
    order = [t for t in range(tq.size) if tql[t] > 0]
    alive = np.flatnonzero(cap > 0)
    out_t, out_c, out_l = [], [], []
    hint, ndead = 0, 0
    last = len(order) - 1
    minimum, maximum, cumsum, searchsorted = np.minimum, np.maximum, np.cumsum, np.searchsorted
    for step, t in enumerate(order):
        q, s = tql[t], tsl[t]
        if ndead > 64 and 2 * ndead > alive.size:
            keep = cap[alive] > 0
            hint = int(np.count_nonzero(keep[:hint]))
            alive = alive[keep]
            ndead = 0
        if step == last:
            live = alive[cap[alive] > 0]
            out_t.append((t, live.size))
            out_c.append(live)
            out_l.append(cap[live].copy())
            cap[live] = 0.0
            break
        size = alive.size
        lo = max(hint - _REACH, 0)
        hi = min(lo + 4 * _REACH, size)
        while True:
            cells = alive[lo:hi]
            ca = cap[cells]
            nc = ca.size
            cC = np.empty(nc + 1)
            cC[0] = 0.0
            cumsum(ca, out=cC[1:])
            Lloc = float(cC[-1])
            if Lloc <= q and (lo > 0 or hi < size):
                w = max(hi - lo, 8)
                lo, hi = max(0, lo - w), min(size, hi + w)
                continue
            cM = np.empty(nc + 1)
            cM[0] = 0.0
            cumsum(ca * dens[cells], out=cM[1:])
            if Lloc <= q:  # everything left is (to rounding) this token's
                beta = None
                break
            top = Lloc - q
            cand = np.empty(2 * nc + 2)
            cand[: nc + 1] = cC
            np.subtract(cC, q, out=cand[nc + 1 :])
            minimum(cand, top, out=cand)
            maximum(cand, 0.0, out=cand)
            gv = _interp(cand + q, cC, cM) - _interp(cand, cC, cM)
            ge = gv >= s
            w = max(hi - lo, 8)
            if lo > 0 and not ge.any():
                lo = max(0, lo - 4 * w)
                continue
            if hi < size and (gv > s).all():
                hi = min(size, hi + 4 * w)
                continue
            beta = _interp_root(cand, gv, ge, s, top)
            break
        if beta is None:
            lens = ca * (q / Lloc) if Lloc > 0 else ca
            sel = cells
            i0 = 0
        else:
            i0 = max(int(searchsorted(cC, beta, side="right")) - 1, 0)
            i1 = min(int(searchsorted(cC, beta + q, side="left")), nc)
            i1 = max(i1, i0 + 1)
            sel = cells[i0:i1]
            lens = minimum(cC[i0 + 1 : i1 + 1], beta + q)
            np.subtract(lens, maximum(cC[i0:i1], beta), out=lens)
            maximum(lens, 0.0, out=lens)
            if sel.size >= 2:
                mid = sel[1:-1]
                lens[1:-1] = cap[mid]
                d0, d1 = float(dens[sel[0]]), float(dens[sel[-1]])
                if d0 > d1:
                    ml = lens[1:-1]
                    rest_len = q - float(ml.sum())
                    rest_mass = s - float(ml @ dens[mid])
                    x0 = (rest_mass - d1 * rest_len) / (d0 - d1)
                    x1 = rest_len - x0
                    if 0.0 <= x0 <= cap[sel[0]] and 0.0 <= x1 <= cap[sel[-1]]:
                        lens[0], lens[-1] = x0, x1
            capsel = cap[sel]
            minimum(lens, capsel, out=lens)
        if beta is None:
            capsel = cap[sel]
        keep = lens > 0
        if keep.all():
            out_t.append((t, lens.size))
            out_c.append(sel)
            out_l.append(lens)
        else:
            out_t.append((t, int(keep.sum())))
            out_c.append(sel[keep])
            out_l.append(lens[keep])
        capsel -= lens
        dust = capsel <= 1e-15 * ell[sel]
        capsel[dust] = 0.0
        cap[sel] = capsel
        ndead += int(np.count_nonzero(dust))
        hint = lo + i0
    if not out_t:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    tt, cnt = zip(*out_t)
    return np.repeat(np.array(tt, dtype=np.int64), cnt), np.concatenate(out_c), np.concatenate(out_l)


def _interp_root(cand, gv, ge, s, top):
    """The root of the non-increasing piecewise-linear g from its values at all its
    breakpoints: bracket between the last candidate with g ≥ s and the first with g < s."""
    if not ge.any():
        return 0.0
    j = int(np.where(ge, cand, -np.inf).argmax())
    b_lo, g_lo = float(cand[j]), float(gv[j])
    if g_lo <= s or ge.all():
        return b_lo
    jj = int(np.where(ge, np.inf, cand).argmin())
    b_hi, g_hi = float(cand[jj]), float(gv[jj])
    if b_hi <= b_lo or g_lo == g_hi:
        return b_lo
    beta = b_lo + (g_lo - s) / (g_lo - g_hi) * (b_hi - b_lo)
    return min(max(beta, b_lo), min(b_hi, top))


def _windows_exact(ell, mass, tq, ts):
    m = len(ell)
    cap = list(ell)
    dens = [mass[c] / ell[c] if ell[c] else Fraction(0) for c in range(m)]
    order = [t for t in range(len(tq)) if tq[t] > 0]
    out_t, out_c, out_l = [], [], []
    for step, t in enumerate(order):
        q, s = tq[t], ts[t]
        alive = [c for c in range(m) if cap[c] > 0]
        cumC, cumM = [Fraction(0)], [Fraction(0)]
        for c in alive:
            cumC.append(cumC[-1] + cap[c])
            cumM.append(cumM[-1] + cap[c] * dens[c])
        Lt = cumC[-1]
        if step == len(order) - 1:
            for c in alive:
                out_t.append(t)
                out_c.append(c)
                out_l.append(cap[c])
                cap[c] = Fraction(0)
            continue

        def F(x, cumC=cumC, cumM=cumM, alive=alive):
            i = min(max(bisect.bisect_right(cumC, x) - 1, 0), len(alive) - 1)
            return cumM[i] + (x - cumC[i]) * dens[alive[i]]

        top = Lt - q
        cands = sorted(
            {min(max(v, Fraction(0)), top) for v in cumC} | {min(max(v - q, Fraction(0)), top) for v in cumC}
        )
        gv = [F(b + q) - F(b) for b in cands]
        if gv[0] <= s:
            beta = cands[0]
        elif gv[-1] >= s:
            beta = cands[-1]
        else:
            i = max(j for j in range(len(cands)) if gv[j] >= s)
            if gv[i] == s:
                beta = cands[i]
            else:
                beta = cands[i] + (gv[i] - s) / (gv[i] - gv[i + 1]) * (cands[i + 1] - cands[i])
        lo, hi = beta, beta + q
        for i, c in enumerate(alive):
            a, b = max(cumC[i], lo), min(cumC[i + 1], hi)
            if b > a:
                out_t.append(t)
                out_c.append(c)
                out_l.append(b - a)
                cap[c] -= b - a
    return out_t, out_c, out_l


def _select_probs(pieces: list, exact: bool) -> list:
    """P(draft i has the leftmost point), each draft choosing cell c w.p. probs[c] and a
    uniform point inside it (independently): Σ_c π_i(c) ∫₀¹ Π_{j≠i}(1 − A_j(c) − B_j(c)
    + B_j(c) t) dt, with A_j(c) = π_j(cells before c), B_j(c) = π_j(c)."""
    if not exact and max(len(c) for c, _ in pieces) > 24:
        return _select_probs_float(pieces)
    k = len(pieces)
    one = Fraction(1) if exact else 1.0
    zero = Fraction(0) if exact else 0.0
    cum = []
    for _, probs in pieces:
        c_acc = [zero]
        for v in probs:
            c_acc.append(c_acc[-1] + v)
        cum.append(c_acc)
    out = []
    for i in range(k):
        cells_i, probs_i = pieces[i]
        tot = zero
        for c, pc in zip(cells_i, probs_i):
            poly = [one]
            for j in range(k):
                if j == i:
                    continue
                cells_j, probs_j = pieces[j]
                pos = bisect.bisect_left(cells_j, c)
                A = cum[j][pos]
                B = probs_j[pos] if pos < len(cells_j) and cells_j[pos] == c else zero
                alpha = one - A - B
                new = [zero] * (len(poly) + 1)
                for d, co in enumerate(poly):
                    new[d] += alpha * co
                    new[d + 1] += B * co
                poly = new
            integral = sum((co / (d + 1) for d, co in enumerate(poly)), zero)
            tot += pc * integral
        out.append(tot)
    if not exact:
        tot = sum(out)
        if tot > 0:
            out = [v / tot for v in out]
    return out


def _select_probs_float(pieces: list) -> list:
    """Vectorised float form of :func:`_select_probs` (over the cells of each draft)."""
    k = len(pieces)
    cells = [np.asarray(c, dtype=np.int64) for c, _ in pieces]
    probs = [np.asarray(v, dtype=np.float64) for _, v in pieces]
    cums = [np.concatenate([[0.0], np.cumsum(v)]) for v in probs]
    out = np.zeros(k)
    for i in range(k):
        ci = cells[i]
        if ci.size == 0:
            continue
        poly = np.zeros((ci.size, k))
        poly[:, 0] = 1.0
        deg = 0
        for j in range(k):
            if j == i:
                continue
            cj = cells[j]
            pos = np.searchsorted(cj, ci)
            A = cums[j][pos]
            posc = np.minimum(pos, max(cj.size - 1, 0))
            B = np.where((pos < cj.size) & (cj[posc] == ci), probs[j][posc], 0.0) if cj.size else np.zeros(ci.size)
            alpha = 1.0 - A - B
            poly[:, 1 : deg + 2] = alpha[:, None] * poly[:, 1 : deg + 2] + B[:, None] * poly[:, 0 : deg + 1]
            poly[:, 0] *= alpha
            deg += 1
        integral = poly[:, : deg + 1] @ (1.0 / np.arange(1, deg + 2))
        out[i] = float(probs[i] @ integral)
    tot = out.sum()
    return (out / tot).tolist() if tot > 0 else out.tolist()
