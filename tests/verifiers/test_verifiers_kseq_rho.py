"""K-SEQ's division factor ρ* against an independent root: bisection in exact Fractions on
h(ρ) = ρβ(ρ) − (1 − (1 − β(ρ))ᵏ), β(ρ) = Σ min(q, p/ρ), to 2^-80."""

from __future__ import annotations

from fractions import Fraction

import extreme_cases as E
import numpy as np
import pytest

from optaccept import verifiers as V
from optaccept.verifiers._kseq import kseq_rho


def _h(pe, qe, k, rho):
    beta = sum((min(b, a / rho) for a, b in zip(pe, qe, strict=True)), Fraction(0))
    return rho * beta - (1 - (1 - beta) ** k)


def _smallest_root(p, q, k, bits=80):
    """[lo, hi] around the smallest ρ ∈ [1, k] with h(ρ) ≥ 0 (h is non-decreasing)."""
    pe, qe = [Fraction(float(x)) for x in p], [Fraction(float(x)) for x in q]
    lo, hi = Fraction(1), Fraction(k)
    if _h(pe, qe, k, lo) >= 0:
        return lo, lo
    assert _h(pe, qe, k, hi) >= 0
    for _ in range(bits):
        mid = (lo + hi) / 2
        if _h(pe, qe, k, mid) >= 0:
            hi = mid
        else:
            lo = mid
    return lo, hi


def _dyadic(rng, n: int, alpha: float = 0.5) -> np.ndarray:
    """A random law whose float entries sum to exactly 1 (multiples of 2^-40): the root
    of h for the law as given is then the root for the law itself."""
    c = np.floor(rng.dirichlet(np.full(n, alpha)) * 2.0**40)
    c[int(np.argmax(c))] += 2.0**40 - c.sum()
    return c / 2.0**40


def _instances():
    rng = np.random.default_rng(11)
    for t in range(150):
        n = int(rng.integers(1, 7))
        k = int(rng.integers(1, 9))
        p, q = _dyadic(rng, n), _dyadic(rng, n)
        if t % 5 == 1:  # nearly equal: h is flat near ρ = 1
            d = np.zeros(n)
            if n > 1:
                i, j = rng.choice(n, 2, replace=False)
                e = min(p[i], 2.0 ** -int(rng.integers(10, 40)))
                d[i], d[j] = -e, e
            q = p + d
        if t % 5 == 2 and n > 1:
            i = int(rng.integers(n))
            p[(i + 1) % n] += p[i]
            p[i] = 0.0
        if t % 5 == 3 and n > 1:
            i = int(rng.integers(n))
            q[(i + 1) % n] += q[i]
            q[i] = 0.0
        yield f"random {t}", p, q, k
    for k in (1, 2, 4, 8):
        yield f"near-one-hot k={k}", np.array([1 - 2.0**-40, 2.0**-41, 2.0**-41]), np.array([0.25, 0.25, 0.5]), k
        yield f"ties k={k}", np.array([0.25] * 4), np.array([0.375, 0.125, 0.25, 0.25]), k
        yield f"tiny k={k}", np.array([0.5, 0.5 - 2.0**-53, 2.0**-53]), np.array([0.25, 0.25, 0.5]), k
        yield f"near-equal k={k}", np.array([0.5, 0.5 - 2.0**-50, 2.0**-50]), np.array([0.5, 0.5, 0.0]), k
    # subnormal and tiny masses (1e-80 … 5e-324) in p, q or both: ratios beyond the float range
    for label, p, q in E.instances(80, seed=10):
        if label.startswith("tiny"):
            for k in range(1, p.size + 1):
                yield f"{label} k={k}", p, q, k


CASES = list(_instances())


@pytest.mark.parametrize(("label", "p", "q", "k"), CASES, ids=[c[0] for c in CASES])
def test_rho_is_the_smallest_root(label, p, q, k):
    lo, hi = _smallest_root(p, q, k)
    rho = kseq_rho(p, q, k)
    assert 1.0 <= rho <= k
    assert float(lo) - 4e-15 * rho <= rho <= float(hi) + 4e-15 * rho, (label, rho, float(lo), float(hi))
    if lo == hi == 1:
        assert rho == 1.0


@pytest.mark.parametrize("k", [1, 2, 3, 4, 8, 20])
def test_equal_laws_and_disjoint_supports_give_exactly_one(k):
    p = np.array([0.4, 0.3, 0.2, 0.1])
    assert kseq_rho(p, p, k) == 1.0  # h(ρ) = (1 − 1/ρ)ᵏ ≥ 0: the smallest root is 1
    # disjoint: β ≡ 0, so h ≡ 0 and every ρ is a root; the smallest is 1
    assert kseq_rho(np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.3, 0.7]), k) == 1.0
    assert V.KSeq().acceptance(p, p, k) == 1.0
    assert V.KSeq().acceptance([0.5, 0.5, 0, 0], [0, 0, 0.3, 0.7], k) == 0.0


def test_sampler_is_lossless_at_rho_one():
    """At ρ* = 1 with p = q the residual is empty and every draft is accepted."""
    p = np.array([0.4, 0.3, 0.2, 0.1])
    y, acc = V.KSeq().sample(p, p, 4, rng=np.random.default_rng(0), size=20_000)
    assert acc.all()
    freq = np.bincount(y, minlength=4) / y.size
    assert np.abs(freq - p).max() < 0.02
