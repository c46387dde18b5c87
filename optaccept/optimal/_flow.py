"""The compressed max-flow LP over draft sets (docs/theory.md §2) and the min cut of a flow.

Network: source → each draft set A (capacity D(A)) → each y ∈ A → sink
(capacity p(y)).  α* = the max flow (Hu et al. §3; unmatched mass can always be
coupled arbitrarily).  Solved with scipy's HiGHS (method ``"lp"``) or directly by the
package's one max-flow algorithm (:mod:`optaccept.optimal._maxflow`, method ``"max_flow"``),
which also finishes the LP's flow; a min cut — the tokens reachable from the source in the
residual network — is the dual certificate S of (★).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._errors import MethodError, SolverError
from ._maxflow import dinic
from ._result import AcceptanceResult, FlowPlan

__all__ = ["max_flow", "max_flow_lp", "min_cut_subset", "incidence", "polish_flow"]

_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def incidence(sets: tuple[tuple[int, ...], ...], n: int) -> sp.csr_matrix:
    """0/1 matrix (len(sets), n): row A has ones at its tokens."""
    rows = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    cols = np.fromiter((y for s in sets for y in s), dtype=np.int64, count=rows.size)
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(sets), n))


def max_flow_lp(p: np.ndarray, law, *, max_sets: int, dense: bool = True) -> AcceptanceResult:
    """α* by the max-flow LP over the listed draft sets (HiGHS, then :func:`polish_flow`),
    certified by a min cut.

    The result's ``plan.flow`` is a dense (sets, n) array, or with ``dense=False`` a
    ``scipy.sparse`` CSR matrix of the same shape (at most k entries per row: what a large
    vocabulary with a small draft support needs)."""
    return _flow_result(p, law, max_sets, dense, "lp", _solve)


def max_flow(p: np.ndarray, law, *, max_sets: int, dense: bool = True, set_law=None) -> AcceptanceResult:
    """α* as the max flow over the listed draft sets, by Dinic's algorithm in exact integer
    arithmetic (:func:`polish_flow` from the zero flow), certified by a min cut like
    :func:`max_flow_lp`.  Exact to (sets + tokens)·2^-80 and, on the instances of the
    benchmarks, 2–50× faster than the LP (docs/optimal_verifier.md §7).  ``set_law``: the
    law's set law if the caller has listed it already (the plan keeps its order)."""

    def solve(p, sets, D, n):
        inc = incidence(sets, n)
        return polish_flow(sp.csr_matrix((np.zeros(inc.nnz), inc.indices, inc.indptr), shape=inc.shape), D, p)

    return _flow_result(p, law, max_sets, dense, "max_flow", solve, set_law)


def _flow_result(p, law, max_sets: int, dense: bool, method: str, solve, sl=None) -> AcceptanceResult:
    """List the set law (unless given), solve the flow with ``solve(p, sets, D, n)`` and certify it."""
    if sl is None:
        try:
            sl = law.set_law(max_sets=max_sets)
        except MethodError as exc:
            raise MethodError(f"method {method!r}: {exc}") from None
    D = np.asarray(sl.probs, dtype=np.float64)
    flow = solve(p, sl.sets, D, law.n)
    plan = FlowPlan(sl.sets, flow.toarray() if dense else flow)
    return _certified(p, law, plan, D, method)


def _solve(p: np.ndarray, sets, D: np.ndarray, n: int) -> sp.csr_matrix:
    """The max flow source → A (capacity D(A)) → y ∈ A → sink (capacity p(y)), by HiGHS,
    as a sparse (sets, n) matrix."""
    from scipy.optimize import linprog

    inc = incidence(sets, n)
    coo = inc.tocoo()  # in the CSR's storage order
    nv = coo.nnz  # one variable per (A, y ∈ A)
    var_set, var_tok = coo.row, coo.col
    m = len(sets)
    A_ub = sp.vstack(
        [
            sp.csr_matrix((np.ones(nv), (var_set, np.arange(nv))), shape=(m, nv)),
            sp.csr_matrix((np.ones(nv), (var_tok, np.arange(nv))), shape=(n, nv)),
        ]
    ).tocsr()
    b_ub = np.concatenate([D, p])
    for options in (_HIGHS_OPTIONS, {**_HIGHS_OPTIONS, "presolve": False}):  # presolve can misjudge ~1e-14 data
        res = linprog(-np.ones(nv), A_ub=A_ub, b_ub=b_ub, bounds=(0, None), method="highs", options=options)
        if res.status == 0 and res.x is not None:
            break
    if res.status != 0 or res.x is None:
        raise SolverError(f"method 'lp': HiGHS did not solve the max-flow LP (status {res.status}: {res.message})")
    x = np.clip(res.x, 0.0, None)
    flow = sp.csr_matrix((x, inc.indices.copy(), inc.indptr.copy()), shape=(m, n))
    # HiGHS's absolute tolerances (≈ 1e-10) can leave tokens of tiny capacity unfilled
    return polish_flow(flow, D, p)


def _sums(flow, axis: int) -> np.ndarray:
    """Row (axis=1) or column (axis=0) sums of a dense or sparse flow, as a 1-D array."""
    return np.asarray(flow.sum(axis=axis), dtype=np.float64).ravel()


def _certified(
    p: np.ndarray, law, plan: FlowPlan, D: np.ndarray, method: str, tol: float = 1e-9, *, shown_plan=None
) -> AcceptanceResult:
    """Attach the min-cut subset, and check the flow against it before returning.

    ``shown_plan`` (default: ``plan``) is the plan stored on the result, e.g. the coupling
    from which the flow was compressed."""
    flow = plan.flow
    viol = max(
        float((_sums(flow, 1) - D).max(initial=0.0)),
        float((_sums(flow, 0) - p).max(initial=0.0)),
        -float(flow.min()) if flow.size else 0.0,
    )
    if viol > tol:
        raise SolverError(f"method {method!r}: the solver's flow violates a capacity by {viol:.3g}")
    # The residual search needs a threshold for "positive" residual capacity; solver noise
    # (arcs carrying ~1e-11) can open spurious paths at a tight one, so try several and
    # keep the cut of smallest value.  Any subset is an upper bound, so this is safe.
    best = None
    inflow = _sums(flow, 0)
    cands = []
    for eps in (1e-12, 1e-10, 1e-8, 1e-6):
        cands.append(min_cut_subset(plan, D, p, tol=eps))
        # the saturated tokens (p(y) − inflow ≤ eps) are a cut too, often the exact one when
        # solver noise (~1e-12 on near-one-hot laws) opens a spurious residual path
        cands.append(tuple(int(i) for i in np.flatnonzero(p - inflow <= eps)))
    for cand in cands:
        mask = np.zeros(law.n, dtype=bool)
        mask[list(cand)] = True
        value = float(p[mask].sum()) + 1.0 - float(law.subset_prob(mask))
        if best is None or value < best[0]:
            best = (value, cand)
    upper, S = _local_search(p, law, *best)
    lower = plan.value
    if upper - lower > tol or lower - upper > tol:
        raise SolverError(
            f"method {method!r}: flow value {lower!r} and cut value {upper!r} differ by more than {tol:g}"
        )
    # The value reported is (★) at the certified cut S: computed from the law's own formula for
    # D(set ⊆ S), it is exact to rounding, while the solver's flow value carries HiGHS's
    # tolerances (~1e-10 absolute on near-one-hot laws).  The flow certifies it to ``tol``.
    return AcceptanceResult(
        upper,
        method,
        law,
        subset=S,
        plan=plan if shown_plan is None else shown_plan,
        upper_bound=upper,
        lower_bound=lower,
    )


#: Largest vocabulary for the single-token-flip polish of the certified cut.
_POLISH_N = 24


def _local_search(p: np.ndarray, law, value: float, S: tuple[int, ...]) -> tuple[float, tuple[int, ...]]:
    """Improve a cut by single-token flips while (★) decreases (n ≤ :data:`_POLISH_N`).

    Solver noise near 1e-12 (near-one-hot laws) can leave the residual cut one token away
    from a minimiser; each flip is re-evaluated by the law's own formula, so the result is
    still a valid upper bound and never worse than the cut it starts from.
    """
    n = law.n
    if n > _POLISH_N:
        return value, S
    mask = np.zeros(n, dtype=bool)
    mask[list(S)] = True
    for _ in range(n):
        improved = False
        for y in range(n):
            mask[y] = not mask[y]
            v = float(p[mask].sum()) + 1.0 - float(law.subset_prob(mask))
            if v < value:
                value, improved = v, True
            else:
                mask[y] = not mask[y]
        if not improved:
            break
    return value, tuple(int(i) for i in np.flatnonzero(mask))


def min_cut_subset(plan: FlowPlan, D: np.ndarray, p: np.ndarray, tol: float = 1e-12) -> tuple[int, ...]:
    """Tokens reachable from the source in the residual network of ``plan``.

    Residual arcs: source → A while D(A) − Σ_y f(A, y) > tol; A → y for y ∈ A
    (infinite capacity); y → A while f(A, y) > tol.  For a maximum flow the
    reachable tokens S give a minimum cut, whose value is (★) at S.
    """
    inc = incidence(plan.sets, p.size)
    back = sp.csr_matrix(plan.flow > tol)
    reach_A = (D - _sums(plan.flow, 1)) > tol
    reach_y = np.zeros(p.size, dtype=bool)
    while True:
        new_y = reach_y | (inc.T @ reach_A.astype(np.float64) > 0)
        new_A = reach_A | (back @ new_y.astype(np.float64) > 0)
        if (new_y == reach_y).all() and (new_A == reach_A).all():
            break
        reach_y, reach_A = new_y, new_A
    return tuple(int(i) for i in np.flatnonzero(reach_y))


#: Flows are polished in integer units of 2^-_UNIT_BITS: rounding every capacity down to a
#: unit loses under (sets + tokens) · 2^-80 of the value.
_UNIT_BITS = 80


def polish_flow(flow: sp.csr_matrix, D: np.ndarray, p: np.ndarray) -> sp.csr_matrix:
    """Make a flow maximum, in exact integer arithmetic: an LP solution (exact only to the
    solver's tolerances), or the zero flow (then this is the max-flow solver itself).

    Capacities are rounded down to units of 2^-80 and the flow into feasibility (the LP
    may overshoot a capacity by its tolerance); then the package's one max-flow algorithm
    (:func:`optaccept.optimal._maxflow.dinic`, Dinic's) augments it on the residual network
    source → set → token → sink, with arcs back from a token to every set that sends it
    flow.  The result is a maximum flow of the rounded
    network, so its value is within (sets + tokens)·2^-80 of the max flow: tokens of
    tiny capacity that the LP's absolute tolerance (≈ 1e-10) leaves unfilled are filled.
    ``flow`` must have its stored entries on exactly the (set, token ∈ set) pairs.
    """
    F = flow.tocsr().copy()
    F.sort_indices()
    m = F.shape[0]
    unit = 1 << _UNIT_BITS
    ptr, tok = F.indptr.tolist(), F.indices.tolist()
    toks = sorted(set(tok))
    tid = {y: i for i, y in enumerate(toks)}
    cap_set = [int(np.floor(v * unit)) if v > 0 else 0 for v in np.asarray(D, dtype=np.float64).tolist()]
    pf = np.asarray(p, dtype=np.float64)
    cap_tok = [int(np.floor(pf[y] * unit)) if pf[y] > 0 else 0 for y in toks]
    f = [int(np.floor(v * unit)) if v > 0 else 0 for v in F.data.tolist()]
    arc_tok = [tid[y] for y in tok]
    # into feasibility: trim each set's and each token's excess off its arcs
    for a in range(m):
        over = sum(f[ptr[a] : ptr[a + 1]]) - cap_set[a]
        j = ptr[a]
        while over > 0 and j < ptr[a + 1]:
            cut = min(over, f[j])
            f[j] -= cut
            over -= cut
            j += 1
    by_tok: list[list[int]] = [[] for _ in toks]
    for j, t in enumerate(arc_tok):
        by_tok[t].append(j)
    for t, arcs in enumerate(by_tok):
        tot = sum(f[j] for j in arcs)
        over = tot - cap_tok[t]
        for j in arcs:
            if over <= 0:
                break
            cut = min(over, f[j])
            f[j] -= cut
            over -= cut
    dinic(ptr, arc_tok, cap_set, cap_tok, f)
    F.data = np.array([v / unit for v in f], dtype=np.float64)
    return F
