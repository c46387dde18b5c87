"""The optimal verifier for listable draft-set laws: an optimal flow over draft sets, as a plan
(docs/optimal_verifier.md §7); exact max flow in Fractions."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.limits import MAX_ENUMERATION
from .._lib.rows import sample_rows
from .._lib.sampling import first_above
from ..drafts import DraftLaw
from ._maxflow import exact_max_flow
from ._verifier_base import (
    OptimalVerifier,
)


class _PlanVerifier(OptimalVerifier):
    kind = "flow plan"

    def __init__(self, p, law: DraftLaw, exact: bool, max_sets: int) -> None:
        self.law, self.exact, self.p = law, exact, p
        n = law.n
        try:
            sl = law.set_law(max_sets=min(max_sets, MAX_ENUMERATION))
        except MethodError:
            raise MethodError(
                f"optimal_verifier: the {type(law).__name__} law at k = {law.k} has more than "
                f"{max_sets} draft sets; the flow-plan verifier needs them listed (C(m, k) for m "
                "tokens with q > 0, whatever the vocabulary). Use IID drafts (any vocabulary), "
                "Greedy/SpecHub drafts, or a draft truncated to fewer tokens (top-m)"
            ) from None
        if len(sl) > max_sets:
            raise MethodError(
                f"optimal_verifier: {len(sl)} draft sets exceed max_sets = {max_sets}; "
                "use IID, Greedy or SpecHub drafts at this size, or a draft truncated to fewer tokens"
            )
        self._index = {s: i for i, s in enumerate(sl.sets)}
        D = list(sl.probs)
        if exact:
            flow, value, cut = exact_max_flow(sl.sets, D, p)
            self.value = value
            self.subset = cut
            u = [D[a] - sum(flow[a].values(), Fraction(0)) for a in range(len(D))]
            used = [Fraction(0)] * n
            for a in range(len(D)):
                for y, f in flow[a].items():
                    used[y] += f
            v = [p[y] - used[y] for y in range(n)]
            vt = sum(v, Fraction(0))
            rows = []
            for a in range(len(sl.sets)):
                row = [Fraction(0)] * n
                if D[a] > 0:
                    for y, f in flow[a].items():
                        row[y] += f / D[a]
                    if vt > 0:
                        for y in range(n):
                            row[y] += u[a] / D[a] * v[y] / vt
                rows.append(row)
            self._rows, self._probs = rows, D
            self.acceptance = sum(
                (D[a] * sum((rows[a][y] for y in s_), Fraction(0)) for a, s_ in enumerate(sl.sets)), Fraction(0)
            )
        else:
            import scipy.sparse as sp

            from ._flow import incidence, max_flow

            # the one max flow (Dinic, integer units), kept sparse: a large vocabulary with a
            # small draft support has many tokens that no draft set holds, and a dense
            # (sets, n) plan would not fit in memory
            res = max_flow(np.asarray(p, dtype=np.float64), law, max_sets=max_sets, dense=False, set_law=sl)
            self.value, self.subset = res.value, res.subset
            sets = res.plan.sets  # the set law's sets, in its order
            Dv = np.asarray(D, dtype=np.float64)
            flow = sp.csr_matrix(res.plan.flow, dtype=np.float64)
            flow.data = np.clip(flow.data, 0.0, None)
            # scale rows that exceed their capacity by round-off
            tot = np.asarray(flow.sum(axis=1)).ravel()
            scale = np.where(tot > Dv, Dv / np.where(tot > 0, tot, 1.0), 1.0)
            flow = sp.csr_matrix(sp.diags(scale) @ flow)
            used = np.asarray(flow.sum(axis=1)).ravel()
            u = np.clip(Dv - used, 0.0, None)
            v = np.clip(np.asarray(p, dtype=np.float64) - np.asarray(flow.sum(axis=0)).ravel(), 0.0, None)
            vt = v.sum()
            # π(· | A) = flow[A, ·]/D(A) + (unmatched share of A) · r, r the unmatched target
            # mass normalised.  Divided entry by entry: 1/D(A) overflows for a subnormal D(A).
            # Every listed set gets a law: in exact arithmetic Σ_A (unmatched share)·D(A) =
            # Σ_y v(y), so r is needed exactly when it exists; in floats a set whose D(A) lies
            # below the flow's resolution (or underflows to 0) keeps an unmatched share of 1
            # while v may round to 0, and then r falls back to p (a change of mass ≤ D(A)).
            pos = Dv > 0
            safe = np.where(pos, Dv, 1.0)
            F = flow.tocoo()
            share = sp.csr_matrix((F.data / safe[F.row], (F.row, F.col)), shape=flow.shape)
            share.data = np.minimum(share.data, 1.0)
            self._sets = sets
            self._F = share
            self._F.sort_indices()
            self._u = np.where(pos, np.clip(u / safe, 0.0, 1.0), 1.0)
            pf = np.asarray(p, dtype=np.float64)
            self._r = v / vt if vt > 0 else pf / pf.sum()
            self._inc = incidence(sets, law.n)
            self.acceptance = float(flow.sum()) + float(u @ (self._inc @ self._r))

    def _row(self, a: int) -> Any:
        """π(· | sets[a]) as a length-n row."""
        if self.exact:
            return self._rows[a]
        row = self._u[a] * self._r
        lo, hi = self._F.indptr[a], self._F.indptr[a + 1]
        row[self._F.indices[lo:hi]] += self._F.data[lo:hi]
        return row

    def _layout_violation(self) -> Any:
        """Largest |Σ_y π(y | A) − 1| over the listed sets, and any negative entry: every
        conditional must be a law (0 exactly in exact mode)."""
        if self.exact:
            pos = [row for row, d in zip(self._rows, self._probs) if d > 0]
            return max(
                [abs(sum(row, Fraction(0)) - 1) for row in pos]
                + [-v for row in pos for v in row if v < 0]
                + [Fraction(0)]
            )
        sums = np.asarray(self._F.sum(axis=1)).ravel() + self._u * self._r.sum()
        neg = max(0.0, -float(self._F.data.min(initial=0.0)), -float(self._r.min(initial=0.0)))
        return max(float(np.abs(sums - 1.0).max(initial=0.0)), neg)

    def _set_acceptance(self, a: int, A: tuple[int, ...]) -> Any:
        """Σ_{y ∈ A} π(y | A), from the rule's own row (exact form)."""
        return sum((self._rows[a][y] for y in A), Fraction(0))

    def _set_acceptances(self) -> np.ndarray:
        """Σ_{y ∈ A} π(y | A) for every listed set A (float form): the matched part counted
        only where it lands on a token of A, plus A's unmatched share times r(A)."""
        inc = self._inc
        return np.asarray(self._F.multiply(inc).sum(axis=1)).ravel() + self._u * (inc @ self._r)

    def _set_index(self, x) -> int:
        """Index of the draft set of tuple x; InputError if the law never drafts it."""
        key = tuple(sorted(set(int(v) for v in x)))
        if key not in self._index:
            raise InputError(f"drafts: {tuple(int(v) for v in x)} has probability zero under the draft law")
        return self._index[key]

    def _conditional(self, x):
        row = self._row(self._set_index(x))
        if self.exact:
            return np.array(list(row), dtype=object)
        return np.array(row, dtype=np.float64)

    def _respond(self, d, rng):
        idx = np.array([self._set_index(r) for r in d.tolist()], dtype=np.int64)
        if self.exact:
            return sample_rows(rng, np.asarray(self._rows, dtype=np.float64), idx)
        return self._respond_from(idx, rng.random(idx.size), rng.random(idx.size))

    def _respond_from(self, idx: np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Outputs for set indices ``idx`` from two uniforms per row: ``u`` walks the matched
        part (at most k entries per row, all rows at once), ``w`` draws the residual."""
        F = self._F
        start = F.indptr[idx]
        count = F.indptr[idx + 1] - start
        out = np.full(idx.size, -1, dtype=np.int64)
        cum = np.zeros(idx.size)
        for j in range(int(count.max(initial=0))):
            has = j < count
            pos = np.where(has, start + j, 0)
            cum = cum + np.where(has, F.data[pos], 0.0)
            take = has & (out < 0) & (u < cum)
            out[take] = F.indices[pos[take]]
        rest = out < 0
        if rest.any():
            cr = np.cumsum(self._r)
            if cr.size and cr[-1] > 0:
                out[rest] = first_above(cr, w[rest] * cr[-1])
            else:  # no unmatched target mass: the matched part is the whole law (round-off)
                out[rest] = F.indices[np.maximum(F.indptr[idx[rest] + 1] - 1, F.indptr[idx[rest]])]
        return out

    def _respond_uniform(self, x: np.ndarray, u: np.ndarray) -> int:
        """One output for one tuple from given uniforms (the first two are used)."""
        return int(self._respond_from(np.array([self._set_index(x)]), u[:1], u[1:2])[0])
