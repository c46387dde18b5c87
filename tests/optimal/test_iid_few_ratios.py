"""The bucketed i.i.d. scan on laws whose ratio p/q takes few distinct values: candidate buckets
that hold no token (their bounds alone qualify them) once made the scan fail on an empty
argmin.  α* is checked against the minimum of (★) over every prefix of the ratio order, in
exact arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa


def _prefix_minimum(p: np.ndarray, q: np.ndarray, k: int) -> Fraction:
    """min over prefixes S of the ascending p/q order of p(S) + 1 − q(S)ᵏ, in Fractions."""
    order = sorted(range(p.size), key=lambda i: Fraction(p[i]) / Fraction(q[i]) if q[i] else Fraction(10**30))
    best, ps, qs = Fraction(1), Fraction(0), Fraction(0)
    for i in order:
        ps += Fraction(p[i])
        qs += Fraction(q[i])
        best = min(best, ps + 1 - qs**k)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_few_distinct_ratios(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 1500))
    values = rng.choice([1.0, 2.0, 3.0, 5.0][: int(rng.integers(2, 5))], size=n)
    q = values / values.sum()
    p = np.roll(q, int(rng.integers(1, n)))  # p/q on a handful of values
    if seed % 3 == 0:
        p = p.copy()
        p[rng.choice(n, size=n // 10, replace=False)] = 0.0
        p /= p.sum()
    for k in (1, 2, 3, 8, 40):
        want = float(_prefix_minimum(p, q, k))
        got = oa.optimal_acceptance(p, oa.IID(q, k))
        assert abs(float(got.value) - want) <= 1e-12, (seed, k)
        assert oa.verify(p, oa.IID(q, k), got).ok
        assert abs(oa.optimal_verifier(p, oa.IID(q, k)).acceptance - want) <= 1e-12


def test_candidate_buckets_without_tokens():
    """The instance that found it: three values, p the draft law shifted by one token."""
    q = np.random.default_rng(44).choice([1.0, 2.0, 3.0], size=1000)
    q /= q.sum()
    p = np.roll(q, 1)
    for k in (2, 3, 4):
        want = float(_prefix_minimum(p, q, k))
        assert abs(float(oa.optimal_acceptance(p, oa.IID(q, k)).value) - want) <= 1e-12, k
        assert abs(oa.optimal_verifier(p, oa.IID(q, k)).acceptance - want) <= 1e-12, k
