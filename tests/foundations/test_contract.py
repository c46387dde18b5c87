"""One input contract at every Python entry point: the sum rule (accept what float32
rounding explains, refuse larger slips), shapes before sums, the accepted input types,
refused types, and plain-number messages."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept import sequence, verifiers
from optaccept._lib.validation import (
    EPS32,
    as_distribution,
    as_distribution_pair,
    as_distribution_row_pair,
    as_distribution_rows,
    sum_tolerance,
)

P = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
Q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])


def float32_softmax_rows(rows: int, n: int, seed: int = 0) -> np.ndarray:
    """Rows as a language model writes them: softmax of float32 logits, in float32."""
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((rows, n)) * 3).astype(np.float32)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True, dtype=np.float32)


@pytest.fixture(scope="module")
def real_like():
    """Float32 softmax rows with the sums a 49,152-token model produces, made visibly
    off (by up to ~1e-5, as observed on SmolLM2) so that the test cannot pass on luck."""
    t = float32_softmax_rows(3, 49152, 1)
    d = float32_softmax_rows(3, 49152, 2)
    # the float32 scaling by a factor 1 ± 1e-5 stands for a float32 normalisation error
    t = (t * np.float32(1 + 1e-5)).astype(np.float32)
    d = (d * np.float32(1 - 8e-6)).astype(np.float32)
    return t, d


# ---------------------------------------------------------------------------
# The rule itself


def test_tolerance_formula() -> None:
    assert sum_tolerance(1) == EPS32 == 2.0**-23
    assert sum_tolerance(5) == 5 * 2.0**-23
    assert sum_tolerance(49152) == pytest.approx(49152 * 1.1920928955078125e-07)
    # float16 input gets its own rounding on top: eps + n * smallest subnormal
    assert sum_tolerance(10, np.float16) == pytest.approx(10 * EPS32 + 2.0**-10 + 10 * 2.0**-24)


def test_float32_rows_cast_to_float64_are_accepted_with_a_warning(real_like) -> None:
    t, d = real_like
    t64, d64 = np.asarray(t[0], float), np.asarray(d[0], float)
    assert abs(t64.sum() - 1) > 5e-6  # the reproducer's size of deviation
    with pytest.warns(oa.RenormalizedWarning, match=r"p: entries sum to 1\.0000"):
        res = oa.optimal_acceptance(t64, oa.IID(d64 / d64.sum(), 2))
    # the answer is that of the renormalised rows
    p, q = t64 / t64.sum(), d64 / d64.sum()
    ref = oa.optimal_acceptance(p, oa.IID(q, 2))
    assert abs(float(res.value) - float(ref.value)) < 1e-12


def test_float32_input_is_rescaled_silently(real_like) -> None:
    t, d = real_like
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        oa.optimal_acceptance(t[0], oa.IID(d[0], 2))
        oa.optimal_acceptance(t[0].astype(np.float16), oa.WithoutReplacement(d[0].astype(np.float16), 2))


def test_warning_can_be_silenced_and_points_at_the_caller(real_like) -> None:
    t, _ = real_like
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oa.IID(np.asarray(t[0], float), 2)
    assert [w.category for w in caught] == [oa.RenormalizedWarning]
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", oa.RenormalizedWarning)
        oa.IID(np.asarray(t[0], float), 2)


def test_a_larger_deviation_is_refused_with_its_size_and_the_way_out() -> None:
    n = 1000
    p = np.full(n, 1 / n)
    p[0] += 2e-4  # tol(1000) = 1.2e-4
    with pytest.raises(oa.InputError, match=r"^q: entries sum to 1\.0002.*off from 1 by 0\.0002.*normalize=True"):
        oa.IID(p, 2)
    law = oa.IID(p, 2, normalize=True)
    assert law.q.sum() == pytest.approx(1, abs=1e-15)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_solver_takes_float32_model_rows_in_any_dtype(real_like, dtype) -> None:
    t, d = real_like
    p, q = t[1].astype(dtype), d[1].astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", oa.RenormalizedWarning)
        a_iid = float(oa.optimal_acceptance(p, oa.IID(q, 2)).value)
        a_swor = float(oa.optimal_acceptance(p, oa.WithoutReplacement(q, 3)).value)
        a_greedy = float(oa.optimal_acceptance(p, oa.Greedy(q, 2)).value)
        acc = verifiers.SD().acceptance(p, q, 1)
        acc_rrs = verifiers.RRS().acceptance(p, q, 2)
        sequence._batch.batch_rejection_probability(p, q, 2)
        sequence.decoder_losses(p, q, [0.0, 0.1])
        pair = sequence.PositionPair(t.astype(dtype), d.astype(dtype))
        sequence.expected_rejections(pair)
    # SD acceptance is 1 - TV of the renormalised rows
    p64, q64 = p.astype(float) / p.astype(float).sum(), q.astype(float) / q.astype(float).sum()
    assert acc == pytest.approx(np.minimum(p64, q64).sum(), abs=1e-9)
    assert 0 <= acc <= acc_rrs <= a_iid + 1e-9 <= 1 + 1e-9
    assert a_swor >= a_iid - 1e-9 and a_greedy <= 1 + 1e-12


# ---------------------------------------------------------------------------
# Shapes before sums; accepted and refused types; plain messages


def test_length_mismatch_is_reported_before_the_sum() -> None:
    with pytest.raises(oa.InputError, match="length 4 does not match"):
        oa.optimal_acceptance(P[:4], oa.IID(Q, 2))
    with pytest.raises(oa.InputError, match="length 4 does not match"):
        oa.optimal_acceptance([Fraction(1, 4)] * 3 + [Fraction(1, 8)], oa.IID([Fraction(1, 5)] * 5, 2))
    with pytest.raises(oa.InputError, match=r"p and q: lengths differ \(4 vs 5\)"):
        verifiers.RRS().acceptance(P[:4], Q, 2)
    with pytest.raises(oa.InputError, match="lengths differ"):
        oa.verifiers.gap_table(P, Q[:3], ks=(2,))
    with pytest.raises(oa.InputError, match="lengths differ"):
        sequence._batch.batch_rejection_probability(P[:4], Q, 2)
    with pytest.raises(oa.InputError, match="length 4 does not match"):
        oa.verifiers.canonical_decomposition(P[:4], oa.IID(Q, 2))


def test_lists_fractions_and_torch_tensors_are_accepted() -> None:
    torch = pytest.importorskip("torch")
    ref = float(oa.optimal_acceptance(P, oa.IID(Q, 2)).value)
    assert float(oa.optimal_acceptance(P.tolist(), oa.IID(Q.tolist(), 2)).value) == ref
    t = oa.optimal_acceptance(torch.tensor(P), oa.IID(torch.tensor(Q), 2))
    assert float(t.value) == ref
    t32 = oa.optimal_acceptance(torch.tensor(P, dtype=torch.float32), oa.IID(torch.tensor(Q, dtype=torch.float32), 2))
    assert float(t32.value) == pytest.approx(ref, abs=1e-6)
    assert verifiers.SD().acceptance(torch.tensor(P), torch.tensor(Q), 1) == pytest.approx(np.minimum(P, Q).sum())
    exact = oa.optimal_acceptance([Fraction(1, 2), Fraction(1, 2)], oa.IID([Fraction(1, 10), Fraction(9, 10)], 2))
    # p = (1/2, 1/2), q = (1/10, 9/10), k = 2: min over the four S of p(S) + 1 - q(S)^2 is at
    # S = {1}: 1/2 + 1 - 81/100 (S = {}: 1, S = {0}: 149/100, S = {0, 1}: 1)
    assert exact.value == Fraction(69, 100)
    # a float function of Fractions mixed with floats takes the float path
    mixed = oa.optimal_acceptance([Fraction(1, 2), 0.5], oa.IID([0.25, 0.75], 2))
    assert isinstance(mixed.value, float)


@pytest.mark.parametrize(
    ("bad", "word"),
    [
        ([0.5 + 0j, 0.5], "complex"),
        (np.array([0.5, 0.5], dtype=complex), "complex"),
        ([True, False], "booleans"),
        (np.array([True, False]), "booleans"),
        ("0.5,0.5", "string"),
        (np.array(["0.5", "0.5"]), "strings"),
        ([[0.5, 0.5]], "1-D"),
        (0.5, "single number"),
        ([], "at least one"),
        ([[0.5], [0.25, 0.25]], "rectangular"),
    ],
)
def test_refused_types(bad, word) -> None:
    with pytest.raises(oa.InputError, match=word):
        oa.IID(bad, 2)


def test_refused_torch_types() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(oa.InputError, match="complex"):
        as_distribution(torch.tensor([0.5 + 0j, 0.5]), "p")
    with pytest.raises(oa.InputError, match="booleans"):
        as_distribution_rows(torch.tensor([[True, False]]), "p")


def test_messages_print_plain_numbers() -> None:
    with pytest.raises(oa.InputError) as e:
        oa.IID(np.array([0.5, np.float64(-0.1), 0.6]), 2)
    assert str(e.value) == "q: negative entry at index 1 (-0.1)"
    rows = np.full((3, 4), 0.25)
    rows[2, 1] = -0.25
    with pytest.raises(oa.InputError) as e:
        as_distribution_rows(rows, "p")
    assert str(e.value) == "p: negative entry at row 2, index 1 (-0.25)"
    with pytest.raises(oa.InputError) as e:
        oa.IID(Q, np.float64(2.5))
    assert "np." not in str(e.value) and "2.5" in str(e.value)
    with pytest.raises(oa.InputError) as e:
        sequence.MarkovPair(np.ones(2) / 2, [[0.5, 0.5], [0.2, 0.7]], [[0.5, 0.5], [0.5, 0.5]], horizon=2)
    assert "row 1" in str(e.value) and "(" not in str(e.value).split("row 1")[0]


def test_caller_arrays_are_not_modified(real_like) -> None:
    t, d = real_like
    t64 = np.asarray(t[0], float).copy()
    before = t64.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", oa.RenormalizedWarning)
        as_distribution(t64, "p")
        as_distribution_rows(t64[None, :], "p")
    assert np.array_equal(t64, before)


# ---------------------------------------------------------------------------
# Batched rows (numpy and torch)


def test_rows_numpy_and_torch(real_like) -> None:
    torch = pytest.importorskip("torch")
    t, d = real_like
    with pytest.warns(oa.RenormalizedWarning, match="3 of 3 rows"):
        rows = as_distribution_rows(t.astype(np.float64), "p")
    assert rows.dtype == np.float64 and np.allclose(rows.sum(1), 1, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = as_distribution_rows(torch.from_numpy(t), "p", keep_float32=True)
        half = as_distribution_rows(torch.from_numpy(t).to(torch.bfloat16), "p", keep_float32=True)
    assert kept.dtype == torch.float32 and half.dtype == torch.float32
    assert torch.allclose(kept.sum(1, dtype=torch.float64), torch.ones(3, dtype=torch.float64), atol=1e-6)
    bad = t.astype(np.float64)
    bad[1, :100] = 0  # about 100/49152 of the mass gone: 2e-3 < tol 5.9e-3, still accepted ...
    bad[1, 100:5000] = 0  # ... but 10 % of the mass is a mistake
    with pytest.raises(oa.InputError, match=r"^p: row 1 sums to 0\.9.*normalize=True"):
        as_distribution_rows(bad, "p")
    with pytest.raises(oa.InputError, match=r"p and q: shapes differ \(\(3, 4\) vs \(3, 49152\)\)"):
        as_distribution_row_pair(t[:, :4], d)
    with pytest.warns(oa.RenormalizedWarning, match="q: 3 of 3 rows"):
        P2, Q2 = as_distribution_row_pair(t, d.astype(np.float64))
    assert P2.dtype == Q2.dtype == np.float64


def test_pair_checks_lengths_first() -> None:
    with pytest.raises(oa.InputError, match="lengths differ"):
        as_distribution_pair([0.5, 0.6], [0.2, 0.3, 0.5])


def test_every_entry_point_has_the_same_bound() -> None:
    # a deviation just inside tol(n) passes every entry point, one just outside fails all
    n = 64
    tol = sum_tolerance(n)
    inside = np.full(n, (1 + 0.9 * tol) / n)
    outside = np.full(n, (1 + 1.1 * tol) / n)
    q = np.full(n, 1 / n)
    calls = [
        lambda p: oa.optimal_acceptance(p, oa.IID(q, 2)),
        lambda p: oa.IID(p, 2),
        lambda p: verifiers.SD().acceptance(p, q, 1),
        lambda p: oa.verifiers.gap_table(p, q, ks=(2,), verifiers=[verifiers.SD(), verifiers.RRS()]),
        lambda p: sequence.decoder_losses(p, q, [0.0]),
        lambda p: sequence.PositionPair(p[None, :], q[None, :]),
        lambda p: as_distribution_rows(p[None, :], "p"),
    ]
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", oa.RenormalizedWarning)
            call(inside)
        with pytest.raises(oa.InputError, match="off from 1"):
            call(outside)
    assert math.isclose(tol, n * EPS32)
