"""Bad input gets a clear InputError naming the argument and the problem."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optaccept as oa

P = np.array([0.5, 0.3, 0.2])
Q = np.array([0.2, 0.3, 0.5])


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: oa.IID([0.5, -0.1, 0.6], 2), ["q", "negative", "index 1"]),
        (lambda: oa.IID([0.5, np.nan, 0.5], 2), ["q", "NaN", "index 1"]),
        (lambda: oa.IID([0.5, np.inf, 0.5], 2), ["q", "infinite"]),
        (lambda: oa.IID([0.5, 0.6], 2), ["q", "sum", "normalize=True"]),
        (lambda: oa.IID([[0.5, 0.5]], 2), ["q", "1-D"]),
        (lambda: oa.IID([], 2), ["q", "at least one"]),
        (lambda: oa.IID([0.0, 0.0], 2), ["q", "zero"]),
        (lambda: oa.IID(["a", "b"], 2), ["q", "real numbers"]),
        (lambda: oa.IID(Q, 0), ["k", "at least 1"]),
        (lambda: oa.IID(Q, 2.5), ["k", "integer"]),
        (lambda: oa.WithoutReplacement([0.5, 0.5, 0.0], 3), ["k", "at least 3 tokens"]),
        (lambda: oa.Greedy([1.0, 0.0], 2), ["k", "greedy"]),
        (lambda: oa.SpecHub([1.0, 0.0]), ["k"]),
        (lambda: oa.Independent([[0.5, 0.5], [0.2, 0.3, 0.5]]), ["qs", "same length"]),
        (lambda: oa.Joint([[0, 5]], [1.0], n=3), ["tuples", "outside"]),
        (lambda: oa.Joint([[0, 1], [1, 2], [0, 2]], [0.5, 0.5]), ["probs", "length"]),
        (lambda: oa.optimal_acceptance([0.5, 0.5], oa.IID(Q, 2)), ["p", "length 2", "3"]),
        (lambda: oa.optimal_acceptance(P, oa.IID(Q, 2), method="magic"), ["method", "magic"]),
        (lambda: oa.optimal_acceptance(P, Q), ["drafts", "draft law"]),
        (lambda: oa.optimal_acceptance(P, oa.Independent([Q, Q]), "sorted"), ["sorted", "Independent"]),
        (lambda: oa.optimal_acceptance(P, oa.IID(Q, 3), "closed_form"), ["closed_form", "k = 2"]),
        (
            lambda: oa.optimal_acceptance(np.full(25, 0.04), oa.IID(np.full(25, 0.04), 2), "subsets"),
            ["subsets", "n = 25", "limit"],
        ),
        (
            lambda: oa.optimal_acceptance(np.full(60, 1 / 60), oa.IID(np.full(60, 1 / 60), 4), "transport"),
            ["transport", "limit"],
        ),
        (lambda: oa.IID(Q, 2).subset_prob([0, 7]), ["S", "0..2"]),
        (lambda: oa.IID(Q, 2).sample(np.random.RandomState(0), 3), ["rng", "Generator"]),
    ],
)
def test_bad_input_is_named(call, words) -> None:
    with pytest.raises(oa.InputError) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, (w, msg)


def test_normalize_rescales() -> None:
    law = oa.IID([2.0, 1.0, 1.0], 2, normalize=True)
    np.testing.assert_allclose(law.q, [0.5, 0.25, 0.25])
    res = oa.optimal_acceptance([1.0, 1.0, 2.0], law, normalize=True)
    ref = oa.optimal_acceptance([0.25, 0.25, 0.5], oa.IID([0.5, 0.25, 0.25], 2))
    assert abs(res.value - ref.value) <= 1e-15


def test_sum_rule_for_two_entries() -> None:
    # tol(2) = max(1e-9, 2 * 2**-23) = 2.38e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        oa.IID([0.5, 0.5 + 5e-10], 2)  # float64 rounding: silent
    with pytest.warns(oa.RenormalizedWarning, match="rescaled"):
        law = oa.IID([0.5, 0.5 + 5e-8], 2)  # float32 rounding: rescaled, with a warning
    assert law.q.sum() == 1.0
    with pytest.raises(oa.InputError, match=r"off from 1 by 5e-06.*normalize=True"):
        oa.IID([0.5, 0.5 + 5e-6], 2)


def test_float32_input_works() -> None:
    p = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)
    q = np.array([0.4, 0.3, 0.2, 0.1], dtype=np.float32)
    a = oa.optimal_acceptance(p, oa.IID(q, 2)).value
    p64, q64 = p.astype(np.float64), q.astype(np.float64)
    b = oa.optimal_acceptance(p64 / p64.sum(), oa.IID(q64 / q64.sum(), 2)).value
    assert abs(a - b) <= 1e-6


def test_errors_are_value_errors() -> None:
    assert issubclass(oa.InputError, ValueError)
    assert issubclass(oa.MethodError, oa.InputError)
