"""The independent re-check of a solver's result, :func:`verify`: the upper bound from the
result's subset and the law's own formula, the lower bound from a feasible plan or witness."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MethodError, SolverError
from ..drafts import DraftLaw, WithoutReplacement
from ._inputs import _clean_p
from ._result import AcceptanceResult, TransportPlan, Verification
from ._swor_certificate import swor_dual_upper, swor_lower_bound
from ._verifier_base import OptimalVerifier
from ._verifier_check import verify_verifier
from ._witness import MAX_WITNESS_SETS, lower_witness

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
    Without replacement beyond 200,000 draft sets both bounds are proved from Theorem 2.7
    (docs/theory.md §2.2): the minimum over the n + 1 prefixes of the p/q order, each bounded
    with outward rounding (closed forms for k ≤ 2, Gauss–Legendre with a proved error bound
    for k ≥ 3), and (★) at the subset rounded up
    (:mod:`optaccept.optimal._swor_certificate`).  Where no optimal witness is known
    (larger Independent laws) the bound reported is a valid greedy-vertex bound, below α* in
    general, and ``ok`` is False.  ``basis`` of the answer says what backs each bound.

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
            basis=f"upper: (★) at the subset, exact; lower: {w['witness']}, exact",
        )
    plan = result.plan
    if plan is None and _swor_at_scale(drafts):
        return _verify_swor(pf, drafts, result, tol)
    dual = float(pf[mask].sum()) + 1.0 - float(drafts.subset_prob(mask))
    out: dict[str, Any] = {"dual_value": dual, "value_gap": abs(float(result.value) - dual), "tol": tol}
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
        basis="upper: (★) at the subset, D(set ⊆ S) by the law's own formula (float); "
        f"lower: {w['witness']}" + ("" if w.get("optimal", True) else " (a valid bound, not tight in general)"),
    )
    return Verification(**out)


def _swor_at_scale(law: DraftLaw) -> bool:
    """Whether a without-replacement law lists more draft sets than a flow witness takes."""
    if not isinstance(law, WithoutReplacement) or law.exact:
        return False
    s = int(np.count_nonzero(law.q > 0))
    return law.k < s and math.comb(s, law.k) > MAX_WITNESS_SETS


def _verify_swor(pf: np.ndarray, law: WithoutReplacement, result: AcceptanceResult, tol: float) -> Verification:
    """Both bounds for drafts without replacement at scale, each proved with outward rounding
    (:mod:`optaccept.optimal._swor_certificate`): the upper bound (★) at the result's subset,
    the lower bound Theorem 2.7 over the n + 1 prefixes of the p/q order."""
    value = float(result.value)
    dual = swor_dual_upper(pf, law.q, law.k, result.subset)
    w = swor_lower_bound(pf, law.q, law.k, value, tol)
    lb = w["lower_bound"]
    how = "its closed form (sums of non-negative terms)" if law.k <= 2 else "Gauss–Legendre with a proved error bound"
    what = (
        f"Theorem 2.7 prefix bound ({law.n + 1:,} prefixes, {w['windows']:,} integrated "
        f"in {w['panels']} panels, interval evaluation)"
    )
    return Verification(
        dual_value=dual,
        value_gap=abs(value - dual),
        tol=tol,
        lower_bound=lb,
        lower_gap=abs(value - lb),
        lower_violation=0.0,
        witness=what,
        witness_optimal=True,
        details={"argmin_prefix": w["argmin"], "windows": w["windows"], "panels": w["panels"]},
        basis=f"upper: (★) at the subset rounded up, 1 − D(set ⊆ S) by {how}; "
        "lower: Theorem 2.7 (docs/theory.md §2.2) over the n + 1 prefixes of the p/q order, "
        f"Lemma 2.4 or {how} per prefix, rounded down",
    )


def _lower(pf: np.ndarray, px: Any, law: DraftLaw, exact: bool) -> dict[str, Any]:
    """The lower-bound witness of :func:`verify`; a construction that fails is reported, not raised."""
    try:
        return lower_witness(pf, px, law, exact)
    except (SolverError, MethodError) as exc:
        return {"lower_bound": None, "violation": 0, "witness": f"no witness could be built ({exc})"}
