"""Reference for the tests: the sequence-level LP exactly as docs/trees.md §4 states it
(one variable per tree, accepted node and emitted token), the form the library solved before
its hub form.  The library's LP is checked against this one.

The sequence-level LP: the largest expected accepted length of any lossless verifier
for a given draft-tree law (docs/trees.md §4).

Variables
    π(S, v, y) ≥ 0 — mass of (draft tree with node set S, accepted node v ∈ S,
    emitted token y); A(w) ≥ 0 — mass of generated texts that start with the string
    w although the verifier's output s = v·y is shorter than w.
Constraints
    Σ_{v,y} π(S, v, y) = D(S)                       (the draft-tree law),
    A(w·y) = (A(w) + M(w))·p(y | w)   for 1 ≤ |w| ≤ L (the target continues after s),
    A(z) + M(z) = p(z)                 for |z| = L + 1 (losslessness),
    with M(w) = Σ_S π(S, w[:-1], w[-1]) the law of s and A(w) = 0 for |w| = 1.
Objective
    max Σ π(S, v, y)·|v|.

Solved with scipy's HiGHS in float64 (there is no exact mode for the LP).  The result
carries an :class:`LPCertificate`: the plan's constraint violation is recomputed,
and the solver's duals λ are turned into an upper bound b·λ + Σ_j (c - Aᵀλ)_j⁺·ub_j
that is valid for any λ because every variable is boxed (π ≤ D(S), A ≤ 1).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from optaccept._errors import SolverError
from optaccept.tree._draft import DraftTree
from optaccept.tree._result import LPCertificate

__all__ = ["optimal_lp"]

Prefix = tuple[int, ...]
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
# The LP is feasible by construction (the rule that accepts nothing: π(S, (), y) = D(S)·p(y)),
# so an "infeasible" or failed status is numerical: near-one-hot laws put coefficients of
# 1e-10 … 1e-13 beside ones, within HiGHS's own tolerances.  The attempts run in this order
# and the first whose certificate (recomputed here, independently of the solver) holds wins.
_ATTEMPTS = (
    ("highs", _HIGHS),
    ("highs", {**_HIGHS, "presolve": False}),
    ("highs-ipm", _HIGHS),
    ("highs", {}),  # HiGHS's default tolerances (1e-7)
    ("highs-ipm", {}),
)


def optimal_lp(
    trees: list[tuple[DraftTree, Any]], P: Callable[[Prefix], np.ndarray], n: int, length: int, *, tol: float = 1e-7
) -> tuple[float, LPCertificate, dict[str, Any]]:
    """Solve the LP over the enumerated ``trees``; return (value, certificate, details)."""
    from scipy.optimize import linprog

    L = length
    law: dict[frozenset, float] = defaultdict(float)
    for tree, pr in trees:
        law[tree.nodes()] += float(pr)
    sets = list(law)
    D = np.array([law[s] for s in sets])
    D /= D.sum()  # float rounding of the tree law must not make the LP infeasible

    # strings w with 1 <= |w| <= L + 1 and their target laws
    Pf = {}
    for d in range(L + 1):
        for w in itertools.product(range(n), repeat=d):
            Pf[w] = np.asarray(P(w), dtype=np.float64)

    # variables: π(S, v, y) then A(w) for 2 <= |w| <= L + 1
    var_set, var_node = [], []
    for a, s in enumerate(sets):
        for v in sorted(s, key=lambda t: (len(t), t)):
            var_set.append(a)
            var_node.append(v)
    n_pi = len(var_node) * n
    a_index: dict[Prefix, int] = {}
    for d in range(2, L + 2):
        for w in itertools.product(range(n), repeat=d):
            a_index[w] = n_pi + len(a_index)
    nv = n_pi + len(a_index)
    m_of: dict[Prefix, list[int]] = defaultdict(list)  # string w -> columns of π summing to M(w)
    c = np.zeros(nv)
    ub = np.ones(nv)
    for j, (a, v) in enumerate(zip(var_set, var_node)):
        for y in range(n):
            col = j * n + y
            m_of[v + (y,)].append(col)
            c[col] = len(v)
            ub[col] = D[a]

    rows, cols, vals, b = [], [], [], []

    def add_row(entries: list[tuple[int, float]], rhs: float) -> None:
        r = len(b)
        for col, val in entries:
            if val != 0.0:
                rows.append(r)
                cols.append(col)
                vals.append(val)
        b.append(rhs)

    # tree law
    per_set: dict[int, list[int]] = defaultdict(list)
    for j, a in enumerate(var_set):
        per_set[a].extend(range(j * n, j * n + n))
    for a in range(len(sets)):
        add_row([(col, 1.0) for col in per_set[a]], D[a])
    # continuation recursion and losslessness
    for w, idx in a_index.items():
        head, y = w[:-1], w[-1]
        pw = Pf[head][y]
        entries = [(idx, 1.0)]
        if head in a_index:
            entries.append((a_index[head], -pw))
        entries.extend((col, -pw) for col in m_of.get(head, ()))
        add_row(entries, 0.0)
    for z in itertools.product(range(n), repeat=L + 1):
        pz = 1.0
        for t in range(L + 1):
            pz *= Pf[z[:t]][z[t]]
        entries = [(col, 1.0) for col in m_of.get(z, ())]
        if z in a_index:
            entries.append((a_index[z], 1.0))
        add_row(entries, pz)

    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(b), nv))
    b = np.array(b)
    res, cert, failures = None, None, []
    for method, options in _ATTEMPTS:
        res = linprog(-c, A_eq=A, b_eq=b, bounds=(0, None), method=method, options=options)
        if res.status != 0 or res.x is None or res.eqlin is None:
            failures.append(f"{method}: status {res.status}")
            continue
        cert = _certificate(res, A, b, c, ub, tol)
        if cert.ok:
            break
        failures.append(f"{method}: certificate off (violation {cert.max_violation:.3g}, gap {cert.duality_gap:.3g})")
    else:
        raise SolverError(
            "verifier 'optimal': no HiGHS attempt gave a certified solution of the (feasible) LP: "
            + "; ".join(failures)
        )
    x = np.clip(res.x, 0.0, None)
    details = {"trees": len(sets), "plan": x, "sets": sets}
    return cert.primal_value, cert, details


def _certificate(res: Any, A: sp.csr_matrix, b: np.ndarray, c: np.ndarray, ub: np.ndarray, tol: float) -> LPCertificate:
    x = np.clip(res.x, 0.0, None)
    viol = float(np.abs(A @ x - b).max(initial=0.0))
    primal = float(c @ x)
    lam = -np.asarray(res.eqlin.marginals, dtype=np.float64)  # duals of the max problem
    reduced = c - A.T @ lam
    upper = float(b @ lam + np.maximum(reduced, 0.0) @ ub)
    return LPCertificate(primal, viol, upper, upper - primal, int(A.shape[1]), int(A.shape[0]), tol)
