"""Trees as engines build them: ``shape=`` (branching tuple or index paths) and
``children=`` ("topk", "swor", "iid"), every verifier (docs/trees.md §1b).

References written here, apart from the library: the law of the generated text of
recursive rejection sampling and of target-only verification on one shaped tree, in
Fractions, node by node; the closed form Σ_w p(w) of target-only; the sequence LP on
the single top-k tree (Proposition 1.1: target-only is optimal on a deterministic tree).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction as F

import numpy as np
import pytest
from test_tree_lossless import block_law, frac_table, text_law_is_target, traversal_law

from optaccept import tree
from optaccept._errors import InputError, MethodError
from optaccept.tree._optimal_lp import optimal_lp
from optaccept.tree._shape import as_shape
from optaccept.tree._shaped_tree import enumerate_shaped, topk_tree

SHAPES = [(2,), (1, 1), (2, 1), (1, 2), (2, 2), [(0,), (1,), (0, 0)], [(0,), (1,), (2,), (0, 0), (1, 0), (0, 0, 0)]]


def _nodes_law_token(t, P, Q, out, pr):
    """Recursive rejection sampling on a shaped tree: try the children in index order
    (equal iid siblings each tried, q unchanged; swor: q without the rejected token)."""

    def walk(u, w):
        pre = t.prefix(u)
        p, q = P[pre], Q[pre]
        for c in t.child_nodes(u):
            x = t.tokens[c]
            acc = min(F(1), p[x] / q[x])
            if acc:
                walk(c, w * acc)
            w *= 1 - acc
            if w == 0:
                return
            r = np.array([max(a - b, F(0)) for a, b in zip(p, q)], dtype=object)
            if r.sum() == 0:
                return
            p = r / r.sum()
            if t.children == "swor":
                q = q.copy()
                q[x] = F(0)
                if q.sum() == 0:
                    break
                q = q / q.sum()
        for y, py in enumerate(p):
            out[pre + (y,)] += w * py

    walk((), pr)


def _nodes_law_target_only(t, P, Q, out, pr):
    def walk(u, w):
        pre = t.prefix(u)
        kids = {}
        for c in t.child_nodes(u):
            kids.setdefault(t.tokens[c], c)
        for y, py in enumerate(P[pre]):
            if y in kids:
                walk(kids[y], w * py)
            else:
                out[pre + (y,)] += w * py

    walk((), pr)


LAWS = {"token": _nodes_law_token, "target_only": _nodes_law_target_only, "traversal": traversal_law}


def _p_of(P, w):
    v = F(1)
    for i in range(len(w)):
        v *= P[w[:i]][w[i]]
    return v


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("children", ["swor", "iid", "topk"])
@pytest.mark.parametrize("verifier", ["token", "target_only", "traversal"])
def test_exactly_lossless_and_exact_value(shape, children, verifier):
    """The generated text, continued by the target, has the target's law exactly, and
    the mean accepted length of that law is accepted_tokens' value (Fractions)."""
    shp = as_shape(shape)
    L = shp.depth
    for seed in range(3):
        rng = np.random.default_rng([seed, L, shp.size])
        n = 2 if shp.size > 4 or L > 2 else 3
        P, Q = frac_table(n, L, rng, den=6), frac_table(n, L, rng, den=6)
        if seed == 2:
            P = Q  # p = q
        if children == "topk" and verifier != "target_only":
            with pytest.raises(MethodError, match="top-k"):
                tree.accepted_tokens(
                    P.__getitem__, Q.__getitem__, drafts=tree.TreeDraftLaw(shape, children), verifier=verifier
                )
            return
        out = defaultdict(F)
        for t, pr in enumerate_shaped(Q.__getitem__, shp, children):
            LAWS[verifier](t, P, Q, out, pr)
        assert sum(out.values()) == 1
        assert text_law_is_target(P, out, n, L) == []
        mean = sum(w * (len(s) - 1) for s, w in out.items())
        r = tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(shape, children), verifier=verifier)
        assert r.value == mean and r.exact and r.shape == shp and r.drafts == children


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)], ids=str)
def test_block_on_chain_shapes(shape):
    L = len(shape)
    rng = np.random.default_rng(L)
    P, Q = frac_table(2, L, rng), frac_table(2, L, rng)
    out = defaultdict(F)
    for t, pr in enumerate_shaped(Q.__getitem__, as_shape(shape), "iid"):
        block_law(t, P, Q, out, pr)
    assert text_law_is_target(P, out, 2, L) == []
    r = tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(shape, "iid"), verifier="block")
    assert r.value == sum(w * (len(s) - 1) for s, w in out.items())
    # the same law as k = 1 chain of the length= form
    assert (
        r.value
        == tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(length=L), verifier="block").value
    )


def test_target_only_closed_form_and_topk_optimal():
    """Target-only on a tree = Σ over its distinct non-root strings w of p(w); on a top-k
    tree no lossless verifier does better (the sequence LP over the one tree agrees)."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        shape = SHAPES[seed % len(SHAPES)]
        shp = as_shape(shape)
        n = 2 if shp.size > 4 else 3
        P, Q = frac_table(n, shp.depth, rng, den=7), frac_table(n, shp.depth, rng, den=7)
        t = topk_tree(Q.__getitem__, shp)
        closed = sum(_p_of(P, w) for w in t.nodes() if w)
        r = tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
        assert r.value == closed
        for v in ("optimal", "token_optimal"):
            assert tree.accepted_tokens(
                P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(shape, "topk"), verifier=v
            ).value == (closed)
        lp, cert, _ = optimal_lp([(t, 1.0)], lambda w, P=P: P[w], n, shp.depth)
        assert cert.ok and abs(lp - float(closed)) < 1e-7


def test_topk_ties_to_smaller_id_and_fewer_tokens():
    q = lambda u: [F(1, 4), F(1, 2), F(1, 4)]  # noqa: E731
    t = topk_tree(q, as_shape((2,)))
    assert [t.tokens[(j,)] for j in range(2)] == [1, 0]
    t = topk_tree(q, as_shape((5,)))  # more children than tokens: the vocabulary, once
    assert sorted(t.tokens.values()) == [0, 1, 2]


@pytest.mark.parametrize("children", ["swor", "iid"])
def test_orderings_and_reductions(children):
    """token ≤ token_optimal ≤ optimal, target_only ≤ token_optimal, traversal ≤ optimal
    on random instances; a chain shape is the length= form with k = 1; the shape (k,)
    with swor children is drafts='swor' with k chains of one token."""
    rng = np.random.default_rng(7)
    for i in range(10):
        shape = [(2,), (2, 1), (1, 2), (3,)][i % 4]
        shp = as_shape(shape)
        n = 3 if shp.depth == 1 else 2
        P = {w: v for w, v in frac_table(n, shp.depth, rng, den=5).items()}
        Q = {w: v for w, v in frac_table(n, shp.depth, rng, den=5).items()}
        val = {
            v: float(
                tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(shape, children), verifier=v).value
            )
            for v in ("token", "token_optimal", "optimal", "target_only", "traversal")
        }
        e = 1e-7
        assert val["token"] <= val["token_optimal"] + e <= val["optimal"] + 2 * e
        assert val["target_only"] <= val["token_optimal"] + e
        assert val["traversal"] <= val["optimal"] + e
        if shape == (3,) and children == "swor":
            old = tree.accepted_tokens(
                P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(length=1, k=3, children="swor"), verifier="token"
            )
            assert float(old.value) == val["token"]
    P, Q = frac_table(2, 2, rng), frac_table(2, 2, rng)
    for v in ("token", "traversal", "token_optimal", "target_only"):
        a = tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw((1, 1), children), verifier=v).value
        b = tree.accepted_tokens(P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(length=2, k=1), verifier=v).value
        assert a == b


def test_issue_contract_at_vocabulary_scale():
    """The contract of the issue on a 1,000-token synthetic pair: a top-k tree of index
    paths is exact (one tree, no sampling), and agrees with Monte Carlo runs of the
    target-only rule; the first generated token has the target's law."""
    target, draft = tree.synthetic_pair(1000, rng=3, scale=3.0)
    shape = [(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]
    r = tree.accepted_tokens(target, draft, tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
    assert r.method == "exact" and r.trees == 1 and 0 < r.value < 3
    lengths, texts = tree.simulate(
        target,
        draft,
        drafts=tree.TreeDraftLaw(shape, "topk"),
        verifier="target_only",
        samples=4000,
        rng=np.random.default_rng(0),
    )
    se = lengths.std() / np.sqrt(lengths.size)
    assert abs(lengths.mean() - r.value) < 5 * se
    p0 = np.asarray(target(()))
    top = int(np.argmax(p0))
    share = np.mean([t[0] == top for t in texts])
    assert abs(share - p0[top]) < 5 * np.sqrt(p0[top] * (1 - p0[top]) / len(texts))


@pytest.mark.parametrize(
    "children,verifier",
    [("swor", "token"), ("swor", "traversal"), ("iid", "token"), ("iid", "traversal"), ("swor", "target_only")],
)
def test_sampled_agrees_with_simulation(children, verifier):
    """Rao-Blackwellised estimate vs the step-by-step simulator (5σ), 200 tokens."""
    target, draft = tree.synthetic_pair(200, rng=1, scale=1.5)
    shape = (3, 2)
    rb = tree.accepted_tokens(
        target, draft, tree.TreeDraftLaw(shape, children), verifier=verifier, samples=300, rng=np.random.default_rng(1)
    )
    lengths, texts = tree.simulate(
        target,
        draft,
        drafts=tree.TreeDraftLaw(shape, children),
        verifier=verifier,
        samples=1500,
        rng=np.random.default_rng(2),
    )
    se = np.hypot(rb.std_err, lengths.std() / np.sqrt(lengths.size))
    assert abs(lengths.mean() - rb.value) < 5 * se
    # lossless: the first generated token's most likely value has the target's mass
    p0 = np.asarray(target(()))
    top = int(np.argmax(p0))
    share = np.mean([t[0] == top for t in texts])
    assert abs(share - p0[top]) < 5 * np.sqrt(p0[top] * (1 - p0[top]) / len(texts))


def test_shape_errors():
    p = lambda u: [0.5, 0.5]  # noqa: E731
    for bad, msg in [
        ([(0,), (2,)], "indexed 0..1"),
        ([(0,), (1, 0)], "no parent"),
        ([(0,), (0,)], "twice"),
        ((2, 0), "b_d >= 1"),
        ([], "at least one node"),
        ("3,2", "branching tuple"),
        ([(0,), (-1,)], ">= 0"),
    ]:
        with pytest.raises(InputError, match=msg):
            tree.accepted_tokens(p, p, drafts=tree.TreeDraftLaw(bad, "topk"), verifier="target_only")
    with pytest.raises(InputError, match="^children:"):
        tree.TreeDraftLaw((2,))  # a shape needs its children's law
    with pytest.raises(InputError, match="^children:"):
        tree.TreeDraftLaw((2,), "beam")
    with pytest.raises(InputError, match="^length: set by the shape"):
        tree.TreeDraftLaw((2,), "topk", length=2)
    with pytest.raises(MethodError, match="one chain"):
        tree.accepted_tokens(p, p, drafts=tree.TreeDraftLaw((2,), "swor"), verifier="block")
    assert as_shape((3, 2, 1)).size == 3 + 6 + 6
    assert as_shape((2, 2)).paths == ((0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1))


def test_iid_equal_siblings_stay_separate():
    """Two equal iid siblings are two nodes with their own subtrees: the token verifier
    tries both (the second with the residual), target-only follows the first."""
    P = lambda u: [F(1, 2), F(1, 2)]  # noqa: E731
    Q = lambda u: [F(1), F(0)] if u == () else [F(1, 2), F(1, 2)]  # noqa: E731
    trees = enumerate_shaped(Q, as_shape((2, 1)), "iid")
    assert len(trees) == 4 and all(t.tokens[(0,)] == t.tokens[(1,)] == 0 for t, _ in trees)
    t = trees[0][0]
    assert t.child_nodes(()) == [(0,), (1,)] and t.prefix((1,)) == (0,)
    # token: the first copy of 0 is accepted with min(1, (1/2)/1) = 1/2, then its child
    # (p = q below) with probability 1; after a rejection the residual (0, 1) gives the
    # second copy probability 0: 1/2·(1 + 1) in all
    assert tree._sampling.tree_value(t, P, Q, "token") == 1
    assert tree._sampling.tree_value(t, P, Q, "target_only") == F(1, 2) * (1 + F(1, 2))
