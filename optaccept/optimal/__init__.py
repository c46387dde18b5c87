r"""Optimal acceptance α* of multi-draft speculative decoding, with certificates.

.. math::

    \alpha^*(p, D) = \max_{\pi \in \Pi(D, p)} P_\pi\bigl(Y \in \mathrm{set}(\bar x)\bigr)
                   = \min_{S \subseteq \Omega}\; p(S) + 1 - D(\mathrm{set}(\bar x) \subseteq S)
    \qquad (\star)

(docs/theory.md §2; Hu et al., *Towards Optimal Multi-draft Speculative Decoding*, ICLR 2025,
eq. (7) and §3; Khisti et al., ICLR 2025, Theorems 2–3 for two drafts.)

Methods
-------
``"transport"``   primal transport LP over ordered tuples × tokens (cvxpy + HiGHS); plan = coupling
``"lp"``          compressed max-flow LP over draft sets (scipy HiGHS); plan = flow
``"subsets"``     exhaustive dual over all 2^n subsets (n ≤ 20; exact n ≤ 14)
``"sorted"``      sorted-prefix algorithm: IID O(n log n); WithoutReplacement (any k); Greedy/SpecHub by their closed form
``"closed_form"`` Khisti et al.'s two-draft expression (IID, k = 2)
``"auto"``        the fastest method that accepts the law, its size and its arithmetic

Every method estimates its size first (subsets, sets × tokens, tuples × tokens) and
refuses with :class:`MethodError` naming a method that works — before any allocation.
"""

from ._batched import batched_optimal_acceptance
from ._result import AcceptanceResult, Verification
from ._solve import optimal_acceptance, two_draft_condition
from ._table import AlphaTable, alpha_table
from ._verifier import OptimalVerifier, optimal_verifier
from ._verifier_batched import optimal_verifier_batched
from ._verify import verify

__all__ = [
    "alpha_table",
    "AlphaTable",
    "optimal_acceptance",
    "batched_optimal_acceptance",
    "verify",
    "two_draft_condition",
    "AcceptanceResult",
    "Verification",
    "optimal_verifier",
    "optimal_verifier_batched",
    "OptimalVerifier",
]
