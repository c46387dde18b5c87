"""Target-only verification (verifiers.TargetOnly, target_only_acceptance) against an
independent exact computation: the sequential rule itself, run in Fractions over every draft
tuple, gives the output law (= p, lossless) and the acceptance; plus the engines' toy values,
α ≤ α* for every law, and the sampler against the exact values at fixed seeds."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import optaccept as oa
from optaccept import verifiers
from optaccept.verifiers import TargetOnly
from optaccept.verifiers._target_only import target_only_acceptance


def _rule_law(p, tuples, probs):
    """The rule as engines run it, in exact arithmetic: (law of Y, P(accepted))."""
    n = len(p)
    out = [F(0)] * n
    acc = F(0)
    for t, w in zip(tuples, probs):
        seen = list(dict.fromkeys(t))
        stay, used = F(1), F(0)
        for a in seen:
            c = p[a] / (1 - used) if used < 1 else F(0)
            out[a] += w * stay * c
            acc += w * stay * c
            stay *= 1 - c
            used += p[a]
        rest = 1 - sum(p[a] for a in seen)
        for y in range(n):
            if y not in seen and rest > 0:
                out[y] += w * stay * p[y] / rest
    return out, acc


def _exact_laws(q, k):
    return [
        oa.IID(q, k),
        oa.WithoutReplacement(q, min(k, sum(1 for v in q if v))),
        oa.Greedy(q, min(k, sum(1 for v in q if v))),
    ]


@pytest.mark.parametrize("seed", range(6))
def test_exact_rule_is_lossless_and_matches(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    for _ in range(4):
        p = [F(int(v)) for v in rng.integers(0, 5, n)]
        q = [F(int(v)) for v in rng.integers(0, 5, n)]
        p[0] += 1
        q[-1] += 1
        p = [v / sum(p) for v in p]
        q = [v / sum(q) for v in q]
        for k in (1, 2, 3):
            for law in _exact_laws(q, k):
                tuples, probs = law.tuple_law()
                out, acc = _rule_law(p, tuples.tolist(), probs)
                assert out == p  # lossless for every draft tuple law
                assert target_only_acceptance(p, law) == acc  # exact, Fractions
                assert acc <= oa.optimal_acceptance(p, law, method="subsets").value


def test_engines_toy_values():
    p, q = [0.6, 0.2, 0.1, 0.1], [0.7, 0.2, 0.05, 0.05]
    assert abs(TargetOnly().acceptance(p, q, 1) - 0.47) < 1e-12  # one sampled draft: Σ q·p
    top1 = oa.Joint([(0,)], [1.0], n=4)  # the argmax draft, deterministic
    assert abs(target_only_acceptance(p, top1) - 0.60) < 1e-12
    # a deterministic draft set: target-only attains α* (no rule accepts more)
    top2 = oa.Joint([(0, 1)], [1.0], n=4)
    assert abs(target_only_acceptance(p, top2) - oa.optimal_acceptance(p, top2).value) < 1e-12


def test_every_law_closed_form_against_subset_probabilities():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        k = int(rng.integers(1, n + 1))
        for law in (
            oa.IID(q, k),
            oa.WithoutReplacement(q, k),
            oa.Greedy(q, k),
            oa.SpecHub(q),
            oa.Independent([q, rng.dirichlet(np.ones(n))]),
        ):
            ref = sum(p[y] * (1 - law.subset_prob([z for z in range(n) if z != y])) for y in range(n))
            got = target_only_acceptance(p, law)
            assert abs(got - ref) < 1e-12, (law, got, ref)
            assert got <= oa.optimal_acceptance(p, law).value + 1e-12


@pytest.mark.parametrize("drafts", ["iid", "swor", "greedy"])
def test_sampler_matches_exact_values(drafts):
    rng = np.random.default_rng(7)
    p = np.array([0.35, 0.25, 0.2, 0.1, 0.06, 0.04])
    q = np.array([0.1, 0.3, 0.05, 0.25, 0.2, 0.1])
    v = TargetOnly(drafts)
    size = 200_000
    y, accepted = v.sample(p, q, 3, rng, size)
    exact = v.acceptance(p, q, 3)
    assert abs(accepted.mean() - exact) < 5 * np.sqrt(exact * (1 - exact) / size)
    counts = np.bincount(y, minlength=p.size) / size
    assert np.all(np.abs(counts - p) < 5 * np.sqrt(p * (1 - p) / size))


def test_refusals():
    with pytest.raises(oa.InputError, match="drafts"):
        TargetOnly("spechub")  # a law that fixes k: the verifier builds its law from (q, k)
    with pytest.raises(oa.InputError, match="p:"):
        target_only_acceptance([0.5, 0.5], oa.IID([0.2, 0.3, 0.5], 2))
    assert "TargetOnly" in repr(TargetOnly("swor"))
    assert isinstance(verifiers.TargetOnly().drafts([0.5, 0.5], 2), oa.IID)
