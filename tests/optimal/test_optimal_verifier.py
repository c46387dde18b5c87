"""The optimal verifier (optaccept.optimal_verifier): lossless and optimal for every draft
tuple, checked by enumerating all tuples against the law (floats to 1e-12, Fractions
exactly), its certificate re-checked by ``verify``, and at vocabulary scale by Monte
Carlo at fixed seeds."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept.optimal import optimal_verifier, optimal_verifier_batched


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


def _enumerate(p, law):
    """Σ_x̄ D(x̄) π(·|x̄) and Σ_x̄ D(x̄) π(set(x̄)|x̄), by listing every ordered tuple."""
    tuples, probs = law.tuple_law()
    ov = optimal_verifier(p, law)
    exact = ov.exact
    out = np.array([Fraction(0)] * law.n, dtype=object) if exact else np.zeros(law.n)
    acc = Fraction(0) if exact else 0.0
    for t, pr in zip(tuples.tolist(), probs if exact else np.asarray(probs).tolist()):
        c = ov.conditional(t)
        if exact:
            assert all(isinstance(v, Fraction) and v >= 0 for v in c) and sum(c) == 1
        else:
            assert c.shape == (law.n,) and c.min() >= 0.0 and abs(c.sum() - 1.0) <= 1e-12
        out = out + pr * c
        acc += pr * sum(c[y] for y in set(t))
    return ov, out, acc


def _nasty_cases(rng, n, k):
    """(p, q) pairs with zeros, ties, p = q, disjoint supports and near-one-hot laws."""
    p = rng.dirichlet(np.full(n, 0.5))
    q = rng.dirichlet(np.full(n, 0.5))
    yield p, q
    yield p, p.copy()  # p = q
    if n >= 2:
        a = np.zeros(n)
        a[: n // 2] = rng.random(n // 2) + 0.1
        b = np.zeros(n)
        b[n // 2 :] = rng.random(n - n // 2) + 0.1
        yield a / a.sum(), b / b.sum()  # disjoint supports
        t = np.full(n, 1.0 / n)
        yield t, t.copy()  # ties everywhere
        z = p.copy()
        z[0] = 0.0
        yield z / z.sum(), q  # a zero in p
        z = q.copy()
        z[-1] = 0.0
        yield p, z / z.sum()  # a zero in q
        h = np.full(n, 1e-12 / (n - 1))
        h[0] = 1.0 - 1e-12
        yield h, q  # near one-hot target
        yield p, h  # near one-hot draft


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_iid_enumeration_lossless_and_optimal(n, k):
    rng = np.random.default_rng(100 * n + k)
    for p, q in _nasty_cases(rng, n, k):
        law = oa.IID(q, k)  # k above the support is allowed for i.i.d. drafts
        star = oa.optimal_acceptance(p, law).value
        ov, out, acc = _enumerate(p, law)
        assert np.abs(out - p).max() <= 1e-12
        assert abs(acc - star) <= 1e-12
        assert abs(ov.acceptance - star) <= 1e-12
        assert oa.verify(p, law, ov).ok


def test_iid_enumeration_random_instances():
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(2, 8))
        k = int(rng.integers(1, 5))
        conc = rng.choice([0.2, 1.0, 5.0])
        p, q = rng.dirichlet(np.full(n, conc)), rng.dirichlet(np.full(n, conc))
        law = oa.IID(q, k)
        _, out, acc = _enumerate(p, law)
        assert np.abs(out - p).max() <= 1e-12
        assert abs(acc - oa.optimal_acceptance(p, law).value) <= 1e-12


def _grid(rng, n, den):
    a = rng.integers(0, 4, n)
    while a.sum() == 0:
        a = rng.integers(0, 4, n)
    return [Fraction(int(v), int(a.sum())) for v in a]


@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_iid_exact_fractions(n):
    rng = np.random.default_rng(n)
    for k in (1, 2, 3):
        for _ in range(4):
            p, q = _grid(rng, n, 3), _grid(rng, n, 3)
            law = oa.IID(q, k)
            star = oa.optimal_acceptance(p, law).value
            ov, out, acc = _enumerate(p, law)
            assert ov.exact
            assert list(out) == list(p)  # lossless, exactly
            assert acc == star and ov.acceptance == star  # optimal, exactly
            v = oa.verify(p, law, ov)
            assert v.ok and v.value_gap == 0


@pytest.mark.parametrize("n,k", [(3, 2), (5, 2), (5, 3), (6, 4), (7, 3)])
def test_without_replacement_enumeration(n, k):
    rng = np.random.default_rng(10 * n + k)
    for p, q in list(_nasty_cases(rng, n, k))[:5]:
        if np.count_nonzero(q) < k:
            continue
        law = oa.WithoutReplacement(q, k)
        star = oa.optimal_acceptance(p, law).value
        ov, out, acc = _enumerate(p, law)
        assert np.abs(out - p).max() <= 1e-9
        assert abs(acc - star) <= 1e-9  # the flow LP is certified to 1e-9
        assert oa.verify(p, law, ov).ok


def test_without_replacement_exact():
    rng = np.random.default_rng(3)
    for n, k in ((3, 2), (4, 2), (5, 3)):
        p = _grid(rng, n, 3)
        q = [Fraction(1, n)] * n
        law = oa.WithoutReplacement(q, k)
        ov, out, acc = _enumerate(p, law)
        star = oa.optimal_acceptance(p, law, method="subsets").value
        assert list(out) == list(p) and acc == star


@pytest.mark.parametrize("law_name", ["greedy", "spechub"])
def test_greedy_and_spechub_enumeration(law_name):
    rng = np.random.default_rng(11)
    for _ in range(10):
        n = int(rng.integers(3, 8))
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        law = oa.Greedy(q, 3) if law_name == "greedy" else oa.SpecHub(q)
        ov, out, acc = _enumerate(p, law)
        assert np.abs(out - p).max() <= 1e-12
        assert abs(acc - oa.optimal_acceptance(p, law).value) <= 1e-12


def test_certificate_can_fail():
    """verify recomputes the acceptance from the rule: a tampered rule is caught."""
    rng = np.random.default_rng(5)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    law = oa.IID(q, 3)
    ov = optimal_verifier(p, law)
    assert ov.certificate()["ok"] and oa.verify(p, law, ov).ok
    ov._plen = ov._plen * 0.9  # shares no longer tile the line
    assert not oa.verify(p, law, ov).ok
    ov2 = optimal_verifier(p, law)
    ov2.s = np.full(6, 1 / 6)  # a different selection marginal: acceptance below α*
    assert not oa.verify(p, law, ov2).ok


def test_contract_and_errors():
    p = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    q = np.array([0.3, 0.1, 0.35, 0.05, 0.2])
    ov = oa.optimal_verifier(p, oa.IID(q, k=4))
    assert abs(ov.value - oa.optimal_acceptance(p, oa.IID(q, 4)).value) <= 1e-12
    c = ov.conditional((1, 3, 1, 4))
    assert c.shape == (5,) and c.min() >= 0 and abs(c.sum() - 1) <= 1e-12
    x, y = ov.sample(np.random.default_rng(0), size=1000)
    assert x.shape == (1000, 4) and y.shape == (1000,)
    with pytest.raises(oa.InputError):
        ov.conditional((1, 2))
    with pytest.raises(oa.InputError):
        ov.conditional((1, 2, 3, 9))
    with pytest.raises(oa.InputError):
        oa.optimal_verifier(p, "iid")
    with pytest.raises(oa.InputError, match="^rng: must be a numpy.random.Generator or a non-negative integer seed"):
        ov.sample(1.5, 10)
    assert np.array_equal(ov.sample(7, 10)[1], ov.sample(np.random.default_rng(7), 10)[1])  # a seed is a Generator
    assert "OptimalVerifier" in repr(ov) and "α*" in ov._repr_html_()


def test_flow_plan_size_limit():
    q = np.full(40, 1 / 40)
    with pytest.raises(oa.MethodError, match="IID"):
        oa.optimal_verifier(q, oa.WithoutReplacement(q, 4), max_sets=1000)


def _zipf_pair(n, seed, sigma):
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n + 1) ** 1.1
    p = base * np.exp(rng.normal(0, sigma, n))
    q = base * np.exp(rng.normal(0, sigma, n))
    return p / p.sum(), q / q.sum()


def _monte_carlo(p, law, size, seed):
    ov = optimal_verifier(p, law)
    x, y = ov.sample(np.random.default_rng(seed), size)
    # output law: chi-square on the 30 most likely tokens plus a tail bucket
    top = np.argsort(-p)[:30]
    counts = np.bincount(y, minlength=p.size)
    obs = np.append(counts[top], size - counts[top].sum())
    exp = np.append(p[top], 1.0 - p[top].sum()) * size
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    dof = obs.size - 1
    assert chi2 < dof + 5 * np.sqrt(2 * dof)
    acc = (x == y[:, None]).any(axis=1).mean()
    sd = np.sqrt(ov.value * (1 - ov.value) / size) + 1e-12
    assert abs(acc - ov.value) <= 5 * sd
    assert abs(ov.acceptance - ov.value) <= 1e-12
    return ov


@pytest.mark.parametrize("k,sigma", [(2, 1.0), (4, 0.5), (8, 1.0)])
def test_monte_carlo_mid_vocabulary(k, sigma):
    p, q = _zipf_pair(3000, k, sigma)
    _monte_carlo(p, oa.IID(q, k), 40_000, seed=k)


def _top_m_pair(n, m, seed, sigma=1.0):
    """A full-vocabulary target and a draft truncated to its m most likely tokens."""
    p, q = _zipf_pair(n, seed, sigma)
    top = np.argsort(-q)[:m]
    qt = np.zeros(n)
    qt[top] = q[top]
    return p, qt / qt.sum()


@pytest.mark.parametrize("n,m,k", [(20_000, 12, 3), (20_000, 9, 5), (5_000, 6, 6), (20_000, 40, 2)])
def test_without_replacement_large_vocabulary_small_support(n, m, k):
    """Without-replacement drafts from a top-m draft at a large vocabulary: the flow plan
    lives on the C(m, k) draft sets and its rows are sparse.  Every set is listed, so the
    rule is checked lossless and optimal exactly as in the enumeration tests, against α* of
    the sorted prefix scan (a different method: the exponential-clock quadrature)."""
    p, q = _top_m_pair(n, m, seed=m + k)
    law = oa.WithoutReplacement(q, k)
    star = oa.optimal_acceptance(p, law).value
    ov = optimal_verifier(p, law)
    assert ov.kind == "flow plan"
    assert abs(ov.value - star) <= 1e-12 and abs(ov.acceptance - star) <= 1e-12
    sl = law.set_law()
    out = np.zeros(n)
    acc = 0.0
    for A, d in zip(sl.sets, np.asarray(sl.probs).tolist()):
        c = ov.conditional(A[::-1])  # any order of the set's tokens
        assert c.min() >= 0.0 and abs(c.sum() - 1.0) <= 1e-12
        out += d * c
        acc += d * c[list(A)].sum()
    assert np.abs(out - p).max() <= 1e-12  # lossless
    assert abs(acc - star) <= 1e-12  # optimal
    assert oa.verify(p, law, ov).ok


def test_without_replacement_monte_carlo_vocabulary_scale():
    """n = 50,000, a top-40 draft, k = 3 (9,880 draft sets), sampled at a fixed seed."""
    p, q = _top_m_pair(50_000, 40, seed=7)
    _monte_carlo(p, oa.WithoutReplacement(q, 3), 100_000, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4, 8])
def test_monte_carlo_vocabulary_scale(k):
    p, q = _zipf_pair(50_000, 100 + k, 1.0)
    _monte_carlo(p, oa.IID(q, k), 100_000, seed=k)


def test_batched_torch_form():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    rows, n, k = 4, 30, 3
    P = rng.dirichlet(np.ones(n), size=rows)
    Q = rng.dirichlet(np.ones(n), size=rows)
    drafts = np.stack([oa.IID(Q[r], k).sample(rng, 1)[0] for r in range(rows)])
    g = torch.Generator().manual_seed(0)
    y = optimal_verifier_batched(torch.tensor(P), torch.tensor(Q), torch.tensor(drafts), g)
    assert y.shape == (rows,) and y.dtype == torch.int64
    # the batched rule is the per-position rule: its outputs have positive conditional mass
    for r in range(rows):
        c = optimal_verifier(P[r], oa.IID(Q[r], k)).conditional(drafts[r])
        assert c[int(y[r])] > 0
    # statistically: one position repeated, output frequencies match p
    m = 3000
    Pr = torch.tensor(np.repeat(P[:1], m, axis=0))
    Qr = torch.tensor(np.repeat(Q[:1], m, axis=0))
    law = oa.IID(Q[0], k)
    d = torch.tensor(law.sample(np.random.default_rng(9), m))
    yy = optimal_verifier_batched(Pr, Qr, d, torch.Generator().manual_seed(1)).numpy()
    counts = np.bincount(yy, minlength=n)
    sd = np.sqrt(P[0] * (1 - P[0]) * m)
    assert (np.abs(counts - m * P[0]) <= 5 * sd + 1).all()
    # rows built in threads give the same outputs as one thread (uniforms drawn up front)
    y1 = optimal_verifier_batched(Pr[:64], Qr[:64], d[:64], torch.Generator().manual_seed(4), threads=1)
    y2 = optimal_verifier_batched(Pr[:64], Qr[:64], d[:64], torch.Generator().manual_seed(4), threads=3)
    assert torch.equal(y1, y2)
    # rows validated once per batch: unnormalised rows with normalize=True give each row's kept
    # verifier's output for the row's uniforms (drawn up front: 3k + 2 per row), and a bad row
    # is refused
    Ps, Qs = P * np.array([[3.7], [1.0], [0.2], [1e-3]]), Q * np.array([[1.0], [9.0], [0.5], [2.0]])
    g = torch.Generator().manual_seed(11)
    y = optimal_verifier_batched(torch.tensor(Ps), torch.tensor(Qs), torch.tensor(drafts), g, normalize=True)
    uni = torch.rand((rows, 3 * k + 2), generator=torch.Generator().manual_seed(11), dtype=torch.float64).numpy()
    for r in range(rows):
        ov = optimal_verifier(Ps[r], oa.IID(Qs[r], k, normalize=True), normalize=True)
        assert int(y[r]) == ov._respond_uniform(drafts[r], uni[r])
    bad = Ps.copy()
    bad[2, 5] = -0.1
    with pytest.raises(oa.InputError, match="^p: "):
        optimal_verifier_batched(torch.tensor(bad), torch.tensor(Qs), torch.tensor(drafts), g, normalize=True)


@pytest.mark.parametrize("law", ["iid", "swor"])
@pytest.mark.parametrize("scale", [0.5, 2.0, 3.0])
def test_batched_sum_rule(law, scale):
    """The README's one sum rule: a row summing to 0.5, 2 or 3 is refused (not rescaled
    silently), naming the argument, the row and its sum as given; normalize=True rescales it;
    a float32 row off by its own rounding passes; float64 rows off by more than 1e-9 but
    within n·2⁻²³ are rescaled with a RenormalizedWarning."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    rows, n, k = 3, 12, 2
    P = rng.dirichlet(np.ones(n), size=rows)
    Q = rng.dirichlet(np.ones(n), size=rows)
    lawf = oa.IID if law == "iid" else oa.WithoutReplacement
    drafts = torch.tensor(np.stack([lawf(Q[r], k).sample(rng, 1)[0] for r in range(rows)]))
    for name, (a, b) in (
        ("p", (P * np.array([[1.0], [scale], [1.0]]), Q)),
        ("q", (P, Q * np.array([[1.0], [1.0], [scale]]))),
    ):
        row = 1 if name == "p" else 2
        total = float(np.sum((a if name == "p" else b)[row]))
        with pytest.raises(oa.InputError, match=rf"^{name}: row {row} sums to {total:.6g}"):
            optimal_verifier_batched(
                torch.tensor(a), torch.tensor(b), drafts, torch.Generator().manual_seed(0), drafts=law
            )
        y = optimal_verifier_batched(
            torch.tensor(a), torch.tensor(b), drafts, torch.Generator().manual_seed(0), drafts=law, normalize=True
        )
        y0 = optimal_verifier_batched(
            torch.tensor(P), torch.tensor(Q), drafts, torch.Generator().manual_seed(0), drafts=law
        )
        assert torch.equal(y, y0)
    # float32 rows, each off by float32 rounding only: accepted without a warning
    P32 = torch.tensor(P, dtype=torch.float32)
    Q32 = torch.tensor(Q, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimal_verifier_batched(P32, Q32, drafts, torch.Generator().manual_seed(0), drafts=law)
    with pytest.warns(oa.RenormalizedWarning, match="^p: 1 of 3 rows"):
        Pw = P.copy()
        Pw[0] *= 1 + 1e-7
        optimal_verifier_batched(
            torch.tensor(Pw), torch.tensor(Q), drafts, torch.Generator().manual_seed(0), drafts=law
        )


def test_batched_torch_form_without_replacement():
    """law="swor": each row builds the flow-plan verifier of its own (top-8) draft at n = 2000."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    rows, n, k = 3, 2000, 3
    P, Q = [], []
    for r in range(rows):
        p, q = _top_m_pair(n, 8, seed=40 + r)
        P.append(p)
        Q.append(q)
    P, Q = np.array(P), np.array(Q)
    drafts = np.stack([oa.WithoutReplacement(Q[r], k).sample(rng, 1)[0] for r in range(rows)])
    y = optimal_verifier_batched(
        torch.tensor(P), torch.tensor(Q), torch.tensor(drafts), torch.Generator().manual_seed(0), drafts="swor"
    )
    assert y.shape == (rows,)
    for r in range(rows):
        c = optimal_verifier(P[r], oa.WithoutReplacement(Q[r], k)).conditional(drafts[r])
        assert c[int(y[r])] > 0
    # one position repeated: the output frequencies of the most likely tokens match p
    m = 400
    d = torch.tensor(oa.WithoutReplacement(Q[0], k).sample(np.random.default_rng(9), m))
    yy = optimal_verifier_batched(
        torch.tensor(np.repeat(P[:1], m, axis=0)),
        torch.tensor(np.repeat(Q[:1], m, axis=0)),
        d,
        torch.Generator().manual_seed(1),
        drafts="swor",
    ).numpy()
    top = np.argsort(-P[0])[:5]
    counts = np.bincount(yy, minlength=n)[top]
    sd = np.sqrt(P[0][top] * (1 - P[0][top]) * m)
    assert (np.abs(counts - m * P[0][top]) <= 5 * sd + 1).all()
    with pytest.raises(oa.InputError, match="^drafts:"):
        optimal_verifier_batched(torch.tensor(P), torch.tensor(Q), torch.tensor(drafts), drafts="joint")


def test_verifier_family_runs_the_rule():
    from optaccept import verifiers as V

    p, q = _zipf_pair(400, 0, 1.0)
    v = V.Optimal()
    y, acc = v.sample(p, q, 4, np.random.default_rng(3), 20_000)
    star = oa.optimal_acceptance(p, oa.IID(q, 4)).value
    assert abs(acc.mean() - star) <= 5 * np.sqrt(star * (1 - star) / 20_000) + 1e-12


# ---------------------------------------------------------------------------------------
# the compiled kernels against the numpy forms
# ---------------------------------------------------------------------------------------
def _build_both(p, law, monkeypatch):
    from optaccept.optimal import _line_kernel

    with monkeypatch.context() as m:
        m.setenv("OPTACCEPT_NO_JIT", "1")
        slow = optimal_verifier(p, law)
    fast = optimal_verifier(p, law) if _line_kernel.available() else None
    return slow, fast


def _line_checks(ov, tol=1e-12):
    c = ov.certificate()
    assert c["ok"], c
    assert abs(ov.acceptance - ov.value) <= tol
    assert c["layout_violation"] <= tol
    assert oa.verify(ov.p, ov.law, ov).ok


def test_line_kernel_matches_numpy_loop(monkeypatch):
    """The compiled kernels and the numpy forms realise the same selection marginal (both
    optimal, shares tiling the cells) on random and nasty instances, k = 1..8."""
    pytest.importorskip("numba")
    from optaccept.optimal import _line_kernel

    if not _line_kernel.available():
        pytest.skip("the compiled kernel is disabled (OPTACCEPT_NO_JIT)")
    rng = np.random.default_rng(77)
    count = 0
    for n in (2, 5, 30, 400, 3000):
        for k in (1, 2, 3, 5, 8):
            for p, q in _nasty_cases(rng, n, k):
                law = oa.IID(q, k)
                slow, fast = _build_both(p, law, monkeypatch)
                _line_checks(slow)
                _line_checks(fast)
                assert np.abs(np.asarray(fast.s) - np.asarray(slow.s)).max() <= 1e-12
                count += 1
    assert count >= 150


def test_extreme_instances_enumerated_against_exact():
    """On the extreme-instance suite (near-one-hot to 1 − 1e-15, masses down to 5e-324),
    every tuple's rule is enumerated: lossless to 1e-12 and its acceptance equals the exact
    α* (Fractions, computed without the library) to 1e-12."""
    import extreme_cases as ec

    checked = 0
    for label, p, q in ec.instances(64, seed=11, nmax=6):
        for k in (1, 2, 4):
            law = oa.IID(q, k)
            ov, out, acc = _enumerate(p, law)
            exact = ec.alpha_star(ec.exact(p), ec.tuple_law("iid", ec.exact(q), k))
            assert np.abs(out - p).max() <= 1e-12, label
            assert abs(acc - float(exact)) <= 1e-12, (label, k, acc, float(exact))
            assert ov.certificate()["ok"], label
            checked += 1
    for label, (p, q) in ec.REPRODUCERS.items():
        for k in (2, 3):
            ov, out, acc = _enumerate(p, oa.IID(q, k))
            exact = ec.alpha_star(ec.exact(p), ec.tuple_law("iid", ec.exact(q), k))
            assert np.abs(out - p).max() <= 1e-12 and abs(acc - float(exact)) <= 1e-12, label
            checked += 1
    assert checked == 64 * 3 + 8


def test_extremes_at_vocabulary_scale():
    """n = 20,000: near-one-hot target and draft (1 − 1e-12), subnormal tails, k up to 300;
    the certificate holds, verify re-checks it, and the sampled output law matches p on the
    heavy token."""
    rng = np.random.default_rng(8)
    n = 20_000
    base = rng.dirichlet(np.full(n, 0.3))
    hot = np.full(n, 1e-12 / (n - 1))
    hot[7] = 1.0 - 1e-12
    sub = base.copy()
    sub[::3] = 1e-310
    cases = {"p near one-hot": (hot, base), "q near one-hot": (base, hot), "subnormal tails": (sub / sub.sum(), base)}
    for label, (p, q) in cases.items():
        for k in (2, 8, 300):
            law = oa.IID(q, k)
            ov = optimal_verifier(p, law)
            c = ov.certificate()
            assert c["ok"] and abs(ov.acceptance - ov.value) <= 1e-12, (label, k, c)
            assert c["layout_violation"] <= 1e-12
            assert oa.verify(p, law, ov).ok
            x, y = ov.sample(np.random.default_rng(k), 4000)
            assert x.shape == (4000, k) and y.shape == (4000,)
            top = int(np.argmax(p))
            sd = np.sqrt(p[top] * (1 - p[top]) * 4000)
            assert abs((y == top).sum() - 4000 * p[top]) <= 5 * sd + 1, label


def _side_coverage(law, A: set, upper: bool):
    """Side B: f_B(U) = P(set hits U); side A: g_A(T) = P(set ⊆ A, set hits T)."""

    def inside(S) -> float:  # P(set ⊆ S)
        m = np.zeros(law.n, dtype=bool)
        m[list(S)] = True
        return float(law.subset_prob(m))

    every, a = frozenset(range(law.n)), frozenset(A)
    if upper:
        return lambda U: 1.0 - inside(every - frozenset(U))
    return lambda U: inside(a) - inside(a - frozenset(U))


def test_without_replacement_layout_targets_are_feasible():
    """The documented observation for without-replacement drafts (docs/optimal_verifier.md
    §7): the truncated-greedy targets along the p/q layout, with the without-replacement
    coverage increments as cell masses, lie in B(f_B) ∩ {s ≤ p} and B(g_A) ∩ {s ≥ p} —
    checked over every subset."""
    from itertools import combinations

    from optaccept.optimal._line import _targets

    rng = np.random.default_rng(21)
    for _ in range(80):
        n = int(rng.integers(2, 7))
        k = int(rng.integers(2, min(n, 4) + 1))
        p = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 3.0])))
        q = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 3.0])))
        law = oa.WithoutReplacement(q, k)
        A = set(oa.optimal_acceptance(p, law).subset)
        for upper, side in ((True, [i for i in range(n) if i not in A]), (False, sorted(A))):
            order = sorted(side, key=lambda i: (-p[i] / q[i], i))
            if not order:
                continue
            f = _side_coverage(law, A, upper)
            F = [f(order[:j]) for j in range(len(order) + 1)]
            t, _ = _targets([p[i] for i in order], np.diff(F), upper=upper, exact=False)
            t = np.asarray(t)
            for r in range(1, len(order) + 1):
                for U in combinations(range(len(order)), r):
                    assert t[list(U)].sum() <= f([order[i] for i in U]) + 1e-12
            assert abs(t.sum() - F[-1]) <= 1e-12
            pl = np.array([p[i] for i in order])
            assert ((t <= pl + 1e-12) if upper else (t >= pl - 1e-12)).all()
