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

from __future__ import annotations

from ._errors import InputError, MethodError, MissingDependencyError, RenormalizedWarning, SolverError
from .drafts import IID, DraftLaw, Greedy, Independent, Joint, SetLaw, SpecHub, WithoutReplacement
from .optimal import (
    AcceptanceResult,
    FlowPlan,
    TransportPlan,
    Verification,
    optimal_acceptance,
    optimal_verifier,
    two_draft_condition,
    verify,
)
from .optimal._batched import batched_optimal_acceptance


def _package_version() -> str:
    """The installed distribution's version (single source: pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("optaccept")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "0+unknown"


__version__ = _package_version()

# Sub-packages and their entry points load on first use (PEP 562), so that
# ``import optaccept`` stays light: verifiers need scipy.optimize, polyhedra pycddlib
# and sympy, llm torch and transformers.
_LAZY_MODULES = (
    "verifiers",
    "polyhedra",
    "sequence",
    "llm",
    "real",
    "plots",
    "cli",
    "jobs",
    "tree",
    "audit",
    "testing",
)
_LAZY_NAMES = {"gap_table": "verifiers", "canonical_decomposition": "verifiers"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES))


__all__ = [
    "optimal_acceptance",
    "optimal_verifier",
    "verify",
    "two_draft_condition",
    "batched_optimal_acceptance",
    "AcceptanceResult",
    "FlowPlan",
    "TransportPlan",
    "Verification",
    "DraftLaw",
    "SetLaw",
    "IID",
    "WithoutReplacement",
    "Greedy",
    "Independent",
    "SpecHub",
    "Joint",
    "InputError",
    "MethodError",
    "SolverError",
    "MissingDependencyError",
    "RenormalizedWarning",
    "gap_table",
    "canonical_decomposition",
    "verifiers",
    "polyhedra",
    "sequence",
    "llm",
    "real",
    "__version__",
]
