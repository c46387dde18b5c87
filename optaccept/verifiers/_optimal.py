r"""The optimal verifier as a member of the verifier family: it runs
:func:`optaccept.optimal_verifier` (docs/optimal_verifier.md) on its draft law.

IID drafts use the line construction at any vocabulary size (exact selection
marginals, then single-draft speculative sampling); Greedy and SpecHub drafts their
attaining rule; without-replacement drafts an optimal flow over draft sets, for set
laws that can be listed (larger ones raise :class:`~optaccept.MethodError`).
Acceptance (both notions): α* of the draft law — the rule's own acceptance equals it,
which :func:`optaccept.verify` re-checks; ``sample`` runs the rule.
"""

from __future__ import annotations

import numpy as np

from .._lib.validation import check_choice
from ..drafts import LAWS, DraftLaw, law_from_name
from ..optimal import optimal_acceptance, optimal_verifier
from ._base import Verifier

__all__ = ["Optimal"]

_LAWS = tuple(LAWS)  # every registered draft law


class Optimal(Verifier):
    """The optimal verifier on a chosen draft law ("iid", "swor", "greedy" or "spechub").

    Parameters
    ----------
    drafts : str
        Which draft law q and k build (default ``"iid"``).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> import optaccept as oa
    >>> v = verifiers.Optimal("swor")
    >>> v.name, round(v.acceptance(p, q, 2), 4)
    ('optimal_swor', 0.9626)
    >>> round(v.acceptance(p, q, 2), 10) == round(oa.optimal_acceptance(p, oa.WithoutReplacement(q, 2)).value, 10)
    True
    """

    title = "optimal verifier"

    def __init__(self, drafts: str = "iid") -> None:
        check_choice("drafts", drafts, _LAWS)
        self.law_name = drafts
        self.name = "optimal" if drafts == "iid" else f"optimal_{drafts}"  # type: ignore[misc]
        if not LAWS[drafts].takes_k:  # a law that fixes k (SpecHub: 2)
            self.min_k = self.max_k = 2  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"Optimal(drafts={self.law_name!r})"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return law_from_name(self.law_name, q, k, allowed=_LAWS, arg="drafts")

    def _acceptance(self, p, q, k, notion):
        return float(optimal_acceptance(p, self._law(q, k)).value)

    def _simulate(self, p, q, k, law, drafts, rng):
        y = optimal_verifier(p, law).respond(drafts, rng)
        return y, (drafts == y[:, None]).any(axis=1)
