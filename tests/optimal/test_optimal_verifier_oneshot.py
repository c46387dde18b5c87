"""The one-shot answer of the optimal verifier (one position, one draft tuple): the compiled
layout order against a plain lexicographic sort, and the one-shot output against the kept
verifier's for the same uniforms, on random and nasty rows (docs/optimal_verifier.md §8)."""

from __future__ import annotations

import numpy as np
import pytest
from extreme_cases import nasty_row_pairs

import optaccept as oa
from optaccept.optimal import optimal_verifier
from optaccept.optimal._line import respond_one
from optaccept.optimal._line_order import line_order_compiled


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


pytest.importorskip("numba")


def test_compiled_order_is_the_lexicographic_order():
    """The compiled layout order equals a plain lexicographic sort by (p/q descending, side B
    first, id) on random rows, all-tie rows, rounded rows with many ties, zeros, ratios equal
    in their last bits only, and buckets of every size (one heavy ratio shared by most
    tokens); it declines (None) exactly where a ratio is not zero or a normal float."""
    rng = np.random.default_rng(81)
    checked = 0
    for t in range(240):
        n = int(rng.choice([1, 2, 5, 50, 3000, 70000]))
        p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
        if t % 6 == 0:
            q = p.copy()
        elif t % 6 == 1:
            p = np.round(p * 50) / 50 + 1e-3
            q = np.round(q * 7) / 7 + 1e-3
        elif t % 6 == 2:
            q[rng.integers(n, size=max(1, n // 5))] = 0.0
            p[rng.integers(n, size=max(1, n // 5))] = 0.0
        elif t % 6 == 3:
            q = p * (1 + 1e-15 * rng.integers(-3, 4, n))
        elif t % 6 == 4:
            q = p * np.where(rng.random(n) < 0.8, 2.0, rng.random(n))  # one ratio for most
        elif t % 6 == 5:  # a wide span, and most ratios distinct in their last 20 bits only
            q = p * (1 + 1e-12 * rng.random(n))
            q[0] = 1e3 * p[0] + 1e-300
        if q.sum() == 0:
            q[0] = 1.0
        p, q = p / p.sum() if p.sum() > 0 else p, q / q.sum()
        side_a = rng.random(n) < 0.5
        ids = np.flatnonzero(q > 0)
        got = line_order_compiled(p, q, side_a)
        assert got is not None
        want = ids[np.lexsort((ids, side_a[ids], -(p[ids] / q[ids])))]
        np.testing.assert_array_equal(got, want)
        checked += 1
    assert checked == 240
    # a subnormal q (p/q overflows) or a subnormal ratio: the exact key is the caller's
    p = np.array([0.5, 0.5, 0.0])
    assert line_order_compiled(p, np.array([0.5, 0.5 - 1e-320, 1e-320]), np.zeros(3, bool)) is not None
    assert line_order_compiled(p, np.array([1 - 1e-320, 0.0, 1e-320]) + [0, 0, 0], np.zeros(3, bool)) is not None
    assert line_order_compiled(np.array([1e-320, 1.0, 0]), np.array([0.5, 0.5, 0.0]), np.zeros(3, bool)) is None
    assert line_order_compiled(np.array([0.5, 0.5, 0]), np.array([1e-320, 1.0, 0.0]), np.zeros(3, bool)) is None


def _same_outputs(rng, p, q, k, tuples, *, all_tokens=False):
    law = oa.IID(q, k)
    ov = optimal_verifier(p, law)
    if all_tokens:  # every token with q > 0 drafted, also the unlikely ones
        ids = np.flatnonzero(law.q > 0)
        xs = [rng.choice(ids, size=k) for _ in range(tuples)]
    else:
        xs = list(law.sample(rng, tuples))
    outs = set()
    for x in xs:
        u = rng.random(3 * k + 2)
        got = respond_one(ov.p, law.q, k, np.asarray(x), u)
        assert got == ov._respond_uniform(np.asarray(x), u)
        outs.add(got)
    return len(xs), outs


def test_one_shot_output_is_the_kept_verifiers():
    """The one-shot answer (order, layout and the drafts' pieces in compiled passes; the
    residual on rejection) gives the kept verifier's output for the same uniforms — selected
    draft, acceptance and residual draw — on random rows (n up to 20,000, k from 1 to
    above the support, tuples drawn from the law and tuples of any token with q > 0) and on
    the nasty rows (zeros, disjoint supports, ties, p = q, near-one-hot, tiny masses)."""
    rng = np.random.default_rng(35)
    count = 0
    rejected = 0
    for n in (2, 7, 60, 2000, 20_000):
        for k in (1, 2, 4, 8, 3 * n) if n <= 60 else (1, 2, 4, 8):
            p = rng.dirichlet(np.full(n, 0.5))
            for q in (rng.dirichlet(np.full(n, 0.5)), p.copy()):
                c, outs = _same_outputs(rng, p, q, k, 12 if n >= 2000 else 30, all_tokens=bool(k % 2))
                count += c
                rejected += len(outs)
    assert count == 2 * (3 * 5 * 30 + 2 * 4 * 12)
    assert rejected > 100  # many distinct outputs: the comparison is not of a constant
    fallbacks = 0
    for n in (12, 600):
        for p, q in nasty_row_pairs(rng, n):
            fallbacks += line_order_compiled(p, q, np.zeros(n, dtype=bool)) is None
            for k in (1, 3, 40):
                _same_outputs(rng, p, q, k, 20, all_tokens=True)
    assert fallbacks == 4  # the subnormal rows took the numpy order


def test_one_shot_acceptance_is_alpha_star():
    """The one-shot outputs are the rule's: on a row where α* is far from 1, the frequency
    of outputs among the drafts, over 4,000 positions with fresh drafts and uniforms,
    matches α* within five standard errors, and the rule's own acceptance matches α* to
    1e-12."""
    rng = np.random.default_rng(7)
    n, k = 500, 4
    p, q = rng.dirichlet(np.full(n, 0.4)), rng.dirichlet(np.full(n, 0.4))
    law = oa.IID(q, k)
    ov = optimal_verifier(p, law)
    assert abs(ov.acceptance - ov.value) <= 1e-12
    hits = 0
    trials = 4000
    for x in law.sample(rng, trials):
        y = respond_one(ov.p, law.q, k, x, rng.random(3 * k + 2))
        hits += y in set(x.tolist())
    se = np.sqrt(ov.value * (1 - ov.value) / trials)
    assert abs(hits / trials - ov.value) <= 5 * se


def test_batched_rows_checked_in_threads():
    """The batched form checks float64 i.i.d. rows in its threads and gives each row the kept
    verifier's output for the row's uniforms (3k + 2 per row, drawn up front), in one thread
    or two; a batch with a bad row is refused with the validating path's message (a bad p
    before a bad token of an earlier row), and float32 rows take that path too."""
    torch = pytest.importorskip("torch")
    from optaccept.optimal import optimal_verifier_batched

    rng = np.random.default_rng(12)
    rows, n, k = 6, 40, 3
    P = rng.dirichlet(np.full(n, 0.5), size=rows)
    Q = rng.dirichlet(np.full(n, 0.5), size=rows)
    Q[2] = P[2]  # p = q: α* = 1
    drafts = np.stack([oa.IID(Q[r], k).sample(rng, 1)[0] for r in range(rows)])
    uni = torch.rand((rows, 3 * k + 2), generator=torch.Generator().manual_seed(5), dtype=torch.float64).numpy()
    for threads in (1, 2):
        y = optimal_verifier_batched(
            torch.tensor(P), torch.tensor(Q), torch.tensor(drafts), torch.Generator().manual_seed(5), threads=threads
        )
        for r in range(rows):
            ov = optimal_verifier(P[r], oa.IID(Q[r], k, normalize=True), normalize=True)
            assert int(y[r]) == ov._respond_uniform(drafts[r], uni[r])
    bad_p, bad_d = P.copy(), drafts.copy()
    bad_p[3, 1] = -0.2
    bad_d[0, 0] = n + 4
    with pytest.raises(oa.InputError, match="^p: "):
        optimal_verifier_batched(torch.tensor(bad_p), torch.tensor(Q), torch.tensor(bad_d), None)
    with pytest.raises(oa.InputError, match="^tokens: row 0 "):
        optimal_verifier_batched(torch.tensor(P), torch.tensor(Q), torch.tensor(bad_d), None)
    y32 = optimal_verifier_batched(
        torch.tensor(P, dtype=torch.float32), torch.tensor(Q, dtype=torch.float32), torch.tensor(drafts), None
    )
    assert y32.shape == (rows,) and all(
        optimal_verifier(P[r], oa.IID(Q[r], k)).conditional(drafts[r])[int(y32[r])] > 0 for r in range(rows)
    )


def test_one_shot_without_the_compiled_kernels(monkeypatch):
    """With the compiled kernels switched off (``OPTACCEPT_NO_JIT=1``: the numpy order and
    layout), the one-shot answer is still the kept verifier's output for the same uniforms."""
    monkeypatch.setenv("OPTACCEPT_NO_JIT", "1")
    assert line_order_compiled(np.array([0.5, 0.5]), np.array([0.5, 0.5]), np.zeros(2, dtype=bool)) is None
    rng = np.random.default_rng(4)
    for n, k in ((5, 2), (300, 4), (300, 9)):
        p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
        _same_outputs(rng, p, q, k, 15, all_tokens=True)


def test_one_shot_refuses_a_token_without_a_cell():
    """A drafted token with q = 0 owns no cell: the one-shot answer refuses it, naming the
    drafts, as the kept verifier does."""
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.6, 0.4, 0.0])
    with pytest.raises(oa.InputError, match="^drafts: "):
        respond_one(p, q, 2, np.array([0, 2]), np.full(8, 0.5))
    with pytest.raises(oa.InputError, match="^drafts: "):
        optimal_verifier(p, oa.IID(q, 2)).respond(np.array([[0, 2]]), 0)


def test_compiled_acceptance_probabilities_equal_the_numpy_form():
    """min(1, p/s) with 0 where p = 0, compiled, equals the numpy expression value for value on
    rows with zeros in p, zeros in s, ties s = p, subnormal masses and s far above p."""
    from optaccept.optimal import _line_kernel

    rng = np.random.default_rng(3)
    for t in range(40):
        n = 700
        p, s = rng.dirichlet(np.full(n, 0.3)), rng.dirichlet(np.full(n, 0.3))
        p[::7] = 0.0
        s[::5] = 0.0
        s[::11] = p[::11]
        s[::13] = 5e-320
        p[::17] = 5e-320
        if t % 2:
            s *= 1e6
        got = _line_kernel.accept_probs(p, s)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            want = np.where(p > 0, np.where(s > p, p / np.where(s > 0, s, 1.0), 1.0), 0.0)
        np.testing.assert_array_equal(got, want)
        assert ((got >= 0) & (got <= 1)).all()
