"""The best node-by-node lossless verifier (verifier ``"token_optimal"``, docs/trees.md §3).

At a node u carrying m chains, the verifier sees the m drafted children (a multiset
A for iid trees, a set for swor trees) and must emit the next token Y with law
p(·|u) — over the draft's randomness, not given it.  Accepting child y ∈ A is worth
1 + W(uy, c_y), the value of the subtree below y, which carries c_y chains.  So

    W(u, m) = max_π Σ_{A, y ∈ A} π(A, y)·(1 + W(uy, c_y(A)))
              s.t. Σ_y π(A, y) ≤ D_m(A | u),  Σ_A π(A, y) ≤ p(y | u),  π ≥ 0,

a weighted transport problem, and W(u, m) = 0 at depth ``length``.  For m = 1 the
maximal coupling π(y, y) = min(p(y), q(y)) is optimal whatever the weights, so
one chain gives plain speculative sampling; m ≥ 2 is solved with scipy's HiGHS
(float64: no exact mode for m ≥ 2).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable
from math import comb, factorial
from typing import Any

import numpy as np

from .._errors import MethodError, SolverError
from ._draft import _swor_orders
from ._shape import topk_indices
from ._shaped_tree import _node_outcomes

__all__ = ["token_optimal_value", "token_optimal_shaped"]

Prefix = tuple[int, ...]
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _outcomes(q: np.ndarray, m: int, drafts: str) -> list[tuple[dict[int, int], Any]]:
    """Draft outcomes at a node with m chains: (token -> count, probability)."""
    support = [int(x) for x in np.flatnonzero(q != 0)]
    if drafts == "swor":
        agg: dict[tuple[int, ...], Any] = defaultdict(int)
        for order, pr in _swor_orders(q, m):
            agg[tuple(sorted(order))] = agg[tuple(sorted(order))] + pr
        return [({x: 1 for x in s}, pr) for s, pr in agg.items()]
    out = []
    for combo in itertools.combinations_with_replacement(support, m):
        cnt = Counter(combo)
        coef = factorial(m)
        for c in cnt.values():
            coef //= factorial(c)
        pr = coef
        for x, c in cnt.items():
            pr = pr * q[x] ** c
        out.append((dict(cnt), pr))
    return out


def _transport(outcomes, p: np.ndarray, weight: Callable[[int, int], float], tol: float = 1e-7) -> float:
    import scipy.sparse as sp
    from scipy.optimize import linprog

    cols_set, cols_tok, c = [], [], []
    for a, (cnt, _) in enumerate(outcomes):
        for y, cy in cnt.items():  # cy: what the weight of y depends on in outcome a
            cols_set.append(a)
            cols_tok.append(y)
            c.append(weight(y, cy))
    nv = len(c)
    c = np.array(c, dtype=np.float64)
    D = np.array([float(pr) for _, pr in outcomes])
    pf = np.asarray(p, dtype=np.float64)
    n = pf.size
    A = sp.vstack(
        [
            sp.csr_matrix((np.ones(nv), (cols_set, np.arange(nv))), shape=(len(outcomes), nv)),
            sp.csr_matrix((np.ones(nv), (cols_tok, np.arange(nv))), shape=(n, nv)),
        ]
    ).tocsr()
    b = np.concatenate([D, pf])
    res = None
    for options in (_HIGHS, {**_HIGHS, "presolve": False}):
        res = linprog(-c, A_ub=A, b_ub=b, bounds=(0, None), method="highs", options=options)
        if res.status == 0 and res.x is not None:
            x = np.clip(res.x, 0.0, None)
            viol = float(np.maximum(A @ x - b, 0.0).max(initial=0.0))
            mu = np.maximum(-np.asarray(res.ineqlin.marginals), 0.0)
            ub = D[np.array(cols_set, dtype=np.int64)] if nv else np.zeros(0)
            upper = float(b @ mu + np.maximum(c - A.T @ mu, 0.0) @ ub)
            primal = float(c @ x)
            if viol <= tol and upper - primal <= tol:
                return primal
    raise SolverError(f"verifier 'token_optimal': HiGHS did not certify a node's transport LP ({res.message})")


def token_optimal_value(
    P: Callable[[Prefix], np.ndarray],
    Q: Callable[[Prefix], np.ndarray],
    length: int,
    k: int,
    drafts: str,
    *,
    max_outcomes: int = 20_000,
) -> Any:
    """W((), k): exact (Fraction) when every node carries one chain and the laws are Fractions."""
    memo: dict[tuple[Prefix, int], Any] = {}

    def W(u: Prefix, m: int) -> Any:
        if len(u) == length or m == 0:
            return 0
        key = (u, m)
        if key in memo:
            return memo[key]
        p, q = P(u), Q(u)
        if m == 1 or (drafts == "swor" and np.count_nonzero(q != 0) == 1):
            total = 0
            for y in np.flatnonzero((p != 0) & (q != 0)):
                y = int(y)
                total = total + min(p[y], q[y]) * (1 + W(u + (y,), 1))
        else:
            support = int(np.count_nonzero(q != 0))
            size = comb(support + m - 1, m) if drafts == "iid" else comb(support, min(m, support))
            if size > max_outcomes:
                raise MethodError(
                    f"verifier 'token_optimal': too many draft outcomes at a node (support {support}, {m} chains)"
                )
            outs = _outcomes(q, m, drafts)
            total = _transport(outs, p, lambda y, cy: 1.0 + float(W(u + (y,), cy)))
        memo[key] = total
        return total

    return W((), k)


def token_optimal_shaped(
    P: Callable[[Prefix], np.ndarray],
    Q: Callable[[Prefix], np.ndarray],
    shape: Any,
    children: str,
    *,
    max_outcomes: int = 20_000,
) -> Any:
    """The best node-by-node verifier on a tree of ``shape`` (docs/trees.md §3).

    At node u with b children the draft outcome is the ordered tuple of child tokens
    (child j carries the subtree of shape index j); accepting y is worth
    1 + max_{j: x_j = y} W(u·j, w·y).  Top-k nodes are deterministic (the transport's
    optimum is π(y) = p(y) on the children: target-only), single-child nodes are solved
    by the maximal coupling; the rest by the transport LP (float64)."""

    memo: dict[tuple[tuple[int, ...], Prefix], Any] = {}

    def W(u: tuple[int, ...], w: Prefix) -> Any:
        b = shape.branches(u)
        if b == 0:
            return 0
        key = (u, w)
        if key in memo:
            return memo[key]
        p, q = P(w), Q(w)
        if children == "topk":
            total = 0
            for j, y in enumerate(topk_indices(q, b)):
                if p[y] != 0:
                    total = total + p[y] * (1 + W(u + (j,), w + (y,)))
        elif b == 1 or (children == "swor" and np.count_nonzero(q != 0) == 1):
            total = 0
            for y in np.flatnonzero((p != 0) & (q != 0)):
                y = int(y)
                total = total + min(p[y], q[y]) * (1 + W(u + (0,), w + (y,)))
        else:
            support = int(np.count_nonzero(q != 0))
            size = support**b if children == "iid" else comb(support, min(b, support)) * factorial(min(b, support))
            if size > max_outcomes:
                raise MethodError(
                    f"verifier 'token_optimal': too many draft outcomes at a node (support {support}, {b} children)"
                )
            outs = []
            for combo, pr in _node_outcomes(q, b, children):
                idx: dict[int, tuple[int, ...]] = {}
                for j, y in enumerate(combo):
                    idx[y] = idx.get(y, ()) + (j,)
                outs.append((idx, pr))
            total = _transport(outs, p, lambda y, js: 1.0 + max(float(W(u + (j,), w + (y,))) for j in js))
        memo[key] = total
        return total

    return W((), ())
