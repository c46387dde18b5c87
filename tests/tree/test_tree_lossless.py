"""Exact losslessness (Fractions): the text each tree verifier generates — accepted
tokens, the emitted token, then the target's continuation — has exactly the target's
law on length + 1 tokens.  Also shows why traversal verification must visit the tree
in post-order: the deepest-leaf-first order is not lossless."""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction as F

import numpy as np
import pytest

from optaccept import tree
from optaccept.tree._verifiers import _TraversalState, block_rates, pos


def frac_table(n, L, rng, den=12):
    t = {}
    for d in range(L + 1):
        for w in itertools.product(range(n), repeat=d):
            c = rng.multinomial(den, np.ones(n) / n)
            t[w] = np.array([F(int(a), den) for a in c], dtype=object)
    return t


def _normalised(v):
    s = v.sum()
    return v / s if s != 0 else None


def token_law(t, P, Q, out, pr):
    """Output law of recursive rejection sampling on tree t, added to out with weight pr."""

    def walk(u, w):
        p, q = P[u], Q[u]
        for x in t.draws(u):
            acc = min(F(1), p[x] / q[x])
            if acc:
                walk(u + (x,), w * acc)
            w = w * (1 - acc)
            if w == 0:
                return
            p = _normalised(pos(p - q))
            if p is None:
                return
            if t.drafts == "swor":
                q = q.copy()
                q[x] = F(0)
                q = _normalised(q)
                if q is None:
                    break
        for y, py in enumerate(p):
            out[u + (y,)] += w * py

    walk((), pr)


def block_law(t, P, Q, out, pr):
    (chain,) = t.chains
    hs = [F(1)] + block_rates(chain, P.__getitem__, Q.__getitem__)
    ps = [F(1)]
    for i in range(1, len(chain) + 1):
        u = chain[: i - 1]
        ps.append(min(F(1), ps[-1] * P[u][chain[i - 1]] / Q[u][chain[i - 1]]))
    tail = F(1)
    for i in range(len(chain), -1, -1):
        w = pr * hs[i] * tail
        tail *= 1 - hs[i]
        v = chain[:i]
        r = P[v] if i == len(chain) else _normalised(pos(ps[i] * P[v] - Q[v]))
        if w == 0:
            continue
        for y, ry in enumerate(r):
            out[v + (y,)] += w * ry


def traversal_law(t, P, Q, out, pr, deepest=False):
    st = _TraversalState(t, P.__getitem__, Q.__getitem__)
    stay = F(1)
    while True:
        c = _deepest(st) if deepest else st.candidate()
        a = F(1) if c == () else st.a[c]
        for y, ry in enumerate(st.residual(c, P.__getitem__)):
            out[t.prefix(c) + (y,)] += pr * stay * a * ry
        stay *= 1 - a
        if stay == 0 or c == ():
            return
        st.reject(c)


def _deepest(st):
    live, stack = [()], [()]
    while stack:
        u = stack.pop()
        for c in st.kids.get(u, ()):
            live.append(c)
            stack.append(c)
    leaves = [u for u in live if not st.kids.get(u)]
    return max(leaves, key=lambda u: (len(u), [-x for x in u]))


def text_law_is_target(P, out, n, L):
    bad = []
    for z in itertools.product(range(n), repeat=L + 1):
        total, pz = F(0), F(1)
        for i in range(L + 1):
            pz *= P[z[:i]][z[i]]
        for j in range(1, L + 2):
            m = out.get(z[:j], F(0))
            for i in range(j, L + 1):
                m *= P[z[:i]][z[i]]
            total += m
        if total != pz:
            bad.append(z)
    return bad


CASES = [
    ("token", 1, "iid"),
    ("token", 3, "iid"),
    ("token", 2, "swor"),
    ("block", 1, "iid"),
    ("traversal", 1, "iid"),
    ("traversal", 2, "swor"),
    ("traversal", 3, "swor"),
    ("traversal", 2, "iid"),  # merged tree, M_s loses each rejected token (docs/trees.md §2b, Theorem 2.1)
    ("traversal", 3, "iid"),
]


@pytest.mark.parametrize("verifier,k,drafts", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_exactly_lossless(verifier, k, drafts, seed):
    rng = np.random.default_rng(seed)
    n, L = 3, 2
    P, Q = frac_table(n, L, rng), frac_table(n, L, rng)
    out = defaultdict(F)
    fn = {"token": token_law, "block": block_law, "traversal": traversal_law}[verifier]
    for t, pr in tree._draft.enumerate_trees(Q.__getitem__, L, k, drafts):
        fn(t, P, Q, out, pr)
    assert sum(out.values()) == 1
    assert text_law_is_target(P, out, n, L) == []
    # the law's mean accepted length is the exact value
    mean = sum(w * (len(s) - 1) for s, w in out.items())
    assert (
        mean
        == tree.accepted_tokens(
            P.__getitem__, Q.__getitem__, tree.TreeDraftLaw(length=L, k=k, children=drafts), verifier
        ).value
    )


def test_traversal_needs_post_order():
    """Kept counterexample: visiting the deepest live leaf first (instead of the first
    leaf in post-order) breaks losslessness, so the post-order is essential."""
    rng = np.random.default_rng(0)
    n, L = 3, 2
    P, Q = frac_table(n, L, rng), frac_table(n, L, rng)
    out = defaultdict(F)
    for t, pr in tree._draft.enumerate_trees(Q.__getitem__, L, 2, "swor"):
        traversal_law(t, P, Q, out, pr, deepest=True)
    assert sum(out.values()) == 1
    assert len(text_law_is_target(P, out, n, L)) > 0


class _WithReplacement(tree._draft.DraftTree):
    """A merged iid tree whose traversal keeps the rejected token in M_s (the naive port)."""

    distinct_siblings = False


def test_traversal_on_merged_iid_trees_needs_the_token_removed():
    """Kept counterexample: on the merged tree of iid chains, traversal verification that
    leaves M_s unchanged after a rejection (as if the siblings were separate i.i.d.
    draws) is not lossless; removing the rejected token, as for siblings drawn without
    replacement, is (test_exactly_lossless above)."""
    bad = 0
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        n, L = 3, 2
        P, Q = frac_table(n, L, rng, den=6), frac_table(n, L, rng, den=6)
        out = defaultdict(F)
        for t, pr in tree._draft.enumerate_trees(Q.__getitem__, L, 2, "iid"):
            traversal_law(_WithReplacement(t.chains, L, "iid"), P, Q, out, pr)
        bad += len(text_law_is_target(P, out, n, L)) > 0
    assert bad > 0


def _first_token_law(out, n):
    law = [F(0)] * n
    for s, w in out.items():
        law[s[0]] += w
    return law


def test_traversal_merged_iid_hand_counterexample():
    """L = 1, k = 2, p = (0, 1/3, 2/3), q = (2/3, 0, 1/3), worked by hand (docs/trees.md §2,
    proof of the merged-tree theorem): token 0 is always rejected; the naive port then
    accepts token 2 at rate min(1, (1/2)/(1/3)) = 1 and emits 2 with probability
    1/3 + 2/9 + (4/9)(1/2) = 7/9; with token 0 removed from M_s the rate is 1/2 and the
    first-token law is p."""
    n, L = 3, 1
    p = np.array([F(0), F(1, 3), F(2, 3)], dtype=object)
    q = np.array([F(2, 3), F(0), F(1, 3)], dtype=object)
    P = {(): p, **{(x,): p for x in range(n)}}
    Q = {(): q, **{(x,): q for x in range(n)}}
    for tree_cls, want in ((None, [F(0), F(1, 3), F(2, 3)]), (_WithReplacement, [F(0), F(2, 9), F(7, 9)])):
        out = defaultdict(F)
        for t, pr in tree._draft.enumerate_trees(Q.__getitem__, L, 2, "iid"):
            traversal_law(t if tree_cls is None else tree_cls(t.chains, L, "iid"), P, Q, out, pr)
        assert _first_token_law(out, n) == want


@pytest.mark.parametrize("n,L,k,seed", [(2, 4, 2, 3), (2, 3, 4, 4), (3, 2, 4, 5), (4, 2, 2, 6), (4, 2, 3, 7)])
def test_traversal_merged_iid_lossless_beyond_k3(n, L, k, seed):
    """The theorem of docs/trees.md §2 (traversal on merged iid trees is lossless for
    every k, L and vocabulary) on sizes beyond test_exactly_lossless: deeper chains, k = 4,
    vocabulary 4; laws with zeros (multinomial Fractions)."""
    rng = np.random.default_rng(seed)
    P, Q = frac_table(n, L, rng, den=7), frac_table(n, L, rng, den=7)
    out = defaultdict(F)
    for t, pr in tree._draft.enumerate_trees(Q.__getitem__, L, k, "iid"):
        traversal_law(t, P, Q, out, pr)
    assert sum(out.values()) == 1
    assert text_law_is_target(P, out, n, L) == []
