r"""Lower-bound witnesses for :func:`optaccept.verify`: a feasible coupling or flow, built
here and re-checked, whose value bounds α* from below.

A subset S only proves the upper bound (★) at S.  The lower bound needs a lossless rule, or
a flow over draft sets, of the same value (docs/optimal_verifier.md §6):
* **IID** (floats and Fractions): the optimal verifier's line device, built afresh from
  p and the law, re-checked by :func:`optaccept.optimal._verifier_check.verify_verifier`
  (the shares tile the cells whose masses are recomputed from q, and the selection
  marginal s is recomputed from them); the rule accepts Σ min(p, s).  O(n log n).
* **Greedy / SpecHub**: the rule of Hu et al. (ICLR 2025, §5), whose acceptance is
  recomputed from its acceptance probabilities and the law's q̃.  O(n).
* **Any law whose set law can be listed** (WithoutReplacement, Independent, Joint): a
  maximum flow source → A → y ∈ A → sink (Dinic's algorithm, in integer units for floats
  and exactly in Fractions), re-checked here: no negative entry, mass only on y ∈ A, row
  sums ≤ D(A), column sums ≤ p(y).  Its total is a lower bound on α* (Hu et al., §3: the
  unmatched mass can be coupled arbitrarily).
* **Larger set laws** (WithoutReplacement at vocabulary scale): no realisation of an
  optimal flow is known (docs/optimal_verifier.md §7).  The bound reported is
  Σ_y min(p_y, x_y) with x the greedy vertex of the coverage function
  f(T) = P(set ∩ T ≠ ∅) along the line order: x lies in the polymatroid of f (Edmonds,
  1970, the greedy theorem; f is submodular as the probability of a union), so min(p, x) is
  the token marginal of a feasible flow.  This bound is valid but in general below α*, and
  the verification then fails on it, saying so.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import MethodError
from ..drafts import IID, DraftLaw, Greedy, Independent, WithoutReplacement, _swor
from ._maxflow import exact_max_flow
from ._sorted import ratio_order
from ._verifier import optimal_verifier, verify_verifier

#: Largest set law listed for a flow witness (the optimal verifier's default).
MAX_WITNESS_SETS = 200_000
#: Largest vocabulary for the greedy-vertex bound of Independent drafts (n + 1 evaluations
#: of D(set ⊆ S) = ∏ᵢ qᵢ(S)).
MAX_GREEDY_VERTEX_N = 4096


def lower_witness(pf: np.ndarray, px: Any, law: DraftLaw, exact: bool) -> dict[str, Any]:
    """A lower bound on α*(p, law) from a feasible coupling or flow, re-checked.

    Returns a dict with ``lower_bound`` (float or Fraction; None when no witness could be
    built), ``violation`` (largest feasibility error of the witness: 0 exactly in exact
    mode), ``witness`` (what it is) and ``optimal`` (whether the construction attains α*,
    so that a gap to the value means a wrong value rather than a weak bound).
    """
    pv = px if exact else pf
    if isinstance(law, (IID, Greedy)):
        ov = optimal_verifier(pv, law)
        chk = verify_verifier(pv, law, ov)
        if exact:
            acc, viol = chk.details["acceptance"], chk.details["layout_violation"]
        else:
            acc, viol = chk.primal_value, chk.max_violation
        what = "line device of the optimal verifier" if isinstance(law, IID) else "greedy rule (Hu et al. §5)"
        return {"lower_bound": acc, "violation": viol, "witness": what, "optimal": True}
    try:
        sl = law.set_law(max_sets=MAX_WITNESS_SETS)
    except MethodError:
        sl = None
    if sl is not None and len(sl) <= MAX_WITNESS_SETS:
        if exact:
            return _exact_flow_witness(sl, px, law.n)
        return _float_flow_witness(sl, pf, law.n)
    if exact:
        return _none(0)
    return _greedy_vertex_bound(pf, law)


def _none(zero) -> dict[str, Any]:
    witness = f"no witness: the set law has more than {MAX_WITNESS_SETS:,} sets"
    return {"lower_bound": None, "violation": zero, "witness": witness, "optimal": False}


def _float_flow_witness(sl, pf: np.ndarray, n: int) -> dict[str, Any]:
    import scipy.sparse as sp

    from ._flow import incidence, polish_flow

    D = np.asarray(sl.probs, dtype=np.float64)
    inc = incidence(sl.sets, n)
    zero = sp.csr_matrix((np.zeros(inc.nnz), inc.indices, inc.indptr), shape=inc.shape)
    flow = sp.csr_matrix(polish_flow(zero, D, pf), dtype=np.float64)
    flow.sum_duplicates()
    # the checks, from the set law and p alone: signs, support, row and column capacities
    coo = flow.tocoo()
    on_set = np.asarray(inc[coo.row, coo.col]).ravel() > 0 if coo.nnz else np.ones(0, dtype=bool)
    off = float(np.abs(coo.data[~on_set]).max(initial=0.0))
    neg = float(-coo.data.min(initial=0.0))
    rows = np.asarray(flow.sum(axis=1)).ravel()
    cols = np.asarray(flow.sum(axis=0)).ravel()
    viol = max(off, neg, float((rows - D).max(initial=0.0)), float((cols - pf).max(initial=0.0)), 0.0)
    return {
        "lower_bound": float(coo.data[on_set].sum()),
        "violation": viol,
        "witness": f"max flow over {len(sl)} draft sets",
        "optimal": True,
    }


def _exact_flow_witness(sl, px, n: int) -> dict[str, Any]:
    D = list(sl.probs)
    flow, _, _ = exact_max_flow(sl.sets, D, px)
    viol = Fraction(0)
    used = [Fraction(0)] * n
    total = Fraction(0)
    for a, s in enumerate(sl.sets):
        members = set(s)
        row = Fraction(0)
        for y, f in flow[a].items():
            if y not in members:
                viol = max(viol, abs(f))
                continue
            viol = max(viol, -f)
            row += f
            used[y] += f
        viol = max(viol, row - D[a])
        total += row
    viol = max([viol] + [used[y] - px[y] for y in range(n)])
    return {
        "lower_bound": total,
        "violation": viol,
        "witness": f"exact max flow over {len(sl)} draft sets",
        "optimal": True,
    }


def _greedy_vertex_bound(pf: np.ndarray, law: DraftLaw) -> dict[str, Any]:
    """Σ min(p, x), x the greedy vertex of f(T) = 1 − D(set ⊆ Ω∖T) along the tokens sorted
    by p/q descending (WithoutReplacement) or by p descending (Independent): a valid lower
    bound, in general not α*."""

    n = law.n
    if isinstance(law, WithoutReplacement):
        order = ratio_order(pf, law.q)[::-1]
        # D(set ⊆ order[j:]) for every j: prefixes of the reversed order
        d_suffix = _swor.prefix_subset_probs(np.ascontiguousarray(law.q[order][::-1]), law.k)[::-1]
    elif isinstance(law, Independent) and n <= MAX_GREEDY_VERTEX_N:
        order = np.argsort(-pf, kind="stable")
        d_suffix = np.empty(n + 1)
        mask = np.ones(n, dtype=bool)
        for j in range(n + 1):
            d_suffix[j] = float(law.subset_prob(mask))
            if j < n:
                mask[order[j]] = False
    else:
        return _none(0.0)
    f = 1.0 - np.asarray(d_suffix, dtype=np.float64)
    x = np.zeros(n)
    x[order] = np.clip(np.diff(f), 0.0, None)
    return {
        "lower_bound": float(np.minimum(pf, x).sum()),
        "violation": 0.0,
        "witness": "greedy vertex of the coverage polymatroid (a valid bound; no optimal flow is known at this size)",
        "optimal": False,
    }
