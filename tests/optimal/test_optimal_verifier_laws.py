"""Every conditional of the optimal verifier is a law, down to subnormal masses, and its
certificate fails when a conditional is not one.

Regression tests: drafts without replacement with α* = 1 and draft sets of tiny
probability gave 120 of 210 tuples an all-zero conditional (``respond`` then returned
token 0); a subnormal draft mass gave ``[inf, nan, inf]``; both with a certificate that
reported ok."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optaccept as oa

TOL = 1e-12


def _assert_law(c, what):
    c = np.asarray(c, dtype=np.float64)
    assert np.all(np.isfinite(c)), (what, c)
    assert c.min() >= 0.0, (what, c)
    assert abs(c.sum() - 1.0) <= TOL, (what, c.sum())


def _tuples(law, n):
    """Ordered tuples whose draft set the law lists (positive probability)."""
    sets = set(law.set_law().sets)
    for t in itertools.product(range(n), repeat=law.k):
        if tuple(sorted(set(t))) in sets:
            yield t


def test_without_replacement_alpha_one_tiny_sets():
    q = np.array([1.666666666666667e-14] * 7)
    q[3] = 0.9999999999999001
    p = np.array(
        [
            0.181949611162115,
            0.12502255962127704,
            0.10949047726851141,
            0.03499939421683829,
            0.12255403050124149,
            0.20508822423042244,
            0.22089570299959432,
        ]
    )
    ov = oa.optimal_verifier(p, oa.WithoutReplacement(q, 3))
    tuples = list(itertools.permutations(range(7), 3))
    assert len(tuples) == 210
    rows = {}
    for t in tuples:
        c = ov.conditional(t)
        _assert_law(c, t)
        rows[t] = c
    assert ov.certificate()["ok"]
    # respond draws from the conditional: only tokens of positive conditional mass
    d = np.array(tuples * 20)
    y = ov.respond(d, np.random.default_rng(0))
    assert all(rows[tuple(r)][v] > 0 for r, v in zip(d.tolist(), y.tolist()))


@pytest.mark.parametrize("law", ["swor", "independent"])
def test_subnormal_draft_mass(law):
    p = [0.6, 0.4 - 5e-324, 5e-324]
    q = [1e-323, 0.75, 0.25 - 1e-323]
    drafts = oa.WithoutReplacement(q, 1) if law == "swor" else oa.Independent([q, q])
    ov = oa.optimal_verifier(p, drafts)
    for t in _tuples(drafts, 3):
        _assert_law(ov.conditional(t), t)
    assert ov.certificate()["ok"]


def _nasty(rng, n):
    kind = rng.integers(4)
    v = rng.dirichlet(np.full(n, 0.5))
    if kind == 0:  # near-one-hot
        v = np.full(n, 1e-12 / (n - 1))
        v[rng.integers(n)] = 1 - 1e-12
    elif kind == 1:  # tiny and subnormal entries
        v[rng.integers(n, size=2)] = rng.choice([1e-300, 5e-324, 1e-320, 1e-14])
    elif kind == 2:  # a zero
        v[rng.integers(n)] = 0.0
    return v / v.sum()


def test_random_nasty_instances():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(3, 7))
        p, q = _nasty(rng, n), _nasty(rng, n)
        k = int(rng.integers(1, min(3, np.count_nonzero(q)) + 1))
        for drafts in (oa.WithoutReplacement(q, k), oa.Independent([q, _nasty(rng, n)])):
            ov = oa.optimal_verifier(p, drafts)
            for t in _tuples(drafts, n):
                _assert_law(ov.conditional(t), (p.tolist(), q.tolist(), t))
            cert = ov.certificate()
            assert cert["ok"], cert
            assert oa.verify(p, drafts, ov).ok


def test_certificate_fails_when_a_conditional_is_not_a_law():
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    drafts = oa.WithoutReplacement(q, 2)
    ov = oa.optimal_verifier(p, drafts)
    assert ov.certificate()["ok"] and oa.verify(p, drafts, ov).ok
    ov._u = ov._u.copy()
    ov._u[0] += 0.25  # the first set's conditional now sums to more than 1
    assert not ov.certificate()["ok"]
    assert not oa.verify(p, drafts, ov).ok
