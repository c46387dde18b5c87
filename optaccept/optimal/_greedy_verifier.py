"""The optimal verifier for greedy and SpecHub drafts (Hu et al., ICLR 2025, §5)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..drafts import Greedy, SpecHub
from ._solve import optimal_acceptance
from ._verifier_base import (
    OptimalVerifier,
    _residual,
    _speculative_step,
)


class _GreedyVerifier(OptimalVerifier):
    kind = "greedy"

    def __init__(self, p, law: Greedy, exact: bool) -> None:
        self.law, self.exact, self.p = law, exact, p
        res = optimal_acceptance(p, law)
        self.value, self.subset = res.value, res.subset
        n = law.n
        self._top = set(law.top)
        if exact:
            qr = law.q_rest_exact
            self._qr = qr
            # p_y = 0: never accepted (no 0/0 read as 1)
            self._accept = tuple(
                Fraction(0) if p[y] == 0 else (Fraction(1) if (y in self._top or qr[y] <= p[y]) else p[y] / qr[y])
                for y in range(n)
            )
            r = [p[y] if y in self._top else max(p[y] - qr[y], Fraction(0)) for y in range(n)]
            tot = sum(r, Fraction(0))
            self._resid = tuple(v / tot for v in r) if tot > 0 else tuple(r)
            self.acceptance = sum((p[y] for y in self._top), Fraction(0)) + sum(
                (min(p[y], qr[y]) for y in range(n) if y not in self._top), Fraction(0)
            )
        else:
            pf = np.asarray(p, dtype=np.float64)
            qr = law.q_rest
            self._qr = qr
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                acc = np.where(qr > pf, pf / np.where(qr > 0, qr, 1.0), 1.0)
            top = list(self._top)
            acc[top] = 1.0
            self._accept = np.where(pf > 0, acc, 0.0)  # p_y = 0: never accepted (no 0/0 read as 1)
            qt = qr.copy()
            qt[top] = 0.0
            self._resid = _residual(pf, qt)
            off = np.ones(n, dtype=bool)
            off[top] = False
            self.acceptance = float(pf[top].sum() + np.minimum(pf, qr)[off].sum())

    def _free(self, x) -> int:
        """The drafted token outside T (the last draft; SpecHub: the non-hub one)."""
        if isinstance(self.law, SpecHub):
            a = self.law.anchor
            return x[0] if x[0] != a else x[1]
        return x[-1]

    def _conditional(self, x):
        t = self._free(x)
        a = self._accept[t]
        if self.exact:
            out = np.array([(1 - a) * r for r in self._resid], dtype=object)
        else:
            out = (1 - a) * np.asarray(self._resid, dtype=np.float64)
        out[t] += a
        return out

    def _respond(self, d, rng):
        if isinstance(self.law, SpecHub):
            a = self.law.anchor
            t = np.where(d[:, 0] != a, d[:, 0], d[:, 1])
        else:
            t = d[:, -1]
        return _speculative_step(t, self._accept, self._resid, rng)
