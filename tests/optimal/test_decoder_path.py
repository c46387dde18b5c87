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
    # the scan's ratios are reused only while this thread's scratch memory still holds them:
    # a mask asked for after another scan of the same size is recomputed, and still right
    for n in (300, 3000):
        p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
        first = iid_scan(p, q, 3)[1]
        second = iid_scan(q, p, 2)[1]
        for subset in (first, second, first):
            want = np.zeros(n, dtype=bool)
            want[subset()] = True
            assert np.array_equal(subset.mask(), want) and 0 < want.sum() < n


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


def test_residual_draw_is_the_inverse_cdf_of_the_residual():
    """The compiled residual draw of the one-shot answer is ``inverse_cdf(_residual(p, s), u)``
    index for index: on random and nasty rows with the layout's realised marginal, with s = p
    (no positive part: the law is p itself), with s = 0 off the line, at uniforms that land
    exactly on running sums (ties of the search) and at 0 and 1 − 2⁻⁵³."""
    rng = np.random.default_rng(46)
    _line_oneshot.available(10)
    checked = 0
    kinds = set()
    for p, q in _rows(rng):
        n = p.size
        for k in (1, 3, 3 * n):
            _, subset = iid_scan(p, q, k)
            in_a = np.zeros(n, dtype=bool)
            in_a[subset()] = True
            line, nb, ell, pl = _line_of(p, q, in_a)
            ell, pl = np.ascontiguousarray(ell), np.ascontiguousarray(pl)
            mass, dens, ptr, cells, lens, s_home = _line_kernel.device(ell, pl, k, nb, n=n)
            for s_line in (np.array(s_home), p[line], p[line] * 1.5):
                s = np.zeros(n)
                s[line] = s_line
                law = _residual(p, s)
                c = np.cumsum(law)
                us = [0.0, 1.0 - 2.0**-53, *rng.random(6)]
                us += [float(v) / float(c[-1]) for v in c[rng.integers(0, n, size=4)]]
                for u in us:
                    want = inverse_cdf(law, u)
                    got = _line_oneshot.residual_draw(p, np.asarray(line, dtype=np.int64), np.asarray(s_line), u)
                    assert got == want
                    checked += 1
                kinds.add("positive" if np.maximum(p - s, 0).sum() > 0 else "p itself")
    assert checked > 2000 and kinds == {"positive", "p itself"}


def test_residual_draw_follows_the_exact_residual():
    """On small rows the residual draw of the one-shot answer lands on token y for a set of
    uniforms of length (p_y − s_y)₊ / Σ (p − s)₊ computed in Fractions from the same floats
    (to 1e-12): the draw's law is the exact residual's."""
    rng = np.random.default_rng(47)
    for n in (3, 8, 30):
        for k in (1, 2, 5):
            p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
            _, subset = iid_scan(p, q, k)
            in_a = np.zeros(n, dtype=bool)
            in_a[subset()] = True
            line, nb, ell, pl = _line_of(p, q, in_a)
            *_, s_home = _line_kernel.device(np.ascontiguousarray(ell), np.ascontiguousarray(pl), k, nb, n=n)
            s = [Fraction(0)] * n
            for h, t in enumerate(line.tolist()):
                s[t] = Fraction(float(s_home[h]))
            pos = [max(Fraction(float(p[t])) - s[t], Fraction(0)) for t in range(n)]
            tot = sum(pos, Fraction(0))
            if tot == 0:
                continue
            grid = (np.arange(4000) + 0.5) / 4000
            hits = np.bincount(
                [_line_oneshot.residual_draw(p, line, np.asarray(s_home), float(u)) for u in grid], minlength=n
            )
            for t in range(n):
                assert abs(hits[t] / grid.size - float(pos[t] / tot)) <= 1 / grid.size + 1e-12


def test_kept_verifier_answers_one_tuple_without_its_shares():
    """A kept verifier asked for one output (``respond`` of one row, ``sample(rng, 1)``) before
    anything else answers by the one-shot passes, and gives the output of a verifier whose
    shares are built, from the same generator (the same uniforms consumed, the generator
    left in the same state); accepted answers leave the shares unbuilt, and the next call
    builds them.  Random and nasty rows, k from 1 to above the support."""
    import optaccept as oa
    from optaccept.optimal import optimal_verifier

    rng = np.random.default_rng(48)
    lazy_answers = rejected = 0
    outs = set()
    for p, q in _rows(rng):
        n = p.size
        law_q = np.flatnonzero(q > 0)
        for k in sorted({1, 2, 4, 3 * n}):
            law = oa.IID(q, k)
            for t in range(4):
                x = rng.choice(law_q, size=k)
                seed = int(rng.integers(2**32))
                lazy = optimal_verifier(p, law)
                full = optimal_verifier(p, law)
                full.s  # noqa: B018  (builds the shares)
                g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
                if t % 2:
                    d1, got = lazy.sample(g1, 1)
                    d2, want = full.sample(g2, 1)
                    assert np.array_equal(d1, d2)
                    x = d1[0]
                else:
                    got, want = lazy.respond(x[None], g1), full.respond(x[None], g2)
                assert got.dtype == want.dtype and np.array_equal(got, want)
                assert g1.random() == g2.random()
                if "_ptr" not in lazy.__dict__:
                    lazy_answers += 1
                rejected += int(got[0]) not in set(x.tolist())
                outs.add(int(got[0]))
                again = lazy.respond(x[None], g1)
                assert "_ptr" in lazy.__dict__ and again.shape == (1,)
                assert lazy.acceptance == full.acceptance and np.array_equal(lazy.s, full.s)
    assert lazy_answers > 300 and rejected > 20 and len(outs) > 50


def test_drafted_tokens_are_located_in_the_order():
    """The binary search of the one-shot passes puts every token at its index in the layout
    order (−1 where q = 0), and counts side B, on random and nasty rows, rows of one shared
    ratio (p = q: one run re-sorted by side and id) and rows whose ratios differ only in the
    bits the packed values cut."""
    from optaccept.optimal import _line_order

    rng = np.random.default_rng(49)
    assert _line_oneshot.available(10)
    order = _line_order._kernel(10)
    locate = _line_oneshot._kernel(10)
    rows = _rows(rng)
    for n in (40, 5000):
        p = rng.dirichlet(np.full(n, 0.5))
        q = p * (1 + 1e-13 * rng.random(n))
        q[0] = 1e6 * p[0] + 1e-250  # a wide span of keys: the low key bits are cut
        rows.append((p, q / q.sum()))
    checked = 0
    for p, q in rows:
        n = p.size
        for side_a in (rng.random(n) < 0.5, np.zeros(n, dtype=bool)):
            a = _line_oneshot._arrays(n)
            info = np.empty(_line_order.INFO, dtype=np.uint64)
            line, keys = a["line"], a["keys"]
            m = order(p, q, side_a, line, keys, keys.view(np.float64), a["work"], a["ell"], a["pl"], info)
            if m < 0:  # a ratio off the normal range: the numpy order's case
                continue
            want = np.full(n, -1, dtype=np.int64)
            want[line[:m]] = np.arange(m)
            x = np.arange(n, dtype=np.int64)
            homes = np.empty(n, dtype=np.int64)
            nb = locate(q, x, line, m, keys, a["work"], info, homes)
            assert np.array_equal(homes, want)
            assert nb == int(np.count_nonzero((q > 0) & ~side_a))
            checked += 1
    assert checked > 40


def _general_path(x, normalize=False, n=None):
    """``as_distribution`` without its fast path: the copy, the checks, the division."""
    from optaccept._lib.validation import _finish_vector, _vector

    arr, src = _vector(x, "p", n)
    return _finish_vector(arr, src, "p", normalize, None)


def _outcome(fn, *args, **kwargs):
    """(value bits or None, error message or None, warning messages) of one call."""
    import warnings

    from optaccept._errors import InputError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
        except InputError as exc:
            return None, str(exc), [str(w.message) for w in caught]
    assert not out.flags.writeable and out.dtype == np.float64
    return out.view(np.uint64).tobytes(), None, [str(w.message) for w in caught]


def test_the_validation_fast_path_is_the_general_path():
    """``as_distribution`` on a C-contiguous float64 vector (its fast path: the sum and minimum
    on the caller's array, one pass that copies or divides) gives the general path's array bit
    for bit, and its refusals and warnings word for word, on random and nasty rows and on rows
    made wrong (NaN, inf, negative, zero, sums off by float64 rounding, within and beyond the
    float32 tolerance, wrong length, wrong shape, strided, float32, lists); the caller's array
    is left unchanged and not shared; and a verifier built through it gives the outputs of one
    built on the general path's p."""
    import optaccept as oa
    from optaccept._lib.validation import as_distribution
    from optaccept.optimal._line import _LineVerifier

    rng = np.random.default_rng(50)
    cases = []
    for p, q in _rows(rng):
        n = p.size
        cases += [p, q, p * (1 + 4e-10), p * (1 - 3e-10), p * (1 + 1e-6), p * (1 + 3 * n * 2.0**-23), p * 2.0]
        cases += [p.astype(np.float32), list(p), p[::-1], np.concatenate([p, p])[::2], p[None, :]]
        for v in (np.nan, np.inf, -np.inf, -1e-300, -0.0, 0.0):
            bad = p.copy()
            bad[rng.integers(n)] = v
            cases.append(bad)
    cases += [np.zeros(5), np.array([]), np.array(0.5), np.array([0.5, 0.5, 0.0])]
    checked = 0
    for x in cases:
        keep = np.array(x, copy=True)
        for normalize in (False, True):
            for n in (None, np.size(x), np.size(x) + 1):
                got = _outcome(as_distribution, x, "p", normalize=normalize, n=n)
                want = _outcome(_general_path, x, normalize, n)
                assert got == want
                checked += 1
        assert np.array_equal(np.asarray(x), keep, equal_nan=True)
    assert checked > 1000
    p = rng.dirichlet(np.full(9, 0.5))
    assert not np.shares_memory(as_distribution(p, "p"), p)
    assert not np.shares_memory(as_distribution(p * 2, "p", normalize=True), p)
    for p, q in _rows(rng):
        for k in (1, 2, 5):
            law = oa.IID(q, k)
            for x in (p, p * (1 + 5e-10)):
                fast = oa.optimal_verifier(x, law)
                slow = _LineVerifier(_general_path(x), law, False)
                assert fast.value == slow.value and np.array_equal(fast.p, slow.p)
                for seed in range(3):
                    d = law.sample(np.random.default_rng(seed), 2)
                    assert np.array_equal(fast.respond(d[:1], seed), slow.respond(d[:1], seed))
                    assert np.array_equal(fast.respond(d, seed), slow.respond(d, seed))


def test_residual_choice_is_generator_choice():
    """The kept verifier's first rejection draws, in compiled passes, the index that
    ``rng.choice(n, size=1, p=res / res.sum())`` draws (a built verifier's
    ``_speculative_step``) from the same one uniform, on random and nasty rows with realised
    marginals above, at and below p (no positive part: the law is p), and on a grid of
    uniforms that hits the running sums exactly."""
    _line_oneshot.available(10)
    rng = np.random.default_rng(51)
    checked = 0
    for p, _ in _rows(rng):
        n = p.size
        for trial in range(6):
            line = rng.permutation(n)[: int(rng.integers(0, n + 1))].astype(np.int64)
            f = [0.5, 1.0, 1.5, 1.0 + 2.0**-52][trial % 4]
            s_home = p[line] * f if trial < 5 else p[line] + 1e-3
            s = np.zeros(n)
            s[line] = s_home
            res = _residual(p, s)
            cdf = np.cumsum(res / res.sum())
            cdf /= cdf[-1]
            for u in np.concatenate([rng.random(5), cdf[:: max(n // 7, 1)], [0.0, np.nextafter(1.0, 0.0)]]):
                want = int(np.searchsorted(cdf, u, side="right"))
                assert _line_oneshot.residual_choice(p, line, s_home, float(u)) == want
                checked += 1
            seed = int(rng.integers(2**32))
            g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
            want = int(g1.choice(n, size=1, p=res / res.sum())[0])
            assert _line_oneshot.residual_choice(p, line, s_home, g2.random(1)[0]) == want
            assert g1.random() == g2.random()
    assert checked > 500
