"""docs/theory.md Lemma 2.6 and Theorem 2.7: for drafts without replacement the marginal gain
of D(set ⊆ S) per unit of draft mass increases along any chain of sets, so the p/q-sorted
prefixes contain a minimiser of (★).  Checked here exactly (Fractions), independently of the
proof: the lemma's inequality on random instances, and the theorem against all 2ⁿ subsets."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np

import optaccept as oa


def _law(rng, n):
    w = rng.integers(0, 6, size=n)
    w[rng.integers(n)] += 1
    s = int(w.sum())
    return [F(int(v), s) for v in w]


def test_marginal_gain_per_unit_mass_increases_exactly():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        n = int(rng.integers(3, 7))
        q = _law(rng, n)
        support = [i for i in range(n) if q[i] > 0]
        if len(support) < 3:
            continue
        k = int(rng.integers(1, len(support) + 1))
        law = oa.WithoutReplacement(q, k)
        g = lambda S, law=law: law.subset_prob(sorted(S)) if S else F(0)  # noqa: E731
        x, y = (int(v) for v in rng.choice(support, size=2, replace=False))
        rest = [i for i in range(n) if i not in (x, y)]
        T = {i for i in rest if rng.random() < 0.5}
        lhs = (g(T | {x}) - g(T)) / q[x]
        rhs = (g(T | {x, y}) - g(T | {x})) / q[y]
        assert lhs <= rhs, (q, k, T, x, y, lhs, rhs)
        checked += 1
    assert checked > 300


def test_sorted_prefixes_attain_the_minimum_exactly():
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(2, 6))
        q, p = _law(rng, n), _law(rng, n)
        support = sum(1 for v in q if v > 0)
        k = int(rng.integers(1, support + 1))
        law = oa.WithoutReplacement(q, k)
        full = min(
            sum((p[i] for i in S), F(0)) + 1 - (law.subset_prob(list(S)) if S else F(0))
            for r in range(n + 1)
            for S in itertools.combinations(range(n), r)
        )
        # ascending p/q, q = 0 last, ties in a random order
        keys = [(F(10**9) if q[i] == 0 else p[i] / q[i], rng.random()) for i in range(n)]
        order = sorted(range(n), key=lambda i: keys[i])
        prefix = min(
            sum((p[i] for i in order[:j]), F(0)) + 1 - (law.subset_prob(order[:j]) if j else F(0)) for j in range(n + 1)
        )
        assert prefix == full
