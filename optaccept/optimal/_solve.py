"""The front end of the solvers: :func:`optimal_acceptance` (the method table), :func:`verify`
(both bounds of a result re-checked) and :func:`two_draft_condition`; the package
:mod:`optaccept.optimal` re-exports them."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MethodError, SolverError
from ..drafts import IID, MAX_ENUMERATION, DraftLaw, Greedy, WithoutReplacement
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
from ._result import AcceptanceResult, TransportPlan, Verification
from ._verifier import OptimalVerifier

__all__ = ["METHODS", "optimal_acceptance", "verify", "two_draft_condition"]

METHODS = ("auto", "transport", "lp", "subsets", "sorted", "closed_form")


def _auto_method(law: DraftLaw, exact: bool) -> str:
    """The fastest method that accepts the law, its size and its arithmetic."""
    if isinstance(law, (Greedy, IID)):
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
        ``Independent``, ``SpecHub`` or ``Joint``.
    method : {"auto", "transport", "lp", "subsets", "sorted", "closed_form"}
        See the module docstring.  ``"auto"``: ``"sorted"`` for IID, WithoutReplacement
        (floats), Greedy and SpecHub; otherwise the fastest of ``"subsets"``, ``"lp"``,
        ``"transport"`` whose size guard and arithmetic accept the law (exact mode:
        ``"subsets"`` up to n = 14, else a :class:`MethodError` that names the float method).
    normalize : bool
        Rescale p to sum 1 instead of refusing a sum off by more than float32 rounding
        explains (n·2⁻²³; the rule of ``optaccept._validation``).
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
    if method not in METHODS:
        raise InputError(f"method: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    pf, px = _clean_p(p, drafts, normalize)
    exact = px is not None and drafts.exact
    if method == "auto":
        method = _auto_method(drafts, exact)
    law = drafts
    if method == "sorted":
        if isinstance(law, Greedy):  # SpecHub shares the greedy set law
            return _sorted.greedy_closed_form(px if exact else pf, law, exact)
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


def verify(
    p: Any, drafts: DraftLaw, result: AcceptanceResult, *, tol: float = 1e-9, normalize: bool = False
) -> Verification:
    """Independently re-check a result of :func:`optimal_acceptance`: both bounds.

    *Upper bound.* Recomputes (★) at ``result.subset`` from the draft law's own formula
    for D(set ⊆ S): any subset bounds α* from above (weak duality).

    *Lower bound.* A feasible coupling or flow of the same value: the result's plan when
    it has one (its feasibility re-checked: signs, capacities D(A) and p(y), mass only on
    y ∈ set), else a witness built here from p and the law alone
    (:mod:`optaccept.optimal._witness`): the optimal verifier's line device (IID, O(n log n)),
    the greedy rule (Greedy, SpecHub), or a maximum flow over the listed draft sets
    (WithoutReplacement, Independent, Joint; exact in Fractions).  Where no optimal witness
    is known (WithoutReplacement with more than 200,000 draft sets) the bound reported is a
    valid greedy-vertex bound, below α* in general, and ``ok`` is False.

    Exact results are re-checked in exact arithmetic, both bounds.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution the result was computed for (Fractions for an exact result).
    drafts : DraftLaw
        The draft law the result was computed for.
    result : AcceptanceResult or OptimalVerifier
        What to re-check; an :class:`OptimalVerifier` is checked by its own certificate.
    tol : float
        Largest gap between the value and either bound still counted as agreement
        (ignored in exact mode, where the bounds must match exactly).
    normalize : bool
        Rescale p to sum 1, as :func:`optimal_acceptance` does under the same flag.

    Returns
    -------
    Verification
        ``dual_value`` ((★) at the subset), ``value_gap`` = ``upper_gap`` =
        |value − dual_value|, ``lower_bound``, ``lower_gap`` = |value − lower_bound|,
        ``witness``, ``primal_value`` / ``duality_gap`` / ``max_violation`` (plan),
        ``ok`` (both bounds within ``tol``; exactly in exact mode) and ``message`` (which
        bound failed).

    Raises
    ------
    InputError
        If p is not a distribution over the law's vocabulary, if ``result`` is neither an
        AcceptanceResult nor an OptimalVerifier, or if an exact result meets float input.

    Examples
    --------
    >>> import optaccept as oa
    >>> law = oa.IID([.9, .1], 1)
    >>> oa.verify([.5, .5], law, oa.optimal_acceptance([.5, .5], law)).ok
    True
    >>> wrong = oa.AcceptanceResult(1.0, "sorted", law, subset=())  # (★) at ∅ is 1
    >>> oa.verify([.5, .5], law, wrong).message
    'lower bound fails: the line device of the optimal verifier reaches 0.6, 0.4 from the value (violation 0)'
    """
    if not isinstance(result, AcceptanceResult):
        from ._verifier_check import verify_verifier

        if isinstance(result, OptimalVerifier):
            return verify_verifier(p, drafts, result, tol=tol)
        raise InputError("result: must be an AcceptanceResult from optimal_acceptance or an OptimalVerifier")
    pf, px = _clean_p(p, drafts, normalize)
    mask = np.zeros(drafts.n, dtype=bool)
    mask[list(result.subset)] = True
    if result.exact:
        if px is None or not drafts.exact:
            raise InputError("result: exact result but p or the draft law is not exact")
        dual = sum((px[i] for i in result.subset), Fraction(0)) + 1 - drafts.subset_prob(mask)
        w = _lower(pf, px, drafts, True)
        lb = w["lower_bound"]
        return Verification(
            dual_value=dual,
            value_gap=abs(result.value - dual),
            tol=0.0,
            lower_bound=lb,
            lower_gap=None if lb is None else abs(result.value - lb),
            lower_violation=w["violation"],
            witness=w["witness"],
            witness_optimal=w.get("optimal", True),
        )
    dual = float(pf[mask].sum()) + 1.0 - float(drafts.subset_prob(mask))
    out: dict[str, Any] = {"dual_value": dual, "value_gap": abs(float(result.value) - dual), "tol": tol}
    plan = result.plan
    if plan is not None:
        flow_plan = plan.to_flow() if isinstance(plan, TransportPlan) else plan
        sl = drafts.set_law()
        cap = dict(zip(sl.sets, np.asarray(sl.probs, dtype=np.float64).tolist()))
        flow = flow_plan.flow
        outside = 0.0
        set_viol = 0.0
        for a, s in enumerate(flow_plan.sets):
            row = flow[a]
            off = np.ones(drafts.n, dtype=bool)
            off[list(s)] = False
            outside = max(outside, float(np.abs(row[off]).max(initial=0.0)))
            set_viol = max(set_viol, float(row.sum()) - cap.get(s, 0.0))
        tok_viol = float((flow.sum(axis=0) - pf).max(initial=0.0))
        neg = float(-flow.min(initial=0.0))
        primal = float(flow.sum())
        viol = max(outside, set_viol, tok_viol, neg, 0.0)
        out.update(primal_value=primal, duality_gap=dual - primal, max_violation=viol)
        w = {"lower_bound": primal, "violation": viol, "witness": "plan of the result"}
    else:
        w = _lower(pf, None, drafts, False)
    lb = w["lower_bound"]
    out.update(
        lower_bound=lb,
        lower_gap=None if lb is None else abs(float(result.value) - float(lb)),
        lower_violation=w["violation"],
        witness=w["witness"],
        witness_optimal=w.get("optimal", True),
    )
    return Verification(**out)


def _lower(pf: np.ndarray, px: Any, law: DraftLaw, exact: bool) -> dict[str, Any]:
    """The lower-bound witness of :func:`verify`; a construction that fails is reported, not raised."""
    from ._witness import lower_witness

    try:
        return lower_witness(pf, px, law, exact)
    except (SolverError, MethodError) as exc:
        return {"lower_bound": None, "violation": 0, "witness": f"no witness could be built ({exc})"}


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
