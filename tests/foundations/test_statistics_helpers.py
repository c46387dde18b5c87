"""optaccept._lib.statistics: every standard error against its hand formula computed in exact
fractions on small data (a float square root last), the clustered one against a direct loop over
the clusters, the jackknife against its classic identity, and the thresholds by what they promise
(the bound they invert equals the false-alarm rate; a simulation stays within it)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from optaccept._lib.statistics import (
    bernoulli_std_err,
    cluster_means,
    clustered_mean,
    jackknife_std_err,
    ks_threshold,
    ks_uniform,
    l1_threshold,
    mean_std_err,
    moment_std_err,
    normal_quantile,
    paired_difference,
    ratio_mean,
    std_err,
    within,
)

DATA = [3, 1, 4, 1, 5, 9, 2, 6]
GROUPS = [0, 0, 1, 1, 1, 2, 3, 3]


def _exact_std_err(xs) -> float:
    xs = [Fraction(x) for x in xs]
    n = len(xs)
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return math.sqrt(var / n)


def _exact_clustered(xs, groups) -> tuple[Fraction, float]:
    xs = [Fraction(x) for x in xs]
    n = len(xs)
    m = sum(xs) / n
    sums: dict = {}
    for x, g in zip(xs, groups, strict=True):
        sums[g] = sums.get(g, 0) + (x - m)
    G = len(sums)
    return m, math.sqrt(Fraction(G, G - 1) * sum(s * s for s in sums.values())) / n


def test_std_err_is_the_hand_formula():
    assert std_err(np.array(DATA)) == pytest.approx(_exact_std_err(DATA), rel=1e-15)
    assert std_err(np.array(DATA, dtype=np.float32)) == pytest.approx(_exact_std_err(DATA), rel=1e-6)
    m, se = mean_std_err(DATA)
    assert m == float(Fraction(sum(DATA), len(DATA))) and se == std_err(np.array(DATA))
    assert std_err([7.0]) == 0.0 and math.isnan(std_err([7.0], few=math.nan))
    assert std_err([2.5, 2.5, 2.5]) == 0.0


def test_std_err_along_an_axis_is_the_std_err_of_each_column():
    a = np.array([DATA, DATA[::-1], [0] * 8, [1, 2, 3, 4, 5, 6, 7, 8]], dtype=np.float64)
    got = std_err(a, axis=0)
    assert got.shape == (8,)
    for j in range(8):
        assert got[j] == pytest.approx(_exact_std_err(a[:, j].astype(int).tolist()), rel=1e-14, abs=1e-300)
    assert std_err(a[:1], axis=0).tolist() == [0.0] * 8


def test_clustered_mean_is_the_direct_formula():
    m, se = clustered_mean(DATA, GROUPS)
    want_m, want_se = _exact_clustered(DATA, GROUPS)
    assert m == float(want_m) and se == pytest.approx(want_se, rel=1e-15)
    # labels of any kind, in any order: only the partition matters
    labels = np.array(["d", "d", "a", "a", "a", "z", "b", "b"])
    assert clustered_mean(DATA, labels) == (m, se)
    # one cluster: `few`
    assert clustered_mean(DATA, [5] * 8) == (m, 0.0)
    assert math.isnan(clustered_mean(DATA, [5] * 8, few=math.nan)[1])


def test_singleton_clusters_give_the_independent_std_err():
    # S_g = x_g − m: sqrt(n/(n − 1) Σ (x − m)²)/n = sd/√n
    x = np.random.default_rng(0).normal(size=37)
    assert clustered_mean(x, np.arange(37))[1] == pytest.approx(std_err(x), rel=1e-13)


def test_cluster_means_and_paired_differences():
    got = cluster_means(DATA, GROUPS)
    want = [Fraction(3 + 1, 2), Fraction(4 + 1 + 5, 3), Fraction(9), Fraction(2 + 6, 2)]
    assert got.tolist() == [float(w) for w in want]
    a = np.array(DATA, dtype=np.float64)
    b = a[::-1].copy()
    assert paired_difference(a, b) == mean_std_err(a - b)
    m, se = paired_difference(a, b, GROUPS)
    want_m, want_se = _exact_clustered((a - b).astype(int).tolist(), GROUPS)
    assert m == float(want_m) and se == pytest.approx(want_se, rel=1e-15)


def test_ratio_mean_is_the_delta_method_formula():
    num = np.array([3.0, 5.0, 2.0, 7.0])
    den = np.array([2.0, 4.0, 1.0, 3.0])
    r, se = ratio_mean(num, den)
    R = Fraction(17, 10)
    c = 4
    resid = sum((Fraction(int(n)) - R * Fraction(int(d))) ** 2 for n, d in zip(num, den, strict=True))
    assert r == float(R)
    assert se == pytest.approx(math.sqrt(Fraction(c, c - 1) * resid) / 10, rel=1e-15)
    assert ratio_mean(num[:1], den[:1]) == (1.5, 0.0)


def test_jackknife_of_the_mean_is_the_std_err():
    # the classic identity: for the mean, the delete-one jackknife variance is s²/n
    x = np.random.default_rng(1).random(25)
    groups = np.arange(25)
    assert jackknife_std_err(lambda keep: float(x[keep].mean()), groups) == pytest.approx(std_err(x), rel=1e-12)
    assert jackknife_std_err(lambda keep: 1.0, np.zeros(4)) == 0.0


def test_bernoulli_and_moment_std_errs():
    assert bernoulli_std_err(0.25, 12) == pytest.approx(math.sqrt(Fraction(1, 4) * Fraction(3, 4) / 12), rel=1e-15)
    assert bernoulli_std_err(0.0, 10) > 0 and bernoulli_std_err(0.0, 10, floor=None) == 0.0
    x = np.array(DATA, dtype=np.float64)
    # the moments' form is the population variance over n
    pop = sum((Fraction(v) - Fraction(sum(DATA), 8)) ** 2 for v in DATA) / 8
    assert moment_std_err(x.mean(), (x * x).mean(), 8) == pytest.approx(math.sqrt(pop / 8), rel=1e-14)
    assert moment_std_err(0.5, 0.25, 4) == math.sqrt(1e-300 / 4)  # zero variance: the floor


def _ks_by_limits(u) -> Fraction:
    """sup |F̂(x) − x| from F̂'s values just before and at each sample point (exact)."""
    s = [Fraction(v) for v in u]
    m = len(s)
    worst = Fraction(0)
    for x in s:
        at = Fraction(sum(v <= x for v in s), m)
        before = Fraction(sum(v < x for v in s), m)
        worst = max(worst, abs(at - x), abs(before - x))
    return worst


@pytest.mark.parametrize("seed", range(4))
def test_ks_uniform_is_the_supremum(seed):
    rng = np.random.default_rng(seed)
    u = rng.random(30) ** (1 + seed)  # uniform, then further and further from it
    if seed == 3:
        u[:10] = u[10:20]  # ties
    assert ks_uniform(u) == pytest.approx(float(_ks_by_limits(u)), abs=1e-15)
    assert ks_uniform(np.array([])) == 0.0


def test_thresholds_invert_their_bounds():
    for n, fa, tests in [(100, 1e-6, 4), (12_345, 0.05, 1), (7, 0.3, 14)]:
        eps = ks_threshold(n, fa, tests)
        assert tests * 2 * math.exp(-2 * n * eps * eps) == pytest.approx(fa, rel=1e-12)  # DKW–Massart
    for outcomes, n, fa in [(5, 1000, 1e-6), (50, 20, 0.01)]:
        lam = l1_threshold(outcomes, n, fa)
        assert 2**outcomes * math.exp(-n * lam * lam / 2) == pytest.approx(fa, rel=1e-12)  # Weissman et al.


def test_ks_threshold_holds_its_false_alarm_rate_on_uniform_samples():
    rng = np.random.default_rng(5)
    eps = ks_threshold(50, 0.2, 1)
    alarms = sum(ks_uniform(rng.random(50)) > eps for _ in range(2000))
    # at most 20 % (DKW is conservative); binomial slack at 1e-6
    assert stats.binomtest(alarms, 2000, 0.2, alternative="greater").pvalue > 1e-6


def test_within_and_normal_quantile():
    assert within({"a": 0.1, "b": 0.2}, 0.2) and not within({"a": 0.1, "b": 0.2001}, 0.2)
    assert within({}, 0.0)
    for prob in (0.5, 0.9, 1 - 1e-3, 1e-6):
        z = normal_quantile(prob)
        assert 0.5 * (1 + math.erf(z / math.sqrt(2))) == pytest.approx(prob, rel=1e-9)
