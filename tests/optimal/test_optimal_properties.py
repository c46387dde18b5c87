"""Properties of α* and claims of the papers, each against an independent computation."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_pair
from hypothesis import given, settings
from hypothesis import strategies as st

import optaccept as oa
from optaccept._lib.subsets import subset_sums
from optaccept.optimal._sorted import iid_prefix_float, ratio_order


def test_k1_is_one_minus_tv() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        p, q = random_pair(rng, nmax=9)
        expected = float(np.minimum(p, q).sum())
        for law in (oa.IID(q, 1), oa.WithoutReplacement(q, 1), oa.Greedy(q, 1)):
            assert abs(oa.optimal_acceptance(p, law).value - expected) <= 1e-12


def test_monotone_in_k_and_without_replacement_dominates() -> None:
    """α* is non-decreasing in k; α*_without ≥ α*_iid (docs/theory.md §2.2 claim)."""
    rng = np.random.default_rng(12)
    for _ in range(300):
        p, q = random_pair(rng, nmax=8)
        supp = int(np.count_nonzero(q))
        iid = [oa.optimal_acceptance(p, oa.IID(q, k), "subsets").value for k in range(1, 7)]
        assert all(b >= a - 1e-12 for a, b in zip(iid, iid[1:]))
        swor = [oa.optimal_acceptance(p, oa.WithoutReplacement(q, k), "subsets").value for k in range(1, supp + 1)]
        assert all(b >= a - 1e-12 for a, b in zip(swor, swor[1:]))
        for k in range(1, min(supp, 6) + 1):
            assert swor[k - 1] >= iid[k - 1] - 1e-12


@pytest.mark.parametrize("law_name", ["iid", "swor"])
def test_prefix_claim(law_name: str) -> None:
    """Hu et al.: a minimiser of (★) is a prefix of the tokens sorted by p/q (1000 instances).

    Both sides use the same D(set ⊆ S) table (the zeta transform of the exact set law),
    so the test isolates the claim: min over all 2^n subsets == min over the n+1 prefixes.
    """
    rng = np.random.default_rng(13 if law_name == "iid" else 14)
    counterexamples = []
    for _ in range(1000):
        p, q = random_pair(rng, nmax=8)
        supp = int(np.count_nonzero(q))
        k = int(rng.integers(2, 6))
        law = oa.IID(q, k) if law_name == "iid" else oa.WithoutReplacement(q, min(k, supp))
        vals = subset_sums(p) + 1.0 - law.all_subset_probs()
        order = ratio_order(p, q)
        prefix_masks = np.concatenate([[0], np.cumsum(1 << order)])
        gap = vals[prefix_masks].min() - vals.min()
        if gap > 1e-12:
            counterexamples.append((p, q, k, gap))
    assert not counterexamples, counterexamples[:3]


def test_bucketed_iid_equals_full_prefix_scan_at_scale() -> None:
    """The bucketed IID scan equals the plain argsort prefix scan on vocabulary-size inputs."""
    rng = np.random.default_rng(15)
    n = 50_257
    cases = [
        (rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))),
        (rng.dirichlet(np.full(n, 0.02)), rng.dirichlet(np.full(n, 0.02))),
    ]
    p0 = rng.dirichlet(np.full(n, 0.1))
    cases.append((p0, p0.copy()))  # p = q: every ratio ties
    q1 = np.round(rng.random(n) * 3) / 3 + 1e-3
    cases.append((np.round(rng.random(n) * 3) + 1e-3, q1))  # heavy ties in p/q
    pz = rng.dirichlet(np.ones(n))
    pz[: n // 2] = 0.0
    qz = rng.dirichlet(np.ones(n))
    qz[n // 3 :] = 0.0
    cases.append((pz, qz))  # zeros on both sides
    for p, q in cases:
        p, q = p / p.sum(), q / q.sum()
        for k in (2, 4, 8, 16):
            law = oa.IID(q, k)
            fast = oa.optimal_acceptance(p, law, "sorted")
            slow = iid_prefix_float(p, q, k, law, "reference")
            # cumulative sums over 50k floats in two summation orders: ~n·eps apart
            assert abs(fast.value - slow.value) <= 1e-10
            chk = oa.verify(p, law, fast)
            assert chk.value_gap <= 1e-10


def test_without_replacement_at_scale_k2_against_closed_form() -> None:
    """Vocabulary-scale without-replacement α* (k = 2): the quadrature-based sorted method
    against the prefix scan with the exact k = 2 formula Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i)."""
    rng = np.random.default_rng(16)
    n = 20_000
    for alpha in (1.0, 0.05):
        p = rng.dirichlet(np.full(n, alpha))
        q = rng.dirichlet(np.full(n, alpha))
        order = ratio_order(p, q)
        qo = q[order]
        a = qo / (1.0 - qo)
        Q = np.cumsum(qo)
        f = np.concatenate([[0.0], Q * np.cumsum(a) - np.cumsum(a * qo)])
        P = np.concatenate([[0.0], np.cumsum(p[order])])
        h = P + 1.0 - f
        h[0] = 1.0
        res = oa.optimal_acceptance(p, oa.WithoutReplacement(q, 2))
        assert abs(res.value - h.min()) <= 1e-9


# ---------------------------------------------------------------- exact arithmetic


def _fractions(weights: list[int]) -> list[Fraction]:
    tot = sum(weights)
    return [Fraction(w, tot) for w in weights]


def _brute_force(p: list[Fraction], subset_prob) -> Fraction:
    n = len(p)
    best = None
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            v = sum((p[i] for i in S), Fraction(0)) + 1 - subset_prob(set(S))
            best = v if best is None or v < best else best
    return best


weights = st.lists(st.integers(min_value=0, max_value=6), min_size=2, max_size=6).filter(lambda w: sum(w) > 0)


@settings(max_examples=150)
@given(pw=weights, qw=weights, k=st.integers(min_value=1, max_value=5))
def test_exact_iid_equals_brute_force(pw, qw, k) -> None:
    n = min(len(pw), len(qw))
    if sum(pw[:n]) == 0 or sum(qw[:n]) == 0:
        return
    p, q = _fractions(pw[:n]), _fractions(qw[:n])
    expected = _brute_force(p, lambda S: sum((q[i] for i in S), Fraction(0)) ** k)
    law = oa.IID(q, k)
    for m in ("sorted", "subsets", "auto"):
        res = oa.optimal_acceptance(p, law, m)
        assert isinstance(res.value, Fraction)
        assert res.value == expected
        assert oa.verify(p, law, res).value_gap == 0
    if k == 2:
        assert oa.optimal_acceptance(p, law, "closed_form").value == expected
        holds, witness = oa.two_draft_condition(p, q)
        assert holds == (expected == 1)
        if witness is not None:
            assert sum((p[i] for i in witness), Fraction(0)) < sum((q[i] for i in witness), Fraction(0)) ** 2


@settings(max_examples=100)
@given(pw=weights, qw=weights, k=st.integers(min_value=1, max_value=4))
def test_exact_greedy_and_swor_equal_brute_force(pw, qw, k) -> None:
    n = min(len(pw), len(qw))
    if sum(pw[:n]) == 0 or sum(qw[:n]) == 0:
        return
    p, q = _fractions(pw[:n]), _fractions(qw[:n])
    supp = sum(1 for v in q if v > 0)
    k = min(k, supp)
    g = oa.Greedy(q, k)
    T = set(g.top)
    rest = 1 - sum((q[i] for i in T), Fraction(0))
    expected = _brute_force(p, lambda S: sum((q[i] for i in S - T), Fraction(0)) / rest if T <= S else Fraction(0))
    assert oa.optimal_acceptance(p, g).value == expected
    assert oa.optimal_acceptance(p, g, "subsets").value == expected

    def swor_prob(S):  # ordered distinct tuples inside S
        tot = Fraction(0)
        for tup in itertools.permutations(sorted(S), k):
            pr, used = Fraction(1), Fraction(0)
            for x in tup:
                if q[x] == 0:
                    pr = Fraction(0)
                    break
                pr *= q[x] / (1 - used)
                used += q[x]
            tot += pr
        return tot

    w = oa.WithoutReplacement(q, k)
    assert oa.optimal_acceptance(p, w).value == _brute_force(p, swor_prob)


def test_two_draft_condition_float_matches_exhaustive_and_lp() -> None:
    """The O(n log n) condition agrees with the exhaustive check over all 2^n subsets
    (same tolerance), and with α* = 1 from the LP when the margin is clear."""
    rng = np.random.default_rng(17)
    for _ in range(300):
        p, q = random_pair(rng, nmax=8)
        holds, witness = oa.two_draft_condition(p, q, tol=1e-12)
        worst = (subset_sums(p) - subset_sums(q) ** 2).min()
        assert holds == (worst >= -1e-12), (p, q, worst)
        if not holds:
            S = list(witness)
            assert p[S].sum() - q[S].sum() ** 2 <= worst + 1e-12
        alpha = oa.optimal_acceptance(p, oa.IID(q, 2), "lp").value
        if worst >= 0:
            assert alpha >= 1 - 1e-9
        elif worst < -1e-8:
            assert alpha < 1 - 1e-9


def test_two_draft_plateau_exists() -> None:
    """α* = 1 with two drafts although p ≠ q (Khisti et al.)."""
    p = np.array([1 / 3, 1 / 3, 1 / 3])
    q = np.array([0.4, 0.35, 0.25])
    assert oa.two_draft_condition(p, q)[0]
    assert abs(oa.optimal_acceptance(p, oa.IID(q, 2)).value - 1.0) <= 1e-12
    assert np.minimum(p, q).sum() < 1
