"""The optimal verifier for i.i.d. drafts: the line device of cells with shares from the swap
construction (docs/optimal_verifier.md §3–§5), in floats and, on Fraction input, in exact
arithmetic.  (:func:`_targets` keeps the truncated-greedy targets of §7, used by the
without-replacement observation there.)"""

from __future__ import annotations

import bisect
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, SolverError
from .._lib.sampling import first_above, inverse_cdf
from ..drafts import IID
from . import _line_kernel, _line_oneshot, _line_order
from ._solve import optimal_acceptance
from ._sorted import iid_scan, iid_sorted, line_order
from ._swaps import shares, side_matches
from ._verifier_base import (
    OptimalVerifier,
    _ratio_desc,
    _residual,
    _speculative_step,
    _subset_ids,
)

#: The parts of a float line verifier made on first use (:meth:`_LineVerifier._build`).
_LAZY = frozenset(
    {"s", "acceptance", "_accept", "_resid", "_line", "_ell", "_mass", "_ptr", "_pcell", "_plen", "_home"}
)


class _LineVerifier(OptimalVerifier):
    kind = "line"

    def __init__(self, p, law: IID, exact: bool) -> None:
        self.law, self.exact, self.p = law, exact, p
        k, n = law.k, law.n
        q = law.q_exact if exact else law.q
        if exact:
            res = optimal_acceptance(p, law)
        else:  # optimal_acceptance(p, law) on the cleaned p without validating it again: its
            # division by the sum and its solver, the same operations (the same α* and minimiser)
            tot = float(p.sum())
            res = iid_sorted(p / tot if tot != 1.0 else p, law)
        self.value = res.value
        in_a = np.zeros(n, dtype=bool)
        if not exact:
            # the tuple of ids is made on first access (it costs more than the solve), and the
            # layout, shares, acceptance table and residual on first use (:meth:`_build`): a
            # verifier asked for one output costs what the one-shot answer costs
            self._result = res
            mask = getattr(res._subset_fn, "mask", None) if res._subset is None else None
            if mask is not None:  # the indicator from the solve's bound, without the list of ids
                in_a = mask()
            else:
                in_a[_subset_ids(res)] = True
            self._in_a = in_a
            self._one_shots = 0
            return
        self.subset = res.subset
        in_a[list(self.subset)] = True
        b_ids = _ratio_desc(p, q, np.flatnonzero(~in_a).tolist())
        a_ids = _ratio_desc(p, q, np.flatnonzero(in_a).tolist())
        # drop q = 0 tokens: they are never drafted and own no cell
        b_ids = [i for i in b_ids if q[i] > 0]
        a_ids = [i for i in a_ids if q[i] > 0]
        line = np.array(b_ids + a_ids, dtype=np.int64)
        nb = len(b_ids)
        self._line = line  # cell c belongs to token line[c] (its home)
        m = len(line)
        ell, mass = _cell_masses([q[i] for i in line.tolist()], k, exact)
        pl = [p[i] for i in line.tolist()]
        dens = [mass[c] / ell[c] for c in range(m)]
        matches = []
        for lo, hi, upper in ((0, nb, True), (nb, m, False)):
            lt, rt, av, left = side_matches(mass[lo:hi], pl[lo:hi], upper=upper, exact=True)
            if left != 0:  # impossible by (A) and (B) for a minimiser (docs §3)
                raise SolverError("optimal verifier: the swap scan did not balance (not a minimiser?)")
            matches += [(i + lo, j + lo, v) for i, j, v in zip(lt.tolist(), rt.tolist(), av)]
        lt = [i for i, _, _ in matches]
        rt = [j for _, j, _ in matches]
        ptr, cell_arr, len_arr, s_home = shares(ell, dens, lt, rt, [v for _, _, v in matches], exact=True)
        self._ell, self._mass = ell, mass
        self._ptr = ptr  # CSR by home index
        self._pcell = cell_arr
        self._plen = len_arr
        self._home = np.full(n, -1, dtype=np.int64)
        self._home[line] = np.arange(m)
        # realised selection marginal, recomputed from the shares (not from the targets)
        s = [Fraction(0)] * n
        for h, tok in enumerate(line.tolist()):
            s[tok] = s_home[h]
        self.s = tuple(s)
        acc = [min(p[y], s[y]) if s[y] > 0 else Fraction(0) for y in range(n)]
        # a token that p forbids is never accepted, even where s_y = p_y = 0 (no 0/0 = 1)
        self._accept = tuple(
            Fraction(0) if p[y] == 0 else (Fraction(1) if s[y] <= p[y] else p[y] / s[y]) for y in range(n)
        )
        resid = [max(p[y] - s[y], Fraction(0)) for y in range(n)]
        tot = sum(resid, Fraction(0))
        self._resid = tuple(r / tot for r in resid) if tot > 0 else tuple(resid)
        self.acceptance = sum(acc, Fraction(0))

    def _build(self) -> None:
        """The float verifier's layout, shares, realised marginal, acceptance table and
        residual (made on first use of any of them)."""
        p, q = np.asarray(self.p, dtype=np.float64), np.asarray(self.law.q)
        line, nb, ell, mass, dens, ptr, cell_arr, len_arr, s_home = _float_layout(p, q, self.law.k, self._in_a)
        s = np.zeros(self.law.n)
        s[line] = s_home
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            accept = _accept_probs(p, s)
        home = np.full(self.law.n, -1, dtype=np.int64)
        home[line] = np.arange(line.size)
        built = {
            "_line": line,  # cell c belongs to token line[c] (its home)
            "_ell": ell,
            "_mass": mass,
            "_ptr": ptr,  # CSR by home index
            "_pcell": cell_arr,
            "_plen": len_arr,
            "_home": home,
            "s": s,
            "_accept": accept,
            "_resid": _residual(p, s),
            "acceptance": float(np.minimum(p, s).sum()),
        }
        for name, value in built.items():  # a part set before the build stays as set
            self.__dict__.setdefault(name, value)

    def __getattr__(self, name: str):
        # only for attributes not yet in the instance: the lazy parts of a float verifier
        if name in _LAZY and "_in_a" in self.__dict__:
            self._build()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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

    def selection(self, tokens: Any) -> list:
        """P(draft i is selected | x̄), i = 1..k (sums to 1), for the drafted tokens x̄."""
        return self._selection(self._check_tuple(tokens))

    def _selection(self, x) -> list:
        if not self.exact and _line_kernel.available(self.law.n):
            h = self._home[np.asarray(x, dtype=np.int64)]
            if (h >= 0).all():
                a, b = self._ptr[h], self._ptr[h + 1]
                cells = [self._pcell[i:j] for i, j in zip(a.tolist(), b.tolist())]
                probs = [self._plen[i:j] / self._ell[hh] for i, j, hh in zip(a.tolist(), b.tolist(), h.tolist())]
                return _clamped_law(_line_kernel.select_probs(cells, probs, self.law.n)).tolist()
        sel = _select_probs([self._pieces(t) for t in x], self.exact)
        return sel if self.exact else _clamped_law(sel).tolist()

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
        return out if self.exact else _clamped_law(out)

    def _respond(self, d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows, k = d.shape
        if rows == 0:
            return np.zeros(0, dtype=np.int64)
        if rows == 1 and "_ptr" not in self.__dict__ and self._one_shots == 0:
            self._one_shots += 1  # a second call builds the shares: it pays only once
            out = self._respond_one_shot(d[0], rng)
            if out is not None:
                return out
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
                j[rows_h] = a + first_above(np.cumsum(plen[a:b]), u[rows_h])
        j = j.reshape(d.shape)
        key = self._pcell[j] + rng.random(d.shape)  # cell order first, uniform point inside
        pick = np.argmin(key, axis=1)
        return _speculative_step(d[np.arange(rows), pick], self._accept, self._resid, rng)

    def _respond_one_shot(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
        """The output for one tuple before the shares are built: the one-shot passes
        (:func:`optaccept.optimal._line_oneshot.pick`) with the uniforms drawn as
        :meth:`_respond` draws them (a share per draft, a point in its cell, the acceptance,
        the residual), so the same output for the same ``rng``; None (nothing drawn) where
        the compiled passes are unavailable."""
        if not _line_oneshot.available(self.law.n):
            return None
        q, k = self.law.q, self.law.k
        if (q[x] <= 0).any():
            raise InputError("drafts: a drafted token has q = 0 under this draft law")
        p = np.asarray(self.p, dtype=np.float64)
        state = rng.bit_generator.state
        u = np.empty(3 * k + 2)
        u[:k] = rng.random(k)
        u[k : 2 * k] = rng.random(k)
        one = _line_oneshot.pick(p, q, k, self._in_a, x, u)
        if one is None:  # a ratio off the normal range: the uniforms go back, the shares are built
            rng.bit_generator.state = state
            return None
        i, sy, all_s = one
        y, py = int(x[i]), float(p[x[i]])
        # the acceptance probability as _accept_probs gives it (p_y = 0: never output y)
        if rng.random(1)[0] < ((py / sy if sy > py else 1.0) if py > 0 else 0.0):
            return np.array([y], dtype=np.int64)
        # the residual's draw as rng.choice(n, size=1, p=res / res.sum()) makes it, from its
        # one uniform (_speculative_step on a built verifier), in compiled passes
        line, s_home = all_s()
        return np.array([_line_oneshot.residual_choice(p, line, s_home, rng.random(1)[0])], dtype=np.int64)

    def _respond_uniform(self, x: np.ndarray, u: np.ndarray) -> int:
        """One output for one tuple from given uniforms (3k + 2 of them)."""
        k = x.size
        i = _pick(self._home[x], u, self._ptr, self._pcell, self._plen, self._ell)
        y = int(x[i])
        if u[2 * k] < float(self._accept[y]):
            return y
        return inverse_cdf(np.asarray(self._resid, dtype=np.float64), u[2 * k + 1])


def _accept_probs(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """min(1, p_y/s_y), and 0 where p_y = 0: a token the target forbids is never accepted,
    also where its realised marginal rounds to s_y = 0 (no 0/0 read as 1).  (One compiled
    pass with numba, :func:`optaccept.optimal._line_kernel.accept_probs`: the same values.)"""
    if _line_kernel.available(p.size):
        return _line_kernel.accept_probs(p, s)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        acc = np.where(s > p, p / np.where(s > 0, s, 1.0), 1.0)
    return np.where(p > 0, acc, 0.0)


def _clamped_law(v) -> np.ndarray:
    """A float vector that is a law in exact arithmetic (entries ≥ 0, sum 1) with its
    rounding removed: negative entries (−1e-16 from cancellations) set to 0, then divided
    by the sum."""
    v = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
    tot = v.sum()
    return v / tot if tot > 0 else v


def _pick(homes, u, ptr, pcell, plen, ell) -> int:
    """The selected draft of the line device from uniforms: draft i takes the share of its
    token's cells at u[i]·q (walking the shares) and the point u[k + i] inside that cell; the
    leftmost point wins."""
    k = len(homes)
    keys = np.empty(k)
    for i in range(k):
        h = homes[i]
        a, b = int(ptr[h]), int(ptr[h + 1])
        target = u[i] * float(ell[h])
        # the first piece whose running length passes the target (the last one at most);
        # cumsum adds in order, so this is the walk piece by piece, without its loop
        j = a + first_above(np.cumsum(plen[a:b]), target)
        keys[i] = pcell[j] + u[k + i]
    return int(np.argmin(keys))


def _line_of(p: np.ndarray, q: np.ndarray, in_a: np.ndarray):
    """The line (side B then side A, p/q descending), the number of B cells, and the cell
    lengths and target masses in line order."""
    got = _line_order.layout_order(p, q, in_a)  # None: numba missing, or ratios off the normal range
    if got is not None:
        line, ell, pl = got
        return line, int(np.count_nonzero(~in_a[q > 0])), ell, pl
    line = line_order(p, q, ~in_a)
    return line, int(np.count_nonzero(~in_a[line])), q[line], np.asarray(p, dtype=np.float64)[line]


def _float_layout(p: np.ndarray, q: np.ndarray, k: int, in_a: np.ndarray, *, keep: bool = True):
    """The float layout: line (B then A, p/q descending), nb, cell lengths and masses,
    densities, the shares in CSR form and the realised marginal per home index.  With
    ``keep=False`` the compiled path writes into per-thread scratch arrays, valid until the
    thread's next call (for one-shot use: no fresh memory, so no page faults)."""
    line, nb, ell, pl = _line_of(p, q, in_a)
    if _line_kernel.available(p.size):  # the same steps in two compiled passes (or plain Python)
        mass, dens, ptr, cells, lens, s_home = _line_kernel.device(ell, pl, k, nb, keep=keep, n=p.size)
    else:
        # every token keeps its own cell, and the tokens whose own cell breaks their bound
        # swap lengths of cells with the tokens that absorb the difference (the swap
        # construction, docs/optimal_verifier.md §3-§5)
        ell, mass = _cell_masses(ell, k, False)
        dens = np.where(ell > 0, mass / np.where(ell > 0, ell, 1.0), 0.0)
        lb, rb, ab, _ = side_matches(mass[:nb], pl[:nb], upper=True)
        la, ra, aa, _ = side_matches(mass[nb:], pl[nb:], upper=False)
        ptr, cells, lens, s_home = shares(
            ell, dens, np.concatenate([lb, la + nb]), np.concatenate([rb, ra + nb]), np.concatenate([ab, aa])
        )
    return line, nb, ell, mass, dens, ptr, cells, lens, s_home


def respond_one(p: np.ndarray, q: np.ndarray, k: int, x: np.ndarray, u: np.ndarray) -> int:
    """The optimal verifier's output for one position and one draft tuple, from uniforms —
    the same output as ``optimal_verifier(p, IID(q, k))._respond_uniform(x, u)`` without
    keeping the verifier (p, q cleaned float vectors; every drafted token has q > 0).  Only
    what the tuple needs is computed after the layout: the drafts' shares, the selected
    token's acceptance, and the residual on rejection.  With numba, everything after the α*
    solve up to the selected draft runs as compiled passes without the GIL
    (:func:`optaccept.optimal._line_oneshot.pick`; docs/optimal_verifier.md §8)."""
    n = p.size
    _, subset = iid_scan(p, q, k)
    in_a = subset.mask()  # the indicator of subset(), without its list of ids
    one = _line_oneshot.pick(p, q, k, in_a, x, u)  # order, layout and pieces: compiled, no GIL
    if one is not None:
        i, sy, all_s = one
    elif _line_kernel.available(n):  # the drafts' pieces straight from the scan's matches
        line, nb, ell, pl = _line_of(p, q, in_a)
        i, sy, all_s_home = _line_kernel.pick_one(ell, pl, k, nb, line, x, u, n)
        all_s = lambda: (line, all_s_home())  # noqa: E731
    else:
        line, nb, ell, mass, dens, ptr, cells, lens, s_home = _float_layout(p, q, k, in_a, keep=False)
        homes = [int(np.flatnonzero(line == t)[0]) for t in x.tolist()]
        i = _pick(homes, u, ptr, cells, lens, ell)
        sy, all_s = float(s_home[homes[i]]), lambda: (line, s_home)
    y, py = int(x[i]), float(p[x[i]])
    if py > 0 and u[2 * k] < (py / sy if sy > py else 1.0):  # p_y = 0: never output y
        return y
    line, s_home = all_s()
    pf = np.ascontiguousarray(p, dtype=np.float64)
    if one is not None:  # the residual's draw in two compiled passes (the same index)
        return _line_oneshot.residual_draw(pf, line, s_home, float(u[2 * k + 1]))
    s = np.zeros(n)
    s[line] = s_home
    return inverse_cdf(_residual(pf, s), u[2 * k + 1])


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
    tot = tails[0] if tails.size > 1 and tails[0] > 0 else 1.0
    tails = tails / tot
    t0, t1 = tails[:-1], tails[1:]
    if k <= 16:
        # T_c^k − T_{c+1}^k = ℓ_c · Σ_{i<k} T_c^i T_{c+1}^{k−1−i}: positive terms only, so
        # relative accuracy ~kε even for tiny cells, and no transcendental function
        dens = np.ones_like(t0)
        tp = np.ones_like(t0)
        for _ in range(k - 1):
            tp *= t1
            dens *= t0
            dens += tp
        return ell, (ell / tot) * dens
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(t0 > 0, (ell / tot) / np.where(t0 > 0, t0, 1.0), 0.0)
        # T_c^k (1 − (1 − ℓ_c/T_c)^k), accurate for tiny cells
        mass = np.where(frac < 1.0, -(t0**k) * np.expm1(k * np.log1p(-np.minimum(frac, 1.0 - 1e-300))), t0**k)
    return ell, mass


def _targets(pl: list, mass, *, upper: bool, exact: bool) -> list:
    """Target selection marginal on one side, in cell (home) order.

    upper (side B, s ≤ p): C_j = P_j + min_{i ≤ j}(M_i − P_i), s_j = C_j − C_{j−1};
    lower (side A, s ≥ p): S_j = P_j + min_{i ≥ j}(M_i − P_i).
    Both are greedy vertices of the coverage polymatroid truncated by p
    (docs/optimal_verifier.md §7).  Within a block between contact points the targets
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
