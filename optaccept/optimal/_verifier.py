r"""The optimal verifier at vocabulary scale: a lossless rule that attains α* exactly.

``optimal_verifier(p, law)`` builds, for one position, a verification rule π(· | x̄)
whose output law is p and whose acceptance P(Y ∈ set(x̄)) equals α*(p, D) of (★)
(docs/optimal_verifier.md has the construction and its proof).

IID drafts (any n, any k; exact in Fractions)
    Let A be a minimiser of (★) (a prefix in p/q order) and B = Ω ∖ A.  The rule is
    Khisti et al.'s canonical decomposition (ICLR 2025, arXiv:2410.18234, Thm 1): a
    *selection* picks one drafted token with marginal s, then single-draft
    speculative sampling of p against s (accept y w.p. min(1, p_y/s_y), else draw the
    residual (p − s)₊).  Its acceptance is Σ_y min(p_y, s_y), which equals α* iff
    s ≤ p on B, s ≥ p on A and every tuple that holds a token of B selects one.

    The selection is a *line device*: the unit interval is cut into cells, the
    tokens of B (p/q descending) first, then those of A; cell c has length q_c and
    mass μ(c) = (1 − u_c)^k − (1 − u_{c+1})^k, the law of the minimum of k uniforms.
    Token y owns shares θ_{y,c} of cells (Σ_c θ_{y,c} = q_y, Σ_y θ_{y,c} = |c|);
    given x̄, draft i picks a cell c with probability θ_{x_i,c}/q_{x_i} and a uniform
    point in it, and the draft with the leftmost point is selected.  Unconditionally
    the points are i.i.d. uniform, so s_y = Σ_c θ_{y,c} μ(c)/|c|, and tuples holding a
    B token select one.  The shares come from the *swap* construction: every token
    starts with its own cell; one scan per side moves, first in first out, the excess of
    the cells too heavy for p (side B) or the deficit of those too light (side A) to the
    nearest tokens that can take it, and each such move swaps equal lengths of the two
    tokens' cells (docs/optimal_verifier.md §3, §5).  O(n log n) with one sort.

Greedy / SpecHub drafts
    The draft set is T ∪ {X}: accept X w.p. min(1, p/q̃), else draw from p on T and
    (p − q̃)₊ off T (Hu et al., ICLR 2025, arXiv:2502.18779, §5).

Other laws (WithoutReplacement, Independent, Joint)
    An optimal flow over draft *sets* (the package's one max flow, Dinic's algorithm:
    in integer units of 2^-80 for floats, exactly for Fractions), for laws whose set law can be listed
    (``max_sets``); larger instances raise :class:`MethodError`.

Every verifier reports its own acceptance, computed from its rule, and a certificate:
that acceptance against the dual bound (★) at its minimising subset; ``optaccept.verify``
re-checks it independently.
"""

from __future__ import annotations

from typing import Any

from .._errors import InputError
from ..drafts import IID, DraftLaw, Greedy
from ._greedy_verifier import _GreedyVerifier
from ._inputs import _clean_p
from ._line import _LineVerifier
from ._plan import _PlanVerifier
from ._verifier_base import (
    MAX_PLAN_SETS,
    OptimalVerifier,
)
from ._verifier_check import verify_verifier

__all__ = ["optimal_verifier", "verify_verifier", "OptimalVerifier", "MAX_PLAN_SETS"]


def optimal_verifier(p: Any, drafts: DraftLaw, *, normalize: bool = False, max_sets: int = MAX_PLAN_SETS):
    r"""The optimal verifier for target p and draft law ``drafts``, built for one position.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution; Fractions (with an exact draft law) give an exact verifier
        whose ``conditional`` returns Fractions.
    drafts : DraftLaw
        ``IID`` (any vocabulary), ``Greedy``/``SpecHub`` (any vocabulary), or a law whose
        set law has at most ``max_sets`` sets (``WithoutReplacement``, ``Independent``,
        ``Joint``; solved by an optimal flow over draft sets, stored sparsely, so the
        vocabulary may be large when the draft's support is small: C(m, k) sets for m
        tokens with q > 0).
    normalize : bool
        Rescale p to sum 1 instead of refusing a sum off by more than 1e-9.
    max_sets : int
        Largest set law the flow-plan verifier accepts.

    Returns
    -------
    OptimalVerifier
        ``value`` (α*), ``acceptance`` (from its own rule), ``subset`` (the minimising
        S of (★)), ``conditional(x̄)``, ``sample(rng, size)``, ``certificate()``.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> ov = oa.optimal_verifier(p, oa.IID(q, k=2))
    >>> round(ov.value, 6), round(ov.acceptance, 6)
    (0.9075, 0.9075)
    >>> ov.conditional((2, 2)).round(4)
    array([0.    , 0.2114, 0.6742, 0.1145, 0.    ])
    """
    if not isinstance(drafts, DraftLaw):
        raise InputError(f"drafts: must be a draft law (IID, WithoutReplacement, ...), got {type(drafts).__name__}")

    pf, px = _clean_p(p, drafts, normalize)
    exact = px is not None and drafts.exact
    if isinstance(drafts, IID):
        return _LineVerifier(px if exact else pf, drafts, exact)
    if isinstance(drafts, Greedy):  # SpecHub is a Greedy with k = 2
        return _GreedyVerifier(px if exact else pf, drafts, exact)
    return _PlanVerifier(px if exact else pf, drafts, exact, max_sets)
