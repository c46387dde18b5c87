"""Trees drawn without replacement at every node (branching below the root): the
token-level verifier must verify each distinct child once.

Regression test for a losslessness bug: a root token carried by two chains appeared
twice in the list of tries; after its first rejection its draft mass was 0, so the
second try accepted it with probability 1 (p = (0.1, 0.9), q = (0.5, 0.5), a 2 × 2
tree: the first generated token was 0 half of the time instead of 10 %).

The reference below is written independently of the library: its own enumeration of
the trees (sequential draws without replacement at every node), its own recursive
rejection sampling without replacement, in Fractions, giving the exact law of the
generated text.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from optaccept import tree
from optaccept.tree._draft import DraftTree


def _wor_orders(law, m):
    """Ordered draws of m distinct tokens without replacement from ``law`` (Fractions)."""
    support = [x for x, v in enumerate(law) if v != 0]
    for order in itertools.permutations(support, min(m, len(support))):
        pr, left = F(1), F(1)
        for x in order:
            pr *= law[x] / left
            left -= law[x]
        yield order, pr


def _trees(Q, branching, u=()):
    """Every tree with b_d children drawn without replacement at each node of depth d − 1,
    as (dict node -> ordered children, probability)."""
    if len(u) == len(branching):
        yield {}, F(1)
        return
    for order, pr in _wor_orders(Q(u), branching[len(u)]):
        subs = [list(_trees(Q, branching, u + (x,))) for x in order]
        for combo in itertools.product(*subs):
            kids = {u: list(order)}
            w = pr
            for d, pw in combo:
                kids.update(d)
                w *= pw
            yield kids, w


def _rrs_wor_text_law(kids, P, Q, u=()):
    """Law of the generated text (accepted tokens, then the emitted one) under recursive
    rejection sampling without replacement, each child tried once, from node u."""
    out = Counter()
    p, q = list(P(u)), list(Q(u))
    stay = F(1)
    for x in kids.get(u, []):
        acc = F(1) if p[x] >= q[x] else p[x] / q[x]
        if acc:
            for text, w in _rrs_wor_text_law(kids, P, Q, u + (x,)).items():
                out[(x,) + text] += stay * acc * w
        stay *= 1 - acc
        r = [max(a - b, F(0)) for a, b in zip(p, q)]
        s = sum(r)
        if stay == 0 or s == 0:
            stay = F(0)
            break
        p = [v / s for v in r]
        rest = sum(q) - q[x]
        if rest:  # (0 only after the last child: nothing is left to draft)
            q = [F(0) if y == x else v / rest for y, v in enumerate(q)]
    if stay:
        for y, py in enumerate(p):
            if py:
                out[(y,)] += stay * py
    return out


def _chains(kids, u=()):
    if u not in kids:
        return [u]
    return [c for x in kids[u] for c in _chains(kids, u + (x,))]


def _law(n, L, rng):
    t = {}
    for d in range(L + 1):
        for w in itertools.product(range(n), repeat=d):
            v = [F(int(a)) for a in rng.integers(0, 4, size=n)]
            if sum(v) == 0:
                v[int(rng.integers(n))] = F(1)
            t[w] = [a / sum(v) for a in v]
    return t.__getitem__


def _check(P, Q, branching, n):
    L = len(branching)
    law, expected = Counter(), F(0)
    for kids, w in _trees(Q, branching):
        t = DraftTree(tuple(_chains(kids)), L, "swor")
        text = _rrs_wor_text_law(kids, P, Q)
        mean = sum(pr * (len(z) - 1) for z, pr in text.items())
        # the library's exact per-tree value (Fractions in, Fraction out)
        assert tree._sampling.tree_value(t, P, Q, "token") == mean
        expected += w * mean
        for z, pr in text.items():
            law[z] += w * pr
    # lossless: the generated text, continued by the target, has the target's law
    for z in itertools.product(range(n), repeat=L + 1):
        got = F(0)
        for m in range(1, L + 2):
            if law[z[:m]]:
                cont = F(1)
                for i in range(m, L + 1):
                    cont *= P(z[:i])[z[i]]
                got += law[z[:m]] * cont
        want = F(1)
        for i in range(L + 1):
            want *= P(z[:i])[z[i]]
        assert got == want, (z, got, want)
    return expected


def test_reported_two_by_two_tree():
    P = lambda u: [F(1, 10), F(9, 10)]  # noqa: E731
    Q = lambda u: [F(1, 2), F(1, 2)]  # noqa: E731
    _check(P, Q, (2, 2), 2)
    # the chains of the tree ((0, 0), (0, 1), (1, 0), (1, 1)): the first generated token
    # is 0 with probability p(0) = 1/10 averaged over trees; on this one tree, token 0 is
    # tried once: accepted with min(1, p/q) = 1/5, else token 1 is accepted with probability 1
    t = DraftTree(((0, 0), (0, 1), (1, 0), (1, 1)), 2, "swor")
    assert t.candidates(()) == [0, 1]
    rng = np.random.default_rng(0)
    first = Counter(tree._simulate.simulate_step(t, P, Q, "token", rng)[0][:1] for _ in range(4000))
    assert abs(first[(0,)] / 4000 - 0.2) < 5 * np.sqrt(0.16 / 4000)


@pytest.mark.parametrize("branching,n,seed", [((2, 2), 3, 0), ((3, 2), 3, 1), ((1, 2), 3, 2), ((2, 1, 2), 2, 3)])
def test_random_trees_exact(branching, n, seed):
    rng = np.random.default_rng(seed)
    P, Q = _law(n, len(branching), rng), _law(n, len(branching), rng)
    _check(P, Q, branching, n)
