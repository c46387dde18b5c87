"""``DraftLaw.inclusion``: P(y ∈ set(x̄)) of every law, against enumeration of the ordered
draws in Fractions (``tests/extreme_cases.py``, which shares no code with the library), and
before/after checks against frozen copies of the implementations it replaced (kept here
only): the target-only verifier's per-law values, the real-pair tables' recursion and pair
formula, the tree bound's per-token quadrature, and the three Fraction copies of the W(B)
recursion (the set law, D(set ⊆ S) and the polyhedra prefix check)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import extreme_cases
import numpy as np
import pytest
from extreme_cases import exact, independent_law, instances, tuple_law

import optaccept as oa
from optaccept import InputError
from optaccept._lib import stable as _stable
from optaccept._lib.subsets import colex_rank
from optaccept.drafts._swor import inclusions as _swor_inclusions

# -- references ---------------------------------------------------------------------------


def _enumerated(law_tuples: dict, n: int) -> list[Fraction]:
    """P(y ∈ set(x̄)) summed over the ordered tuples."""
    out = [Fraction(0)] * n
    for t, pr in law_tuples.items():
        for y in set(t):
            out[y] += pr
    return out


def _rows(seed: int, n: int) -> list[np.ndarray]:
    """Random and nasty rows: zeros, ties, near-one-hot, tiny and subnormal masses."""
    rng = np.random.default_rng(seed)
    rows = [
        rng.dirichlet(np.ones(n)),
        np.where(rng.random(n) < 0.4, 0.0, rng.random(n)),  # zeros
        np.full(n, 1.0),  # ties
        np.r_[1 - 1e-12, np.full(n - 1, 1e-12 / (n - 1))],  # near-one-hot
        np.r_[0.5, 5e-320, np.full(n - 2, 0.5 / (n - 2))],  # a subnormal mass
        np.r_[1.0, np.zeros(n - 1)],  # one-hot
    ]
    out = []
    for q in rows:
        if not q.any():
            q[0] = 1.0
        out.append(q / q.sum())
    return out + [q for _, _, q in itertools.islice(instances(8, seed=seed, nmax=n), 8)]


def _law(kind: str, q, k: int):
    return extreme_cases._law(oa, kind, q, k)


def _ks(kind: str, q: np.ndarray) -> range:
    supp = int(np.count_nonzero(q))
    if kind == "spechub":
        return range(2, 3) if supp >= 2 else range(0)
    return range(1, (min(supp + 2, 5) if kind == "iid" else supp + 1))  # i.i.d.: k above the support too


# -- every law against enumeration ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["iid", "swor", "greedy", "spechub"])
@pytest.mark.parametrize("seed", range(4))
def test_float_inclusion_matches_enumeration(kind, seed):
    for q in _rows(seed, 3 + seed % 3):
        n, qx = q.size, exact(q)
        for k in _ks(kind, q):
            want = _enumerated(tuple_law(kind, qx, k), n)
            got = _law(kind, q, k).inclusion()
            assert got.dtype == np.float64 and got.shape == (n,)
            for y in range(n):
                assert got[y] == pytest.approx(float(want[y]), rel=1e-12, abs=1e-300), (kind, q, k, y)


@pytest.mark.parametrize("kind", ["iid", "swor", "greedy", "spechub"])
def test_exact_inclusion_equals_enumeration(kind):
    rng = np.random.default_rng(7)
    for _ in range(6):
        n = int(rng.integers(2, 6))
        w = rng.integers(0, 5, size=n)
        w[0] += 1
        qx = [Fraction(int(v), int(w.sum())) for v in w]
        for k in _ks(kind, np.array([float(v) for v in qx])):
            got = _law(kind, qx, k).inclusion()
            assert got == tuple(_enumerated(tuple_law(kind, qx, k), n)), (kind, qx, k)


def test_independent_and_joint_laws_match_enumeration():
    rng = np.random.default_rng(3)
    for _ in range(10):
        n, k = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        qs = rng.dirichlet(np.ones(n), size=k)
        qs[0, 0] = 0.0
        qs[0] /= qs[0].sum()
        ref = independent_law([exact(r) for r in qs])
        want = _enumerated(ref, n)
        np.testing.assert_allclose(oa.Independent(qs).inclusion(), [float(v) for v in want], rtol=1e-13)
        tuples = np.array(list(ref), dtype=np.int64)
        probs = [ref[tuple(t)] for t in tuples.tolist()]
        assert oa.Joint(tuples, probs, n=n).inclusion() == tuple(want)
        np.testing.assert_allclose(
            oa.Joint(tuples, [float(v) for v in probs], n=n, normalize=True).inclusion(),
            [float(v) for v in want],
            rtol=1e-13,
        )
        assert oa.Independent([[Fraction(v) for v in exact(r)] for r in qs]).inclusion() == tuple(
            _enumerated(independent_law([exact(r) for r in qs]), n)
        )


def test_the_tokens_asked_only():
    q = np.random.default_rng(0).dirichlet(np.ones(7))
    law = oa.WithoutReplacement(q, 3)
    every = law.inclusion()
    assert every.sum() == pytest.approx(3.0, rel=1e-14)
    np.testing.assert_array_equal(law.inclusion([5, 0, 5]), every[[5, 0, 5]])
    assert law.inclusion(np.zeros(0, dtype=int)).shape == (0,)
    for bad in ([7], [-1], [0.5], [[0, 1]], "ab"):
        with pytest.raises(InputError, match="tokens"):
            law.inclusion(bad)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_rows_too_wide_or_overflowing_take_one_quadrature_per_token(monkeypatch, k):
    """Above ``EXPANDED`` (here 0) or where the recursion's floats overflow, the law
    integrates each token asked (1 − D(set ⊆ Ω∖{y})): the same values to 1e-13."""
    rng = np.random.default_rng(k)
    q = rng.dirichlet(np.ones(6))
    want = oa.WithoutReplacement(q, k).inclusion()
    monkeypatch.setattr(_swor_inclusions, "EXPANDED", 0)
    np.testing.assert_allclose(oa.WithoutReplacement(q, k).inclusion(), want, rtol=1e-12, atol=1e-14)
    monkeypatch.undo()
    q = np.array([1.0, 5e-324, 5e-324, 5e-324, 5e-324])  # the heavy token's odds overflow
    law = oa.WithoutReplacement(q, k)
    assert law._every_inclusion() is None
    got = law.inclusion()
    want = _enumerated(tuple_law("swor", exact(q), k), q.size)
    np.testing.assert_allclose(got, [float(v) for v in want], rtol=1e-12, atol=1e-13)


# -- before/after: frozen copies of the replaced code ---------------------------------------


def _old_target_only_inclusion(law):
    """optaccept/verifiers/_target_only.py ``_inclusion`` as it was."""
    if isinstance(law, oa.IID):
        if law.k == 1:
            return law.q.copy()
        with np.errstate(divide="ignore"):
            return -np.expm1(law.k * np.log1p(-np.minimum(law.q, 1.0)))
    if isinstance(law, oa.Greedy):
        inc = np.asarray(law.q_rest, dtype=np.float64).copy()
        inc[list(law.top)] = 1.0
        return inc
    if isinstance(law, oa.Independent):
        qs = np.asarray(law.qs, dtype=np.float64)
        return 1.0 - np.prod(1.0 - qs, axis=0)
    n = law.n
    return np.array([1.0 - float(law.subset_prob([z for z in range(n) if z != y])) for y in range(n)])


def _old_inclusions_rows(Q, k):
    """optaccept/drafts/_swor/inclusions.py ``_inclusions_rows`` as it was."""
    R = Q.sum(axis=1)
    supp = np.count_nonzero(Q > 0, axis=1)
    if k == 1:
        out = Q / R[:, None]
    elif k == 2:
        odds = np.where(Q > 0, Q / _stable.others_sum(Q, axis=1), 0.0)
        out = Q / R[:, None] * (1.0 + _stable.others_sum(odds, axis=1))
    else:
        row, col = np.nonzero(Q > 0)
        sub = Q[row]
        sub[np.arange(row.size), col] = 0.0
        after = _old_inclusions_rows(sub, k - 1) * (Q[row, col] / R[row])[:, None]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]]) if row.size else np.zeros(0, dtype=np.int64)
        out = Q / R[:, None]
        out[row[starts]] += np.add.reduceat(after, starts, axis=0) if row.size else 0.0
    full = supp <= k
    out[full] = (Q[full] > 0).astype(np.float64)
    return out


def _old_root_inclusion(q, k, x):
    """optaccept/real/_tree_values.py ``_root_inclusions`` / ``_pair_inclusions`` for one token
    of a root row q (its draft support: every entry positive), as they were."""
    n = q.size
    if k == 1:
        return float(q[x])
    if k >= n:
        return 1.0
    if k == 2:
        order = np.r_[np.delete(np.arange(n), x), x]
        c = _stable.swor2_prefix_complement(q[order][None, :], axis=1)[0, n - 1]
        return 1.0 - float(min(1.0, max(0.0, 1.0 - c)))
    if n ** (k - 1) <= 4_000_000:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            every = _old_inclusions_rows(np.asarray(q, dtype=np.float64)[None, :], k)[0]
        if np.isfinite(every).all():
            return float(every[x])
    return 1.0 - float(oa.WithoutReplacement(q, k).subset_prob(np.arange(n) != x))


def _old_tree_incl(q, x, b):
    """optaccept/tree/_bounds.py ``_Pi.incl`` (and ``_best._star_value``'s per-token sum) as it was."""
    support = int(np.count_nonzero(q))
    if q[x] == 0:
        return 0.0
    if b == 1:
        return float(q[x])
    if b >= support:
        return 1.0
    others = np.flatnonzero(np.arange(q.size) != x)
    return 1.0 - float(oa.WithoutReplacement(q, b).subset_prob(others))


@pytest.mark.parametrize("seed", range(3))
def test_target_only_values_before_and_after(seed):
    """Closed forms unchanged to the last digit; without replacement (and any explicit law) the
    old per-token integral (or set-law complement) agrees to 1e-12 with the new recursion."""
    for q in _rows(seed, 4 + seed):
        for kind in ("iid", "greedy", "spechub"):
            for k in _ks(kind, q):
                law = _law(kind, q, k)
                np.testing.assert_array_equal(law.inclusion(), _old_target_only_inclusion(law))
        for k in _ks("swor", q):
            law = oa.WithoutReplacement(q, k)
            np.testing.assert_allclose(law.inclusion(), _old_target_only_inclusion(law), rtol=1e-12, atol=1e-13)
        law = oa.Independent(np.stack([q, q[::-1]]))
        np.testing.assert_array_equal(law.inclusion(), _old_target_only_inclusion(law))
    for kind in ("iid", "swor", "greedy"):  # exact laws: the same Fractions
        qx = [Fraction(1, 2), Fraction(0), Fraction(1, 3), Fraction(1, 6)]
        for k in range(1, 4):
            law = _law(kind, qx, k)
            old = [1 - law.subset_prob([z for z in range(4) if z != y]) for y in range(4)]
            assert law.inclusion() == tuple(old)


@pytest.mark.parametrize("seed", range(4))
def test_real_pair_root_inclusions_before_and_after(seed):
    """The tables' recursion (k ≥ 3) unchanged to the last digit where q sums to 1.0 exactly
    (else to an ulp: the law rescales q by its sum first); k = 2 moved from the
    prefix-complement formula to the recursion's closed form: equal to 4e-16 absolute."""
    rng = np.random.default_rng(seed)
    for q in _rows(seed, 3 + seed % 4) + [rng.dirichlet(np.full(12, 0.1))]:
        q = q[q > 0]  # the tables hold the root's q on its draft support
        for k in sorted({*range(1, min(q.size, 5) + 1), q.size}):
            law = oa.WithoutReplacement(q, k)
            got = law.inclusion()
            old = np.array([_old_root_inclusion(q, k, x) for x in range(q.size)])
            if k == 2:  # the old 1 − (1 − c) kept 1e-16 absolute (a tiny token's inclusion was 0)
                np.testing.assert_allclose(got, old, rtol=0, atol=4e-16)
            elif q.sum() == 1.0:
                np.testing.assert_array_equal(got, old)
            else:  # the law divides q by its float sum first, the recursion did so within
                np.testing.assert_allclose(got, old, rtol=1e-15, atol=0)  # a few ulps


@pytest.mark.parametrize("seed", range(3))
def test_tree_bound_inclusions_before_and_after(seed):
    """The tree bound's per-token integral (≈1e-13) against the law's recursion."""
    for q in _rows(seed, 5 + seed):
        for b in range(1, int(np.count_nonzero(q)) + 2):
            law = oa.WithoutReplacement(q, min(b, int(np.count_nonzero(q))))
            got = law.inclusion()
            old = np.array([_old_tree_incl(q, x, b) for x in range(q.size)])
            np.testing.assert_allclose(got, old, rtol=1e-12, atol=1e-13)


def _old_exact_set_law(qx, k):
    """``WithoutReplacement.set_law``'s exact branch as it was: g over subsets of the support."""
    supp = [i for i, v in enumerate(qx) if v > 0]
    s = len(supp)
    if k == s:
        return {tuple(supp): Fraction(1)}
    q = [qx[i] for i in supp]
    g = {(): Fraction(1)}
    for m in range(1, k + 1):
        for A in itertools.combinations(range(s), m):
            tot = Fraction(0)
            for pos in range(m):
                B = A[:pos] + A[pos + 1 :]
                tot += g[B] * q[A[pos]] / (1 - sum((q[i] for i in B), Fraction(0)))
            g[A] = tot
    return {tuple(supp[i] for i in A): g[A] for A in itertools.combinations(range(s), k)}


def _old_polyhedra_swor(b, m, k):
    """optaccept/polyhedra/_prefixes.py ``_subset_probs_swor`` as it was."""
    n = len(b)
    q = [Fraction(x, m) for x in b]
    W = {0: Fraction(1)}
    for size in range(1, k + 1):
        for B in itertools.combinations(range(n), size):
            mask = sum(1 << i for i in B)
            w = Fraction(0)
            for x in B:
                rest = mask & ~(1 << x)
                used = sum((q[i] for i in range(n) if rest >> i & 1), Fraction(0))
                if W.get(rest) and used < 1:
                    w += W[rest] * q[x] / (1 - used)
            W[mask] = w
    return [
        sum((w for B, w in W.items() if bin(B).count("1") == k and B & ~mask == 0), Fraction(0))
        for mask in range(1 << n)
    ]


def _old_float_set_law(q, k):
    """``WithoutReplacement.set_law``'s float branch as it was (the vectorised W(B) layers)."""
    supp = np.flatnonzero(q > 0)
    s = supp.size
    if k == s:
        return np.ones(1)
    qv, _ = _stable.rescale_tiny(q[supp])
    g_prev = np.ones(1)
    for m in range(1, k + 1):
        combos = np.array(list(itertools.combinations(range(s), m)), dtype=np.int64).reshape(-1, m)
        tot = np.zeros(combos.shape[0])
        member = np.zeros((combos.shape[0], s), dtype=bool)
        member[np.repeat(np.arange(combos.shape[0]), m), combos.ravel()] = True
        outside = np.where(member, 0.0, qv).sum(axis=1)
        for pos in range(m):
            B = np.delete(combos, pos, axis=1)
            gB = g_prev[colex_rank(B)] if m > 1 else np.ones(combos.shape[0])
            tot += gB * (qv[combos[:, pos]] / (outside + qv[combos[:, pos]]))
        g_layer = np.empty(combos.shape[0])
        g_layer[colex_rank(combos)] = tot
        g_prev = g_layer
        last = combos
    return g_prev[colex_rank(last)]


def test_the_one_w_recursion_before_and_after():
    """Set law (Fractions and floats), exact D(set ⊆ S) and the polyhedra check's D: the same
    numbers as the three copies they replace."""
    rng = np.random.default_rng(11)
    for _ in range(12):
        n = int(rng.integers(2, 6))
        m = int(rng.integers(n, 3 * n))
        cuts = np.sort(rng.integers(0, m + 1, size=n - 1))
        b = tuple(int(v) for v in np.diff(np.r_[0, cuts, m]))
        qx = [Fraction(v, m) for v in b]
        supp = sum(1 for v in b if v)
        for k in range(1, supp + 1):
            law = oa.WithoutReplacement(qx, k)
            sl = law.set_law()
            assert dict(zip(sl.sets, sl.probs)) == _old_exact_set_law(qx, k)
            assert law.all_subset_probs() == _old_polyhedra_swor(b, m, k)
            for r in range(n + 1):
                for S in itertools.combinations(range(n), r):
                    old = sum((w for A, w in _old_exact_set_law(qx, k).items() if set(A) <= set(S)), Fraction(0))
                    assert law.subset_prob(list(S)) == old
    for q in _rows(5, 6):
        for k in range(1, int(np.count_nonzero(q)) + 1):
            law = oa.WithoutReplacement(q, k)
            np.testing.assert_array_equal(law.set_law().probs, _old_float_set_law(law.q, k))
