"""Theorem 3 and Proposition 1 of Yin et al.: batch speculative decoding."""

from __future__ import annotations

import bisect
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optaccept._errors import InputError
from optaccept.sequence import (
    MarkovPair,
    PositionPair,
    batch_expected_rejections,
    batch_improvement,
    expected_rejections,
)
from optaccept.sequence._batch import (
    batch_rejection_limit,
    batch_rejection_probability,
    batch_rejection_profile,
    bernoulli_batch_improvement,
    residual_chain,
    round_start_measure,
    simulate_batch_rejections,
    uniform_batch_improvement,
)

CONTS = ("single", "matching")


# ---------------------------------------------------------------- one token


def _rrs_reject_by_enumeration(p, q, M):
    """P(RRS rejects all M i.i.d. drafts) by enumerating every draft tuple (independent)."""
    n = len(p)
    total = 0.0
    for tup in itertools.product(range(n), repeat=M):
        w = float(np.prod([q[x] for x in tup]))
        if w == 0:
            continue
        res = list(p)
        reject = 1.0
        for x in tup:
            a = min(1.0, res[x] / q[x])
            reject *= 1 - a
            pos = [max(r - s, 0.0) for r, s in zip(res, q)]
            z = sum(pos)
            if z == 0:
                break
            res = [v / z for v in pos]
        total += w * reject
    return total


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), M=st.integers(1, 4))
def test_rrs_rejection_product_matches_enumeration(seed, n, M):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 0.7)
    q = rng.dirichlet(np.ones(n) * 0.7)
    assert batch_rejection_probability(p, q, M) == pytest.approx(_rrs_reject_by_enumeration(p, q, M), abs=1e-12)
    tv = 0.5 * np.abs(p - q).sum()
    assert batch_improvement(p, q, M) == pytest.approx(tv - _rrs_reject_by_enumeration(p, q, M), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(small=st.integers(1, 6), factor=st.integers(1, 6), M=st.integers(1, 12))
def test_uniform_closed_form(small, factor, M):
    big = small * factor
    q = np.full(big, 1 / big)
    p = np.zeros(big)
    p[:small] = 1 / small
    r = big / small
    assert batch_improvement(p, q, M) == pytest.approx(uniform_batch_improvement(r, M), abs=1e-12)
    assert uniform_batch_improvement(r, M) == pytest.approx((1 - 1 / r) - (1 - 1 / r) ** M)


@settings(max_examples=40, deadline=None)
@given(u=st.floats(0.0, 1.0), v=st.floats(0.0, 1.0), M=st.integers(1, 12))
def test_bernoulli_closed_form(u, v, M):
    q = [1 - u, u]
    p = [1 - v, v]
    assert batch_improvement(p, q, M) == pytest.approx(bernoulli_batch_improvement(u, v, M), abs=1e-12)
    if u >= v:  # the paper's case, formula written out independently
        assert bernoulli_batch_improvement(u, v, M) == pytest.approx((u - v) * (1 - u ** (M - 1)), abs=1e-15)


def test_residual_telescoping_identity():
    """p^{m+1}(O) = p^m(O) / TV(p^m, q) on O = {q = 0}, so prod TV = p(O) / p^{M+1}(O)."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(6))
    q = np.array([0.3, 0.0, 0.2, 0.25, 0.0, 0.25])  # no tiny entries: fast convergence
    off = q == 0
    for M in (1, 3, 10):
        res, tv = residual_chain(p, q, M)
        assert np.prod(tv[:M]) == pytest.approx(p[off].sum() / res[M][off].sum(), rel=1e-10)
    res, tv = residual_chain(p, q, 400)
    assert np.prod(tv[:400]) == pytest.approx(p[off].sum(), rel=1e-9)


def test_batch_improvement_bad_input():
    with pytest.raises(InputError, match="^k: must be at least 1"):
        batch_improvement([0.5, 0.5], [0.5, 0.5], 0)
    with pytest.raises(InputError, match="^k: must be an integer"):
        batch_improvement([0.5, 0.5], [0.5, 0.5], 2.5)
    with pytest.raises(InputError, match="q"):
        batch_improvement([0.5, 0.5], [0.2, 0.3, 0.5], 2)
    with pytest.raises(InputError, match="p"):
        batch_improvement([0.6, 0.5], [0.5, 0.5], 2)


# ---------------------------------------------------------------- sequences


@pytest.mark.parametrize("cont", CONTS)
def test_one_draft_is_theorem1(cont):
    chain = MarkovPair.random(states=5, horizon=12, rng=np.random.default_rng(1))
    assert batch_expected_rejections(chain, 1, continuation=cont) == pytest.approx(
        expected_rejections(chain), rel=1e-12
    )


@pytest.mark.parametrize("cont", CONTS)
def test_one_step_is_rrs(cont):
    chain = MarkovPair.random(states=4, horizon=1, rng=np.random.default_rng(2))
    want = sum(
        chain.initial[s] * batch_rejection_probability(chain.target[0][s], chain.draft[0][s], 3) for s in range(4)
    )
    assert batch_expected_rejections(chain, 3, continuation=cont) == pytest.approx(want)


def test_single_continuation_two_state_recursion():
    """Position pairs with the same laws at every step: round starts follow a 2-state chain."""
    rng = np.random.default_rng(3)
    p1, q1 = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    T, M = 9, 4
    pair = PositionPair(np.tile(p1, (T, 1)), np.tile(q1, (T, 1)))
    alpha = 0.5 * np.abs(p1 - q1).sum()
    beta = batch_rejection_probability(p1, q1, M)
    f, total = 1.0, 0.0
    for _ in range(T):
        total += f * beta + (1 - f) * alpha
        f = f * beta + (1 - f) * alpha
    assert batch_expected_rejections(pair, M) == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("M", [1, 3, 6])
def test_single_is_theorem1_minus_improvement_at_round_starts(M):
    chain = MarkovPair.random(states=4, horizon=9, rng=np.random.default_rng(12))
    f = round_start_measure(chain, M)
    np.testing.assert_allclose(f[0], chain.initial)
    marg = chain.marginals()
    assert np.all(f <= marg[:-1] + 1e-12)
    gain = sum(
        f[t, s] * batch_improvement(chain.target[t][s], chain.draft[t][s], M) for t in range(9) for s in range(4)
    )
    assert batch_expected_rejections(chain, M) == pytest.approx(expected_rejections(chain) - gain, rel=1e-12)
    if M == 1:
        np.testing.assert_allclose(f, marg[:-1])


def _literal_batch(chain, M, runs, rng, continuation):
    """Batch SD run literally: M full-lookahead draft sequences per round (pure Python)."""
    S, T = chain.states, chain.horizon
    qc = [[list(np.cumsum(chain.draft[t][s])) for s in range(S)] for t in range(T)]
    P = [[list(chain.target[t][s]) for s in range(S)] for t in range(T)]
    Q = [[list(chain.draft[t][s]) for s in range(S)] for t in range(T)]
    ic = list(np.cumsum(chain.initial))
    U = rng.random(runs * T * (3 * M + 4) + runs + 10)
    pos = 0

    def draw(cdf):
        nonlocal pos
        u = U[pos] * cdf[-1]
        pos += 1
        return min(bisect.bisect_right(cdf, u), len(cdf) - 1)

    out = np.zeros(runs)
    for r in range(runs):
        x = draw(ic)
        t, rej = 0, 0
        while t < T:
            t0 = t
            drafts = []
            for _ in range(M):  # full sequences from the current prefix
                seq, s = [], x
                for tt in range(t0, T):
                    s = draw(qc[tt][s])
                    seq.append(s)
                drafts.append(seq)
            cand = list(range(M))
            while t < T:
                p, q = P[t][x], Q[t][x]
                res, got = list(p), None
                for m in cand:
                    y = drafts[m][t - t0]
                    u = U[pos]
                    pos += 1
                    if u * q[y] < res[y]:
                        got = (m, y)
                        break
                    pos_part = [max(a - b, 0.0) for a, b in zip(res, q)]
                    z = sum(pos_part)
                    res = [v / z for v in pos_part] if z > 0 else res
                if got is None:
                    x = draw(list(np.cumsum(res)))
                    rej += 1
                    t += 1
                    break
                m, y = got
                if continuation == "single":
                    cand = [m]
                else:
                    cand = [j for j in cand if drafts[j][t - t0] == y]
                x = y
                t += 1
        out[r] = rej
    return out


@pytest.mark.parametrize("cont", CONTS)
def test_theorem3_exact_matches_literal_algorithm_within_5_sigma(cont):
    chain = MarkovPair.random(states=3, horizon=6, rng=np.random.default_rng(4), concentration=0.6)
    M = 3
    exact = batch_expected_rejections(chain, M, continuation=cont)
    counts = _literal_batch(chain, M, 6000, np.random.default_rng(5), cont)
    se = counts.std(ddof=1) / np.sqrt(counts.size)
    assert abs(counts.mean() - exact) < 5 * se


def test_the_two_continuations_differ_on_this_chain():
    """Guard: the literal-simulation test above can tell the two algorithms apart."""
    chain = MarkovPair.random(states=3, horizon=6, rng=np.random.default_rng(4), concentration=0.6)
    a = batch_expected_rejections(chain, 3, continuation="single")
    b = batch_expected_rejections(chain, 3, continuation="matching")
    assert a - b > 0.03  # about 5 standard errors of 6000 runs


@pytest.mark.parametrize(("cont", "M"), [("single", 4), ("single", 5), ("matching", 4)])
def test_theorem3_exact_matches_vectorised_simulation(cont, M):
    chain = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(10))
    exact = batch_expected_rejections(chain, M, continuation=cont)
    sim = simulate_batch_rejections(chain, M, samples=3000, rng=np.random.default_rng(M), continuation=cont)
    assert abs(sim.mean - exact) < 5 * sim.std_err


def test_batch_simulation_output_follows_the_target():
    chain = MarkovPair.random(states=4, horizon=5, rng=np.random.default_rng(6))
    marg = chain.marginals()
    for cont in CONTS:
        sim = simulate_batch_rejections(chain, 3, samples=20000, rng=np.random.default_rng(7), continuation=cont)
        for t in (0, 4):
            freq = np.bincount(sim.tokens[:, t], minlength=4) / sim.runs
            sd = np.sqrt(marg[t + 1] * (1 - marg[t + 1]) / sim.runs)
            assert np.all(np.abs(freq - marg[t + 1]) < 5 * sd + 1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), M=st.integers(1, 6))
def test_batch_never_worse_and_single_equals_theorem1_minus_improvements(seed, M):
    chain = MarkovPair.random(states=3, horizon=5, rng=seed, concentration=0.5)
    sd = expected_rejections(chain)
    for cont in CONTS:
        assert batch_expected_rejections(chain, M, continuation=cont) <= sd + 1e-12
    assert batch_expected_rejections(chain, M + 1) <= batch_expected_rejections(chain, M) + 1e-12
    prof = batch_rejection_profile(chain, M)
    assert prof.shape == (5,) and prof.sum() == pytest.approx(batch_expected_rejections(chain, M))


# ---------------------------------------------------------------- Proposition 1


def _bounded_chain(rng, S, T, zero_token=None):
    """Random chain whose draft entries are >= 1/(2S) (or 0 on ``zero_token``): fast residual
    convergence, so moderate M is close to the limit."""
    target = rng.dirichlet(np.ones(S), size=(T, S))
    draft = 0.5 * rng.dirichlet(np.ones(S), size=(T, S)) + 0.5 / S
    if zero_token is not None:
        draft[:, :, zero_token] = 0.0
        draft /= draft.sum(-1, keepdims=True)
    return MarkovPair(rng.dirichlet(np.ones(S)), target, draft)


def test_proposition1_single_limit_is_positive_and_approached():
    chain = _bounded_chain(np.random.default_rng(8), 5, 10)
    lim = batch_rejection_limit(chain)
    assert lim > 0.1
    values = [batch_expected_rejections(chain, M) for M in (1, 2, 8, 32, 128, 2048)]
    assert all(v >= lim - 1e-12 for v in values)
    assert np.all(np.diff(values) <= 1e-12)
    assert values[-1] == pytest.approx(lim, abs=1e-6)


def test_limit_single_full_support_is_rounds_of_plain_sd():
    """With full-support drafts and M = inf a round's first token is always accepted."""
    rng = np.random.default_rng(9)
    p1, q1 = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    T = 7
    pair = PositionPair(np.tile(p1, (T, 1)), np.tile(q1, (T, 1)))
    alpha = 0.5 * np.abs(p1 - q1).sum()
    f, total = 1.0, 0.0
    for _ in range(T):
        total += (1 - f) * alpha
        f = (1 - f) * alpha
    assert batch_rejection_limit(pair) == pytest.approx(total, rel=1e-12)


def test_limit_matching_is_target_mass_outside_draft_support():
    rng = np.random.default_rng(10)
    # Short horizon: the candidates matching a k-token prefix thin out like M * q^k, so
    # M must grow exponentially with T before the limit shows.
    S, T = 4, 3
    chain = _bounded_chain(rng, S, T, zero_token=3)  # the draft never proposes token 3
    target = chain.target
    marg = chain.marginals()
    want = sum(marg[t] @ target[t][:, 3] for t in range(T))
    lim = batch_rejection_limit(chain, continuation="matching")
    assert lim == pytest.approx(want, rel=1e-12)
    assert batch_expected_rejections(chain, 200, continuation="matching") == pytest.approx(want, abs=1e-3)
    full = MarkovPair.random(states=4, horizon=6, rng=rng)
    assert batch_rejection_limit(full, continuation="matching") == 0.0


def test_batch_bad_input():
    chain = MarkovPair.random(states=3, horizon=2, rng=0)
    with pytest.raises(InputError, match="^k: must be at least 1"):
        batch_expected_rejections(chain, 0)
    with pytest.raises(InputError, match="^k: must be at least 1"):
        simulate_batch_rejections(chain, k=-1, samples=5, rng=0)
    with pytest.raises(InputError, match="continuation"):
        batch_expected_rejections(chain, 2, continuation="tree")
    with pytest.raises(InputError, match="chain"):
        batch_rejection_limit("chain")
