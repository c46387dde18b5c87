"""The stable-arithmetic foundations (optaccept._lib.stable)."""

from __future__ import annotations

import numpy as np
import pytest


def test_residual_one_convention_numpy_and_torch():
    """The one residual: (p − s)₊ normalised with its mass; where the mass is 0, p itself
    (normalised); row-wise on the last axis; the same numbers in numpy and torch."""
    from optaccept._lib.stable import residual

    p = np.array([0.5, 0.3, 0.2])
    s = np.array([0.2, 0.5, 0.3])
    law, m = residual(p, s)
    assert np.allclose(law, [1.0, 0.0, 0.0]) and abs(m - 0.3) < 1e-15
    law, m = residual(p, p)  # no mass: p itself
    assert m == 0 and np.array_equal(law, p / p.sum())
    rows = np.stack([p, p])
    law2, m2 = residual(rows, np.stack([s, p]))
    assert np.allclose(law2[0], [1.0, 0.0, 0.0]) and np.array_equal(law2[1], p / p.sum())
    assert np.allclose(m2, [0.3, 0.0])
    torch = pytest.importorskip("torch")
    lt, mt = residual(torch.tensor(rows), torch.tensor(np.stack([s, p])))
    assert np.allclose(lt.numpy(), law2) and np.allclose(mt.numpy(), m2)
