"""optaccept.testing: the assertions' decisions and false-alarm accounting, and the strategies'
promises (every kind appears, every vector obeys the sum rule)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optaccept import InputError, testing, verifiers
from optaccept._lib.validation import as_distribution
from optaccept.testing import strategies as st_oa

P = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
Q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])


def test_importing_optaccept_does_not_import_hypothesis():
    code = "import sys, optaccept, optaccept.testing; print('hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_binomial_tail_against_direct_sum():
    from fractions import Fraction
    from math import comb

    from optaccept.testing._assert import _binomial_two_sided

    N, a = 30, Fraction(3, 10)
    pmf = [comb(N, i) * a**i * (1 - a) ** (N - i) for i in range(N + 1)]
    for c in (0, 3, 9, 15, 30):
        exact = min(1, 2 * min(sum(pmf[: c + 1]), sum(pmf[c:])))
        assert _binomial_two_sided(c, N, 0.3) == pytest.approx(float(exact), rel=1e-9, abs=1e-300)


def test_acceptance_test_rejects_rarely_when_right_and_surely_when_wrong():
    """At a 5 % share the exact binomial test on Bernoulli(α) counts rejects at most 5 % of the
    time (here measured over 4,000 draws of the count), and always for a 2 % shift at N = 1e5."""
    from optaccept.testing._assert import _binomial_two_sided

    rng = np.random.default_rng(1)
    alpha, N = 0.824, 20_000
    counts = rng.binomial(N, alpha, size=4_000)
    rejected = np.mean([_binomial_two_sided(int(c), N, alpha) <= 0.05 for c in counts])
    assert rejected <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / 4_000)
    shifted = rng.binomial(100_000, alpha - 0.02, size=20)
    assert all(_binomial_two_sided(int(c), 100_000, alpha) <= 5e-7 for c in shifted)


def test_lossless_but_wrong_rule_fails_acceptance_only():
    fn = testing.verifier_fn(verifiers.TargetOnly())  # lossless, accepts Σ p·P(drafted) < RRS's
    rep = testing.assert_lossless(fn, P, Q, k=2, rng=3, samples=50_000)
    assert rep.lossless
    with pytest.raises(AssertionError, match="'rrs' accepts with probability exactly"):
        testing.assert_acceptance(fn, P, Q, k=2, declared="rrs", rng=3, samples=50_000)


def test_assertion_message_carries_the_report():
    def biased(Pm, Qm, X, rng):  # always emits the most likely token: not lossless
        return np.full(X.shape[0], int(np.argmax(Pm[0])))

    with pytest.raises(AssertionError, match="Audit report") as exc:
        testing.assert_lossless(biased, P, Q, k=2, rng=0, samples=2_000)
    assert "not lossless" in str(exc.value)


def test_refusals_name_the_argument():
    fn = testing.verifier_fn(verifiers.RRS())
    with pytest.raises(InputError, match="false_alarm"):
        testing.assert_lossless(fn, P, Q, false_alarm=0.0)
    with pytest.raises(InputError, match="declared"):
        testing.assert_acceptance(fn, P, Q, declared="bogus")
    with pytest.raises(InputError, match="rng"):
        testing.assert_lossless(fn, P, Q, rng=-1)
    with pytest.raises(InputError, match="verifier"):
        testing.verifier_fn(lambda *a: None)
    with pytest.raises(InputError, match="kinds"):
        st_oa.pairs(kinds=("nope",))
    with pytest.raises(InputError, match="min_n"):
        st_oa.pairs(min_n=1)


@settings(max_examples=300)
@given(st_oa.pairs_and_k(max_n=6))
def test_strategies_obey_the_sum_rule(pqk):
    p, q, k = pqk
    assert p.dtype == q.dtype == np.float64 and p.shape == q.shape
    assert (p >= 0).all() and (q >= 0).all() and p.sum() > 0 and q.sum() > 0
    np.testing.assert_allclose(as_distribution(p, "p"), p, rtol=0, atol=1e-15)
    np.testing.assert_allclose(as_distribution(q, "q"), q, rtol=0, atol=1e-15)
    assert 1 <= k <= p.size + 2


def _kind_of(p: np.ndarray, q: np.ndarray) -> set[str]:
    """The nasty features a pair shows, read from the vectors alone."""
    found = set()
    tiny = np.finfo(np.float64).tiny
    if ((p > 0) & (p < tiny)).any() or ((q > 0) & (q < tiny)).any():
        found.add("subnormal")
    if np.array_equal(p, q):
        found.add("equal")
    if not ((p > 0) & (q > 0)).any():
        found.add("disjoint")
    if max(p.max(), q.max()) == 1.0 - 1e-12 or abs(max(p.max(), q.max()) - (1 - 1e-12)) < 1e-15:
        found.add("one_hot")
    if (p == 0).any() or (q == 0).any():
        found.add("zeros")
    if len(set(p.tolist())) < p.size or len(set(q.tolist())) < q.size:
        found.add("ties")
    return found


def test_every_kind_is_drawn():
    seen: set[str] = set()

    @settings(max_examples=400, database=None)
    @given(st_oa.pairs(max_n=6))
    def collect(pq):
        seen.update(_kind_of(*pq))

    collect()
    assert seen >= {"subnormal", "equal", "disjoint", "one_hot", "zeros", "ties"}


@given(st_oa.distributions(n=5), st.integers(1, 3))
def test_distributions_have_positive_entries(p, k):
    assert p.size == 5 and (p > 0).all() and abs(p.sum() - 1) < 1e-12
