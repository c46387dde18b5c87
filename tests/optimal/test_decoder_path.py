"""The decoder's path (issue 42, item 2) gives the outputs of the code as it was: the blocked
cell masses of the line device against a frozen copy of the previous kernel (bit for bit, on
random and nasty rows, block edges and k from 1 to above the support), the minimiser's
indicator from the solve against the indicator of its list of ids, the one-shot answer
against a frozen copy of the previous one-shot path (same uniforms), and the masses against
exact Fractions on small rows.  No timing here."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from extreme_cases import nasty_row_pairs

from optaccept._lib.sampling import inverse_cdf
from optaccept.optimal import _line_kernel, _line_oneshot
from optaccept.optimal._line import _cell_masses, _line_of, respond_one
from optaccept.optimal._sorted import iid_scan
from optaccept.optimal._verifier_base import _residual

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """The compiled kernels at every size (no threshold: optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


# -- the previous code, frozen -------------------------------------------------------------


def _old_device_py(ell, pl, k, nb, mass, dens, x, qpos, qrem, mp, mc, ma):
    """``_line_kernel._device_py`` before the blocked masses (one cell at a time)."""
    m = ell.shape[0]
    tot = 0.0
    for c in range(m - 1, -1, -1):
        tot += ell[c]
    run = 0.0
    if tot <= 0.0:
        tot = 1.0
    t0 = run / tot
    for c in range(m - 1, -1, -1):
        t1 = t0
        run += ell[c]
        t0 = run / tot
        if k <= 16:
            h = 1.0
            tp = 1.0
            for _ in range(k - 1):
                tp *= t1
                h = h * t0 + tp
            mass[c] = (ell[c] / tot) * h
        elif t0 > 0.0:
            frac = (ell[c] / tot) / t0
            tk = _ipow_impl(t0, k)
            mass[c] = -tk * math.expm1(k * math.log1p(-frac)) if frac < 1.0 else tk
        else:
            mass[c] = 0.0
        dens[c] = mass[c] / ell[c] if ell[c] > 0.0 else 0.0
    for c in range(nb):
        x[c] = mass[c] - pl[c]
    for t in range(m - nb):
        x[nb + t] = pl[m - 1 - t] - mass[m - 1 - t]
    nmb, _, _ = _scan_impl(x[:nb], qpos, qrem, mp, mc, ma)
    nma, _, _ = _scan_impl(x[nb:m], qpos, qrem, mp[nmb:], mc[nmb:], ma[nmb:])
    for i in range(nmb, nmb + nma):
        lt = m - 1 - mc[i]
        mc[i] = m - 1 - mp[i]
        mp[i] = lt
    return nmb + nma


_ipow_impl = _line_kernel.ipow_py
_scan_impl = _line_kernel.scan_py
_OLD = {}


def _old_compiled():
    """The frozen kernel compiled (no cache), against the compiled helpers."""
    if "device" not in _OLD:
        import numba

        fn = _line_kernel._with_globals(
            _old_device_py, _ipow_impl=numba.njit(_line_kernel.ipow_py), _scan_impl=numba.njit(_line_kernel.scan_py)
        )
        _OLD["device"] = numba.njit(fn)
    return _OLD["device"]


def _old_respond_one(p, q, k, x, u):
    """``_line.respond_one`` as it was (the indicator from the list of ids); run with the
    frozen device kernel in place of the new one."""
    n = p.size
    _, subset = iid_scan(p, q, k)
    in_a = np.zeros(n, dtype=bool)
    in_a[subset()] = True
    i, sy, all_s = _line_oneshot.pick(p, q, k, in_a, x, u)
    y, py = int(x[i]), float(p[x[i]])
    if py > 0 and u[2 * k] < (py / sy if sy > py else 1.0):
        return y
    s = np.zeros(n)
    line, s_home = all_s()
    s[line] = s_home
    return inverse_cdf(_residual(np.asarray(p, dtype=np.float64), s), u[2 * k + 1])


# -- helpers -------------------------------------------------------------------------------


def _rows(rng):
    """Random rows at sizes around the block of the masses (256), and the nasty rows."""
    rows = []
    for n in (1, 2, 7, 255, 256, 257, 513, 3000):
        p = rng.dirichlet(np.full(n, 0.5))
        rows += [(p, rng.dirichlet(np.full(n, 0.5))), (p, p.copy())]
    for n in (12, 600):
        rows += nasty_row_pairs(rng, n)
    return rows


def _run(fn, ell, pl, k, nb):
    m = ell.size
    mass, dens, x = np.empty(m), np.empty(m), np.empty(m + 2)
    qpos, qrem = np.empty(m + 2, dtype=np.int64), np.empty(m + 2)
    mp, mc, ma = np.empty(m + 2, dtype=np.int64), np.empty(m + 2, dtype=np.int64), np.empty(m + 2)
    nm = fn(ell, pl, k, nb, mass, dens, x, qpos, qrem, mp, mc, ma)
    return [
        mass.view(np.uint64),
        dens.view(np.uint64),
        x[:m].view(np.uint64),
        mp[:nm],
        mc[:nm],
        ma[:nm].view(np.uint64),
    ]


def _layouts(rng):
    for p, q in _rows(rng):
        n = p.size
        for k in sorted({1, 2, 3, 4, 8, 16, 17, 40, 3 * n}):
            _, subset = iid_scan(p, q, k)
            in_a = np.zeros(n, dtype=bool)
            in_a[subset()] = True
            line, nb, ell, pl = _line_of(p, q, in_a)
            yield p, q, k, in_a, np.ascontiguousarray(ell), np.ascontiguousarray(pl), nb


# -- the tests -----------------------------------------------------------------------------


def test_blocked_masses_are_the_previous_kernels():
    """The device pass (masses, densities, scan input, matches) equals the frozen previous
    kernel bit for bit — compiled, and as plain Python below the size threshold."""
    rng = np.random.default_rng(42)
    new_c = _line_kernel._impl(None).KERNEL
    new_py = _line_kernel._pure().KERNEL
    old_c = _old_compiled()
    count = 0
    for _, _, k, _, ell, pl, nb in _layouts(rng):
        want = _run(old_c, ell, pl, k, nb)
        if ell.size <= 600:
            assert all(np.array_equal(a, b) for a, b in zip(want, _run(_old_device_py, ell, pl, k, nb)))
            assert all(np.array_equal(a, b) for a, b in zip(want, _run(new_py, ell, pl, k, nb)))
        assert all(np.array_equal(a, b) for a, b in zip(want, _run(new_c, ell, pl, k, nb)))
        count += 1
    assert count > 200


def test_subset_mask_is_the_indicator_of_the_subset():
    """``subset.mask()`` of the α* solve is the indicator of ``subset()``, numpy and compiled
    passes, on random and nasty rows (empty, whole and in-bucket minimisers)."""
    rng = np.random.default_rng(43)
    kinds = set()
    for p, q in _rows(rng):
        n = p.size
        for k in (1, 2, 5, 3 * n):
            _, subset = iid_scan(p, q, k)
            want = np.zeros(n, dtype=bool)
            ids = subset()
            want[ids] = True
            got = subset.mask()
            assert got.dtype == bool and np.array_equal(got, want)
            kinds.add("empty" if ids.size == 0 else "all" if ids.size == n else "part")
    assert kinds == {"empty", "all", "part"}


def test_one_shot_is_the_previous_one_shot(monkeypatch):
    """``respond_one`` gives the frozen previous one-shot path's output (its indicator from
    the list of ids, its device kernel one cell at a time) for the same uniforms: random rows
    and nasty rows, k from 1 to above the support, tuples of any token with q > 0."""
    rng = np.random.default_rng(44)
    old = _old_compiled()
    new = _line_kernel._KERNEL if _line_kernel._kernel() is not None else None
    assert new is not None and _line_oneshot.available(10)
    tuples = 0
    outs = set()
    for p, q in _rows(rng):
        n = p.size
        support = np.flatnonzero(q > 0)
        for k in sorted({1, 2, 4, 8, 3 * n}):
            for _ in range(6 if n > 600 else 10):
                x = rng.choice(support, size=k)
                u = rng.random(3 * k + 2)
                got = respond_one(p, q, k, x, u)
                monkeypatch.setattr(_line_kernel, "_KERNEL", old)
                want = _old_respond_one(p, q, k, x, u) if _line_oneshot.pick(p, q, k, np.zeros(n, bool), x, u) else None
                monkeypatch.setattr(_line_kernel, "_KERNEL", new)
                if want is not None:
                    assert got == want
                    tuples += 1
                    outs.add(got)
    assert tuples > 500 and len(outs) > 50


def test_masses_agree_with_fractions():
    """On small rows the float masses of the line device are the exact masses
    T_c^k − T_{c+1}^k (Fractions) to 1e-13 relative, and they tile 1 − (1 − q(B))^k on
    side B."""
    rng = np.random.default_rng(45)
    kern = _line_kernel._impl(None).KERNEL
    for n in (3, 9, 40):
        for k in (1, 2, 3, 7, 3 * n):
            p = rng.dirichlet(np.full(n, 0.5))
            q = rng.dirichlet(np.full(n, 0.5))
            _, subset = iid_scan(p, q, k)
            in_a = np.zeros(n, dtype=bool)
            in_a[subset()] = True
            line, nb, ell, pl = _line_of(p, q, in_a)
            got = _run(kern, np.ascontiguousarray(ell), np.ascontiguousarray(pl), k, nb)[0].view(np.float64)
            qf = [Fraction(float(v)) for v in ell]
            _, exact = _cell_masses(qf, k, True)
            tot = sum(qf, Fraction(0))
            exact = [v / tot**k for v in exact]  # normalised tails, as the float kernel
            for g, e in zip(got.tolist(), exact):
                assert abs(Fraction(g) - e) <= Fraction(1, 10**13) * max(e, Fraction(1, 10**300))
            qb = sum(qf[:nb], Fraction(0)) / tot
            assert abs(sum(got[:nb]) - float(1 - (1 - qb) ** k)) <= 1e-14
