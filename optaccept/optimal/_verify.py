"""The independent re-check of a solver's result, :func:`verify`: the upper bound from the
result's subset and the law's own formula, the lower bound from a feasible plan or witness."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MethodError, SolverError
from ..drafts import DraftLaw
from ._inputs import _clean_p
from ._result import AcceptanceResult, TransportPlan, Verification
from ._verifier_base import OptimalVerifier
from ._verifier_check import verify_verifier
from ._witness import lower_witness

__all__ = ["verify"]


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
    (WithoutReplacement, Independent, Joint whose set law lists within 200,000 entries —
    without replacement its recursion visits every subset of at most k tokens of the support,
    so those count, except at k = the support, one set; exact in Fractions).
    Where no optimal witness is known (larger WithoutReplacement laws) the bound reported is
    a valid greedy-vertex bound, below α* in general, and ``ok`` is False.

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
        if isinstance(result, OptimalVerifier):
            return verify_verifier(p, drafts, result, tol=tol, normalize=normalize)
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
    try:
        return lower_witness(pf, px, law, exact)
    except (SolverError, MethodError) as exc:
        return {"lower_bound": None, "violation": 0, "witness": f"no witness could be built ({exc})"}
