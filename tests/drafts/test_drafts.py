"""Draft laws: their set laws, subset probabilities, tuple laws and samplers."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_pair
from scipy import stats

import optaccept as oa


def _all_laws(q: np.ndarray, rng: np.random.Generator):
    supp = int(np.count_nonzero(q))
    k = int(rng.integers(1, 4))
    laws = [oa.IID(q, k), oa.WithoutReplacement(q, min(k, supp)), oa.Greedy(q, min(k, supp))]
    if supp >= 2:
        laws.append(oa.SpecHub(q))
    laws.append(oa.Independent([q, random_pair(rng, n=q.size)[1]]))
    return laws


def test_set_law_consistency() -> None:
    """Set law sums to 1, agrees with the tuple law, and its zeta transform equals subset_prob."""
    rng = np.random.default_rng(21)
    for _ in range(150):
        _, q = random_pair(rng, nmax=6)
        for law in _all_laws(q, rng):
            sl = law.set_law()
            assert abs(float(np.sum(sl.probs)) - 1.0) <= 1e-12
            tuples, probs = law.tuple_law()
            agg: dict = {}
            for row, pr in zip(tuples.tolist(), probs):
                key = tuple(sorted(set(row)))
                agg[key] = agg.get(key, 0.0) + pr
            for s, pr in zip(sl.sets, sl.probs):
                assert abs(agg.get(s, 0.0) - pr) <= 1e-12
            table = law.all_subset_probs()
            for mask in rng.integers(0, 1 << law.n, size=10).tolist():
                S = [i for i in range(law.n) if mask >> i & 1]
                by_formula = law.subset_prob(S)
                by_enum = sum(pr for s, pr in zip(sl.sets, sl.probs) if set(s) <= set(S))
                assert abs(by_formula - by_enum) <= 1e-12
                assert abs(table[mask] - by_enum) <= 1e-12


def test_without_replacement_subset_prob_general_k_matches_enumeration() -> None:
    rng = np.random.default_rng(22)
    for _ in range(100):
        _, q = random_pair(rng, nmax=7)
        supp = int(np.count_nonzero(q))
        for k in range(1, supp + 1):
            law = oa.WithoutReplacement(q, k)
            sl = law.set_law()
            S = np.flatnonzero(rng.random(q.size) < 0.6).tolist()
            by_enum = sum(pr for s, pr in zip(sl.sets, sl.probs) if set(s) <= set(S))
            assert abs(law.subset_prob(S) - by_enum) <= 1e-12


@pytest.mark.parametrize(
    "make",
    [
        lambda q: oa.IID(q, 3),
        lambda q: oa.WithoutReplacement(q, 3),
        lambda q: oa.Greedy(q, 3),
        lambda q: oa.SpecHub(q),
        lambda q: oa.Independent([q, q[::-1]]),
    ],
)
def test_sampler_matches_tuple_law(make) -> None:
    """Chi-square test of 200,000 sampled tuples against the exact tuple law (seed 0);
    the false-alarm rate of each test is 1e-4."""
    q = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
    law = make(q)
    tuples, probs = law.tuple_law()
    draws = law.sample(np.random.default_rng(0), 200_000)
    assert draws.shape == (200_000, law.k)
    index = {tuple(r): i for i, r in enumerate(tuples.tolist())}
    codes = np.array([index.get(tuple(r), -1) for r in draws.tolist()])
    assert (codes >= 0).all(), "sampled a tuple of probability zero"
    counts = np.bincount(codes, minlength=len(probs))
    expected = np.asarray(probs) * draws.shape[0]
    big = expected >= 5
    chi2 = (((counts - expected) ** 2) / expected)[big].sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-4, df=int(big.sum()) - 1)


def test_laws_are_immutable_and_do_not_touch_caller_arrays() -> None:
    q = np.array([0.5, 0.3, 0.2], dtype=np.float32)
    before = q.copy()
    law = oa.IID(q, 2)
    with pytest.raises(AttributeError):
        law.k = 3
    with pytest.raises(ValueError):
        law.q[0] = 1.0
    assert np.array_equal(q, before)
    p = np.array([0.2, 0.3, 0.5], dtype=np.float32)
    oa.optimal_acceptance(p, law)
    assert p.dtype == np.float32 and np.array_equal(p, np.array([0.2, 0.3, 0.5], dtype=np.float32))


def test_greedy_top_ties_by_index_and_spechub_anchor() -> None:
    q = np.array([0.3, 0.3, 0.2, 0.2])
    assert oa.Greedy(q, 3).top == (0, 1)
    assert oa.SpecHub(q).anchor == 0
    qx = [Fraction(1, 4)] * 4
    assert oa.Greedy(qx, 3).top == (0, 1)


def test_exact_set_law_matches_float() -> None:
    qx = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    qf = np.array([float(v) for v in qx])
    for make in (lambda q: oa.IID(q, 2), lambda q: oa.WithoutReplacement(q, 2), lambda q: oa.Greedy(q, 2)):
        ex, fl = make(qx).set_law(), make(qf).set_law()
        assert ex.sets == fl.sets
        assert all(isinstance(v, Fraction) for v in ex.probs)
        np.testing.assert_allclose([float(v) for v in ex.probs], fl.probs, atol=1e-15)
    # an exact hand computation: two draws without replacement from (1/2, 1/3, 1/6)
    sl = oa.WithoutReplacement(qx, 2).set_law()
    want = {
        (0, 1): Fraction(1, 2) * Fraction(2, 3) + Fraction(1, 3) * Fraction(3, 4),
        (0, 2): Fraction(1, 2) * Fraction(1, 3) + Fraction(1, 6) * Fraction(3, 5),
        (1, 2): Fraction(1, 3) * Fraction(1, 4) + Fraction(1, 6) * Fraction(2, 5),
    }
    assert dict(zip(sl.sets, sl.probs)) == want


def test_iid_set_law_against_tuple_enumeration() -> None:
    q = np.array([0.1, 0.2, 0.3, 0.4])
    sl = oa.IID(q, 3).set_law()
    agg: dict = {}
    for tup in itertools.product(range(4), repeat=3):
        key = tuple(sorted(set(tup)))
        agg[key] = agg.get(key, 0.0) + float(np.prod(q[list(tup)]))
    for s, pr in zip(sl.sets, sl.probs):
        assert abs(agg[s] - pr) <= 1e-15


def test_law_registry_builds_and_refuses_by_name():
    """One registry of draft-law names: every name builds its class; a name outside the
    caller's allowed set is refused with one line naming the argument."""
    from optaccept.drafts import LAWS, law_from_name

    q = np.array([0.5, 0.3, 0.2])
    for name, cls in LAWS.items():
        law = law_from_name(name, q, 2)
        assert isinstance(law, cls) and law.k == 2
    with pytest.raises(oa.InputError, match=r"^law: must be one of 'iid' or 'swor'; got 'greedy'$"):
        law_from_name("greedy", q, 2, allowed=("iid", "swor"), arg="law")
    with pytest.raises(oa.InputError, match="drafts: must be one of"):
        law_from_name(3, q, 2)
