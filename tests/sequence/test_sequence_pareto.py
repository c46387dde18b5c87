"""Theorems 4-5 of Yin et al.: optimal rejection law, loss, and the Pareto front."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optaccept._errors import InputError
from optaccept.sequence import decoder_losses, optimal_rejection_distribution, pareto_front
from optaccept.sequence._pareto import output_loss, over_acceptance, rejection_probability


def _pq(seed, n):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(n) * 0.8), rng.dirichlet(np.ones(n) * 0.8), rng


def _lp_min_bias(p, q, b):
    """min over rejection laws P of TV(b q + R P, p), by linear programming (independent)."""
    n = p.size
    R = ((1 - b) * q).sum()
    d = p - b * q
    # variables [P (n), s (n)]: minimise sum s / 2, s >= |d - R P|
    c = np.concatenate([np.zeros(n), 0.5 * np.ones(n)])
    A = np.block([[-R * np.eye(n), -np.eye(n)], [R * np.eye(n), -np.eye(n)]])
    ub = np.concatenate([-d, d])
    eq = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
    out = linprog(c, A_ub=A, b_ub=ub, A_eq=eq, b_eq=[1.0], bounds=[(0, None)] * (2 * n), method="highs")
    assert out.status == 0
    return out.fun


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8))
def test_theorem4_loss_matches_linear_programme(seed, n):
    p, q, rng = _pq(seed, n)
    b = rng.random(n)
    law, loss = optimal_rejection_distribution(p, q, b)
    assert loss == pytest.approx(_lp_min_bias(p, q, b), abs=1e-9)
    assert law.sum() == pytest.approx(1.0) and law.min() >= 0
    assert output_loss(p, q, b, law) == pytest.approx(loss, abs=1e-12)
    # Theorem 4's characterisation: P = 0 where A < 0 and P <= A elsewhere
    R = ((1 - b) * q).sum()
    A = (p - b * q) / R
    assert np.all(law[A < 0] == 0)
    assert np.all(law <= np.maximum(A, 0) + 1e-12)
    # any other law is no better
    other = rng.dirichlet(np.ones(n))
    assert output_loss(p, q, b, other) >= loss - 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8))
def test_theorem5_front_identity_and_lower_bound(seed, n):
    p, q, rng = _pq(seed, n)
    tv = 0.5 * np.abs(p - q).sum()
    lo = np.where(q > 0, np.minimum(1, p / np.where(q > 0, q, 1)), 1)
    b = lo + rng.random(n) * (1 - lo)  # inside the front's range
    _, loss = optimal_rejection_distribution(p, q, b)
    assert rejection_probability(q, b) + loss == pytest.approx(tv, abs=1e-12)
    b_any = rng.random(n)  # any rule: on or above the front
    _, loss_any = optimal_rejection_distribution(p, q, b_any)
    assert rejection_probability(q, b_any) + loss_any >= tv - 1e-12


def test_pareto_front_default_points_run_between_the_ends():
    p, q, _ = _pq(1, 10)
    tv = 0.5 * np.abs(p - q).sum()
    front = pareto_front(p, q)
    assert front[0] == pytest.approx((tv, 0.0), abs=1e-12)
    assert front[-1] == pytest.approx((0.0, tv), abs=1e-12)
    for rej, loss in front:
        assert rej + loss == pytest.approx(tv, abs=1e-12)
    rej = [r for r, _ in front]
    assert all(a >= b for a, b in zip(rej, rej[1:]))
    custom = pareto_front(p, q, eps=[0.0, 0.01, 1.0])
    assert len(custom) == 3 and custom[2] == pytest.approx((0.0, tv), abs=1e-12)


def test_over_acceptance_optimal_law_is_the_residual_and_beats_uno():
    p, q, _ = _pq(2, 12)
    resid = np.clip(p - q, 0, None)
    resid /= resid.sum()
    eps = np.linspace(0, 0.2, 9)
    for e in eps[1:]:
        b = over_acceptance(p, q, e)
        np.testing.assert_allclose(b, np.minimum(1, (p + e) / q))
        law, loss = optimal_rejection_distribution(p, q, b)
        np.testing.assert_allclose(law, resid, atol=1e-12)
        assert loss <= output_loss(p, q, b, p) + 1e-12
    d = decoder_losses(p, q, eps)
    assert np.all(d.loss_opt <= d.loss_uno + 1e-12)
    assert d.loss_opt[0] == pytest.approx(0.0, abs=1e-12)  # eps = 0 is lossless SD
    assert np.any(d.loss_uno > d.loss_opt + 1e-3)
    for i, e in enumerate(eps):
        b = over_acceptance(p, q, e)
        assert d.loss_uno[i] == pytest.approx(output_loss(p, q, b, p), abs=1e-12)
        assert d.rejection[i] + d.loss_opt[i] == pytest.approx(d.tv, abs=1e-12)


def test_decoder_losses_average_over_positions():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(20), size=5)
    Q = rng.dirichlet(np.ones(20), size=5)
    eps = [0.0, 0.02, 0.1]
    both = decoder_losses(P, Q, eps)
    rows = [decoder_losses(P[i], Q[i], eps) for i in range(5)]
    np.testing.assert_allclose(both.loss_opt, np.mean([r.loss_opt for r in rows], axis=0))
    np.testing.assert_allclose(both.loss_uno, np.mean([r.loss_uno for r in rows], axis=0))
    np.testing.assert_allclose(both.rejection, np.mean([r.rejection for r in rows], axis=0))


def test_pareto_bad_input():
    p, q = [0.5, 0.5], [0.9, 0.1]
    with pytest.raises(InputError, match="b"):
        optimal_rejection_distribution(p, q, [0.5, 1.5])
    with pytest.raises(InputError, match="b"):
        optimal_rejection_distribution(p, q, [0.5, 0.5, 0.5])
    with pytest.raises(InputError, match="q"):
        pareto_front(p, [0.2, 0.3, 0.5])
    with pytest.raises(InputError, match="eps"):
        pareto_front(p, q, eps=[-0.1])
    with pytest.raises(InputError, match="p"):
        decoder_losses([0.7, 0.7], q, [0.1])
    with pytest.raises(InputError, match="q"):
        decoder_losses(np.ones((2, 3)) / 3, np.ones((3, 3)) / 3, [0.1])
