"""The fast paths of the sorted α* solvers against slow independent forms: the ratio order
by one value sort against the exact (exponent, mantissa) lexsort, and the compiled
without-replacement recursion (nodes as vector lanes) against the numpy cumulative-sum form
and against exact subset enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from optaccept._lib import stable as _stable
from optaccept._lib.stable import ratio_parts
from optaccept.drafts import _swor
from optaccept.drafts._swor import kernels as _swor_kernels
from optaccept.drafts._swor import quadrature as _swor_quadrature
from optaccept.optimal._sorted import ratio_order


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


def _exact_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    e, m = ratio_parts(p, q)
    return np.lexsort((np.arange(e.size), m, e))


def _nasty_pair(rng: np.random.Generator, n: int, case: int) -> tuple[np.ndarray, np.ndarray]:
    p, q = rng.random(n), rng.random(n)
    if case == 1:  # many ties, zeros on both sides
        p, q = np.round(p * 4) / 4, np.round(q * 4) / 4
    elif case == 2:  # q = 0 and p = 0 tokens
        q[rng.random(n) < 0.3] = 0.0
        p[rng.random(n) < 0.3] = 0.0
    elif case == 3:  # subnormal q: p/q overflows
        q[rng.random(n) < 0.2] = 5e-324
    elif case == 4:  # subnormal p: p/q underflows
        p[rng.random(n) < 0.2] = 1e-310
    elif case == 5:  # p = q (all ratios tie) with −0.0 entries
        p = q.copy()
        p[::3] = -0.0
    elif case == 6:  # ratios equal in their top bits but distinct: one value sort must re-sort them
        p = 1.0 + rng.integers(0, 8, n) * 2.0**-52
        q = np.ones(n)
    elif case == 7:  # near-one-hot
        q = np.full(n, 1e-12 / n)
        q[0] = 1.0 - 1e-12
    return p, q


@pytest.mark.parametrize("case", range(8))
def test_ratio_order_equals_the_exact_key_order(case):
    """``ratio_order`` sorts the bit pattern of p/q where it is normal, else the exact key:
    either way the order of ``ratio_parts`` with ties by index."""
    rng = np.random.default_rng(100 + case)
    for n in (1, 2, 7, 300, 5000):
        for _ in range(20 if n < 1000 else 2):
            p, q = _nasty_pair(rng, n, case)
            np.testing.assert_array_equal(ratio_order(p, q), _exact_order(p, q))


def _complements_by_enumeration(q: np.ndarray, k: int) -> np.ndarray:
    """1 − P(first k draws without replacement ⊆ S_j) for every prefix, by summing the
    probability of every ordered k-tuple of distinct tokens (q normalised)."""
    n = q.size
    q = q / q.sum()
    inside = np.zeros(n + 1)
    for tup in itertools.permutations(range(n), k):
        pr, rem = 1.0, 1.0
        for i in tup:
            if rem <= 0.0:
                pr = 0.0
                break
            pr *= q[i] / rem
            rem -= q[i]
        inside[max(tup) + 1 :] += pr  # the tuple lies in S_j once j exceeds its largest token
    return 1.0 - inside


@pytest.mark.parametrize("k", [3, 4, 5])
def test_compiled_complements_equal_enumeration(k):
    """Small supports with a heavy token, ties and a zero: the compiled quadrature equals
    the enumeration of ordered draws."""
    if _swor._dp_kernel() is None:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(k)
    for q in (rng.dirichlet(np.full(7, 0.3)), np.array([0.5, 0.1, 0.1, 0.1, 0.0, 0.1, 0.1]), np.full(6, 1 / 6)):
        got = _swor.prefix_complements(q, k)
        want = _complements_by_enumeration(q, k)
        live = np.cumsum(np.concatenate([[0], q > 0])) >= k
        assert np.max(np.abs(got - want)[live]) <= 1e-13


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 3e3])
@pytest.mark.parametrize("k", [1, 4, 9])
def test_lane_kernel_equals_numpy_form(scale, k):
    """Every branch of the compiled recursion (Taylor lanes, expm1, exp with 1/e carry,
    q·t beyond the carry limit) against the numpy cumulative-sum form, at nodes scaled so
    that q·t spans each branch."""
    kernels = _swor._dp_kernel()
    if kernels is None:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(int(scale * 10) + k)
    n = 2000
    q = rng.dirichlet(np.full(n, 0.2))
    q[rng.random(n) < 0.05] = 0.0
    q /= q.sum()
    lam = _stable.suffix_sums(q, accurate=True).astype(np.float64)
    lo = scale * n
    t = lo + 0.5 * lo * (_swor_quadrature._X21 + 1.0)
    start = np.zeros((t.size, k))
    start[:, 0] = 1.0
    out = np.empty((n + 1, t.size))
    kernels[0](q, lam, start, t, out)
    with np.errstate(over="ignore", under="ignore"):
        plain = _swor_quadrature._panel_dp_numpy(q, lam, k, t, float(t.min()))
    assert np.all(np.isfinite(out))
    x = q * t.max()
    assert (x > _swor_kernels._POLY_RATE).any() or scale < 1  # the per-node branches are reached
    assert np.max(np.abs(out - plain)) <= 1e-13 * max(1.0, float(np.abs(plain).max()))
    assert math.isclose(out[0, 0], math.exp(-lam[0] * t[0]), rel_tol=1e-15)
