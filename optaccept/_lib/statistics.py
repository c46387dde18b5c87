"""Means, standard errors and the audits' test thresholds: the package's one copy of each formula.

Every standard error the package reports is computed here, with one formula each:

* :func:`std_err` — of a mean of independent values: the sample standard deviation (ddof = 1)
  over √n.
* :func:`clustered_mean` — of a mean whose values come in clusters (the trees or steps of one
  prompt or request share it): the cluster-robust (sandwich) form
  sqrt(G/(G − 1) · Σ_g S_g²) / N, with S_g the sum of cluster g's deviations from the mean, N
  the values and G the clusters (Liang and Zeger, *Biometrika* 73, 1986; the G/(G − 1) factor
  is the usual small-sample correction, Cameron and Miller, *J. Human Resources* 50, 2015, §2.4).
  :func:`paired_difference` applies it to the differences of two statistics on the same items.
* :func:`ratio_mean` — of a ratio of sums over independent clusters, by the delta method.
* :func:`jackknife_std_err` — of any statistic, by the delete-one-cluster jackknife.
* :func:`bernoulli_std_err`, :func:`moment_std_err` — of a mean from its first moments.

and the audits' verdicts share their thresholds: :func:`ks_threshold`, the
Dvoretzky–Kiefer–Wolfowitz bound with Massart's constant (*Ann. Probab.* 18, 1990) split over
several tests (Bonferroni), against which :func:`ks_uniform` distances are held
(:func:`within`); :func:`l1_threshold`, the bound of Weissman et al. (HP Labs tech. report
HPL-2003-97, 2003) on the L1 distance of an empirical law on n outcomes; and
:func:`normal_quantile` for the z-tests.  One function holds an audit's distances and means
against these thresholds and returns its verdict: ``optaccept.audit._verdict.decide``.

The formulas are checked against hand computations in exact fractions and against direct
loops over the clusters (tests/foundations/test_statistics_helpers.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "std_err",
    "mean_std_err",
    "cluster_means",
    "clustered_mean",
    "paired_difference",
    "ratio_mean",
    "jackknife_std_err",
    "bernoulli_std_err",
    "moment_std_err",
    "ks_uniform",
    "ks_threshold",
    "l1_threshold",
    "within",
    "normal_quantile",
]


def std_err(x: Any, *, axis: int | None = None, few: float = 0.0) -> Any:
    """Standard error of the mean of independent values: ``x.std(ddof=1) / sqrt(n)``.

    Parameters
    ----------
    x : array_like
        The values (any dtype numpy reduces in float64; kept as given, so the sums run in the
        caller's order).
    axis : int, optional
        Reduce along this axis (n = its length); the whole array by default.
    few : float
        The value for fewer than two values (n < 2), where the sample spread is undefined.

    Returns
    -------
    float or ndarray
        A float for ``axis=None``; otherwise an array over the other axes (filled with
        ``few`` when n < 2).
    """
    a = np.asarray(x)
    n = a.size if axis is None else a.shape[axis]
    if n < 2:
        return float(few) if axis is None else np.full(np.delete(a.shape, axis), few, dtype=np.float64)
    if axis is None:
        return float(a.std(ddof=1) / math.sqrt(n))
    return a.std(axis=axis, ddof=1) / math.sqrt(n)


def mean_std_err(x: Any, *, few: float = 0.0) -> tuple[float, float]:
    """The mean of independent values and its standard error (:func:`std_err`).

    Parameters
    ----------
    x : array_like
        The values, at least one.
    few : float
        The standard error reported for a single value.

    Returns
    -------
    (float, float)
        ``(mean, standard error)``.
    """
    a = np.asarray(x)
    return float(a.mean()), std_err(a, few=few)


def _clusters(groups: Any) -> tuple[np.ndarray, int]:
    _, inv = np.unique(np.asarray(groups), return_inverse=True)
    return inv, int(inv.max()) + 1 if inv.size else 0


def cluster_means(x: Any, groups: Any) -> np.ndarray:
    """The mean of each cluster's values, clusters in sorted order of their labels.

    Parameters
    ----------
    x : array_like, shape (N,)
        The values.
    groups : array_like, shape (N,)
        The cluster label of each value.

    Returns
    -------
    ndarray of float64, shape (G,)
    """
    a = np.asarray(x, dtype=np.float64)
    inv, G = _clusters(groups)
    return np.bincount(inv, weights=a, minlength=G) / np.bincount(inv, minlength=G)


def clustered_mean(x: Any, groups: Any, *, few: float = 0.0) -> tuple[float, float]:
    """The mean of values in clusters and its cluster-robust standard error.

    sqrt(G/(G − 1) · Σ_g S_g²) / N, with S_g the sum of cluster g's deviations from the mean
    (see the module docstring).

    Parameters
    ----------
    x : array_like, shape (N,)
        The values, N ≥ 1.
    groups : array_like, shape (N,)
        The cluster label of each value (any sortable labels).
    few : float
        The standard error reported for a single cluster (G < 2).

    Returns
    -------
    (float, float)
        ``(mean, standard error)``.

    Examples
    --------
    >>> clustered_mean([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1])
    (3.0, 1.0)
    """
    a = np.asarray(x, dtype=np.float64)
    inv, G = _clusters(groups)
    m = float(a.mean())
    if G < 2:
        return m, float(few)
    s = np.bincount(inv, weights=a - m, minlength=G)
    return m, float(math.sqrt(G / (G - 1) * float(s @ s)) / a.size)


def paired_difference(a: Any, b: Any, groups: Any = None) -> tuple[float, float]:
    """Mean of the paired differences a − b (two statistics on the same items) and its
    standard error: clustered by ``groups`` when given (:func:`clustered_mean`), else of
    independent items (:func:`std_err`).

    Parameters
    ----------
    a, b : array_like, shape (N,)
        The two statistics, item by item.
    groups : array_like, shape (N,), optional
        The cluster of each item.

    Returns
    -------
    (float, float)
        ``(mean difference, standard error)``.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return mean_std_err(d) if groups is None else clustered_mean(d, groups)


def ratio_mean(num: Any, den: Any) -> tuple[float, float]:
    """Σnum/Σden over independent clusters and its delta-method standard error.

    sqrt(c/(c − 1) · Σ_i (num_i − r·den_i)²) / Σden over the c clusters (0 for one cluster).

    Parameters
    ----------
    num, den : ndarray, shape (c,)
        Each cluster's numerator and denominator sums; Σden > 0.

    Returns
    -------
    (float, float)
        ``(ratio, standard error)``.
    """
    N, D = float(num.sum()), float(den.sum())
    r = N / D
    c = num.size
    if c < 2:
        return r, 0.0
    resid = num - r * den
    return r, float(math.sqrt(c / (c - 1) * np.sum(resid**2)) / D)


def jackknife_std_err(stat: Callable[[np.ndarray], float], groups: Any) -> float:
    """Standard error of a statistic by the delete-one-cluster jackknife.

    sqrt((G − 1)/G · Σ_g (θ_(g) − θ̄)²) with θ_(g) the statistic without cluster g.

    Parameters
    ----------
    stat : callable
        ``stat(mask)`` -> float: the statistic on the items where the boolean ``mask`` holds.
    groups : ndarray, shape (N,)
        The cluster of each item.

    Returns
    -------
    float
        0 for fewer than two clusters.
    """
    ids = np.unique(groups)
    G = ids.size
    if G < 2:
        return 0.0
    vals = np.array([stat(groups != g) for g in ids])
    return math.sqrt((G - 1) / G * float(((vals - vals.mean()) ** 2).sum()))


def bernoulli_std_err(mean: float, n: int, *, floor: float | None = 1e-300) -> float:
    """Standard error of a frequency: sqrt(mean·(1 − mean)/n).

    Parameters
    ----------
    mean : float
        The observed frequency, in [0, 1].
    n : int
        The trials, ≥ 1.
    floor : float or None
        Lower bound on mean·(1 − mean) (so that a frequency of 0 or 1 keeps a positive
        error, and z-scores stay finite); None: no bound.

    Returns
    -------
    float
    """
    v = mean * (1 - mean)
    return math.sqrt((v if floor is None else max(v, floor)) / n)


def moment_std_err(mean: float, mean_sq: float, n: int, *, floor: float = 1e-300) -> float:
    """Standard error of a mean from the first two moments: sqrt(max(E[x²] − E[x]², floor)/n).

    Parameters
    ----------
    mean, mean_sq : float
        The mean of the values and of their squares.
    n : int
        The values, ≥ 1.
    floor : float
        Lower bound on the variance (which rounding can make negative).

    Returns
    -------
    float
    """
    return math.sqrt(max(mean_sq - mean * mean, floor) / n)


def ks_uniform(u: Any) -> float:
    """Kolmogorov–Smirnov distance sup_x |F̂(x) − x| of a sample on [0, 1] from Uniform(0, 1).

    Parameters
    ----------
    u : ndarray, shape (m,)
        The sample.

    Returns
    -------
    float
        0 for an empty sample.
    """
    s = np.sort(u)
    m = s.size
    i = np.arange(1, m + 1)
    return float(max((i / m - s).max(initial=0.0), (s - (i - 1) / m).max(initial=0.0)))


def ks_threshold(n: int, false_alarm: float, tests: int = 1) -> float:
    """The Dvoretzky–Kiefer–Wolfowitz band sqrt(log(2·tests/false_alarm)/(2n)).

    A sample of n uniforms has KS distance above it with probability at most
    ``false_alarm/tests`` (Massart's constant), so ``tests`` such tests together raise a
    false alarm with probability at most ``false_alarm``.

    Parameters
    ----------
    n : int
        The sample size, ≥ 1.
    false_alarm : float
        The overall false-alarm rate, in (0, 1).
    tests : int
        How many tests share it.

    Returns
    -------
    float
    """
    return math.sqrt(math.log(2 * tests / false_alarm) / (2 * n))


def l1_threshold(outcomes: int, n: int, false_alarm: float) -> float:
    """Weissman et al.'s bound sqrt(2(outcomes·log 2 + log(1/false_alarm))/n) on the L1 distance
    between the empirical law of n draws on ``outcomes`` outcomes and the true law, exceeded
    with probability at most ``false_alarm``.

    Parameters
    ----------
    outcomes : int
        The number of outcomes.
    n : int
        The draws, ≥ 1.
    false_alarm : float
        In (0, 1).

    Returns
    -------
    float
    """
    return math.sqrt(2 * (outcomes * math.log(2) + math.log(1 / false_alarm)) / n)


def within(distances: Mapping[Any, float], threshold: float) -> bool:
    """Whether every distance is at most ``threshold`` (the audits' pass verdict).

    Parameters
    ----------
    distances : mapping
        Test name -> distance.
    threshold : float

    Returns
    -------
    bool
    """
    return all(d <= threshold for d in distances.values())


def normal_quantile(prob: float) -> float:
    """The standard normal quantile z with P(Z ≤ z) = ``prob`` (scipy's ``norm.ppf``).

    Parameters
    ----------
    prob : float
        In (0, 1).

    Returns
    -------
    float
    """
    from scipy.stats import norm

    return float(norm.ppf(prob))
