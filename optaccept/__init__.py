"""optaccept — compute, certify and explain the optimal acceptance probability of
(multi-draft) speculative decoding.

>>> import numpy as np, optaccept as oa
>>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
>>> res = oa.optimal_acceptance(p, oa.IID(q, k=3))
>>> oa.verify(p, oa.IID(q, k=3), res).ok
True

Importing optaccept needs numpy and scipy only; the LP (cvxpy), polyhedral
(pycddlib, sympy) and language-model (torch, transformers) parts load on use.
"""

from ._errors import InputError, MethodError, MissingDependencyError, RenormalizedWarning, SolverError
from ._lib import lazy as _lazy
from ._version import __version__
from .drafts import IID, DraftLaw, Greedy, Independent, Joint, SpecHub, TopK, WithoutReplacement
from .optimal import (
    AcceptanceResult,
    Verification,
    batched_optimal_acceptance,
    optimal_acceptance,
    optimal_verifier,
    two_draft_condition,
    verify,
)

# Sub-packages and two entry points load on first use (PEP 562): verifiers need
# scipy.optimize, polyhedra pycddlib and sympy, llm torch and transformers.  Loading all of
# them makes ``import optaccept`` take about 1.0 s instead of 0.17 s.
_LAZY = {
    "verifiers": ".verifiers",
    "polyhedra": ".polyhedra",
    "sequence": ".sequence",
    "llm": ".llm",
    "real": ".real",
    "plots": ".plots",
    "tree": ".tree",
    "audit": ".audit",
    "testing": ".testing",
}
__getattr__ = _lazy.lazy_names(__name__, _LAZY)
__dir__ = _lazy.listed_names(__name__, _LAZY)

__all__ = [
    "optimal_acceptance",
    "optimal_verifier",
    "verify",
    "two_draft_condition",
    "batched_optimal_acceptance",
    "AcceptanceResult",
    "Verification",
    "DraftLaw",
    "IID",
    "WithoutReplacement",
    "Greedy",
    "Independent",
    "SpecHub",
    "TopK",
    "Joint",
    "InputError",
    "MethodError",
    "SolverError",
    "MissingDependencyError",
    "RenormalizedWarning",
    "drafts",
    "optimal",
    "verifiers",
    "polyhedra",
    "sequence",
    "tree",
    "real",
    "audit",
    "testing",
    "llm",
    "plots",
    "__version__",
]
