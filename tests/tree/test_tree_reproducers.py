"""Defects of the tree API, each kept as a test: top-k shapes wider than the vocabulary,
standard errors clustered by prompt, ``simulate`` without ``children``, the
target-only sum on i.i.d. shapes with equal siblings, and size guards."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest

from optaccept import real, tree
from optaccept._errors import InputError, MethodError


# ---------------------------------------------------------------- top-k wider than the vocabulary
def test_topk_with_more_children_than_tokens():
    p = lambda u: [0.3, 0.7]  # noqa: E731
    q = lambda u: [0.6, 0.4]  # noqa: E731
    r = tree.accepted_tokens(p, q, tree.TreeDraftLaw((3, 1), "topk"), verifier="target_only")
    # the root has two tokens (0 then 1 by q); each carries one child, token 0:
    # Σ p(w) = p(0) + p(1) + p(0 0) + p(1 0)
    assert r.value == pytest.approx(0.3 + 0.7 + 0.3 * 0.3 + 0.7 * 0.3, abs=1e-15)
    for verifier in ("optimal", "token_optimal"):
        v = tree.accepted_tokens(p, q, tree.TreeDraftLaw((3, 1), "topk"), verifier=verifier).value
        assert v == pytest.approx(r.value, abs=1e-12)
    assert tree.upper_bound(p, q, drafts=tree.TreeDraftLaw((3, 1), "topk")).value == pytest.approx(r.value, abs=1e-12)
    # in Fractions, and a wider tree with a subtree under the missing child (2,)
    pf = lambda u: [F(3, 10), F(7, 10)]  # noqa: E731
    qf = lambda u: [F(3, 5), F(2, 5)]  # noqa: E731
    shape = [(0,), (1,), (2,), (2, 0), (2, 0, 0), (0, 0)]
    got = tree.accepted_tokens(pf, qf, tree.TreeDraftLaw(shape, "topk"), verifier="target_only").value
    assert got == F(3, 10) + F(7, 10) + F(3, 10) * F(3, 10)
    lengths, _ = tree.simulate(
        p, q, drafts=tree.TreeDraftLaw((3, 1), "topk"), verifier="target_only", samples=200, rng=0
    )
    assert lengths.max() <= 2


# ---------------------------------------------------------------- clustered standard errors
def test_rao_blackwell_clusters_by_prompt():
    f = real.DraftTrees.load(real.trees_path("iid"))
    items = f.items(k=2, length=2)
    assert len(items) == f.n_trees and np.array_equal(items.groups, f.prompt_index)
    res = tree._sampling.rao_blackwell(items, verifiers=("token",))["token"]
    x = np.asarray(res.details["values"])
    g = np.asarray(f.prompt_index)
    # the clustered standard error, written out: sqrt(G/(G-1) Σ_g S_g²) / N
    prompts = np.unique(g)
    S = np.array([np.sum(x[g == k] - x.mean()) for k in prompts])
    G, N = prompts.size, x.size
    want = math.sqrt(G / (G - 1) * float(S @ S)) / N
    assert res.std_err == pytest.approx(want, rel=1e-12)
    assert res.details["clusters"] == G
    # the independent-trees formula differs, and is what a caller gets without groups
    naive = tree._sampling.rao_blackwell(list(f.items(k=2, length=2)), verifiers=("token",))["token"]
    assert naive.std_err == pytest.approx(x.std(ddof=1) / math.sqrt(N), rel=1e-12)
    assert naive.details["clusters"] == N
    # explicit groups win; a single group has no clustered error
    one = tree._sampling.rao_blackwell(list(f.items(k=2, length=2)), verifiers=("token",), groups=g)["token"]
    assert one.std_err == pytest.approx(want, rel=1e-12)
    same = tree._sampling.rao_blackwell(list(f.items(k=2, length=2)), verifiers=("token",), groups=np.zeros(N))["token"]
    assert math.isnan(same.std_err) and same.value == pytest.approx(res.value)
    with pytest.raises(InputError, match="groups:"):
        tree._sampling.rao_blackwell(list(f.items(k=2, length=2)), verifiers=("token",), groups=[0, 1])


def test_clustered_error_is_larger_when_trees_of_a_prompt_agree():
    """Twelve trees per prompt that share the prompt's value: the clustered error is the
    error of the prompt means, sqrt(12) times the naive one here."""
    rng = np.random.default_rng(0)
    p_vals = rng.random(20)
    items, groups = [], []
    for g, a in enumerate(p_vals):
        law = [a, 1 - a]
        for _ in range(12):
            t = tree._draft.sample_tree(lambda u: [1.0, 0.0], 1, 1, "iid", rng)  # always token 0
            items.append((t, lambda u, law=law: law, lambda u: [1.0, 0.0]))
            groups.append(g)
    res = tree._sampling.rao_blackwell(items, verifiers=("target_only",), groups=groups)["target_only"]
    x = res.details["values"]
    means = np.array([x[np.asarray(groups) == g].mean() for g in range(20)])
    assert res.std_err == pytest.approx(means.std(ddof=1) / math.sqrt(20), rel=1e-12)
    naive = x.std(ddof=1) / math.sqrt(x.size)
    assert res.std_err / naive == pytest.approx(math.sqrt(12 * (x.size - 1) / (x.size - 12)), rel=1e-9)
    assert res.std_err > 3 * naive


# ---------------------------------------------------------------- simulate refuses like accepted_tokens
def test_a_shape_needs_its_childrens_law():
    p = lambda u: [0.5, 0.5]  # noqa: E731
    with pytest.raises(InputError, match="^children:") as e:
        tree.TreeDraftLaw((2,))
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="^samples:"):
        tree.simulate(p, p, drafts=tree.TreeDraftLaw(length=1), samples=0, rng=0)


def test_target_only_sum_fails_with_equal_iid_siblings():
    """p = q = (1/2, 1/2), shape [(0,), (1,), (1, 0)], i.i.d. children: when both root
    children carry the same token the target moves to the first one, so the node (1, 0)
    is reached only when the root's children differ.  Enumerated here by hand."""
    half = F(1, 2)
    p = lambda u: [half, half]  # noqa: E731
    shape = [(0,), (1,), (1, 0)]
    r = tree.accepted_tokens(p, p, tree.TreeDraftLaw(shape, "iid"), verifier="target_only")
    total = F(0)
    formula = F(0)
    for a, b, c in itertools.product((0, 1), repeat=3):  # tokens of (0,), (1,), (1, 0)
        pr = half**3
        # the rule: Y1 ~ p; move to the first child carrying it; then Y2 ~ p below it
        acc = F(0)
        for y1, y2 in itertools.product((0, 1), repeat=2):
            node = (0,) if a == y1 else (1,) if b == y1 else None
            depth = 0 if node is None else 1 + (node == (1,) and c == y2)
            acc += half * half * depth
        total += pr * acc
        strings = {(a,), (b,), (b, c)}
        formula += pr * sum(half ** len(w) for w in strings)
    assert total == F(7, 8) and r.value == F(7, 8)
    assert formula == 1  # the sum over the tree's distinct strings overcounts
    # the sum holds for the same shape with siblings drawn without replacement
    s = tree.accepted_tokens(p, p, tree.TreeDraftLaw(shape, "swor"), verifier="target_only")
    assert s.value == half + half + F(1, 4)


def test_target_only_sum_holds_on_first_occurrence_subtree():
    """On every drafted i.i.d. tree, target-only's value is Σ p(w) over the strings reached
    through the first child carrying each token (checked over all trees of three shapes)."""
    p = lambda u: [F(1, 2), F(1, 3), F(1, 6)]  # noqa: E731
    q = lambda u: [F(1, 3), F(1, 3), F(1, 3)]  # noqa: E731
    from optaccept.tree._shape import as_shape
    from optaccept.tree._shaped_tree import enumerate_shaped

    for spec in ([(0,), (1,), (1, 0)], (2, 2), [(0,), (1,), (2,), (2, 0), (1, 0), (1, 1)]):
        for t, _ in enumerate_shaped(q, as_shape(spec), "iid"):
            reached = set()
            stack = [()]
            while stack:
                u = stack.pop()
                seen = set()
                for c in t.child_nodes(u):
                    if t.token(c) not in seen:
                        seen.add(t.token(c))
                        reached.add(t.prefix(c))
                        stack.append(c)
            want = sum(math.prod(p(w[:i])[w[i]] for i in range(len(w))) for w in reached)
            assert tree._sampling.tree_value(t, p, q, "target_only") == want


# ---------------------------------------------------------------- size guards
def test_enumeration_refuses_before_the_work():
    calls = []

    def q(u):
        calls.append(u)
        return [0.1] * 10

    with pytest.raises(MethodError, match="max_trees") as e:
        tree.accepted_tokens(q, q, drafts=tree.TreeDraftLaw((3, 3), "iid"), verifier="token")
    assert "\n" not in str(e.value) and "samples=" in str(e.value)
    assert len(calls) < 200  # refused from the count, not after listing 200,000 trees


def test_count_of_shaped_trees_is_exact_for_iid_and_topk():
    from optaccept.tree._shape import as_shape
    from optaccept.tree._shaped_tree import count_shaped, enumerate_shaped

    rng = np.random.default_rng(5)
    for trial in range(20):
        n = int(rng.integers(2, 5))
        memo = {}

        def q(u, n=n, memo=memo):
            if u not in memo:
                v = rng.random(n)
                v[rng.random(n) < 0.3] = 0.0
                v[int(rng.integers(n))] += 0.1
                memo[u] = v / v.sum()
            return memo[u]

        shape = as_shape([(2, 1), (3,), (1, 2), [(0,), (1,), (1, 0)]][trial % 4])
        for children in ("iid", "topk"):
            want = len(enumerate_shaped(q, shape, children, max_trees=10**7))
            assert count_shaped(q, shape, children, limit=10**9) == want


# ---------------------------------------------------------------- progress bars
def test_long_calls_show_what_a_unit_is(capsys):
    from optaccept._lib.limits import show_progress

    assert show_progress(True) is True and show_progress(False) is False
    assert show_progress(None) is False  # pytest captures stderr: no terminal, no kernel
    P, Q = tree.synthetic_pair(30, rng=1)
    rng = np.random.default_rng(0)
    calls = [
        (
            lambda: tree.accepted_tokens(
                P, Q, tree.TreeDraftLaw((2, 1), "swor"), verifier="token", samples=20, rng=rng, progress=True
            ),
            "tree",
        ),
        (
            lambda: tree.simulate(
                P, Q, drafts=tree.TreeDraftLaw((2, 1), "swor"), verifier="token", samples=20, rng=rng, progress=True
            ),
            "step",
        ),
        (lambda: tree.best_tree([(P, Q)], budget=4, progress=True), "context"),
        (lambda: tree.budget_curve([(P, Q)], budgets=(4,), progress=True), "position"),
        (
            lambda: tree.upper_bound(P, Q, drafts=tree.TreeDraftLaw((2, 1), "swor"), samples=5, rng=rng, progress=True),
            "tree",
        ),
    ]
    for call, unit in calls:
        call()
        err = capsys.readouterr().err
        assert f"{unit}/s" in err or f"s/{unit}" in err, err
    tree.accepted_tokens(P, Q, tree.TreeDraftLaw((2, 1), "swor"), verifier="token", samples=20, rng=rng)
    assert capsys.readouterr().err == ""  # the default off when nobody watches
