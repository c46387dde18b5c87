"""The first-draw bound of the without-replacement window search (docs/theory.md §2.2,
Lemma 2.4b): B_j ≥ D(S_j) against exact enumeration in Fractions, equality at k ≤ 2, and the
window search it prunes against the scan of every prefix on instances whose minimiser is
planted where a wrong bound would cut it away."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from optaccept._lib import stable as _stable
from optaccept.drafts import _swor
from optaccept.drafts._swor import window as _swor_window
from optaccept.optimal._sorted import ratio_order


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


pytestmark = pytest.mark.skipif(
    _swor._dp_kernel() is None, reason="no compiled kernels (numba missing or OPTACCEPT_NO_JIT set): no window search"
)


def _exact_prefix_d(q: np.ndarray, k: int) -> list[Fraction]:
    """P(first k draws without replacement ⊆ S_j) for every prefix, in exact arithmetic (the
    floats read as rationals, renormalised exactly), by enumerating ordered k-tuples."""
    fq = [Fraction(float(x)) for x in q]
    tot = sum(fq)
    fq = [x / tot for x in fq]
    n = len(fq)
    inside = [Fraction(0)] * (n + 1)
    for tup in itertools.permutations([i for i in range(n) if fq[i] > 0], k):
        pr, rem = Fraction(1), Fraction(1)
        for i in tup:
            pr *= fq[i] / rem
            rem -= fq[i]
        for j in range(max(tup) + 1, n + 1):
            inside[j] += pr
    return inside


def _lam(q: np.ndarray) -> np.ndarray:
    return np.clip(_stable.suffix_sums(q, accurate=True).astype(np.float64) / q.sum(), 0.0, 1.0)


def _small_q(rng: np.random.Generator, n: int, case: int) -> np.ndarray:
    q = rng.dirichlet(np.full(n, float(rng.choice([0.2, 1.0, 5.0]))))
    if case == 1:  # zeros
        q[rng.random(n) < 0.3] = 0.0
    elif case == 2:  # ties
        q = np.round(q * 4) + 1.0
    elif case == 3:  # subnormal masses next to normal ones
        q[rng.random(n) < 0.4] = 5e-324
    elif case == 4 and n > 1:  # one mass of exactly 1/2 (the largest the bound takes)
        at = int(rng.integers(0, n))
        q[at] = 0.0
        q = q / q.sum() * 0.5 if q.sum() > 0 else q
        q[at] = 0.5
    elif case == 5:  # uniform
        q = np.ones(n)
    if q.sum() == 0 or np.count_nonzero(q) == 0:
        q[0] = 1.0
    return q / q.sum()


@pytest.mark.parametrize("case", range(6))
def test_first_draw_bound_dominates_exact_probability(case):
    """B_j ≥ D(S_j) at every prefix, exact D by enumeration in Fractions; equality (up to the
    returned rounding allowance) for k = 1 and k = 2, where the bound is the closed form."""
    rng = np.random.default_rng(700 + case)
    for _ in range(12):
        n = int(rng.integers(1, 8))
        q = _small_q(rng, n, case)
        lam = _lam(q)
        for k in range(1, 6):
            if np.count_nonzero(q) < k:
                continue
            bound = _swor_window.first_draw_bound(q, lam, k)
            if float(q.max()) > 0.5:
                assert bound is None
                continue
            exact = _exact_prefix_d(q, k)
            for j in range(n + 1):
                assert Fraction(float(bound[j])) >= exact[j], (case, k, j, float(bound[j]), float(exact[j]))
                if k <= 2:
                    assert float(bound[j]) - float(exact[j]) <= 1e-13, (case, k, j)


def test_first_draw_bound_is_refused_above_one_half():
    """A mass above 1/2 (near-one-hot, 1 − 1e-12) leaves the bound out: the search falls back on
    q(S)ᵏ alone and still equals the scan of every prefix."""
    q = np.full(40, 1e-12 / 39)
    q[3] = 1.0 - 1e-12
    assert _swor_window.first_draw_bound(q, _lam(q), 4) is None
    P = np.concatenate([[0.0], np.cumsum(np.full(40, 1 / 40))])
    h = P + _swor.prefix_complements(q, 4)
    h[0] = 1.0
    value, j = _swor.best_prefix(P, q, 4)
    assert abs(value - h.min()) <= 1e-12 and abs(h[j] - h.min()) <= 1e-12


def _heavy_q(rng: np.random.Generator, n: int) -> np.ndarray:
    """Softmax of N(0, 3²) logits: a few heavy tokens (where q(S)ᵏ is loosest) in a long tail."""
    logits = rng.normal(0.0, 3.0, n)
    q = np.exp(logits - logits.max())
    return q / q.sum()


def _planted_instances(rng: np.random.Generator, n: int, k: int):
    """(P, q, h) with h = P + 1 − D(S_j) from the scan of every prefix: a base row whose p/q
    order is the ratio order, and copies where one prefix j* is made the minimiser by lowering
    P_{j*} (and the P_i before it as far as P must stay nondecreasing).  j* runs over the prefixes where a bound
    that is too high would bite first: the largest gap between h and each lower bound, the
    ends of the live range, the heaviest token, and random ones."""
    q = _heavy_q(rng, n)
    if rng.random() < 0.3:
        q[rng.random(n) < 0.2] = 0.0  # zeros
        q /= q.sum()
    p = q * np.exp(rng.normal(0.0, 1.0, n))
    p /= p.sum()
    order = ratio_order(p, q)
    p, q = p[order], q[order]
    P = np.concatenate([[0.0], np.cumsum(p)])
    comp = _swor.prefix_complements(q, k)
    h = P + comp
    h[0] = 1.0
    yield P, q, h
    lam = _lam(q)
    lower_q = P + _stable.one_minus_pow1m(lam, k)
    bound = _swor_window.first_draw_bound(q, lam, k)
    lower_b = P + 1.0 - bound if bound is not None else lower_q
    supp = np.concatenate([[0], np.cumsum(q > 0)])
    live = np.flatnonzero((supp >= k) & (lam > 0))
    live = live[(live > 0) & (live < n)]
    if live.size == 0:
        return
    targets = {
        int(live[np.argmax((h - lower_q)[live])]),
        int(live[np.argmax((h - lower_b)[live])]),
        int(live[0]),
        int(live[-1]),
        int(np.argmax(q)) + 1 if int(np.argmax(q)) + 1 in set(live.tolist()) else int(live[0]),
    }
    targets |= {int(x) for x in rng.choice(live, size=min(4, live.size), replace=False)}
    for j in sorted(targets):
        # lower P_{j*} by the depth, and P_i before it only as far as P must stay nondecreasing
        depth = float(h[j] - h.min()) + 1e-6
        P2 = P.copy()
        P2[: j + 1] = np.maximum(np.minimum(P[: j + 1], P[j] - depth), 0.0)
        h2 = P2 + comp
        h2[0] = 1.0
        yield P2, q, h2


@pytest.mark.parametrize("k", [3, 4, 8, 16])
def test_window_search_finds_planted_minimisers(k):
    """``best_prefix`` (both bounds, the window, the aggregation of the tokens before it) equals
    the minimum of the scan of every prefix (quadrature of each) to 1e-12, also when the
    minimiser is planted at the prefixes where a wrong bound would prune it."""
    rng = np.random.default_rng(900 + k)
    checked = 0
    for n in (k + 1, 60, 700, 4000):
        for P, q, h in _planted_instances(rng, n, k):
            value, j = _swor.best_prefix(P, q, k)
            assert abs(value - h.min()) <= 1e-12, (n, k, value, h.min())
            assert abs(h[j] - h.min()) <= 1e-12, (n, k, j, int(np.argmin(h)))
            checked += 1
    assert checked >= 12


def test_planted_instances_catch_an_overreaching_bound(monkeypatch):
    """The planted instances have teeth: with the bound shrunk by 1% (no longer ≥ D), the search
    misses a planted minimiser on some instance."""
    real = _swor_window.first_draw_bound

    def too_tight(q, lam, k, start=0):
        b = real(q, lam, k, start)
        return None if b is None else b * 0.99

    monkeypatch.setattr(_swor_window, "first_draw_bound", too_tight)
    rng = np.random.default_rng(904)
    missed = 0
    for n in (60, 700, 4000):
        for P, q, h in _planted_instances(rng, n, 4):
            try:
                value, _ = _swor.best_prefix(P, q, 4)
            except IndexError:  # the window came out empty: the true minimum was pruned too
                missed += 1
                continue
            missed += abs(value - h.min()) > 1e-12
    assert missed > 0


@pytest.mark.parametrize("factor", [0.0, 1e-3, 100.0])
def test_window_search_when_the_guess_of_the_minimum_misses(factor, monkeypatch):
    """The one-window path guesses the minimum from the bounds; a guess far too low (a second
    window, of the minimum found) or far too high (a wide window) gives the same answer."""
    monkeypatch.setattr(_swor_window, "_GAP_FACTOR", factor)
    rng = np.random.default_rng(950)
    for n, k in ((300, 3), (2000, 4), (4000, 8)):
        for P, q, h in _planted_instances(rng, n, k):
            value, j = _swor.best_prefix(P, q, k)
            assert abs(value - h.min()) <= 1e-12, (n, k, factor, value, h.min())
            assert abs(h[j] - h.min()) <= 1e-12


def test_first_draw_bound_from_a_start_prefix():
    """Prefixes 1 ≤ j < ``start`` get the trivial bound 1 (the empty prefix keeps D = 0); the
    others the same bound as from 0."""
    rng = np.random.default_rng(960)
    q = _heavy_q(rng, 3000)
    lam = _lam(q)
    full = _swor_window.first_draw_bound(q, lam, 5)
    for start in (0, 1, 1717, 3000, 3001):
        part = _swor_window.first_draw_bound(q, lam, 5, start)
        assert part[0] == 0.0 and np.all(part[1:start] == 1.0)
        assert np.array_equal(part[start:], full[start:])
