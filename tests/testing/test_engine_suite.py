"""optaccept.testing used the way an engine's own pytest suite would use it: hypothesis draws
(p, q, k), nasty cases included, and the engine's verifier must pass the assertions.  Here the
"engine" is the library's own verifiers (they must pass) and deliberately broken copies of them
(they must fail)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from optaccept import testing, verifiers
from optaccept.testing import strategies

STEPS = 20_000  # per assertion; a correct verifier fails one with probability ≤ 1e-6


@settings(max_examples=12)
@given(strategies.pairs_and_k(max_n=6, max_k=4))
def test_rrs_passes(pqk):
    p, q, k = pqk
    testing.assert_acceptance(testing.verifier_fn(verifiers.RRS()), p, q, k=k, declared="rrs", rng=0, samples=STEPS)


@settings(max_examples=12)
@given(strategies.pairs(max_n=6))
def test_speculative_sampling_passes(pq):
    p, q = pq
    testing.assert_acceptance(testing.verifier_fn(verifiers.SD()), p, q, k=1, declared="sd", rng=1, samples=STEPS)


@settings(max_examples=8)
@given(strategies.pairs_and_k(max_n=6, max_k=3))
def test_target_only_and_kseq_pass(pqk):
    p, q, k = pqk
    testing.assert_acceptance(
        testing.verifier_fn(verifiers.TargetOnly()), p, q, k=k, declared="target_only", rng=2, samples=STEPS
    )
    testing.assert_acceptance(testing.verifier_fn(verifiers.KSeq()), p, q, k=k, declared="kseq", rng=3, samples=STEPS)


@settings(max_examples=8)
@given(strategies.pairs_and_k(max_n=6, max_k=3))
def test_without_replacement_verifiers_pass(pqk):
    p, q, k = pqk
    assume(k <= np.count_nonzero(q))
    testing.assert_lossless(
        testing.verifier_fn(verifiers.RRSWithoutReplacement()), p, q, k=k, drafts="swor", rng=4, samples=STEPS
    )
    testing.assert_lossless(testing.verifier_fn(verifiers.HuGreedy()), p, q, k=k, drafts="greedy", rng=5, samples=STEPS)


# -- deliberately wrong verifiers (each bug is one an engine has shipped, docs/audit.md §5) --------

P = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
Q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])


def _sd_bug(kind):
    def fn(Pm, Qm, X, rng):
        p, q = Pm[0], Qm[0].copy()
        x = X[:, 0]
        if kind == "truncated_q":  # ratio against a top-3 q while drafts come from the full q
            q[np.argsort(-q)[3:]] = 0.0
            q /= q.sum()
        ratio = np.minimum(1.0, p[x] / np.where(q[x] > 0, q[x], np.inf))
        acc = rng.random(x.size) < ratio
        residual = p if kind == "correction_from_p" else np.maximum(p - Qm[0], 0.0)
        y = x.copy()
        y[~acc] = rng.choice(p.size, size=int((~acc).sum()), p=residual / residual.sum())
        return y

    return fn


@pytest.mark.parametrize("kind", ["truncated_q", "correction_from_p"])
def test_broken_speculative_sampling_fails(kind):
    with pytest.raises(AssertionError, match="not lossless"):
        testing.assert_lossless(_sd_bug(kind), P, Q, k=1, rng=0, samples=STEPS)


def test_lossless_but_weaker_rule_fails_its_declared_acceptance():
    fn = testing.verifier_fn(verifiers.NSS())  # ignores the drafts: lossless, accepts less than RRS
    testing.assert_lossless(fn, P, Q, k=2, rng=0, samples=STEPS)
    with pytest.raises(AssertionError, match="accepts with probability exactly"):
        testing.assert_acceptance(fn, P, Q, k=2, declared="rrs", rng=0, samples=STEPS)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rrs_with_unrenormalised_residual_fails(seed):
    """RRS whose residual after a rejection is (r − q)₊ without renormalising its mass: later
    drafts are accepted too rarely (on two tokens the bug can be invisible, so n = 6)."""
    rng0 = np.random.default_rng(seed)
    p, q = rng0.dirichlet(np.ones(6)), rng0.dirichlet(np.ones(6))

    def fn(Pm, Qm, X, rng):
        pp, qq = Pm[0], Qm[0]
        r = pp.copy()
        y = np.full(X.shape[0], -1)
        alive = np.ones(X.shape[0], dtype=bool)
        for m in range(X.shape[1]):
            idx = np.flatnonzero(alive)
            x = X[idx, m]
            ok = rng.random(idx.size) * qq[x] < r[x]
            y[idx[ok]] = x[ok]
            alive[idx[ok]] = False
            r = np.maximum(r - qq, 0.0) + 1e-12  # bug: not renormalised, so later ratios are too small
        idx = np.flatnonzero(alive)
        y[idx] = rng.choice(pp.size, size=idx.size, p=r / r.sum())
        return y

    with pytest.raises(AssertionError):
        testing.assert_acceptance(fn, p, q, k=3, declared="rrs", rng=0, samples=STEPS)
