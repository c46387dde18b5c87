r"""The optimal verifier: draw x̄, then Y from an optimal plan of ``optimal_acceptance``.

With the compressed max-flow plan (docs/theory.md §2), flow[A, y] is the mass of draft set A
matched to y ∈ A.  Unmatched set mass u(A) = D(A) − Σ_y flow[A, y] is coupled
independently with unmatched target mass v(y) = p(y) − Σ_A flow[A, y], so

.. math:: P(Y = y \mid \mathrm{set}(\bar x) = A) = \frac{\mathrm{flow}[A, y]}{D(A)}
          + \frac{u(A)}{D(A)} \frac{v(y)}{1 - \alpha^*},

whose y-marginal is exactly p.  Acceptance (both notions): α* of the draft law,
computed by ``optaccept.optimal_acceptance`` ("auto" method); the sampler needs the
set law explicitly (``DraftLaw.set_law`` size limit).
"""

from __future__ import annotations

import numpy as np

from .._errors import InputError
from ..drafts import IID, DraftLaw, Greedy, SpecHub, WithoutReplacement
from ._base import Verifier, sample_rows

__all__ = ["OptimalVerifier", "optimal_conditional"]

_LAWS = {
    "iid": lambda q, k: IID(q, k),
    "swor": lambda q, k: WithoutReplacement(q, k),
    "greedy": lambda q, k: Greedy(q, k),
    "spechub": lambda q, k: SpecHub(q),
}


def optimal_conditional(p: np.ndarray, law: DraftLaw) -> tuple[dict[tuple[int, ...], int], np.ndarray, float]:
    """(index of each draft set, conditional law P(Y = · | set) as rows, α*) from the
    LP plan of ``optimal_acceptance(p, law, method="lp")``."""
    from ..optimal import optimal_acceptance

    res = optimal_acceptance(p, law, method="lp")
    plan = res.plan
    sl = law.set_law()
    dA = dict(zip(sl.sets, np.asarray(sl.probs, dtype=np.float64).tolist()))
    sets = plan.sets
    flow = np.clip(np.asarray(plan.flow, dtype=np.float64), 0.0, None)
    D = np.array([dA.get(s, 0.0) for s in sets])
    value = float(flow.sum())
    u = np.clip(D - flow.sum(axis=1), 0.0, None)
    v = np.clip(p - flow.sum(axis=0), 0.0, None)
    cond = flow.copy()
    if v.sum() > 0:
        cond += u[:, None] * (v / v.sum())[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(D[:, None] > 0, cond / D[:, None], 0.0)
    return {s: i for i, s in enumerate(sets)}, cond, value


class OptimalVerifier(Verifier):
    """The optimal verifier on a chosen draft law ("iid", "swor", "greedy" or "spechub").

    Parameters
    ----------
    law : str
        Which draft law q and k build (default ``"iid"``).
    """

    title = "optimal transport plan"

    def __init__(self, law: str = "iid") -> None:
        if law not in _LAWS:
            raise InputError(f"law: must be one of {tuple(_LAWS)}, got {law!r}")
        self.law = law
        self.name = "optimal" if law == "iid" else f"optimal_{law}"  # type: ignore[misc]
        if law == "spechub":
            self.min_k = self.max_k = 2  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"OptimalVerifier(law={self.law!r})"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return _LAWS[self.law](q, k)

    def _acceptance(self, p, q, k, notion):
        from ..optimal import optimal_acceptance

        return float(optimal_acceptance(p, self._law(q, k)).value)

    def _simulate(self, p, q, k, law, drafts, rng):
        index, cond, _ = optimal_conditional(p, law)
        srt = np.sort(drafts, axis=1)
        uniq, inv = np.unique(srt, axis=0, return_inverse=True)
        rows = np.array([index[tuple(sorted(set(r)))] for r in uniq.tolist()], dtype=np.int64)
        set_idx = rows[inv.reshape(-1)]
        y = sample_rows(rng, cond, set_idx)
        return y, (drafts == y[:, None]).any(axis=1)
