"""Exact double-description checks of the K-draft condition (docs/theory.md §2.1, §4).

``check_k_draft_condition(n, k, drafts)`` builds the Farkas cone of the "α* = 1"
transport system (Khisti et al., ICLR 2025, Appendix D), computes its extreme rays
exactly with cddlib (``cdd.gmp``), reads every ray symbolically with sympy and says
whether the cone gives exactly ``{p(S) >= D(set ⊆ S)}``.  The size of every instance is
estimated first (:func:`cone_size`, :func:`symbolic_terms`) and refused beyond the limits
:data:`MAX_DD_SECONDS` and :data:`MAX_SYMBOLIC_TERMS` with one
:class:`~optaccept.MethodError` line; accepted instances show progress bars.

pycddlib is optional: this package imports without it, and its functions raise
:class:`~optaccept.MissingDependencyError` naming the install step
(``apt-get install libcdd-dev libgmp-dev`` then ``pip install pycddlib``).
"""

from ._report import KDraftReport, check_k_draft_condition

__all__ = [
    "KDraftReport",
    "check_k_draft_condition",
]
