"""The package's one max-flow algorithm (optaccept.optimal._maxflow) against independent solvers.

Network: source → set A (capacity D(A)) → token y ∈ A (unbounded) → sink (capacity p(y)).
Checked on random networks with Fraction and integer capacities (zeros, ties, tokens in no
set, tiny and huge capacities), from the zero flow and from feasible starting flows:

* the value equals the minimum cut found by enumerating every token set S
  (cut = p(S) + Σ_{A ⊄ S} D(A));
* the value and the reachable tokens equal networkx's maximum flow and minimum cut;
* the flow is feasible, exactly;
* the float path (polish_flow, integer units of 2^-80) is within (sets + tokens)·2^-80 of the
  exact value, and the exact flow-plan verifier and verify's witness reach α* computed by
  enumeration of (★).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import optaccept as oa
from optaccept.optimal._flow import incidence, polish_flow
from optaccept.optimal._maxflow import dinic, exact_max_flow


def _network(rng, n, m, kind):
    """Random sets over n tokens and Fraction capacities of the given kind."""
    sets = []
    for _ in range(m):
        size = int(rng.integers(1, n + 1))
        sets.append(tuple(sorted(rng.choice(n, size=size, replace=False).tolist())))
    den = int(rng.integers(1, 30))
    D = [Fraction(int(rng.integers(0, 20)), den) for _ in sets]
    p = [Fraction(int(rng.integers(0, 20)), den) for _ in range(n)]
    if kind == "ties":
        D = [Fraction(1, 3)] * m
        p = [Fraction(1, 5)] * n
    elif kind == "tiny":  # the smallest subnormal double, exactly
        D = [d * Fraction(1, 2**1074) for d in D]
        p = [x * Fraction(1, 2**1074) if i % 2 else x for i, x in enumerate(p)]
    elif kind == "zeros":
        D = [d if i % 2 else Fraction(0) for i, d in enumerate(D)]
        p[0] = Fraction(0)
    elif kind == "near-one-hot":
        p = [Fraction(1, 10**12)] * n
        p[-1] = 1 - Fraction(n - 1, 10**12)
    return sets, D, p


def _min_cut(sets, D, p):
    """min over token sets S of p(S) + Σ_{A ⊄ S} D(A), and the minimisers."""
    n = len(p)
    best, argmin = None, []
    for mask in range(1 << n):
        cut = sum((p[y] for y in range(n) if mask >> y & 1), Fraction(0))
        cut += sum((d for s, d in zip(sets, D) if any(not mask >> y & 1 for y in s)), Fraction(0))
        if best is None or cut < best:
            best, argmin = cut, [mask]
        elif cut == best:
            argmin.append(mask)
    return best, argmin


def _check_feasible(sets, D, p, flow):
    used = [Fraction(0)] * len(p)
    for s, d, row in zip(sets, D, flow):
        assert set(row) <= set(s)
        assert all(v > 0 for v in row.values())
        assert sum(row.values(), Fraction(0)) <= d
        for y, v in row.items():
            used[y] += v
    assert all(u <= c for u, c in zip(used, p))


KINDS = ("random", "ties", "tiny", "zeros", "near-one-hot")


@pytest.mark.parametrize("kind", KINDS)
def test_exact_max_flow_equals_the_enumerated_min_cut(kind):
    rng = np.random.default_rng(KINDS.index(kind))
    for _ in range(25):
        n, m = int(rng.integers(1, 8)), int(rng.integers(0, 12))
        sets, D, p = _network(rng, n, m, kind)
        flow, value, S = exact_max_flow(sets, D, p)
        best, argmin = _min_cut(sets, D, p)
        assert value == best
        _check_feasible(sets, D, p, flow)
        assert sum((sum(r.values(), Fraction(0)) for r in flow), Fraction(0)) == value
        # the reachable tokens are a minimum cut (tokens in no set are never reached)
        assert sum(1 << y for y in S) in argmin


@pytest.mark.parametrize("kind", KINDS)
def test_exact_max_flow_agrees_with_networkx(kind):
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(10 + KINDS.index(kind))
    for _ in range(25):
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 25))
        sets, D, p = _network(rng, n, m, kind)
        big = sum(D, Fraction(0)) + sum(p, Fraction(0)) + 1
        G = nx.DiGraph()
        for a, (s, d) in enumerate(zip(sets, D)):
            G.add_edge("src", ("A", a), capacity=d)
            for y in s:
                G.add_edge(("A", a), ("y", y), capacity=big)
        for y in range(n):
            G.add_edge(("y", y), "sink", capacity=p[y])
        R = nx.algorithms.flow.edmonds_karp(G, "src", "sink")
        _, value, S = exact_max_flow(sets, D, p)
        assert value == R.graph["flow_value"]
        # what the residual network reaches from the source is the same for every maximum
        # flow (the smallest minimum cut): networkx's residual must reach the same tokens
        seen, todo = {"src"}, ["src"]
        while todo:
            u = todo.pop()
            for v, e in R[u].items():
                if v not in seen and e["capacity"] - e["flow"] > 0:
                    seen.add(v)
                    todo.append(v)
        assert set(S) == {v[1] for v in seen if isinstance(v, tuple) and v[0] == "y"}


def test_dinic_on_integers_from_feasible_starting_flows():
    """Integer capacities up to 2^90 (the float path's units), from a random feasible flow."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 10))
        sets, Dq, pq = _network(rng, n, m, "random")
        scale = 2 ** int(rng.integers(0, 90))
        D = [int(d * 60) * scale for d in Dq]
        p = [int(x * 60) * scale for x in pq]
        toks = sorted({y for s in sets for y in s})
        tid = {y: i for i, y in enumerate(toks)}
        ptr, arc_tok = [0], []
        for s in sets:
            arc_tok.extend(tid[y] for y in s)
            ptr.append(len(arc_tok))
        # a feasible start: each set sends a share of its capacity to its first token, within p
        f = [0] * len(arc_tok)
        room = {t: p[toks[t]] for t in range(len(toks))}
        for a in range(m):
            j = ptr[a]
            send = min(D[a] // 2, room[arc_tok[j]])
            f[j], room[arc_tok[j]] = send, room[arc_tok[j]] - send
        reach = dinic(ptr, arc_tok, D, [p[y] for y in toks], f)
        best, argmin = _min_cut(sets, [Fraction(d) for d in D], [Fraction(x) for x in p])
        assert sum(f) == best
        assert min(f, default=0) >= 0
        assert all(sum(f[ptr[a] : ptr[a + 1]]) <= D[a] for a in range(m))
        inflow = [0] * len(toks)
        for j, t in enumerate(arc_tok):
            inflow[t] += f[j]
        assert all(inflow[t] <= p[toks[t]] for t in range(len(toks)))
        assert sum(1 << toks[t] for t, r in enumerate(reach) if r) in argmin


def test_float_path_is_within_its_units_of_the_exact_flow():
    rng = np.random.default_rng(7)
    for n, k in ((5, 2), (6, 3), (8, 4), (8, 8)):
        for _ in range(4):
            q = rng.dirichlet(np.full(n, 0.5))
            p = rng.dirichlet(np.full(n, 0.5))
            p[0] = 1e-300  # below the 2^-80 units: rounded down to 0
            p /= p.sum()
            law = oa.WithoutReplacement(q, k)
            sl = law.set_law()
            D = np.asarray(sl.probs, dtype=np.float64)
            inc = incidence(sl.sets, n)
            F = polish_flow(sp.csr_matrix((np.zeros(inc.nnz), inc.indices, inc.indptr), shape=inc.shape), D, p)
            _, exact, _ = exact_max_flow(sl.sets, [Fraction(v) for v in D.tolist()], [Fraction(v) for v in p.tolist()])
            assert abs(Fraction(float(F.sum())) - exact) <= (len(sl) + n) * Fraction(1, 2**80) + Fraction(1, 2**52)


def test_exact_plan_verifier_and_witness_reach_alpha_star_by_enumeration():
    """Fraction input: the flow-plan verifier's acceptance and verify's exact witness equal
    min over S of p(S) + 1 − D(set ⊆ S), enumerated over all 2^n subsets."""
    rng = np.random.default_rng(8)
    for n, k in ((4, 2), (5, 3), (6, 2)):
        qi = rng.integers(1, 20, size=n)
        pi = rng.integers(0, 20, size=n)
        q = [Fraction(int(v), int(qi.sum())) for v in qi]
        p = [Fraction(int(v), int(pi.sum())) for v in pi] if pi.sum() else [Fraction(1, n)] * n
        law = oa.WithoutReplacement(q, k)
        star = min(
            sum((p[y] for y in range(n) if mask >> y & 1), Fraction(0))
            + 1
            - law.subset_prob(np.array([bool(mask >> y & 1) for y in range(n)]))
            for mask in range(1 << n)
        )
        ov = oa.optimal_verifier(p, law)
        assert ov.acceptance == star and ov.value == star  # exact arithmetic: no tolerance
        check = oa.verify(p, law, oa.optimal_acceptance(p, law))
        assert check.lower_bound == star
