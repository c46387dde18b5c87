"""The sequence-level LP: the largest expected accepted length of any lossless verifier
for a given draft-tree law (docs/trees.md §4).

The LP of §4 is solved in its *hub form* (docs/trees.md §4, Proposition 4.1), which has
the same value and a plan that maps to the §4 plan, but no variable per (tree, node,
emitted token):

Variables
    x(S, v) ≥ 0 — mass of (draft tree with node set S, accepted node v ∈ S);
    M(s) ≥ 0, 1 ≤ |s| ≤ L — mass of verifier outputs s = v·y;
    N(w) ≥ 0, 2 ≤ |w| ≤ L — mass of texts that start with w and whose output s is a
    prefix of w (N(w) = M(w) at |w| = 1).
Constraints
    Σ_{v ∈ S} x(S, v) = D(S)                      (the draft-tree law),
    Σ_{S ∋ w} x(S, w) = Σ_y M(w·y)       |w| ≤ L − 1 (every output leaves an accepted node),
    N(w·y) = N(w)·p(y | w) + M(w·y)      2 ≤ |w·y| ≤ L (the target continues after s),
    Σ_{S ∋ v} x(S, v) + N(v) = p(v)      |v| = L (losslessness; the emitted token after a
                                           depth-L node is p(·|v) itself).
Objective
    max Σ x(S, v)·|v|.

For k ≥ 3 i.i.d. chains the C(chains, k) node sets are too many rows:
:func:`optimal_lp_chains` solves the same LP over the *node loads* Σ_{S ∋ v} x(S, v), which
form the base polytope of the coverage function U ↦ P(S meets U) (docs/trees.md §4,
Proposition 4.1b), by generating its greedy vertices.

The hub form is solved with scipy's HiGHS in float64 (there is no exact mode for the LP).  The
result carries an :class:`LPCertificate`: the plan's constraint violation is recomputed,
in masses, and the solver's duals λ are turned into an upper bound that is valid for any
λ because the constraints box every variable (x(S, ·) ≤ D(S), M(s) ≤ N(s) ≤ p(s)).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._errors import SolverError
from ._draft import DraftTree, iid_node_sets
from ._result import LPCertificate

__all__ = ["optimal_lp", "optimal_lp_chains"]

Prefix = tuple[int, ...]
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
# The LP is feasible by construction (the rule that accepts nothing: x(S, ()) = D(S),
# M = p at depth 1), so an "infeasible" or failed status is numerical: near-one-hot laws
# put coefficients of 1e-10 … 1e-13 beside ones, within HiGHS's own tolerances.  The
# attempts run in this order and the first whose certificate (recomputed here,
# independently of the solver) holds wins.
_ATTEMPTS = (
    ("highs-ipm", _HIGHS),  # interior point with crossover: 3–6× the simplex's speed on the large LPs
    ("highs-ds", _HIGHS),
    ("highs-ds", {**_HIGHS, "presolve": False}),
    ("highs-ds", {}),  # HiGHS's default tolerances (1e-7)
    ("highs-ipm", {}),
)


@dataclass
class _NodeSide:
    """The rows and columns of the nodes and strings, in ratios to the target's mass.

    Columns m(s) = M(s)/p(s) (1 ≤ |s| ≤ L) and n(w) = N(w)/p(w) (2 ≤ |w| ≤ L) over the
    strings of positive mass (M = N = 0 where p = 0, as M ≤ N ≤ p), all in [0, 1].  Rows,
    divided by p(w): the hubs Σ_{S ∋ w} x(S, w)/p(w) − Σ_y p(y|w)·m(w·y) = 0
    (1 ≤ |w| ≤ L − 1), losslessness Σ_{S ∋ v} x(S, v)/p(v) + n(v) = 1 (|v| = L), and the
    continuation n(w·y) − n(w) − m(w·y) = 0.  The target's masses, which span as many
    decades as the strings are long, then enter only the loads' coefficients.  The root's
    hub row is left out: it is implied by the others (weighted by the masses, every row
    adds up to the total mass 1), and in float64, where the conditionals do not sum to
    exactly 1, keeping it makes the system inconsistent by a few ulps, which HiGHS's
    presolve calls infeasible.
    """

    mass: dict[Prefix, float]
    node_row: dict[Prefix, int]  # the row of each non-root node of positive mass
    m_col: dict[Prefix, int]
    matrix: sp.csr_matrix  # node-side rows × (m, n) columns
    b: np.ndarray
    row_mass: np.ndarray  # each row's mass: violations are reported in masses

    @classmethod
    def build(cls, P: Callable[[Prefix], np.ndarray], n: int, L: int) -> _NodeSide:
        strings: list[list[Prefix]] = [[()]]
        for d in range(1, L + 1):
            strings.append([w + (y,) for w in strings[d - 1] for y in range(n)])
        cond = {w: np.asarray(P(w), dtype=np.float64) for d in range(L) for w in strings[d]}
        mass: dict[Prefix, float] = {(): 1.0}
        for d in range(1, L + 1):
            for s in strings[d]:
                mass[s] = mass[s[:-1]] * cond[s[:-1]][s[-1]]
        live = [s for d in range(1, L + 1) for s in strings[d] if mass[s] > 0.0]
        m_col = {s: i for i, s in enumerate(live)}
        n_col = {w: len(m_col) + i for i, w in enumerate(w for w in live if len(w) >= 2)}

        def n_of(w: Prefix) -> int:  # n(w) = m(w) at depth 1
            return m_col[w] if len(w) == 1 else n_col[w]

        node_row = {s: i for i, s in enumerate(live)}
        b = [1.0 if len(s) == L else 0.0 for s in live]
        row_mass = [mass[s] for s in live]
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for s in live:
            if len(s) >= 2:  # the root's row is left out
                rows.append(node_row[s[:-1]])
                cols.append(m_col[s])
                vals.append(-float(cond[s[:-1]][s[-1]]))
            if len(s) == L:
                rows.append(node_row[s])
                cols.append(n_of(s))
                vals.append(1.0)
        for u in n_col:
            r = len(b)
            b.append(0.0)
            row_mass.append(mass[u])
            rows.extend((r, r, r))
            cols.extend((n_col[u], n_of(u[:-1]), m_col[u]))
            vals.extend((1.0, -1.0, -1.0))
        matrix = sp.csr_matrix((vals, (rows, cols)), shape=(len(b), len(m_col) + len(n_col)))
        return cls(mass, node_row, m_col, matrix, np.array(b), np.array(row_mass))

    def outputs(self, z: np.ndarray) -> dict[Prefix, float]:
        """The law of the verifier's output M(s), 1 ≤ |s| ≤ L, from the node-side columns."""
        return {s: self.mass[s] * float(z[j]) for s, j in self.m_col.items() if z[j] > 0.0}


def _solve(c: np.ndarray, A: sp.csr_matrix, b: np.ndarray, row_mass: np.ndarray, tol: float):
    """max c·z, A z = b, 0 ≤ z ≤ 1, by the first HiGHS attempt whose certificate holds."""
    from scipy.optimize import linprog

    failures = []
    for method, options in _ATTEMPTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = linprog(-c, A_eq=A, b_eq=b, bounds=(0, None), method=method, options=options)
        if res.status != 0 or res.x is None or res.eqlin is None:
            failures.append(f"{method}: status {res.status}")
            continue
        z = np.clip(res.x, 0.0, None)
        y = -np.asarray(res.eqlin.marginals, dtype=np.float64)  # duals of the max problem
        viol = float((np.abs(A @ z - b) * row_mass).max(initial=0.0))
        upper = float(b @ y + np.maximum(c - A.T @ y, 0.0).sum())  # every column in [0, 1]
        primal = float(c @ z)
        cert = LPCertificate(primal, viol, upper, upper - primal, int(A.shape[1]), int(A.shape[0]), tol)
        if cert.ok:
            return z, y, cert
        failures.append(f"{method}: certificate off (violation {cert.max_violation:.3g}, gap {cert.duality_gap:.3g})")
    raise SolverError(
        "verifier 'optimal': no HiGHS attempt gave a certified solution of the (feasible) LP: " + "; ".join(failures)
    )


def _set_law(trees: list[tuple[DraftTree, Any]] | dict[frozenset, Any]) -> tuple[list[frozenset], np.ndarray]:
    if isinstance(trees, dict):
        law = {frozenset(s): float(pr) for s, pr in trees.items()}
    else:
        law = defaultdict(float)
        for tree, pr in trees:
            law[tree.nodes()] += float(pr)
    sets = list(law)
    D = np.array([law[s] for s in sets])
    return sets, D / D.sum()  # float rounding of the tree law must not make the LP infeasible


def optimal_lp(
    trees: list[tuple[DraftTree, Any]] | dict[frozenset, float],
    P: Callable[[Prefix], np.ndarray],
    n: int,
    length: int,
    *,
    tol: float = 1e-7,
) -> tuple[float, LPCertificate, dict[str, Any]]:
    """Solve the hub form for the law of the trees' node sets; return (value, certificate, details).

    ``trees`` is a list of (tree, probability) — aggregated here by node set — or the law
    of the node sets itself, ``{frozenset of prefixes (root included): probability}``.
    In the columns ξ(S, v) = x(S, v)/p(v) (nodes of positive mass) the tree-law row of S
    reads Σ_v p(v)·ξ(S, v) = D(S), and ξ(S, v) ≤ 1 since Σ_S x(S, v) ≤ p(v).
    """
    sets, D = _set_law(trees)
    side = _NodeSide.build(P, n, length)
    x_set, x_node = [], []
    for a, s in enumerate(sets):
        for v in s:
            if side.mass.get(v, 0.0) > 0.0:
                x_set.append(a)
                x_node.append(v)
    nx = len(x_node)
    px = np.array([side.mass[v] for v in x_node])
    # x columns: the tree-law rows (coefficient p(v)) and their node's row (1; not the root's)
    rows = list(x_set)
    cols = list(range(nx))
    vals = px.tolist()
    for j, v in enumerate(x_node):
        if v:
            rows.append(len(sets) + side.node_row[v])
            cols.append(j)
            vals.append(1.0)
    nrows = len(sets) + side.matrix.shape[0]
    X = sp.csr_matrix((vals, (rows, cols)), shape=(nrows, nx))
    A = sp.hstack([X, sp.vstack([sp.csr_matrix((len(sets), side.matrix.shape[1])), side.matrix])], format="csr")
    b = np.concatenate([D, side.b])
    row_mass = np.concatenate([np.ones(len(sets)), side.row_mass])
    c = np.concatenate([px * np.array([len(v) for v in x_node], dtype=np.float64), np.zeros(side.matrix.shape[1])])
    z, _, cert = _solve(c, A, b, row_mass, tol)
    details = {
        "trees": len(sets),
        "sets": sets,
        "plan": {(a, v): float(px[j] * z[j]) for j, (a, v) in enumerate(zip(x_set, x_node)) if z[j] > 0.0},
        "outputs": side.outputs(z[nx:]),
    }
    return cert.primal_value, cert, details


#: Weights of the best-bound duals in the smoothed duals priced after the current ones
#: (three of them took 330 rounds at two chains of two tokens over 10 tokens, one at 0.5
#: took 495 and none about 600).
_SMOOTH = (0.3, 0.6, 0.9)


class _Coverage:
    """The node loads of k i.i.d. chains: f(U) = P(the node set meets U) = 1 − (1 − Q(U))ᵏ,
    Q(U) the chain mass through a node of U, and its greedy vertices (docs/trees.md §4,
    Proposition 4.1b)."""

    def __init__(self, chains: list[tuple[Prefix, Any]], k: int, L: int) -> None:
        chains = sorted(chains, key=lambda t: t[0])
        self.q = np.array([float(pr) for _, pr in chains])
        self.q /= self.q.sum()
        self.k = k
        span: dict[Prefix, list[int]] = {}  # a node's chains are a contiguous run of the sorted chains
        for i, (c, _) in enumerate(chains):
            for d in range(L + 1):
                span.setdefault(c[:d], [i, i])[1] = i + 1
        self.nodes = sorted(span, key=lambda v: (len(v), v))  # the root first
        self.lo = np.array([span[v][0] for v in self.nodes])
        self.hi = np.array([span[v][1] for v in self.nodes])
        self.depth = np.array([len(v) for v in self.nodes], dtype=np.float64)
        self.chains = len(chains)

    def vertex(self, g: np.ndarray) -> np.ndarray:
        """The greedy vertex for weights g (nodes by g descending, each loaded with the
        increase of f); max over the loads of g·m is g·vertex (Edmonds)."""
        m = np.zeros(len(self.nodes))
        covered = np.zeros(self.chains, dtype=bool)
        left = 1.0  # chain mass not yet covered
        for i in np.argsort(-g, kind="stable"):
            lo, hi = self.lo[i], self.hi[i]
            new = ~covered[lo:hi]
            if not new.any():
                continue
            covered[lo:hi] = True
            after = left - float(self.q[lo:hi][new].sum())
            if after < 1e-6:  # summed afresh where the difference would lose digits
                after = float(self.q[~covered].sum())
            m[i] = left**self.k - after**self.k
            left = after
            if left <= 0.0:
                break
        return m


def optimal_lp_chains(
    chains: list[tuple[Prefix, Any]],
    k: int,
    P: Callable[[Prefix], np.ndarray],
    n: int,
    length: int,
    *,
    tol: float = 1e-7,
    max_rounds: int = 100_000,  # (and at most 20 per node + 500; it stops early when stalled)
) -> tuple[float, LPCertificate, dict[str, Any]]:
    """The LP for k i.i.d. chains without a row per node set: node-load vertices generated.

    ``chains`` lists the chains of positive draft probability with that probability.  The
    master LP has the node rows and one column per generated vertex of the loads'
    polytope (Proposition 4.1b: a convex combination of vertices is exactly a load some
    verifier produces); each round adds the greedy vertex that prices best under the
    duals (and under the duals smoothed toward the best bound found, which cuts the
    rounds), re-solved from the previous basis.  Any duals bound the LP over *all*
    vertices by  b·y + max(y₀, max_vertex g·m) + Σ (reduced costs)⁺,  g(v) = |v| − y(v)/p(v),
    the inner max being the greedy vertex's value; the rounds stop when the best such
    bound meets the master's value, and that bound is the certificate.
    """
    from highspy import _core  # highspy.Highs without the banner its constructor prints

    L = length
    cov = _Coverage(chains, k, L)
    side = _NodeSide.build(P, n, L)
    nodes = cov.nodes
    mass = np.array([side.mass.get(v, 0.0) for v in nodes])
    live = (mass > 0.0) & (cov.depth > 0)
    rows_of = np.where(live, [side.node_row.get(v, -1) for v in nodes], -1)
    nside = side.matrix.shape[0]
    b = np.concatenate([[1.0], side.b])
    row_mass = np.concatenate([[1.0], side.row_mass])
    S = side.matrix.tocsc()

    h = _core._Highs()
    for name, value in (
        ("output_flag", False),
        ("solver", "simplex"),
        ("presolve", "off"),
        ("simplex_strategy", 4),
        ("time_limit", 20.0),
        ("primal_feasibility_tolerance", 1e-10),
        ("dual_feasibility_tolerance", 1e-10),
    ):
        h.setOptionValue(name, value)
    h.addRows(1 + nside, b, b, 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    ns = S.shape[1]
    h.addCols(
        ns,
        np.zeros(ns),
        np.zeros(ns),
        np.ones(ns),
        S.nnz,
        S.indptr[:-1].astype(np.int32),
        (S.indices + 1).astype(np.int32),
        S.data,
    )
    verts: list[np.ndarray] = []

    def column(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A vertex's master column: the convexity row, then m(v)/p(v) in each node's row."""
        on = live & (m > 0.0)
        return np.concatenate([[0], 1 + rows_of[on]]).astype(np.int32), np.concatenate([[1.0], m[on] / mass[on]])

    def add(m: np.ndarray) -> None:
        idx, val = column(m)
        h.addCol(-float(cov.depth @ m), 0.0, 1.0, idx.size, idx, val)  # HiGHS minimises
        verts.append(m)

    dead = np.where(mass > 0.0, 0.0, -np.inf)  # nodes the target never reaches: loaded last (with 0)
    add(cov.vertex(np.where(cov.depth == 0, 1.0, -1.0) + dead))  # stop at the root: feasible
    add(cov.vertex(cov.depth + dead))

    def bound(y: np.ndarray) -> tuple[float, np.ndarray]:
        lam = np.zeros(len(nodes))
        lam[live] = y[1 + rows_of[live]]
        g = cov.depth - np.divide(lam, mass, out=np.zeros_like(lam), where=live) + dead
        g[0] = 0.0
        best = cov.vertex(g)
        fin = np.isfinite(g)
        price = float(g[fin] @ best[fin])
        side_red = np.maximum(-(S.T @ y[1:]), 0.0).sum()
        return float(side.b @ y[1:] + max(price, y[0]) + side_red), best

    best_upper, center = np.inf, None
    primal = -np.inf
    rounds = 0
    limit = min(max_rounds, 20 * len(nodes) + 500)
    gaps: list[float] = []
    while rounds < limit:
        rounds += 1
        h.run()
        if h.getModelStatus() != _core.HighsModelStatus.kOptimal:  # the primal simplex gave up: the dual, afresh
            h.setOptionValue("simplex_strategy", 1)
            h.clearSolver()
            h.run()
            h.setOptionValue("simplex_strategy", 4)
        if h.getModelStatus() != _core.HighsModelStatus.kOptimal:  # (a time limit, or numerical trouble)
            status = h.modelStatusToString(h.getModelStatus())
            raise SolverError(f"verifier 'optimal': the master LP of the column generation stopped ({status})")
        sol = h.getSolution()
        z = np.clip(np.asarray(sol.col_value), 0.0, None)
        y = -np.asarray(sol.row_dual)
        primal = -float(h.getInfo().objective_function_value)
        upper, vert = bound(y)
        if upper < best_upper:
            best_upper, center = upper, y
        if best_upper - primal <= 0.1 * tol:
            break
        gaps.append(best_upper - primal)
        if len(gaps) > 200 and gaps[-1] > 0.5 * gaps[-201]:  # stalled (duals of 1e-12 masses)
            break
        add(vert)
        if center is not y:  # smoothed duals (Wentges): vertices priced on the way to the best bound
            for a in _SMOOTH:
                _, vs = bound(a * center + (1.0 - a) * y)
                if not any(np.array_equal(vs, v) for v in verts[-3:]):
                    add(vs)
    if best_upper - primal > 0.1 * tol:
        raise SolverError(
            f"verifier 'optimal': column generation left a gap of {best_upper - primal:.3g} after {rounds} rounds"
        )
    # the plan's violation, recomputed from the vertices and the side columns
    V = np.array(verts)
    col = np.zeros((1 + nside, len(verts)))
    for j, m in enumerate(verts):
        idx, val = column(m)
        col[idx, j] = val
    A = sp.hstack([sp.vstack([sp.csr_matrix((1, ns)), S]), sp.csr_matrix(col)], format="csr")
    viol = float((np.abs(A @ z - b) * row_mass).max(initial=0.0))
    cert = LPCertificate(primal, viol, best_upper, best_upper - primal, A.shape[1], A.shape[0], tol)
    if not cert.ok:
        raise SolverError(f"verifier 'optimal': certificate off (violation {viol:.3g}, gap {cert.duality_gap:.3g})")
    loads = V.T @ z[ns:]
    details = {
        "trees": iid_node_sets(cov.chains, k),
        "rounds": rounds,
        "vertices": len(verts),
        "loads": {v: float(loads[i]) for i, v in enumerate(nodes) if loads[i] > 0.0},
        "outputs": side.outputs(z[:ns]),
    }
    return primal, cert, details
