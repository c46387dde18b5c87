"""The compiled passes of the i.i.d. prefix scan against its numpy form, bit for bit."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept.optimal import _sorted


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


pytestmark = pytest.mark.skipif(
    _sorted._scan_kernels() is None, reason="no compiled kernels (numba missing or OPTACCEPT_NO_JIT set)"
)


def _nasty(rng, n):
    """Random rows with zeros, p = q, ties, near-one-hot masses, far-apart ratios."""
    kind = int(rng.integers(0, 7))
    p = rng.dirichlet(np.full(n, float(rng.choice([0.05, 0.3, 1.0, 5.0]))))
    q = rng.dirichlet(np.full(n, float(rng.choice([0.05, 0.3, 1.0, 5.0]))))
    if kind == 1:
        p = q.copy()
    elif kind == 2:  # zeros in both, p = q = 0 included
        p[rng.random(n) < 0.4] = 0.0
        q[rng.random(n) < 0.4] = 0.0
    elif kind == 3:  # ties on a coarse grid
        p = rng.integers(0, 4, n).astype(float)
        q = rng.integers(0, 4, n).astype(float)
    elif kind == 4:  # near-one-hot
        q *= 1e-12
        q[0] = 1.0
        p *= 1e-12
        p[-1] = 1.0
    elif kind == 5:  # ratios over 600 orders of magnitude
        p *= 10.0 ** rng.uniform(-300, 0, n)
    if p.sum() == 0:
        p[0] = 1.0
    if q.sum() == 0:
        q[-1] = 1.0
    return p / p.sum(), q / q.sum()


def _exact_alpha(p, q, k) -> Fraction:
    """min over every prefix of the exact ratio order of P + 1 − Qᵏ (the floats as exact
    rationals; the sums renormalised exactly)."""
    fp = [Fraction(float(x)) for x in p]
    fq = [Fraction(float(x)) for x in q]
    tp, tq = sum(fp), sum(fq)
    order = sorted(range(len(fp)), key=lambda i: (fq[i] == 0, fp[i] / fq[i] if fq[i] else 0, i))
    best, P, Q = Fraction(1), Fraction(0), Fraction(0)
    for i in order:
        P += fp[i]
        Q += fq[i]
        best = min(best, P / tp + 1 - (Q / tq) ** k)
    return best


def _both(p, q, k, monkeypatch):
    compiled, c_subset = _sorted.iid_scan(p, q, k)
    c_subset = c_subset()
    with monkeypatch.context() as m:
        m.setenv("OPTACCEPT_NO_JIT", "1")
        plain, p_subset = _sorted.iid_scan(p, q, k)
        p_subset = p_subset()
    return compiled, np.sort(c_subset), plain, np.sort(p_subset)


def test_compiled_scan_equals_numpy_scan(monkeypatch):
    """Same value and same minimising prefix as the numpy passes (the per-bucket sums are
    those of ``np.bincount``, in the same order), on random and nasty rows: zeros, p = q,
    ties, near-one-hot, ratios over 600 orders of magnitude, subnormal masses."""
    rng = np.random.default_rng(35)
    for trial in range(150):
        n = int(rng.choice([1, 2, 3, 7, 64, 500, 5000]))
        k = int(rng.choice([1, 2, 3, 8, 64]))
        p, q = _nasty(rng, n)
        if trial % 10 == 9:  # subnormal masses in p and in q
            p = p.copy()
            q = q.copy()
            p[rng.random(n) < 0.3] = 5e-324
            q[rng.random(n) < 0.3] = 1e-310
            p /= p.sum()
            q /= q.sum()
        compiled, cs, plain, ps = _both(p, q, k, monkeypatch)
        assert compiled == plain, (trial, compiled, plain)
        assert np.array_equal(cs, ps), trial
        if n <= 64:
            exact = _exact_alpha(p, q, k)
            assert abs(Fraction(compiled) - exact) <= 1e-14 * exact + 1e-300, trial


def test_compiled_scan_negative_zero_and_p_equal_zero(monkeypatch):
    """−0.0 in p is the ratio 0 (not the largest bit pattern); p = 0 tokens share bucket 0."""
    p = np.array([-0.0, 0.0, 0.5, 0.5])
    q = np.array([0.4, 0.1, 0.25, 0.25])
    compiled, cs, plain, ps = _both(p, q, 2, monkeypatch)
    assert compiled == plain and np.array_equal(cs, ps)
    assert {0, 1} <= set(cs.tolist())


def test_public_solve_at_serving_size_equals_numpy(monkeypatch):
    """Through ``optimal_acceptance`` on a softmax row of 128,000 tokens, k = 8."""
    rng = np.random.default_rng(0)
    logits = rng.normal(0.0, 3.0, 128_000)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    lq = np.log(p) + rng.normal(0.0, 1.0, p.size)
    q = np.exp(lq - lq.max())
    q /= q.sum()
    law = oa.IID(q, 8)
    got = oa.optimal_acceptance(p, law)
    with monkeypatch.context() as m:
        m.setenv("OPTACCEPT_NO_JIT", "1")
        want = oa.optimal_acceptance(p, law)
    assert got.value == want.value
    assert got.subset == want.subset
