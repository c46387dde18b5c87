"""The front end of the solvers: :func:`optimal_acceptance` (the method table) and
:func:`two_draft_condition`; the package :mod:`optaccept.optimal` re-exports them (and
:func:`verify`, from :mod:`._verify`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.limits import MAX_ENUMERATION
from .._lib.validation import check_choice
from ..drafts import IID, DraftLaw, Greedy, TopK, WithoutReplacement
from . import _exhaustive, _sorted
from ._advice import (
    MAX_LP_VARIABLES,
    MAX_TRANSPORT_VARIABLES,
    lp_variables,
    refusal_advice,
    transport_variables,
    working_method,
)
from ._inputs import _clean_p
from ._result import AcceptanceResult

__all__ = ["METHODS", "optimal_acceptance", "two_draft_condition"]

METHODS = ("auto", "transport", "lp", "subsets", "sorted", "closed_form")


def _auto_method(law: DraftLaw, exact: bool) -> str:
    """The fastest method that accepts the law, its size and its arithmetic."""
    if isinstance(law, (Greedy, IID, TopK)):
        return "sorted"
    if isinstance(law, WithoutReplacement) and not exact:
        return "sorted"
    choice = working_method(law, exact)
    if choice is None:
        raise MethodError(f"method 'auto': {refusal_advice(law, exact, 'auto')}")
    return choice


def optimal_acceptance(
    p: Any,
    drafts: DraftLaw,
    method: str = "auto",
    *,
    normalize: bool = False,
    max_sets: int = MAX_ENUMERATION,
    progress: bool | None = None,
) -> AcceptanceResult:
    r"""Optimal acceptance probability α*(p, D) of a lossless verifier, with certificate.

    .. math::

        \alpha^* = \min_{S \subseteq \Omega} \; p(S) + 1 - D(\mathrm{set}(\bar x) \subseteq S)

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution (Hu et al.: p; Khisti et al. and Yin et al.: q).
        Fractions (with an exact draft law) select the exact path.
    drafts : DraftLaw
        The law of the draft tuple: ``IID``, ``WithoutReplacement``, ``Greedy``,
        ``Independent``, ``SpecHub``, ``TopK`` or ``Joint``.
    method : {"auto", "transport", "lp", "subsets", "sorted", "closed_form"}
        See the module docstring.  ``"auto"``: ``"sorted"`` for IID, WithoutReplacement
        (floats), Greedy, SpecHub and TopK; otherwise the fastest of ``"subsets"``, ``"lp"``,
        ``"transport"`` whose size guard and arithmetic accept the law (exact mode:
        ``"subsets"`` up to n = 14, else a :class:`MethodError` that names the float method).
    normalize : bool
        Rescale p to sum 1 instead of refusing a sum off by more than float32 rounding
        explains (n·2⁻²³; the rule of ``optaccept._lib.validation``).
    max_sets : int
        Largest number of draft sets the LP enumerates.
    progress : bool or None
        A progress bar for the methods that can run long (``"transport"`` from 20,000
        variables); None: on in a terminal or a Jupyter kernel.

    Returns
    -------
    AcceptanceResult
        ``value`` (α*; a Fraction in exact mode), ``subset`` (sorted token ids of a
        minimising S in (★)), ``method``, ``plan`` (flow or coupling for the LP methods),
        ``upper_bound`` ((★) at ``subset``), ``lower_bound`` (value of ``plan``).
        LP answers are checked before they are returned: status, feasibility of the
        flow, and |flow value − cut value| ≤ 1e-9 (else :class:`SolverError`); their
        ``value`` is then the cut value, (★) evaluated by the law's own formula (exact to
        rounding, where the flow carries the solver's tolerances).

    Raises
    ------
    InputError
        Bad p (negative, NaN, infinite, sum off, wrong length) or bad method name.
    MethodError
        The method cannot handle this law or this size.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> res = oa.optimal_acceptance(p, oa.IID(q, k=2))
    >>> round(res.value, 6), res.subset
    (0.9075, (0, 2, 4))
    >>> oa.optimal_acceptance(p, oa.IID(q, k=3)).value  # three drafts already reach 1
    1.0
    """
    if not isinstance(drafts, DraftLaw):
        raise InputError(f"drafts: must be a draft law (IID, WithoutReplacement, ...), got {type(drafts).__name__}")
    check_choice("method", method, METHODS)
    pf, px = _clean_p(p, drafts, normalize)
    exact = px is not None and drafts.exact
    if method == "auto":
        method = _auto_method(drafts, exact)
    law = drafts
    if method == "sorted":
        if isinstance(law, Greedy):  # SpecHub shares the greedy set law
            return _sorted.greedy_closed_form(px if exact else pf, law, exact)
        if isinstance(law, TopK):  # one set T, drafted with probability 1: α* = p(T), attained by S = T
            top = sorted(law.top)
            value = sum((px[i] for i in top), Fraction(0)) if exact else min(1.0, float(pf[top].sum()))
            return AcceptanceResult(value, "sorted", law, subset=tuple(top))
        if isinstance(law, IID):
            if exact:
                return _sorted.iid_sorted_exact(px, law.q_exact, law.k, law)
            return _sorted.iid_sorted(pf, law)
        if isinstance(law, WithoutReplacement):
            if exact:
                raise MethodError(
                    "method 'sorted': exact arithmetic is not available for WithoutReplacement "
                    f"(its prefix probabilities are integrals); {refusal_advice(law, True, 'sorted')}"
                )
            return _sorted.swor_sorted(pf, law)
        raise MethodError(
            f"method 'sorted': no sorted-prefix algorithm is known for {type(law).__name__} drafts; "
            + refusal_advice(law, exact, "sorted")
        )
    if method == "closed_form":
        if not (isinstance(law, IID) and law.k == 2):
            raise MethodError(
                f"method 'closed_form': only for IID drafts with k = 2, got {law!r}; "
                + refusal_advice(law, exact, "closed_form")
            )
        if exact:
            return _sorted.iid_sorted_exact(px, law.q_exact, 2, law, method="closed_form", two_draft_form=True)
        return _sorted.iid_prefix_float(pf, law.q, 2, law, "closed_form", two_draft_form=True)
    if method == "subsets":
        _exhaustive.check_size(law, exact)  # refuses, naming the limit, before any work
        return _exhaustive.exhaustive(px if exact else pf, law, exact)
    if exact:
        raise MethodError(
            f"method {method!r}: the LP methods work in floats; pass float input or "
            + refusal_advice(law, True, method)
        )
    if method == "lp":
        from ._flow import max_flow_lp

        limit = MAX_LP_VARIABLES if max_sets <= MAX_ENUMERATION else max_sets
        if lp_variables(law, limit) > limit:
            raise MethodError(
                f"method 'lp': {law!r} needs more flow variables (draft sets × tokens) than the limit {limit}; "
                + refusal_advice(law, False, "lp")
            )
        return max_flow_lp(pf, law, max_sets=max_sets)
    from ._transport import transport_lp

    if transport_variables(law) > MAX_TRANSPORT_VARIABLES:
        raise MethodError(
            f"method 'transport': {law!r} needs more variables than the limit {MAX_TRANSPORT_VARIABLES} "
            f"(ordered tuples × tokens); {refusal_advice(law, False, 'transport')}"
        )
    return transport_lp(pf, law, progress=progress)


def two_draft_condition(
    p: Any, q: Any, *, normalize: bool = False, tol: float = 0.0
) -> tuple[bool, tuple[int, ...] | None]:
    r"""Khisti et al.'s condition for α* = 1 with two i.i.d. drafts: p(S) ≥ q(S)² for all S.

    (Khisti et al., ICLR 2025, Theorem 2, letters swapped: their target is q and
    their draft p.)  By docs/theory.md §2.1 it suffices to check the n + 1 prefixes of the
    tokens sorted by p/q ascending, so this costs O(n log n), not 2^n.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution (Khisti et al.'s q); Fractions, with Fraction q, decide exactly.
    q : array_like, shape (n,)
        Draft distribution of each of the two i.i.d. drafts (Khisti et al.'s p).
    normalize : bool
        Rescale p and q to sum 1 instead of refusing a sum off by more than rounding explains.
    tol : float
        Slack allowed in p(S) ≥ q(S)² − tol (float input only).

    Returns
    -------
    (holds, violating_subset)
        ``holds`` is True iff min_S p(S) − q(S)² ≥ −tol; otherwise the most violated
        prefix S (sorted token ids) is returned as the witness.  Fractions give an
        exact answer (``tol`` is then ignored).  Float input whose margin is within
        rounding (8·n·ε) of −tol is decided exactly, reading the floats as rationals, so
        an input exactly on the boundary holds under ``tol = 0`` on every machine.

    Raises
    ------
    InputError
        If p or q is not a distribution, or their lengths differ.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> oa.two_draft_condition(p, q)  # p(S) >= q(S)**2 fails on S = {0, 2, 4}: .63 < .85**2
    (False, (0, 2, 4))
    >>> oa.two_draft_condition(q, q)  # the target equal to the draft: alpha* = 1
    (True, None)
    """
    law = IID(q, 2, normalize=normalize)
    pf, px = _clean_p(p, law, normalize)
    if px is not None and law.exact:
        worst, order, worst_j = _worst_exact_prefix(px, law.q_exact)
        if worst >= 0:
            return True, None
        return False, tuple(sorted(order[:worst_j]))
    order = _sorted.ratio_order(pf, law.q)
    P = np.cumsum(pf[order])
    Q = np.minimum(np.cumsum(law.q[order]), 1.0)
    slack = P - Q * Q
    j = int(np.argmin(slack))
    # Floats decide when the margin beats their rounding error (a few n·ε); closer to the
    # boundary the floats given are read as exact rationals and the condition is decided
    # exactly, so an input exactly on the boundary holds under tol = 0 on every machine.
    if abs(float(slack[j]) + tol) > 8.0 * law.n * np.finfo(np.float64).eps:
        if slack[j] >= -tol:
            return True, None
        return False, tuple(sorted(int(i) for i in order[: j + 1]))
    return _two_draft_exact([Fraction(float(v)) for v in pf], [Fraction(float(v)) for v in law.q], tol)


def _two_draft_exact(px: list, qx: list, tol: float) -> tuple[bool, tuple[int, ...] | None]:
    """p(S) − q(S)² ≥ −tol over the ratio-sorted prefixes, in exact rational arithmetic
    (the laws are rescaled to sum exactly 1, as the float path does implicitly)."""
    sp, sq = sum(px, Fraction(0)), sum(qx, Fraction(0))
    worst, order, worst_j = _worst_exact_prefix([v / sp for v in px], [v / sq for v in qx])
    if worst >= -Fraction(tol):
        return True, None
    return False, tuple(sorted(order[:worst_j]))


def _worst_exact_prefix(px: list, qx: list) -> tuple[Fraction, list[int], int]:
    """min(0, min_j p(S_j) − q(S_j)²) over the ratio-sorted prefixes S_j, exactly, with the
    order and the j reaching it (0 when no prefix is negative)."""
    order = sorted(range(len(px)), key=lambda i: _sorted._exact_ratio_key(px[i], qx[i], i))
    P = Q = Fraction(0)
    worst, worst_j = Fraction(0), 0
    for j, i in enumerate(order, start=1):
        P += px[i]
        Q += qx[i]
        if P - Q * Q < worst:
            worst, worst_j = P - Q * Q, j
    return worst, order, worst_j
