"""The power-sum tables of the tokens before a without-replacement window against a plain sum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optaccept.drafts import _swor
from optaccept.drafts._swor import window as _swor_window


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


pytestmark = pytest.mark.skipif(
    _swor._dp_kernel() is None, reason="no compiled kernels (numba missing or OPTACCEPT_NO_JIT set): no window search"
)


@pytest.mark.parametrize("spread", [0.0, 8.0, 40.0, 300.0])
def test_tables_equal_plain_power_sums(spread, monkeypatch):
    """scale[h] is the largest mass left after the h largest, sums[h, r] = Σ (q_i/scale[h])^r over
    those left, r ≤ 36 — masses spread over 10^spread (both the vector passes, q/top ≥ 2^-27,
    and the dropping loop below it), zeros, ties, and more tokens than kept apart as heavy."""
    monkeypatch.setattr(_swor_window, "_HEAVY_CAP", 64)
    rng = np.random.default_rng(int(spread) + 1)
    q = 10.0 ** rng.uniform(-spread, 0.0, 3000)
    q[rng.random(q.size) < 0.1] = 0.0
    q[:50] = q[50]  # ties
    heavy, rest, scale, sums = _swor_window._aggregate_tables(q)
    pos = np.sort(q[q > 0])[::-1]
    assert heavy.size == 64 and np.array_equal(heavy, pos[:64])
    assert np.array_equal(np.sort(rest), np.sort(pos[64:]))
    for h in (0, 1, 17, 63, 64):
        light = pos[h:]
        assert scale[h] == light[0]
        x = light / light[0]
        for r in (1, 2, 5, 13, 36):
            want = math.fsum((x.astype(object) ** r).tolist())  # each power rounded once, summed exactly
            assert abs(sums[h, r] - want) <= 1e-14 * want, (spread, h, r, sums[h, r], want)
