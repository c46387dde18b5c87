"""The max-flow polish (optaccept.optimal._flow.polish_flow) against an exact max flow.

The LP over draft sets is solved by HiGHS to absolute tolerances near 1e-10, which can leave
tokens of tiny capacity unfilled (a real SmolLM2 row at k = 3 lost 2e-11); the polish
re-augments in integer arithmetic.  Here it starts from deliberately poor flows (none, a
random feasible one, one over capacity) and must reach the exact max flow, computed
independently as the minimum cut by enumeration in Fractions, staying feasible."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import optaccept as oa
from optaccept.optimal._flow import incidence, polish_flow


def _min_cut(sets, D, p):
    """max flow = min cut = min over token sets S of p(S) + Σ_{A ⊄ S} D(A), by enumeration."""
    n = len(p)
    best = None
    for mask in range(1 << n):
        cut = sum((p[y] for y in range(n) if mask >> y & 1), Fraction(0))
        cut += sum((d for s, d in zip(sets, D) if any(not mask >> y & 1 for y in s)), Fraction(0))
        best = cut if best is None or cut < best else best
    return best


def _instances(rng):
    for n, k in ((4, 2), (5, 2), (6, 3), (7, 3), (7, 4)):
        for kind in ("random", "tiny", "one-hot", "equal"):
            q = rng.dirichlet(np.full(n, 0.7))
            p = rng.dirichlet(np.full(n, 0.7))
            if kind == "tiny":  # capacities the LP's tolerance ignores
                p[: n // 2] = rng.random(n // 2) * 1e-12
                p /= p.sum()
            elif kind == "one-hot":
                p = np.full(n, 1e-13 / (n - 1))
                p[-1] = 1.0 - 1e-13
            elif kind == "equal":
                p = q.copy()
            yield p, oa.WithoutReplacement(q, k)


@pytest.mark.parametrize("start", ["zero", "random", "over"])
def test_polish_reaches_the_exact_max_flow(start):
    rng = np.random.default_rng({"zero": 1, "random": 2, "over": 3}[start])
    for p, law in _instances(rng):
        sl = law.set_law()
        D = np.asarray(sl.probs, dtype=np.float64)
        inc = incidence(sl.sets, law.n)
        if start == "zero":
            x = np.zeros(inc.nnz)
        else:  # split each set's mass at random over its tokens, scaled below or above capacity
            w = rng.random(inc.nnz)
            rows = np.repeat(np.arange(len(sl.sets)), np.diff(inc.indptr))
            x = w / np.bincount(rows, weights=w)[rows] * D[rows] * (0.5 if start == "random" else 1.3)
        F = polish_flow(sp.csr_matrix((x, inc.indices, inc.indptr), shape=inc.shape), D, p)
        # the exact max flow of the same network (capacities as the Fractions of the floats)
        exact = _min_cut(sl.sets, [Fraction(v) for v in D.tolist()], [Fraction(v) for v in p.tolist()])
        assert abs(float(F.sum()) - float(exact)) <= 1e-15
        assert F.data.min() >= 0.0
        # feasible (exactly in the integer units; the float sums round at 1e-16)
        assert (np.asarray(F.sum(axis=1)).ravel() - D).max() <= 1e-15
        assert (np.asarray(F.sum(axis=0)).ravel() - p).max() <= 1e-15
        # flow only on tokens of each set
        assert np.array_equal(F.indices, inc.indices)
