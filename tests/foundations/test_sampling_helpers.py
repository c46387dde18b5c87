"""optaccept._lib.sampling: the one inverse-CDF sampler.  Each draw is checked against a slow loop
that walks the running sum token by token (the definition), the laws drawn against their exact
probabilities (chi-square and binomial tests at fixed seeds), and the random stream is checked
to be read exactly once per draw, in order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from optaccept._lib.sampling import (
    RowSampler,
    draw,
    draws,
    first_above,
    inverse_cdf,
    torch_categorical,
    without_replacement,
)

#: Laws with zeros (leading, inner, trailing), ties, a subnormal mass, a near-one-hot law, an
#: unnormalised one, and (last) a float32 one.
LAWS = [
    np.array([1.0]),
    np.array([0.0, 0.5, 0.0, 0.5, 0.0]),
    np.array([0.25, 0.25, 0.25, 0.25]),
    np.array([5e-324, 1.0, 0.0]),
    np.array([1 - 1e-12, 1e-12]),
    np.array([3.0, 0.0, 1.0, 6.0]),
    np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32),
]


def _walk(law: np.ndarray, u: float) -> int:
    """The definition: walk the running sum (in index order, in the law's dtype) to the first
    index whose running sum exceeds u times the total; the last index if none does."""
    acc = law.dtype.type(0)
    total = law.dtype.type(0)
    for v in law:
        total = total + v
    for i, v in enumerate(law):
        acc = acc + v
        if acc > u * total:
            return i
    return law.size - 1


@pytest.mark.parametrize("law", LAWS[:-1], ids=lambda v: str(v.tolist()))
def test_inverse_cdf_is_the_walk_on_the_running_sum(law):
    rng = np.random.default_rng(0)
    us = np.concatenate([rng.random(300), [0.0, 0.5, np.nextafter(1.0, 0.0)]])
    got = inverse_cdf(law, us)
    assert got.dtype == np.int64 and got.shape == us.shape
    assert got.tolist() == [_walk(law, float(u)) for u in us]
    assert [inverse_cdf(law, float(u)) for u in us] == got.tolist()
    # never a token of zero mass, even at u = 0 and u just below 1 (trailing zeros)
    assert np.all(law[got] > 0)


def test_subnormal_and_near_one_hot_masses_are_reachable():
    assert inverse_cdf(np.array([5e-324, 1.0, 0.0]), 0.0) == 0
    assert inverse_cdf(np.array([5e-324, 1.0, 0.0]), np.nextafter(1.0, 0.0)) == 1
    assert inverse_cdf(np.array([1 - 1e-12, 1e-12]), 1 - 1e-13) == 1
    assert inverse_cdf(np.array([1 - 1e-12, 1e-12]), 1 - 1e-11) == 0


def test_first_above_clamps_and_keeps_the_kind_of_its_input():
    c = np.array([0.2, 0.2, 0.7])
    assert first_above(c, 0.1) == 0 and isinstance(first_above(c, 0.1), int)
    assert first_above(c, 0.2) == 2  # ties: strictly above, so the zero-mass index 1 is skipped
    assert first_above(c, 5.0) == 2  # beyond the total: the last index
    assert first_above(c, np.array([0.0, 0.2, 0.69])).tolist() == [0, 2, 2]


@pytest.mark.parametrize("law", LAWS[1:], ids=lambda v: str(v.tolist()))
def test_draws_follow_the_law(law):
    p = law.astype(np.float64) / law.astype(np.float64).sum()
    size = 40_000
    x = draws(law, np.random.default_rng(1), size)
    counts = np.bincount(x, minlength=law.size)
    assert counts[p == 0].sum() == 0
    pos = p > 1e-6
    if pos.sum() >= 2:
        assert stats.chisquare(counts[pos], size * p[pos] / p[pos].sum()).pvalue > 1e-6
    # one draw at a time reads the same uniforms: the same tokens (float64 laws; a float32 law
    # scales a scalar uniform in float32, as numpy's promotion rules say)
    if law.dtype == np.float64:
        rng = np.random.default_rng(1)
        assert [draw(law, rng) for _ in range(2000)] == x[:2000].tolist()


def test_each_draw_reads_one_uniform_in_order():
    law = np.array([0.1, 0.0, 0.6, 0.3])
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(5):
        draw(law, a)
    b.random(5)
    assert a.random() == b.random()
    draws(law, a, 11)
    b.random(11)
    assert a.random() == b.random()
    u = np.random.default_rng(3).random(9)
    assert draws(law, np.random.default_rng(3), 9).tolist() == inverse_cdf(law, u).tolist()


def test_total_scales_the_uniform():
    law = np.array([0.3, 0.3, 0.4])
    # scaling by a total of 2 halves the reach of u: u = 0.8 lands where u = 0.4 would
    assert inverse_cdf(law, 0.4, total=2.0) == inverse_cdf(law, 0.8)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    assert draw(law, rng_a, total=law.sum()) == _walk(law, rng_b.random() * law.sum() / law.sum())


def test_without_replacement_follows_sequential_draws():
    # exact law of the ordered pair: p_i · p_j / (1 − p_i), by enumeration in fractions
    p = [Fraction(1, 10), Fraction(0), Fraction(3, 10), Fraction(6, 10)]
    law = np.array([float(v) for v in p])
    exact = {(i, j): p[i] * p[j] / (1 - p[i]) for i in range(4) for j in range(4) if i != j and p[i] * p[j] > 0}
    assert sum(exact.values()) == 1
    rng = np.random.default_rng(4)
    size = 30_000
    seen = [tuple(without_replacement(law, 2, rng).tolist()) for _ in range(size)]
    keys = sorted(exact)
    counts = np.array([seen.count(key) for key in keys])
    assert counts.sum() == size  # never the zero-mass index, never a repeat
    assert stats.chisquare(counts, [size * float(exact[key]) for key in keys]).pvalue > 1e-6
    # more than the support: the whole support, each once; the stream reads one Gumbel per positive mass
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    assert sorted(without_replacement(law, 10, a).tolist()) == [0, 2, 3]
    b.gumbel(size=3)
    assert a.random() == b.random()
    assert without_replacement(np.array([0.0, 1e-300, 0.0]), 1, a).tolist() == [1]


def test_row_sampler_matches_each_row_and_its_law():
    rng = np.random.default_rng(2)
    laws = rng.random((3, 4, 6))
    laws[0, 1, :3] = 0.0
    laws[2, 3] = 0.0
    laws[2, 3, 5] = 2.0  # one-hot, unnormalised
    s = RowSampler(laws)
    flat = laws.reshape(-1, 6)
    rows = rng.integers(0, flat.shape[0], 2000)
    u = rng.random(2000)
    got = s.sample(rows, u)
    for r, v, g in zip(rows.tolist(), u.tolist(), got.tolist(), strict=True):
        cdf = np.cumsum(flat[r]) / np.cumsum(flat[r])[-1]
        assert g == min(int(np.searchsorted(cdf, v, side="right")), 5)
        assert flat[r, g] > 0
    # u = 0 on a row with leading zeros: its first token of positive mass
    assert s.sample(np.array([1, 11]), np.array([0.0, 0.0])).tolist() == [3, 5]
    # the law of one row, by a chi-square test
    size = 30_000
    x = s.sample(np.full(size, 4), rng.random(size))
    p = flat[4] / flat[4].sum()
    assert stats.chisquare(np.bincount(x, minlength=6), size * p).pvalue > 1e-6


def test_torch_categorical_one_row_and_a_batch():
    torch = pytest.importorskip("torch")
    probs = torch.tensor([0.2, 0.0, 0.5, 0.3], dtype=torch.float64)
    g1, g2 = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    one = [torch_categorical(probs, g1) for _ in range(50)]
    assert all(isinstance(t, int) for t in one)
    assert one == [int(torch.multinomial(probs, 1, generator=g2)[0]) for _ in range(50)]
    batch = probs.repeat(20_000, 1)
    x = torch_categorical(batch, torch.Generator().manual_seed(1))
    assert x.shape == (20_000,)
    counts = np.bincount(x.numpy(), minlength=4)
    assert counts[1] == 0
    pos = [0, 2, 3]
    assert stats.chisquare(counts[pos], 20_000 * probs.numpy()[pos]).pvalue > 1e-6
    # a near-one-hot row: the rare token's count is binomial
    rare = torch.tensor([1 - 1e-3, 1e-3], dtype=torch.float64).repeat(50_000, 1)
    k = int(torch_categorical(rare, torch.Generator().manual_seed(2)).sum())
    assert stats.binomtest(k, 50_000, 1e-3).pvalue > 1e-6
