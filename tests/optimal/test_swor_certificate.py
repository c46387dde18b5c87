"""The proved bounds of ``verify`` for drafts without replacement at scale
(optaccept/optimal/_swor_certificate.py): the Theorem 2.7 lower bound and the rounded-up (★)
at a subset bracket the exact α* (Fractions over every tuple and all 2^n subsets, from
tests/extreme_cases.py, which shares no code with the library) on small instances, every k;
``verify`` accepts correct results and refuses moved values and wrong subsets on nasty rows;
the Gauss–Legendre rule's constant E_RULE holds exactly."""

from __future__ import annotations

import itertools
import time
from fractions import Fraction

import numpy as np
import pytest
from extreme_cases import alpha_star, exact, instances, tuple_law

import optaccept as oa
from optaccept.optimal import _swor_certificate as cert


def _exact_minimiser(p, q, k):
    """(α*, a minimising subset) by all 2^n subsets, exactly (written here, not the library's)."""
    px, law = exact(p), tuple_law("swor", exact(q), k)
    n = len(px)
    best, arg = None, None
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            s = set(S)
            val = sum((px[i] for i in S), Fraction(0)) + 1 - sum(v for t, v in law.items() if set(t) <= s)
            if best is None or val < best:
                best, arg = val, S
    return best, arg


def test_gauss_rule_constant_holds_exactly():
    """|Σ w_g T_i(x_g) − ∫T_i| ≤ E_RULE for i < 2m, the nodes and weights read as the exact
    rationals they are (Chebyshev T_i by its recurrence, ∫_{−1}^{1} T_i = 2/(1 − i²), i even)."""
    xs = [Fraction(float(x)) for x in cert._X]
    ws = [Fraction(float(w)) for w in cert._W]
    assert all(w > 0 for w in ws)
    worst = Fraction(0)
    prev = [Fraction(1)] * len(xs)
    cur = list(xs)
    for i in range(2 * cert.GAUSS_M):
        Ti = prev if i == 0 else cur
        integral = Fraction(0) if i % 2 else Fraction(2, 1 - i * i)
        worst = max(worst, abs(sum((w * t for w, t in zip(ws, Ti)), Fraction(0)) - integral))
        if i >= 1:
            prev, cur = cur, [2 * x * c - p for x, c, p in zip(xs, cur, prev)]
    assert worst <= Fraction(cert.E_RULE)
    assert worst > 0  # the constant covers a real rounding error, not an empty check


@pytest.mark.parametrize("n", [3, 5, 7])
def test_bounds_bracket_exact_alpha_star_every_k(n: int):
    """lower ≤ α* ≤ (★)-upper at the exact minimiser, and both within 1e-9 of α*, for every
    k from 1 to the support (random, tied and zero-holding rows)."""
    rng = np.random.default_rng(100 + n)
    rows = []
    for _ in range(3):
        rows.append((rng.dirichlet(np.ones(n) * 0.5), rng.dirichlet(np.ones(n) * 0.5)))
    q = rng.dirichlet(np.ones(n))
    rows.append((q.copy(), q))  # p = q: every ratio ties
    p = rng.dirichlet(np.ones(n))
    p[0] = 0.0
    q = rng.dirichlet(np.ones(n))
    q[-1] = 0.0
    rows.append((p / p.sum(), q / q.sum()))  # zeros in p and q
    for p, q in rows:
        supp = int(np.count_nonzero(q))
        for k in range(1, supp + 1):
            ref, S = _exact_minimiser(p, q, k)
            for value in (float(ref), float(ref) + 1e-6):
                lb = cert.swor_lower_bound(p, q, k, value, 1e-9)["lower_bound"]
                assert Fraction(lb) <= ref, (p, q, k, lb, ref)
                assert lb >= float(ref) - 1e-9, (p, q, k, lb, ref)
            ub = cert.swor_dual_upper(p, q, k, S)
            assert Fraction(ub) >= ref and ub <= float(ref) + 1e-9, (p, q, k, ub, ref)


def test_bounds_on_the_extreme_instances():
    """Near-one-hot, subnormal and zero-holding rows of tests/extreme_cases.py: the lower bound
    never exceeds the exact α*, and reaches it within 1e-9."""
    rng = np.random.default_rng(7)
    count = 0
    for _, p, q in instances(40, seed=11, nmax=6):
        supp = int(np.count_nonzero(q))
        k = int(rng.integers(1, supp + 1))
        ref = alpha_star(exact(p), tuple_law("swor", exact(q), k))
        lb = cert.swor_lower_bound(p, q, k, float(ref), 1e-9)["lower_bound"]
        assert Fraction(lb) <= ref and lb >= float(ref) - 1e-9, (p, q, k, lb, ref)
        count += 1
    assert count == 40


def _nasty_rows(n: int, rng: np.random.Generator):
    def sm(z):
        w = np.exp(z - z.max())
        return w / w.sum()

    z = rng.standard_t(3, size=n) * 2.0
    yield "student-t", sm(z), sm(0.8 * z + rng.normal(0, 1.5, size=n))
    g = rng.gumbel(size=n) * 1.5
    yield "gumbel", sm(g), sm(g + rng.normal(0, 1.0, size=n))
    q = rng.dirichlet(np.ones(n) * 0.3) * 1e-12
    q[3] = 1.0 - q.sum() + q[3]
    yield "near-one-hot q", rng.dirichlet(np.ones(n) * 0.3), q / q.sum()
    p = rng.dirichlet(np.ones(n) * 0.3)
    p[rng.choice(n, n // 3, replace=False)] = 0.0
    q = rng.dirichlet(np.ones(n) * 0.3)
    q[rng.choice(n, n // 3, replace=False)] = 0.0
    yield "zeros", p / p.sum(), q / q.sum()
    vals = rng.choice([1.0, 2.0, 3.0], size=n)
    yield "ties", vals / vals.sum(), np.roll(vals, 1) / vals.sum()
    p = np.zeros(n)
    q = np.zeros(n)
    p[: n // 2] = rng.dirichlet(np.ones(n // 2))
    q[n // 2 :] = rng.dirichlet(np.ones(n - n // 2))
    yield "disjoint", p, q


@pytest.mark.parametrize("k", [2, 3, 6])
def test_verify_certifies_and_refuses_on_nasty_rows(k: int):
    """n = 1,000 (beyond the 200,000-set flow witness): correct results are proved by both
    bounds; a value moved by 1e-7 either way, and a subset missing the minimiser's last token,
    are refused."""
    rng = np.random.default_rng(20 + k)
    for name, p, q in _nasty_rows(1000, rng):
        law = oa.WithoutReplacement(q, k)
        res = oa.optimal_acceptance(p, law)
        v = oa.verify(p, law, res)
        assert v.ok, (name, k, v.message)
        # beyond 200,000 draft sets the theorem (here: k ≥ 3, or k = 2 on a full support)
        assert "Theorem 2.7" in v.basis or "max flow" in v.basis
        assert "basis=" in repr(v)
        for d in (1e-7, -1e-7):
            bad = oa.AcceptanceResult(float(res.value) + d, "sorted", law, subset=res.subset)
            assert not oa.verify(p, law, bad).ok, (name, k, d)
        if res.subset:
            sub = sorted(res.subset, key=lambda i: (p[i] / q[i]) if q[i] > 0 else np.inf)[:-1]
            wrong = oa.AcceptanceResult(float(res.value), "sorted", law, subset=tuple(sub))
            star = float(p[list(sub)].sum()) + 1.0 - float(law.subset_prob(np.isin(np.arange(law.n), sub)))
            if abs(star - float(res.value)) > 1e-8:  # the subset is really wrong
                assert not oa.verify(p, law, wrong).ok, (name, k)


def test_moderate_size_certification_in_seconds():
    """n = 4,000, k = 5: certified in a few seconds, and the argmin prefix of the bound is the
    result's subset size."""
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(4000) * 0.2), rng.dirichlet(np.ones(4000) * 0.2)
    law = oa.WithoutReplacement(q, 5)
    res = oa.optimal_acceptance(p, law)
    oa.verify(p, law, res)  # compile
    t0 = time.perf_counter()
    v = oa.verify(p, law, res)
    assert time.perf_counter() - t0 < 10.0
    assert v.ok and v.lower_gap < 1e-10 and v.upper_gap < 1e-10
    assert v.details["argmin_prefix"] == len(res.subset)
