"""RRS without replacement: the O(n log n) exact acceptance (the residual lemma of
optaccept/verifiers/_rrs.py) against the algorithm itself, run branch by branch in exact
Fractions, on random and extreme instances; the size limits; vocabulary scale."""

from __future__ import annotations

import time
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from extreme_cases import _rrs_exact, exact

import optaccept as oa
from optaccept import verifiers as V
from optaccept._errors import InputError, MethodError
from optaccept.verifiers._rrs import MAX_RRS_WORK

RRSW = V.RRSWithoutReplacement()


def _reference(p: np.ndarray, q: np.ndarray, k: int) -> float:
    return float(_rrs_exact(exact(p), exact(q), k, replace=False))


def _norm(v: np.ndarray) -> np.ndarray:
    return v / v.sum()


def _instances():
    """(label, p, q): random Dirichlet pairs and the extreme shapes, n ≤ 5."""
    rng = np.random.default_rng(20261126)
    for t in range(60):
        n = int(rng.integers(1, 6))
        p, q = rng.dirichlet(np.full(n, 0.4)), rng.dirichlet(np.full(n, 0.4))
        if t % 3 == 0 and n > 1:  # a zero of p
            p[int(rng.integers(n))] = 0.0
            p = _norm(p)
        if t % 5 == 0 and n > 2:  # a zero of q
            q[int(rng.integers(n))] = 0.0
            q = _norm(q)
        yield f"random {t}", p, q
    yield "p = q", np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.4, 0.3, 0.2, 0.1])
    yield "ties", np.array([0.25, 0.25, 0.25, 0.25]), np.array([0.4, 0.2, 0.2, 0.2])
    yield "equal ratios", np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2, 0.3, 0.4])[::-1].copy()
    yield "disjoint", np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.3, 0.7])
    yield "half overlap", np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.0, 0.4, 0.3, 0.3])
    yield "one-hot p", np.array([0.0, 1.0, 0.0, 0.0]), np.array([0.3, 0.2, 0.25, 0.25])
    yield "one-hot q", np.array([0.3, 0.2, 0.25, 0.25]), np.array([0.0, 1.0, 0.0, 0.0])
    for eps in (1e-12, 1e-15):
        yield f"near-one-hot {eps:g}", _norm(np.array([1 - eps, eps / 2, eps / 2])), np.array([0.2, 0.5, 0.3])
        yield f"near-one-hot both {eps:g}", _norm(np.array([1 - eps, eps, 0.0])), _norm(np.array([eps, 1 - eps, eps]))
    for tiny in (1e-200, 1e-310, 5e-324):
        yield f"subnormal q {tiny:g}", np.array([0.5, 0.3, 0.2, 0.0]), np.array([1 - 2 * tiny, tiny, tiny, 0.0])
        yield f"subnormal p {tiny:g}", np.array([tiny, 1.0, tiny]), np.array([0.5, 0.25, 0.25])


CASES = list(_instances())


@pytest.mark.parametrize(("label", "p", "q"), CASES, ids=[c[0] for c in CASES])
def test_matches_the_algorithm_in_fractions_for_every_k(label, p, q):
    supp = int(np.count_nonzero(q))
    for k in range(1, supp + 1):
        want = _reference(p, q, k)
        got = RRSW.acceptance(p, q, k)
        assert got == pytest.approx(want, abs=1e-12), (label, k)
        assert RRSW.acceptance(p, q, k, notion="rule") == got
    # k above the support of q: the draft law does not exist, refused with a typed error
    with pytest.raises(InputError, match="k"):
        RRSW.acceptance(p, q, supp + 1)


def test_known_values():
    # p = q: the first draft is always accepted
    p = np.array([0.4, 0.3, 0.2, 0.1])
    for k in range(1, 5):
        assert RRSW.acceptance(p, p, k) == 1.0
    # disjoint supports: nothing is ever accepted
    assert RRSW.acceptance([0.5, 0.5, 0, 0], [0, 0, 0.3, 0.7], 2) == 0.0
    # two tokens, k = 2: both drafted, so every output token is a draft whenever p ≪ q
    assert RRSW.acceptance([0.9, 0.1], [0.2, 0.8], 2) == pytest.approx(1.0, abs=1e-15)


def test_k2_closed_form_hand_computed():
    """A three-token instance worked out by hand, branch by branch."""
    p = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    q = [Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)]
    # step 1 accepts Σ min(p, q) = 1/6 + 1/3 + 1/6 = 2/3; only token 2 is rejected, with
    # probability 1/2 − 1/6 = 1/3, leaving r² = (1, 0, 0).  Step 2 drafts from q off token 2,
    # (1/3, 2/3, 0) and accepts min(r², q₂) = 1/3.
    want = Fraction(2, 3) + Fraction(1, 3) * Fraction(1, 3)
    assert RRSW.acceptance([float(x) for x in p], [float(x) for x in q], 2) == pytest.approx(float(want), abs=1e-15)
    assert _rrs_exact(p, q, 2, replace=False) == want


def _k2_by_residuals(p: np.ndarray, q: np.ndarray) -> float:
    """k = 2 by the definition in float64, vectorised over the first draft (O(n²))."""
    acc1 = np.minimum(p, q).sum()
    r2 = np.clip(p - q, 0, None)
    r2 = r2 / r2.sum()
    xs = np.flatnonzero(q > p)
    total = acc1
    for lo in range(0, xs.size, 256):
        x = xs[lo : lo + 256]
        q2 = np.tile(q, (x.size, 1))
        q2[np.arange(x.size), x] = 0.0
        q2 /= q2.sum(axis=1, keepdims=True)
        total += float((q[x] - p[x]) @ np.minimum(r2[None, :], q2).sum(axis=1))
    return total


@pytest.mark.parametrize("n", [50, 2000])
def test_k2_against_the_definition_at_larger_n(n):
    rng = np.random.default_rng(n)
    lp = rng.normal(0, 3, n)
    p = _norm(np.exp(lp - lp.max()))
    q = _norm(np.exp(lp + rng.normal(0, 1, n) - lp.max()))
    assert RRSW.acceptance(p, q, 2) == pytest.approx(_k2_by_residuals(p, q), abs=1e-12)


def test_k3_k4_against_float_enumeration_at_moderate_n():
    """Deeper levels against the old path-by-path float enumeration, written out here."""
    rng = np.random.default_rng(7)
    for _ in range(6):
        n = int(rng.integers(6, 9))
        p, q = rng.dirichlet(np.full(n, 0.6)), rng.dirichlet(np.full(n, 0.6))
        for k in (3, 4):
            assert RRSW.acceptance(p, q, k) == pytest.approx(_by_paths(p, q, k), abs=1e-12)


def _by_paths(p, q, k, r=None, drafted=(), m=1):
    r = p if r is None else r
    qm = q.copy()
    qm[list(drafted)] = 0.0
    qm /= qm.sum()
    acc = np.minimum(r, qm).sum()
    diff = np.clip(r - qm, 0, None)
    if m == k or diff.sum() == 0:
        return acc
    rnew = diff / diff.sum()
    rej = np.clip(qm - r, 0, None)
    return acc + sum(rej[x] * _by_paths(p, q, k, rnew, (*drafted, x), m + 1) for x in np.flatnonzero(rej > 0))


def _vocabulary_pair(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lp = rng.normal(0, 3, n)
    p = np.exp(lp - lp.max()).astype(np.float32)
    q = np.exp(lp + rng.normal(0, 1, n) - lp.max()).astype(np.float32)
    return (p / p.sum(dtype=np.float64)).astype(np.float64), (q / q.sum(dtype=np.float64)).astype(np.float64)


def test_k2_at_vocabulary_scale_is_fast_and_small():
    p, q = _vocabulary_pair(131_072)
    tracemalloc.start()
    t0 = time.perf_counter()
    a = RRSW.acceptance(p, q, 2)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 0.5 < a < 1
    assert a <= oa.optimal_acceptance(p, oa.WithoutReplacement(q, 2)).value + 1e-12
    assert peak < 100 * 2**20  # a few arrays of n floats (the O(n²) sum needed ~36 s)
    assert seconds < 10


@pytest.mark.parametrize("k", [3, 4, 8])
def test_refused_up_front_beyond_the_limit(k):
    p, q = _vocabulary_pair(40_000, seed=1)
    t0 = time.perf_counter()
    with pytest.raises(MethodError, match=r"k ≤ 2 .* top tokens") as err:
        RRSW.acceptance(p, q, k)
    assert time.perf_counter() - t0 < 5
    msg = str(err.value)
    assert "\n" not in msg and f"k = {k}" in msg and f"{MAX_RRS_WORK:,}" in msg


def test_many_paths_refused_at_small_n():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(200)), rng.dirichlet(np.ones(200))
    with pytest.raises(MethodError, match="rejection paths"):
        RRSW.acceptance(p, q, 5)


def test_subnormal_residual_masses_at_k3():
    """The last two levels divide by Z(t)·Z(t1); with subnormal masses that product underflows
    (it gave 0 instead of 1: the test suite's large extreme sweep found it).  The bounded
    factors are formed first there."""
    p = np.array([1.205e-320, 1.0, 4.017e-321])
    q = np.array([0.3170760854940163, 0.6829239145059838, 3e-323])
    p, q = p / p.sum(), q / q.sum()
    for k in (1, 2, 3):
        want = float(_rrs_exact(exact(p), exact(q), k, replace=False))
        assert RRSW.acceptance(p, q, k) == pytest.approx(want, abs=1e-12), k
