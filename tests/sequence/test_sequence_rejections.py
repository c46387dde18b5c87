"""Theorems 1-2 of Yin et al.: exact expected rejections of speculative decoding."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optaccept._errors import InputError
from optaccept.sequence import (
    MarkovPair,
    PositionPair,
    acceleration,
    expected_rejections,
    simulate_rejections,
    unbiased_rejections,
)
from optaccept.sequence._rejections import rejection_profile, scaled_rule

SEED_CHAIN = {"states": 7, "horizon": 50}


def _paths_value(chain: MarkovPair) -> float:
    """Theorem 1's sum by enumerating every target path x_0..x_{T-1} (independent, slow)."""
    total = 0.0
    S, T = chain.states, chain.horizon
    for path in itertools.product(range(S), repeat=T):
        prob = chain.initial[path[0]]
        for t in range(1, T):
            prob *= chain.target[t - 1][path[t - 1], path[t]]
        if prob == 0:
            continue
        tv_sum = 0.0
        for t in range(T):
            prev = path[t]
            tv_sum += 0.5 * sum(abs(a - b) for a, b in zip(chain.target[t][prev], chain.draft[t][prev]))
        total += prob * tv_sum
    return total


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), states=st.integers(1, 3), horizon=st.integers(1, 5))
def test_theorem1_dp_equals_path_enumeration(seed, states, horizon):
    chain = MarkovPair.random(states=states, horizon=horizon, rng=seed, concentration=0.7)
    assert expected_rejections(chain) == pytest.approx(_paths_value(chain), rel=1e-10, abs=1e-12)


def test_theorem1_hand_example():
    # target uniform on 2 tokens, draft always token 0: TV = 1/2 at every step
    chain = MarkovPair([1.0, 0.0], np.full((2, 2), 0.5), [[1.0, 0.0], [1.0, 0.0]], horizon=8)
    assert expected_rejections(chain) == pytest.approx(4.0)
    assert acceleration(chain) == pytest.approx(2.0)
    same = MarkovPair([1.0, 0.0], np.eye(2), np.eye(2), horizon=3)
    assert expected_rejections(same) == 0.0 and acceleration(same) == float("inf")


def test_theorem1_matches_monte_carlo_within_5_sigma():
    chain = MarkovPair.random(**SEED_CHAIN, rng=np.random.default_rng(10))
    exact = expected_rejections(chain)
    sim = simulate_rejections(chain, samples=4000, rng=np.random.default_rng(11))
    assert sim.runs == 4000 and sim.counts.shape == (4000,)
    assert abs(sim.mean - exact) < 5 * sim.std_err
    assert abs(float(sim) - exact) < 5 * sim.std_err


def test_simulated_output_follows_the_target():
    """Speculative decoding is lossless: the token law at each step is the target marginal."""
    chain = MarkovPair.random(states=4, horizon=6, rng=np.random.default_rng(3))
    marg = chain.marginals()
    for rule in (None, scaled_rule(0.4)):
        sim = simulate_rejections(chain, samples=20000, rng=np.random.default_rng(4), acceptance=rule)
        for t in (0, 5):
            freq = np.bincount(sim.tokens[:, t], minlength=4) / sim.runs
            sd = np.sqrt(marg[t + 1] * (1 - marg[t + 1]) / sim.runs)
            assert np.all(np.abs(freq - marg[t + 1]) < 5 * sd + 1e-12)


def test_position_pair_theorem1_is_sum_of_tvs_and_monte_carlo():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(30), size=12)
    q = rng.dirichlet(np.ones(30), size=12)
    pair = PositionPair(p, q)
    exact = expected_rejections(pair)
    assert exact == pytest.approx(0.5 * np.abs(p - q).sum())
    np.testing.assert_allclose(rejection_profile(pair), 0.5 * np.abs(p - q).sum(1))
    sim = simulate_rejections(pair, samples=5000, rng=np.random.default_rng(6))
    assert abs(sim.mean - exact) < 5 * sim.std_err


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.floats(0.0, 1.0))
def test_theorem2_no_unbiased_rule_beats_speculative_decoding(seed, lam):
    chain = MarkovPair.random(states=4, horizon=5, rng=seed)
    sd = expected_rejections(chain)
    assert unbiased_rejections(chain, scaled_rule(lam)) >= sd - 1e-12
    # a random unbiased rule b = U * min(1, p/q), U uniform per entry
    u = np.random.default_rng(seed).random((4, 4))

    def rule(p, q):
        return u * np.where(q > 0, np.minimum(1, p / np.where(q > 0, q, 1)), 1)

    assert unbiased_rejections(chain, rule) >= sd - 1e-12
    assert unbiased_rejections(chain, scaled_rule(1.0)) == pytest.approx(sd, rel=1e-12)


def test_scaled_rule_exact_value():
    # rejection of b = lam*min(1,p/q) is 1 - lam*(1 - TV) per step
    chain = MarkovPair.random(states=5, horizon=7, rng=np.random.default_rng(2))
    lam = 0.3
    tv = rejection_profile(chain)
    assert unbiased_rejections(chain, scaled_rule(lam)) == pytest.approx(np.sum(1 - lam * (1 - tv)))
    sim = simulate_rejections(chain, samples=4000, rng=np.random.default_rng(8), acceptance=scaled_rule(lam))
    assert abs(sim.mean - np.sum(1 - lam * (1 - tv))) < 5 * sim.std_err


def test_biased_rule_is_refused():
    chain = MarkovPair.random(states=3, horizon=2, rng=0)
    with pytest.raises(InputError, match="acceptance"):
        unbiased_rejections(chain, lambda p, q: np.ones_like(p))
    with pytest.raises(InputError, match="acceptance"):
        unbiased_rejections(chain, lambda p, q: np.full(p.shape, 2.0))
    with pytest.raises(InputError, match="scale"):
        scaled_rule(1.5)


def test_bad_arguments():
    chain = MarkovPair.random(states=3, horizon=2, rng=0)
    with pytest.raises(InputError, match="chain"):
        expected_rejections(np.eye(3))
    with pytest.raises(InputError, match="^samples:"):
        simulate_rejections(chain, samples=0, rng=0)
