"""The swap construction of the optimal verifier's shares (docs/optimal_verifier.md §3, §5):
the lemma checked in exact arithmetic, and the float forms (compiled loop, uncompiled loop,
vectorised numpy) against each other."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept.optimal import _line_kernel, optimal_verifier
from optaccept.optimal._line import _cell_masses
from optaccept.optimal._swaps import _matches_vectorised, _shares_vectorised, shares, side_matches


def _frac_law(rng, n, conc):
    w = rng.integers(0, 6, n) if conc < 1 else rng.integers(1, 9, n)
    if w.sum() == 0:
        w[0] = 1
    return tuple(Fraction(int(v), int(w.sum())) for v in w)


def _alpha_brute(p, q, k):
    """α* = min over all sets A of p(A) + 1 − q(A)^k (the dual (★) for i.i.d. drafts)."""
    n = len(p)
    best = Fraction(1)
    for mask in range(1 << n):
        pa = sum((p[i] for i in range(n) if mask >> i & 1), Fraction(0))
        qa = sum((q[i] for i in range(n) if mask >> i & 1), Fraction(0))
        best = min(best, pa + 1 - qa**k)
    return best


def _layout(p, law, exact):
    """The verifier's own layout: (line, nb, ell, mass, pl) as the builder sees them."""
    ov = optimal_verifier(p, law)
    q = law.q_exact if exact else law.q
    line = ov._line
    in_a = np.zeros(law.n, dtype=bool)
    in_a[list(ov.subset)] = True
    nb = int(np.count_nonzero(~in_a[line]))
    if exact:
        ell, mass = _cell_masses([q[i] for i in line.tolist()], law.k, True)
        pl = [p[i] for i in line.tolist()]
    else:
        ell, mass = _cell_masses(np.asarray(q)[line], law.k, False)
        pl = np.asarray(p)[line]
    return ov, line, nb, ell, mass, pl


def test_swap_lemma_exact():
    """In exact arithmetic, on random and degenerate instances (zeros, p = q, disjoint
    supports, k from 1 to above the support): the scan of each side ends with an empty queue,
    every match has a positive density gap, the lengths a token swaps add up to less than its
    q (so no share is clipped), the shares tile the cells exactly, the realised marginal
    respects s ≤ p on B and s ≥ p on A, and the acceptance equals α* exactly."""
    rng = np.random.default_rng(2026)
    seen_matches = 0
    for trial in range(160):
        n = int(rng.integers(1, 9))
        k = int(rng.integers(1, 6))
        p = _frac_law(rng, n, rng.random())
        q = p if trial % 7 == 0 else _frac_law(rng, n, rng.random())
        law = oa.IID(q, k)
        ov, line, nb, ell, mass, pl = _layout(p, law, True)
        m = len(line)
        dens = [mass[c] / ell[c] for c in range(m)]
        swapped = [Fraction(0)] * m
        for lo, hi, upper in ((0, nb, True), (nb, m, False)):
            lt, rt, a, left = side_matches(mass[lo:hi], pl[lo:hi], upper=upper, exact=True)
            assert left == 0
            for i, j, v in zip(lt.tolist(), rt.tolist(), a):
                assert i < j and v > 0
                gap = dens[lo + i] - dens[lo + j]
                assert gap > 0
                swapped[lo + i] += v / gap
                swapped[lo + j] += v / gap
                seen_matches += 1
        assert all(swapped[c] <= ell[c] for c in range(m))
        assert ov._layout_violation() == 0
        s = ov.s
        in_a = set(ov.subset)
        assert all(s[y] >= p[y] if y in in_a else s[y] <= p[y] for y in range(n) if q[y] > 0)
        assert ov.acceptance == ov.value == _alpha_brute(p, q, k)
    assert seen_matches >= 100


def test_swap_lemma_strict_when_matched():
    """The lemma's strict form: a token that takes part in a match swaps strictly less than
    its whole cell, so it keeps a positive piece of its own cell."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(3, 8))
        k = int(rng.integers(2, 5))
        p, q = _frac_law(rng, n, 2.0), _frac_law(rng, n, 2.0)
        ov = optimal_verifier(p, oa.IID(q, k))
        for h in range(len(ov._line)):
            a, b = ov._ptr[h], ov._ptr[h + 1]
            if b - a > 1:
                own = [ov._plen[j] for j in range(a, b) if ov._pcell[j] == h]
                assert own and own[0] > 0
                checked += 1
    assert checked >= 20


def _rand_x(rng, m):
    x = rng.normal(size=m) * rng.choice([1e-12, 1e-3, 1.0], size=m)
    x[rng.random(m) < 0.2] = 0.0
    return x


def test_scan_vectorised_matches_loop():
    """The vectorised scan gives the loop's matches (same pairs, amounts to rounding) and the
    same amount left unmatched, on random sequences with zeros and mixed scales."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        m = int(rng.integers(0, 60))
        x = _rand_x(rng, m)
        qpos, qrem = np.empty(m, dtype=np.int64), np.empty(m)
        op, oc, oa_ = np.empty(m + 1, dtype=np.int64), np.empty(m + 1, dtype=np.int64), np.empty(m + 1)
        nm, head, tail = _line_kernel.scan_py(x, qpos, qrem, op, oc, oa_)
        vp, vc, va, rest = _matches_vectorised(x)
        scale = max(np.abs(x).sum(), 1e-300)
        # the vectorised form may split or drop rounding-sized pieces: compare per pair
        loop = {}
        for i, j, a in zip(op[:nm].tolist(), oc[:nm].tolist(), oa_[:nm].tolist()):
            loop[(i, j)] = loop.get((i, j), 0.0) + a
        vec = {}
        for i, j, a in zip(vp.tolist(), vc.tolist(), va.tolist()):
            vec[(i, j)] = vec.get((i, j), 0.0) + a
        for key in set(loop) | set(vec):
            assert abs(loop.get(key, 0.0) - vec.get(key, 0.0)) <= 1e-15 * scale, key
        assert abs(qrem[head:tail].sum() - rest.sum()) <= 1e-15 * scale


def test_shares_vectorised_matches_loop():
    """The numpy share assembly equals the loop (uncompiled) on random valid matches."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        m = int(rng.integers(1, 40))
        ell = rng.dirichlet(np.full(m, 0.6)) + 1e-9
        dens = np.sort(rng.random(m))[::-1] * 4
        nm = int(rng.integers(0, 2 * m))
        left = rng.integers(0, m, nm)
        right = rng.integers(0, m, nm)
        keep = left < right
        left, right = left[keep], right[keep]
        a = rng.random(left.size) * 1e-3 * (dens[left] - dens[right])
        ptr, pcell, plen = (
            np.empty(m + 1, dtype=np.int64),
            np.empty(m + 2 * left.size, dtype=np.int64),
            np.empty(m + 2 * left.size),
        )
        sh = np.empty(m)
        cnt = _line_kernel.shares_py(ell, dens, left, right, a, ptr, pcell, plen, sh)
        vptr, vcell, vlen, vs = _shares_vectorised(ell, dens, left, right, a)

        # the loop keeps zero-length pieces (e.g. equal densities); compare the positive ones
        def pieces(pt, c, ln, m=m):
            out = []
            for h in range(m):
                out += [(h, int(c[j]), float(ln[j])) for j in range(pt[h], pt[h + 1]) if ln[j] > 0]
            return out

        lp, vp = pieces(ptr, pcell[:cnt], plen[:cnt]), pieces(vptr, vcell, vlen)
        merged_l, merged_v = {}, {}
        for h, c, v in lp:
            merged_l[(h, c)] = merged_l.get((h, c), 0.0) + v
        for h, c, v in vp:
            merged_v[(h, c)] = merged_v.get((h, c), 0.0) + v
        assert merged_l.keys() == merged_v.keys()
        for key in merged_l:
            assert abs(merged_l[key] - merged_v[key]) <= 1e-15
        np.testing.assert_allclose(sh, vs, rtol=1e-13, atol=1e-17)
        for h in range(m):  # sorted by cell within a token
            cells = pcell[ptr[h] : ptr[h + 1]]
            assert (np.diff(cells) >= 0).all()


@pytest.mark.parametrize("k", [1, 2, 4, 8, 20])
def test_device_loop_matches_numpy_steps(k):
    """The fused device loop (run uncompiled, plain Python) gives the numpy steps' cell
    masses, matches, shares and realised marginal, on random layouts of both sides."""
    rng = np.random.default_rng(100 + k)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        p = rng.dirichlet(np.full(n, 0.7))
        q = rng.dirichlet(np.full(n, 0.7))
        ov, line, nb, ell, mass, pl = _layout(p, oa.IID(q, k), False)
        m = line.size
        ell = np.ascontiguousarray(ell)
        mass2, dens2 = np.empty(m), np.empty(m)
        x, qpos, qrem = np.empty(m + 2), np.empty(m + 2, dtype=np.int64), np.empty(m + 2)
        mp, mc, ma = np.empty(m + 2, dtype=np.int64), np.empty(m + 2, dtype=np.int64), np.empty(m + 2)
        nm = _line_kernel._device_py(ell, np.ascontiguousarray(pl), k, nb, mass2, dens2, x, qpos, qrem, mp, mc, ma)
        np.testing.assert_allclose(mass2, mass, rtol=1e-13, atol=1e-300)
        dens = mass / ell
        lb, rb, ab, _ = side_matches(mass[:nb], pl[:nb], upper=True)
        la, ra, aa, _ = side_matches(mass[nb:], pl[nb:], upper=False)
        left = np.concatenate([lb, la + nb])
        right = np.concatenate([rb, ra + nb])
        got = sorted(zip(mp[:nm].tolist(), mc[:nm].tolist()))
        assert got == sorted(zip(left.tolist(), right.tolist()))
        ptr, pcell, plen, s_home = shares(ell, dens, left, right, np.concatenate([ab, aa]))
        np.testing.assert_allclose(np.asarray(ov.s)[line], s_home, rtol=1e-12, atol=1e-17)


def test_float_and_exact_realise_the_same_marginal():
    """The float build on the floats of a Fraction instance realises the exact build's
    marginal to rounding (the same layout, scan and swaps)."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(1, 6))
        p, q = _frac_law(rng, n, 2.0), _frac_law(rng, n, 2.0)
        ex = optimal_verifier(p, oa.IID(q, k))
        fl = optimal_verifier(np.array([float(v) for v in p]), oa.IID(np.array([float(v) for v in q]), k))
        assert np.abs(np.array([float(v) for v in ex.s]) - fl.s).max() <= 1e-14


def test_respond_one_is_the_verifiers_output():
    """The one-shot row path of the batched form gives exactly the kept verifier's output for
    the same uniforms (both layouts, drafts and residual draws), on random and nasty rows."""
    from optaccept.optimal._line import respond_one

    rng = np.random.default_rng(31)

    def same_output(p, q, k, tuples):
        law = oa.IID(q, k)
        ov = optimal_verifier(p, law)
        for _ in range(tuples):
            x = law.sample(rng, 1)[0]
            u = rng.random(3 * k + 2)
            assert respond_one(ov.p, law.q, k, x, u) == ov._respond_uniform(x, u)
        return tuples

    count = 0
    for n in (3, 40, 2000):
        for k in (1, 2, 4, 8):
            p = rng.dirichlet(np.full(n, 0.5))
            for q in (rng.dirichlet(np.full(n, 0.5)), p.copy()):
                count += same_output(p, q, k, 25)
    assert count == 3 * 4 * 2 * 25
    # nasty rows: zeros, ties, a near-one-hot draft, p = q uniform, repeated drafts (k > n)
    n = 30
    zp = rng.dirichlet(np.full(n, 0.3))
    zp[:10] = 0.0
    zp /= zp.sum()
    hot = np.full(n, 1e-12 / (n - 1))
    hot[3] = 1.0 - 1e-12
    ties = np.repeat(rng.dirichlet(np.ones(5)), 6) / 6
    flat = np.full(n, 1.0 / n)
    for p, q in (
        (zp, rng.dirichlet(np.ones(n))),
        (rng.dirichlet(np.ones(n)), hot),
        (ties, ties[::-1].copy()),
        (flat, flat),
        (hot, flat),
        (zp, zp),
    ):
        for k in (1, 3, 40):
            same_output(p, q, k, 40)


def test_line_order_is_the_ratio_order_with_ties_by_side_and_id():
    """The layout's order (a value sort of packed keys, runs re-sorted exactly) equals a
    plain lexicographic sort by (p/q descending, side, id) on random rows, all-tie rows,
    rounded rows with many ties, zeros, and ratios equal in all but their last bits (below
    the packed key's resolution)."""
    from optaccept.optimal._sorted import line_order

    rng = np.random.default_rng(8)
    for t in range(200):
        n = int(rng.choice([2, 5, 50, 3000, 70000]))
        p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
        if t % 4 == 0:
            q = p.copy()
        elif t % 4 == 1:
            p = np.round(p * 50) / 50 + 1e-3
            q = np.round(q * 7) / 7 + 1e-3
        elif t % 4 == 2:
            q[rng.integers(n, size=max(1, n // 5))] = 0.0
            p[rng.integers(n, size=max(1, n // 5))] = 0.0
        elif t % 8 == 3:
            q = p * (1 + 1e-15 * rng.integers(-3, 4, n))
        p, q = p / p.sum(), q / q.sum()
        first = rng.random(n) < 0.5
        ids = np.flatnonzero(q > 0)
        want = ids[np.lexsort((ids, ~first[ids], -(p[ids] / q[ids])))]
        np.testing.assert_array_equal(line_order(p, q, first), want)
