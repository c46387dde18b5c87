"""The sequence-level LP in its hub form (docs/trees.md §4, Proposition 4.1) against the LP
exactly as §4 first states it (`tests/_reference_lp.py`: one variable per tree, accepted node
and emitted token), on random and nasty instances: zeros, p = q, disjoint supports,
near-one-hot laws, i.i.d. and without-replacement chains, and index-path shapes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _reference_lp import optimal_lp as reference_lp

from optaccept import tree
from optaccept._errors import SolverError
from optaccept.tree._draft import enumerate_trees
from optaccept.tree._optimal_lp import optimal_lp
from optaccept.tree._shape import as_shape
from optaccept.tree._shaped_tree import enumerate_shaped


def _table(rng, n, L, kind):
    """A law per prefix of depth 0..L (a dict of float arrays)."""
    t = {}
    for d in range(L + 1):
        for w in itertools.product(range(n), repeat=d):
            if kind == "one-hot":
                v = np.full(n, 1e-12 / max(n - 1, 1))
                v[rng.integers(n)] = 1 - 1e-12 if n > 1 else 1.0
            elif kind == "zeros":
                v = rng.dirichlet(np.ones(n)) * (rng.random(n) < 0.6)
                if v.sum() == 0:
                    v[rng.integers(n)] = 1.0
                v = v / v.sum()
            elif kind == "first-half":
                v = np.zeros(n)
                v[: max(1, n // 2)] = rng.dirichlet(np.ones(max(1, n // 2)))
            elif kind == "second-half":
                v = np.zeros(n)
                v[n // 2 :] = rng.dirichlet(np.ones(n - n // 2))
            else:
                v = rng.dirichlet(np.full(n, 0.5))
            t[w] = v
    return t


def _pair(rng, n, L, family):
    if family == "p=q":
        p = _table(rng, n, L, "dirichlet")
        return p, p
    if family == "disjoint":
        return _table(rng, n, L, "first-half"), _table(rng, n, L, "second-half")
    kind = {"dirichlet": "dirichlet", "zeros": "zeros", "one-hot": "one-hot"}[family]
    return _table(rng, n, L, kind), _table(rng, n, L, kind)


FAMILIES = ("dirichlet", "zeros", "p=q", "disjoint", "one-hot")
CASES = [
    (1, 1, "iid", 4),
    (1, 2, "iid", 4),
    (1, 3, "swor", 4),
    (1, 5, "iid", 3),
    (2, 1, "iid", 3),
    (2, 2, "iid", 3),
    (2, 2, "swor", 3),
    (2, 3, "iid", 2),
    (3, 1, "iid", 3),
    (3, 2, "swor", 2),
]


def _both(trees, P, n, L):
    a, ca, _ = reference_lp(trees, P, n, L)
    b, cb, _ = optimal_lp(trees, P, n, L)
    assert ca.ok and cb.ok
    # the hub form's dual bound is a valid upper bound of the reference optimum and vice versa
    assert b <= ca.upper_bound + 1e-7 and a <= cb.upper_bound + 1e-7
    return a, b, cb


@pytest.mark.parametrize("family", FAMILIES)
def test_hub_form_equals_the_lp_as_stated_on_chains(family):
    rng = np.random.default_rng(sum(map(ord, family)))
    worst, count = 0.0, 0
    for L, k, drafts, nmax in CASES:
        for n in range(2, nmax + 1):
            if drafts == "swor" and k > n:
                continue
            p, q = _pair(rng, n, L, family)
            trees = enumerate_trees(q.__getitem__, L, k, drafts, max_trees=10**6)
            a, b, cert = _both(trees, p.__getitem__, n, L)
            assert abs(a - b) <= 1e-8, (family, L, k, drafts, n, a, b)
            assert cert.variables < sum(len(t.nodes()) for t, _ in trees) * n + sum(n**j for j in range(2, L + 2))
            worst, count = max(worst, abs(a - b)), count + 1
    assert count >= 20


@pytest.mark.parametrize("spec", [[(0,), (1,), (0, 0)], (2, 1), (1, 2), [(0,), (0, 0), (0, 1)]])
@pytest.mark.parametrize("children", ["iid", "swor"])
def test_hub_form_equals_the_lp_as_stated_on_shapes(spec, children):
    rng = np.random.default_rng(3)
    shp = as_shape(spec)
    for n in (2, 3):
        for family in FAMILIES:
            p, q = _pair(rng, n, shp.depth, family)
            trees = enumerate_shaped(q.__getitem__, shp, children, max_trees=10**6)
            a, b, _ = _both(trees, p.__getitem__, n, shp.depth)
            assert abs(a - b) <= 1e-8, (spec, children, n, family, a, b)


def test_node_set_law_is_accepted_directly():
    """The law of the node sets, passed as a dict, gives the value of the tree list it aggregates."""
    target, draft = tree.synthetic_pair(4, rng=5)
    trees = enumerate_trees(draft, 2, 2, "iid", max_trees=10**6)
    law: dict = {}
    for t, pr in trees:
        law[t.nodes()] = law.get(t.nodes(), 0.0) + float(pr)
    v1, _, d1 = optimal_lp(trees, target, 4, 2)
    v2, _, d2 = optimal_lp(law, target, 4, 2)
    assert v1 == pytest.approx(v2, abs=1e-12) and d1["trees"] == d2["trees"] == len(law) < len(trees)


def test_hub_plan_is_a_verifier_of_the_stated_lp():
    """The (⇐) map of Proposition 4.1, done here independently of the library: the hub plan's
    node choices and output law, spread over the emitted tokens, satisfy every row of the LP
    as stated and give the same objective."""
    rng = np.random.default_rng(11)
    for L, k, n in ((1, 2, 3), (2, 2, 3), (3, 1, 3), (2, 3, 2)):
        p, q = _pair(rng, n, L, "dirichlet")
        trees = enumerate_trees(q.__getitem__, L, k, "iid", max_trees=10**6)
        value, _, det = optimal_lp(trees, p.__getitem__, n, L)
        sets, plan, out = det["sets"], det["plan"], dict(det["outputs"])

        def pr(s, p=p):
            v = 1.0
            for t in range(len(s)):
                v *= p[s[:t]][s[t]]
            return v

        m = {}
        for (_, v), mass in plan.items():
            m[v] = m.get(v, 0.0) + mass
        for v in (w for w in m if len(w) == L):  # after a depth-L node the emitted token is p(·|v)
            for y in range(n):
                out[v + (y,)] = p[v][y] * m[v]
        # π(S, v, y) = x(S, v)·M(v·y)/m(v); the law of the text it generates is p at depth L + 1
        text = {}
        for s, mass in out.items():
            for z in itertools.product(range(n), repeat=L + 1 - len(s)):
                full = s + z
                text[full] = text.get(full, 0.0) + mass * pr(full) / pr(s) if pr(s) > 0 else text.get(full, 0.0)
        for z in itertools.product(range(n), repeat=L + 1):
            assert text.get(z, 0.0) == pytest.approx(pr(z), abs=1e-9)
        # every tree's mass goes to its own nodes, and the objective is the value
        per_set = np.zeros(len(sets))
        for (a, v), mass in plan.items():
            assert v in sets[a]
            per_set[a] += mass
        D = np.zeros(len(sets))
        index = {s: i for i, s in enumerate(sets)}
        for t, w in trees:
            D[index[t.nodes()]] += float(w)
        np.testing.assert_allclose(per_set, D / D.sum(), atol=1e-9)
        assert sum(len(v) * mass for (_, v), mass in plan.items()) == pytest.approx(value, abs=1e-9)
        for s, mass in out.items():  # output mass leaves an accepted node
            if len(s) <= L:
                assert mass <= m.get(s[:-1], 0.0) + 1e-9


@pytest.mark.parametrize(
    "L,k,drafts,n",
    [
        (1, 3, "iid", 3),
        (2, 2, "iid", 3),
        (2, 3, "iid", 2),
        (3, 2, "iid", 2),
        (1, 4, "iid", 2),
        (2, 2, "swor", 3),
        (1, 3, "swor", 4),
        (2, 3, "swor", 3),
    ],
)
def test_node_set_law_equals_the_enumerated_trees_exactly(L, k, drafts, n):
    """node_set_law (multiplicity sums, no ordered trees) against the ordered trees of
    enumerate_trees aggregated by node set, in exact Fractions, with zeros in the laws."""
    from fractions import Fraction

    from optaccept.tree._draft import node_set_law

    rng = np.random.default_rng(L * 100 + k * 10 + n)
    table = {}
    for d in range(L + 1):
        for w in itertools.product(range(n), repeat=d):
            raw = [int(x) for x in rng.integers(0, 4, size=n)]
            if sum(raw) == 0:
                raw[0] = 1
            table[w] = np.array([Fraction(x, sum(raw)) for x in raw], dtype=object)
    agg: dict = {}
    for t, pr in enumerate_trees(table.__getitem__, L, k, drafts, max_trees=10**6):
        agg[t.nodes()] = agg.get(t.nodes(), 0) + pr
    law = node_set_law(table.__getitem__, L, k, drafts)
    assert {s: v for s, v in law.items() if v != 0} == {s: v for s, v in agg.items() if v != 0}
    assert sum(law.values()) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_node_load_vertices_give_the_hub_form_value(family):
    """optimal_lp_chains (node loads as convex combinations of greedy vertices of the coverage
    function, Proposition 4.1b) against the hub form over the listed node sets, and the
    certificate's bound against the hub form's value."""
    from optaccept.tree._draft import _chains, node_set_law
    from optaccept.tree._optimal_lp import optimal_lp_chains

    rng = np.random.default_rng(100 + sum(map(ord, family)))
    count = 0
    for L, k, n in ((1, 3, 3), (1, 4, 4), (1, 6, 3), (2, 3, 2), (2, 3, 3), (2, 4, 2), (3, 3, 2), (1, 2, 5), (2, 2, 3)):
        p, q = _pair(rng, n, L, family)
        a, ca, _ = optimal_lp(node_set_law(q.__getitem__, L, k, "iid"), p.__getitem__, n, L)
        if k >= 3:  # the library's path: vertices, or the hub form where they stall
            r = tree.accepted_tokens(
                p.__getitem__, q.__getitem__, tree.TreeDraftLaw(length=L, k=k, children="iid"), verifier="optimal"
            )
            assert r.certificate.ok and abs(float(r.value) - a) <= 1e-7, (family, L, k, n, r.value, a)
        try:
            b, cb, det = optimal_lp_chains(list(_chains(q.__getitem__, (), L)), k, p.__getitem__, n, L)
        except SolverError:  # a stalled column generation must say so, never return a value
            assert family == "one-hot", (L, k, n)
            continue
        assert ca.ok and cb.ok
        assert abs(a - b) <= 1e-7, (family, L, k, n, a, b)
        assert a <= cb.upper_bound + 1e-9 and b <= ca.upper_bound + 1e-9
        # the loads are a load of the node sets: every node's load at most P(the tree contains it)
        law = node_set_law(q.__getitem__, L, k, "iid")
        for v, load in det["loads"].items():
            assert load <= sum(float(w) for s, w in law.items() if v in s) + 1e-9
        count += 1
    assert count >= (5 if family == "one-hot" else 9)


def test_coverage_vertex_is_the_greedy_vertex_of_the_listed_sets():
    """The greedy vertex from chain masses equals the one computed from the listed node sets'
    law (f(U) = P(S meets U) summed over the sets), for random weights."""
    from optaccept.tree._draft import _chains, node_set_law
    from optaccept.tree._optimal_lp import _Coverage

    rng = np.random.default_rng(5)
    for L, k, n in ((1, 3, 4), (2, 3, 3), (2, 2, 3), (3, 2, 2)):
        _, q = _pair(rng, n, L, "zeros")
        cov = _Coverage(list(_chains(q.__getitem__, (), L)), k, L)
        law = node_set_law(q.__getitem__, L, k, "iid")
        for _ in range(5):
            g = rng.normal(size=len(cov.nodes))
            order = np.argsort(-g, kind="stable")
            ref = np.zeros(len(cov.nodes))
            prev, chosen = 0.0, set()
            for i in order:
                chosen.add(cov.nodes[i])
                f = sum(float(w) for s, w in law.items() if s & chosen)
                ref[i] = f - prev
                prev = f
            np.testing.assert_allclose(cov.vertex(g), ref, atol=1e-12)
