"""Results travel between processes (joblib, Dask): an α* result pickles with its certificate
made concrete, and the copy re-checks against p like the original."""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa


@pytest.mark.parametrize("law_name", ["iid", "swor", "greedy"])
def test_acceptance_result_round_trip(law_name):
    rng = np.random.default_rng(3)
    for _ in range(10):
        n = int(rng.integers(2, 9))
        p = rng.dirichlet(np.ones(n))
        q = rng.dirichlet(np.ones(n))
        k = int(rng.integers(1, n + 2)) if law_name == "iid" else int(rng.integers(1, n + 1))
        law = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}[law_name](q, k)
        res = oa.optimal_acceptance(p, law)
        copy = pickle.loads(pickle.dumps(res))
        assert copy.value == res.value and copy.method == res.method
        assert copy.subset == res.subset
        assert oa.verify(p, law, copy).ok


def test_exact_result_round_trip():
    p = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    law = oa.IID([Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)], 2)
    res = oa.optimal_acceptance(p, law)
    copy = pickle.loads(pickle.dumps(res))
    assert copy.value == res.value and isinstance(copy.value, Fraction)
    assert oa.verify(p, law, copy).ok
