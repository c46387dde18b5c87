"""Batched α* and verifier acceptances against independent references: exhaustive subset
search with enumerated draft laws, exact Fraction references (the k = 2 formula, uniform
draws C(|S|, k)/C(n, k)), exact enumeration of the verifiers' algorithms over draft
tuples, and the numpy core; the same checks on numpy input (no torch) and on torch
tensors.  Also the IID bucketed prefix scan of the core against the full sort and exact
integer references."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optaccept as oa
from optaccept import InputError, batched_optimal_acceptance
from optaccept.optimal import _batched, _sorted
from optaccept.verifiers import batched_acceptance as batched_verifier_acceptance


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    """These tests are for the compiled kernels: no size threshold (optaccept._lib.jit)."""
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")


try:
    import torch
except ImportError:  # pragma: no cover - the numpy paths need no torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

# ----------------------------------------------------------------- references


def swor_tuple_law(q, k):
    """All ordered tuples of k distinct tokens with P = prod q(x_i) / (1 - sum_{j<i} q(x_j))."""
    out = {}
    for tup in itertools.permutations(range(len(q)), k):
        pr, used = 1.0, 0.0
        for x in tup:
            if 1 - used <= 0:
                pr = 0.0
                break
            pr *= q[x] / (1 - used)
            used += q[x]
        if pr > 0:
            out[tup] = pr
    return out


def iid_tuple_law(q, k):
    return {t: float(np.prod([q[x] for x in t])) for t in itertools.product(range(len(q)), repeat=k)}


def greedy_tuple_law(q, k):
    order = sorted(range(len(q)), key=lambda i: (-q[i], i))
    top = tuple(order[: k - 1])
    rest = [i for i in range(len(q)) if i not in top]
    mass = sum(q[i] for i in rest)
    return {top + (i,): q[i] / mass for i in rest if q[i] > 0}


def brute_alpha(p, law):
    """min over all 2^n subsets S of p(S) + 1 - P(set of drafts ⊆ S)."""
    n = len(p)
    best = 1.0
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            s = set(S)
            d = sum(pr for t, pr in law.items() if set(t) <= s)
            best = min(best, sum(p[i] for i in S) + 1 - d)
    return best


def dist(rng, n, conc=0.7, tiny=0):
    x = rng.dirichlet(np.full(n, conc))
    if tiny:
        x[:tiny] *= 1e-4 * rng.random(tiny)
        x /= x.sum()
    return x


# ----------------------------------------------------------------- α*


@settings(max_examples=25)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 6), k=st.integers(1, 4))
def test_iid_matches_exhaustive(seed, n, k):
    rng = np.random.default_rng(seed)
    p, q = dist(rng, n), dist(rng, n)
    got = batched_optimal_acceptance(p[None], q[None], k, "iid")[0]
    assert abs(got - brute_alpha(p, iid_tuple_law(q, k))) < 1e-12


@settings(max_examples=25)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 6), k=st.integers(2, 4), tiny=st.integers(0, 2))
def test_swor_matches_exhaustive(seed, n, k, tiny):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    p, q = dist(rng, n), dist(rng, n, tiny=tiny)
    ref = brute_alpha(p, swor_tuple_law(q, k))
    got = batched_optimal_acceptance(p[None], q[None], k, "swor")[0]
    per_row = _batched._swor_row(p, q, k)[0]  # the core's integral / closed form, one row
    assert abs(got - ref) < 1e-9
    assert abs(per_row - ref) < 1e-9
    if torch is not None:
        tv = batched_optimal_acceptance(torch.tensor(p[None]), torch.tensor(q[None]), k, "swor")
        assert abs(float(tv[0]) - ref) < 1e-9


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 6), k=st.integers(1, 4))
def test_greedy_matches_exhaustive(seed, n, k):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    p, q = dist(rng, n), dist(rng, n)
    law = greedy_tuple_law(q, k) if k > 1 else {(i,): q[i] for i in range(n)}
    got = batched_optimal_acceptance(p[None], q[None], k, "greedy")[0]
    assert abs(got - brute_alpha(p, law)) < 1e-12


def test_greedy_ties_broken_by_lower_index():
    p = np.array([0.1, 0.5, 0.1, 0.3])
    q = np.array([0.3, 0.3, 0.3, 0.1])  # T = {0} for k = 2 (tie 0/1/2, lowest index)
    law = greedy_tuple_law(q, 2)
    assert set(t[0] for t in law) == {0}
    got = batched_optimal_acceptance(p, q, 2, "greedy")[0]
    assert abs(got - brute_alpha(p, law)) < 1e-12


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def llm_like(rng, b, n, scale=3.0, temps=(1.0, 1.5)):
    logits = rng.standard_normal((b, n)) * scale
    return softmax(logits / temps[0]), softmax(logits / temps[1])


@pytest.mark.parametrize("n", [50, 2000])
def test_swor_k2_rows_match_per_row_path_at_scale(n):
    """The batched k = 2 closed form on sorted rows against the per-row path (the core's
    prefix complements) and the numpy core's optimal_acceptance."""
    rng = np.random.default_rng(n)
    p, q = llm_like(rng, 3, n)
    rows = _batched._swor_k2_rows(p, q, False)[0]
    per_row = [_batched._swor_row(p[i], q[i], 2)[0] for i in range(3)]
    core = [oa.optimal_acceptance(p[i], oa.WithoutReplacement(q[i], 2)).value for i in range(3)]
    np.testing.assert_allclose(rows, per_row, atol=1e-13, rtol=0)
    np.testing.assert_allclose(rows, core, atol=1e-13, rtol=0)


def test_swor_k2_closed_form_against_enumeration():
    rng = np.random.default_rng(5)
    q = dist(rng, 6)
    S = [0, 2, 3]
    law = swor_tuple_law(q, 2)
    d_enum = sum(pr for t, pr in law.items() if set(t) <= set(S))
    d_closed = sum(q[i] * (q[S].sum() - q[i]) / (1 - q[i]) for i in S)
    assert abs(d_enum - d_closed) < 1e-14


def test_without_replacement_at_least_with_replacement():
    rng = np.random.default_rng(11)
    p, q = llm_like(rng, 6, 3000)
    for k in (2, 3, 5):
        iid = batched_optimal_acceptance(p, q, k, "iid")
        swor = batched_optimal_acceptance(p, q, k, "swor")
        assert np.all(swor >= iid - 1e-9)


@needs_torch
@pytest.mark.parametrize("drafts", ["iid", "swor", "greedy"])
def test_float32_within_1e5_of_float64(drafts):
    rng = np.random.default_rng(2)
    p, q = llm_like(rng, 4, 4096)
    v64 = batched_optimal_acceptance(p, q, 3, drafts)
    v32 = batched_optimal_acceptance(
        torch.tensor(p, dtype=torch.float32), torch.tensor(q, dtype=torch.float32), 3, drafts
    )
    assert v32.dtype == torch.float32
    np.testing.assert_allclose(v32.numpy(), v64, atol=1e-5, rtol=0)


def test_batching_and_types():
    rng = np.random.default_rng(3)
    p, q = llm_like(rng, 5, 100)
    whole = batched_optimal_acceptance(p, q, 3, "swor")
    one_by_one = [batched_optimal_acceptance(p[i], q[i], 3, "swor")[0] for i in range(5)]
    small_batches = batched_optimal_acceptance(p, q, 3, "swor", batch_size=2)
    np.testing.assert_allclose(whole, one_by_one, atol=1e-13)
    np.testing.assert_allclose(whole, small_batches, atol=1e-13)
    assert isinstance(whole, np.ndarray) and whole.shape == (5,)
    v32 = batched_optimal_acceptance(p.astype(np.float32), q.astype(np.float32), 3, "iid")
    assert v32.dtype == np.float32
    np.testing.assert_allclose(v32, batched_optimal_acceptance(p, q, 3, "iid"), atol=1e-5)
    if torch is not None:
        t = batched_optimal_acceptance(torch.tensor(p), torch.tensor(q), 3, "iid", device="auto")
        assert isinstance(t, torch.Tensor)
        np.testing.assert_allclose(t.cpu().numpy(), batched_optimal_acceptance(p, q, 3, "iid"), atol=1e-14)


def test_inputs_not_mutated():
    rng = np.random.default_rng(4)
    p, q = llm_like(rng, 2, 60)
    p0, q0 = p.copy(), q.copy()
    for law in ("iid", "swor", "greedy"):
        batched_optimal_acceptance(p, q, 3, law)
    assert np.array_equal(p, p0) and np.array_equal(q, q0)


def test_bad_input():
    p = np.array([[0.5, 0.5]])
    with pytest.raises(InputError, match="drafts"):
        batched_optimal_acceptance(p, p, 2, "bogus")
    with pytest.raises(InputError, match="k"):
        batched_optimal_acceptance(p, p, 0)
    with pytest.raises(InputError, match="sums"):
        batched_optimal_acceptance(np.array([[0.5, 0.6]]), p, 2)
    with pytest.raises(InputError, match="shapes"):
        batched_optimal_acceptance(p, np.array([[0.2, 0.3, 0.5]]), 2)
    with pytest.raises(InputError, match="supp"):
        batched_optimal_acceptance(p, np.array([[1.0, 0.0]]), 2, "swor")
    with pytest.raises(InputError, match="negative"):
        batched_optimal_acceptance(np.array([[1.5, -0.5]]), p, 2)


def test_against_numpy_core():
    oa = pytest.importorskip("optaccept")
    if not hasattr(oa, "optimal_acceptance"):
        pytest.skip("numpy core not available")
    rng = np.random.default_rng(7)
    p, q = llm_like(rng, 3, 300)
    for k in (2, 3, 4):
        for drafts, law in (("iid", oa.IID), ("swor", oa.WithoutReplacement), ("greedy", oa.Greedy)):
            got = batched_optimal_acceptance(p, q, k, drafts)
            ref = [float(oa.optimal_acceptance(p[i], law(q[i], k), method="sorted").value) for i in range(3)]
            np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0, err_msg=f"{drafts} k={k}")


# ----------------------------------------------------------------- verifiers


def rrs_exact(p, q, k):
    """Run SpecInfer's RRS on every i.i.d. tuple, exactly: P(output ∈ drafts)."""
    total = 0.0
    for tup, pr in iid_tuple_law(q, k).items():
        r, alive, hit = p.copy(), 1.0, 0.0
        for x in tup:
            a = min(1.0, r[x] / q[x])
            hit += alive * a
            alive *= 1 - a
            res = np.clip(r - q, 0, None)
            if res.sum() > 0:
                r = res / res.sum()
        hit += alive * sum(r[y] for y in set(tup))
        total += pr * hit
    return total


def kseq_exact(p, q, k):
    """SpecTr's K-SEQ on every i.i.d. tuple: (output ∈ drafts, accepted by the rule)."""
    from scipy.optimize import brentq

    def h(rho):
        beta = np.minimum(q, p / rho).sum()
        return 1 - (1 - beta) ** k - rho * beta

    rho = 1.0 if h(1.0) <= 0 else (float(k) if h(float(k)) >= 0 else brentq(h, 1, k, xtol=1e-15))
    m = np.minimum(q, p / rho)
    beta = m.sum()
    gamma = (1 - (1 - beta) ** k) / beta
    res = np.clip(p - gamma * m, 0, None)
    res = res / res.sum() if res.sum() > 0 else res
    out = rule = 0.0
    for tup, pr in iid_tuple_law(q, k).items():
        alive, acc = 1.0, 0.0
        for x in tup:
            a = min(1.0, p[x] / (rho * q[x]))
            acc += alive * a
            alive *= 1 - a
        rule += pr * acc
        out += pr * (acc + alive * sum(res[y] for y in set(tup)))
    return out, rule


def nss_exact(p, q, k):
    return sum(pr * sum(p[y] for y in set(t)) for t, pr in iid_tuple_law(q, k).items())


def greedy_verifier_exact(p, q, k):
    law = greedy_tuple_law(q, k)
    top = next(iter(law))[:-1]
    rest = [i for i in range(len(q)) if i not in top]
    qt = np.zeros_like(q)
    qt[rest] = q[rest] / q[rest].sum()
    r = np.where(np.isin(np.arange(len(q)), top), p, np.clip(p - qt, 0, None))
    r = r / r.sum() if r.sum() > 0 else r
    total = 0.0
    for tup, pr in law.items():
        x = tup[-1]
        a = min(1.0, p[x] / qt[x])
        total += pr * (a + (1 - a) * sum(r[y] for y in set(tup)))
    return total


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 5), k=st.integers(1, 3))
def test_verifiers_match_exact_enumeration(seed, n, k):
    rng = np.random.default_rng(seed)
    p, q = dist(rng, n), dist(rng, n)
    P, Q = p[None], q[None]
    assert abs(batched_verifier_acceptance(P, Q, k, "sd")[0] - np.minimum(p, q).sum()) < 1e-14
    assert abs(batched_verifier_acceptance(P, Q, k, "nss")[0] - nss_exact(p, q, k)) < 1e-12
    assert abs(batched_verifier_acceptance(P, Q, k, "rrs")[0] - rrs_exact(p, q, k)) < 1e-12
    out, rule = kseq_exact(p, q, k)
    assert abs(batched_verifier_acceptance(P, Q, k, "kseq-output")[0] - out) < 1e-9
    assert abs(batched_verifier_acceptance(P, Q, k, "kseq")[0] - rule) < 1e-9
    if k <= n:
        g = batched_verifier_acceptance(P, Q, k, "greedy")[0]
        assert abs(g - greedy_verifier_exact(p, q, k)) < 1e-12
        # Hu et al. §5: the greedy verifier attains α* of the greedy law.
        assert abs(g - batched_optimal_acceptance(P, Q, k, "greedy")[0]) < 1e-12


def test_verifiers_below_optimum_at_scale():
    rng = np.random.default_rng(9)
    p, q = llm_like(rng, 8, 5000)
    for k in (2, 4):
        a = batched_optimal_acceptance(p, q, k, "iid")
        for v in ("rrs", "kseq-output", "kseq", "nss"):
            assert np.all(batched_verifier_acceptance(p, q, k, v) <= a + 1e-9), v


def test_against_verifiers_module():
    ver = pytest.importorskip("optaccept.verifiers")
    rng = np.random.default_rng(12)
    p, q = llm_like(rng, 3, 200)
    pairs = {
        "sd": ("SD", "output"),
        "nss": ("NSS", "output"),
        "rrs": ("RRS", "output"),
        "kseq-output": ("KSeq", "output"),
        "kseq": ("KSeq", "rule"),
        "greedy": ("HuGreedy", "output"),
    }
    for k in (1, 2, 3):
        for name, (cls, notion) in pairs.items():
            kk = 1 if name == "sd" else k
            got = batched_verifier_acceptance(p, q, kk, name)
            ref = [getattr(ver, cls)().acceptance(p[i], q[i], kk, notion=notion) for i in range(3)]
            np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0, err_msg=f"{name} k={k}")


def _swor_rows_for_windows(rng, n):
    """Rows that stress the window search: LLM-like, Dirichlet, zeros, a near-one-hot
    draft (1 − 1e-12), masses down to 1e-300, ties, p = q and disjoint supports."""
    p, q = llm_like(rng, 1, n, scale=1.0)
    yield "llm", p[0], q[0]
    yield "dirichlet", rng.dirichlet(np.full(n, 0.3)), rng.dirichlet(np.full(n, 0.3))
    q = rng.dirichlet(np.ones(n))
    q[rng.random(n) < 0.3] = 0.0
    yield "zeros", rng.dirichlet(np.ones(n)), q / q.sum()
    q = np.insert(rng.dirichlet(np.ones(n - 1)) * 1e-12, 3, 1 - 1e-12)
    yield "one_hot", rng.dirichlet(np.ones(n)), q
    q = rng.dirichlet(np.ones(n)) * np.logspace(0, -300, n)
    yield "tiny", rng.dirichlet(np.ones(n)), q / q.sum()
    q = np.repeat(rng.dirichlet(np.ones(n // 4)), 4)[:n]
    yield "ties", np.repeat(rng.dirichlet(np.ones(n // 4)), 4)[:n] / (q.sum() or 1), q / q.sum()
    q = rng.dirichlet(np.ones(n))
    yield "p_eq_q", q.copy(), q
    half = n // 2
    yield (
        "disjoint",
        np.r_[rng.dirichlet(np.ones(half)), np.zeros(n - half)],
        np.r_[np.zeros(half), rng.dirichlet(np.ones(n - half))],
    )


@pytest.mark.parametrize("n", [40, 3000])
@pytest.mark.parametrize("k", [3, 5, 16])
def test_swor_window_search_equals_the_full_scan(n, k):
    """α* without replacement integrates only the prefixes whose with-replacement bound can
    still attain the minimum, with the tokens before them aggregated (docs/theory.md §2.2,
    optaccept/_swor.py): the same minimum and minimiser as the scan of every prefix, and each
    window equal to the slice of the full complements."""
    from optaccept._lib import stable as _stable
    from optaccept.drafts import _swor
    from optaccept.optimal._sorted import ratio_order

    rng = np.random.default_rng(n + k)
    for name, p, q in _swor_rows_for_windows(rng, n):
        p = p / p.sum()
        if (q > 0).sum() < k:
            continue
        order = ratio_order(p, q)
        qo = q[order]
        P = _stable.prefix_sums(p[order])
        full = _swor.prefix_complements(qo, k)
        h = P + full
        h[0] = 1.0
        value, j = _swor.best_prefix(P, qo, k)
        assert abs(value - h.min()) <= 1e-13, name
        assert h[j] <= h.min() + 1e-13, name
        for lo, hi in ((0, n), (n // 3, n // 3), (n // 5, 4 * n // 5), (n - 1, n)):
            w = _swor.window_complements(qo, k, lo, hi)
            assert np.max(np.abs(w - full[lo : hi + 1])) <= 1e-13, (name, lo, hi)


def test_truncated_rows_at_vocabulary_scale():
    """Top-50 rows inside a 49,152 vocabulary (like the shipped file): the tokens
    outside the support change nothing."""
    rng = np.random.default_rng(22)
    n, m = 49152, 50
    p_small, q_small = llm_like(rng, 2, m)
    p = np.zeros((2, n))
    q = np.zeros((2, n))
    idx = rng.choice(n, m, replace=False)
    p[:, idx], q[:, idx] = p_small, q_small
    for k in (2, 3, 8):
        for law in ("iid", "swor", "greedy"):
            big = batched_optimal_acceptance(p, q, k, law)
            small = batched_optimal_acceptance(p_small, q_small, k, law)
            np.testing.assert_allclose(big, small, atol=1e-12, err_msg=f"{law} k={k}")


# ----------------------------------------------------------------- homes and namespaces


@needs_torch
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_torch_rows_equal_numpy_rows(k):
    """One formula for both namespaces: torch tensors (the sorted-rows path a GPU takes,
    forced here on the CPU) give the numpy values."""
    rng = np.random.default_rng(30 + k)
    p, q = llm_like(rng, 4, 700)
    pt, qt = torch.tensor(p), torch.tensor(q)
    ref = batched_optimal_acceptance(p, q, k, "iid")
    forced = _batched._iid_sorted_rows(pt, qt, k, False)[0].numpy()
    np.testing.assert_allclose(forced, ref, atol=1e-13, rtol=0)
    for drafts in ("swor", "greedy"):
        if drafts == "swor" and k > 4:
            continue
        a = batched_optimal_acceptance(p, q, k, drafts)
        b = batched_optimal_acceptance(pt, qt, k, drafts).numpy()
        np.testing.assert_allclose(a, b, atol=1e-13, rtol=0, err_msg=drafts)
    for v in ("sd", "nss", "rrs", "kseq", "kseq-output", "greedy"):
        a = batched_verifier_acceptance(p, q, k, v)
        b = batched_verifier_acceptance(pt, qt, k, v).numpy()
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0, err_msg=v)


@pytest.mark.parametrize("drafts", ["iid", "swor", "greedy"])
def test_returned_subsets_certify_the_values(drafts):
    """return_subset gives, per row, an S whose (★) value — re-checked by optaccept.verify
    from the draft law's own formula — equals the returned α*."""
    rng = np.random.default_rng(40)
    p, q = llm_like(rng, 4, 60, scale=1.5)
    law = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}[drafts]
    for k in (1, 2, 3):
        vals, masks = batched_optimal_acceptance(p, q, k, drafts, return_subset=True)
        assert masks.shape == p.shape and masks.dtype == bool
        for i in range(4):
            res = oa.AcceptanceResult(float(vals[i]), "sorted", law(q[i], k), subset=tuple(np.flatnonzero(masks[i])))
            check = oa.verify(p[i], law(q[i], k), res)
            assert check.value_gap < 1e-12, (drafts, k, i, check)


# ----------------------------------------------------------------- extremes (exact references)


def _exact_swor_alpha(p, q, k):
    """Exact α* for drafts without replacement: every subset, the tuple law in Fractions."""
    pf = [Fraction(float(x)) for x in p]
    qf = [Fraction(float(x)) for x in q]
    tot = sum(qf)
    qf = [x / tot for x in qf]
    n = len(p)
    law = {}
    for tup in itertools.permutations([i for i in range(n) if qf[i] > 0], k):
        pr, used = Fraction(1), Fraction(0)
        for x in tup:
            pr *= qf[x] / (1 - used)
            used += qf[x]
        law[tup] = pr
    best = Fraction(1)
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            s = set(S)
            d = sum((pr for t, pr in law.items() if set(t) <= s), Fraction(0))
            best = min(best, sum((pf[i] for i in S), Fraction(0)) + 1 - d)
    return best


def _exact_swor2_prefix_alpha(p, q):
    """Exact min over the p/q-ordered prefixes of p(S) + 1 − Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i)."""
    pf = [Fraction(float(x)) for x in p]
    qf = [Fraction(float(x)) for x in q]
    tot_p, tot_q = sum(pf), sum(qf)
    pf, qf = [x / tot_p for x in pf], [x / tot_q for x in qf]
    order = sorted(range(len(p)), key=lambda i: (qf[i] == 0, pf[i] / qf[i] if qf[i] else 0, i))
    best, P, Q, A, C = Fraction(1), Fraction(0), Fraction(0), Fraction(0), Fraction(0)
    for i in order:
        P += pf[i]
        Q += qf[i]
        if qf[i] < 1:
            A += qf[i] / (1 - qf[i])
            C += qf[i] ** 2 / (1 - qf[i])
        best = min(best, P + 1 - (Q * A - C))
    return best


def _uniform_alpha(p, n, k):
    """Uniform q: D(S) = C(|S|, k)/C(n, k), so α* = min_j P_j + 1 − C(j, k)/C(n, k) over the
    j smallest p (exact: the best S of each size holds the smallest p)."""
    ps = sorted(Fraction(float(x)) for x in p)
    tot = sum(ps)
    best, P, denom = Fraction(1), Fraction(0), math.comb(n, k)
    for j, x in enumerate(ps, start=1):
        P += x / tot
        best = min(best, P + 1 - Fraction(math.comb(j, k), denom))
    return best


def _both_kinds(p, q, k, drafts="swor"):
    out = [float(batched_optimal_acceptance(p[None], q[None], k, drafts)[0])]
    if torch is not None:
        out.append(float(batched_optimal_acceptance(torch.tensor(p[None]), torch.tensor(q[None]), k, drafts)[0]))
    return out


@pytest.mark.parametrize("eps", [1e-6, 1e-9, 1e-12, 1e-15])
def test_swor_k2_near_one_hot_draft(eps):
    """k = 2 with 1 − ε of q on one token, n = 100 (was off by 2e-4 at ε = 1e-12)."""
    rng = np.random.default_rng(50)
    n = 100
    q = np.insert(rng.dirichlet(np.ones(n - 1)) * eps, 7, 1 - eps)
    p = rng.dirichlet(np.ones(n))
    ref = float(_exact_swor2_prefix_alpha(p, q))
    for got in _both_kinds(p, q, 2):
        assert abs(got - ref) <= 1e-14, (got, ref)


@pytest.mark.parametrize("n,k", [(1000, 64), (300, 200), (60, 3), (60, 30), (60, 60)])
def test_swor_uniform_large_k_against_binomials(n, k):
    """Uniform q against C(|S|, k)/C(n, k) (k = 64 gave 0.79099 for 0.79794; k ≥ 170 overflowed)."""
    rng = np.random.default_rng(n + k)
    p = rng.dirichlet(np.full(n, 0.5))
    q = np.full(n, 1.0 / n)
    ref = float(_uniform_alpha(p, n, k))
    for got in _both_kinds(p, q, k):
        assert np.isfinite(got) and abs(got - ref) <= 1e-12, (got, ref)


@pytest.mark.parametrize("top", [1 - 1e-6, 1 - 1e-9, 1 - 1e-12])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_swor_near_one_hot_against_exact_enumeration(top, k):
    """One draft token at 1 − ε (0.999999 gave NaN): every subset, exact tuple law."""
    rng = np.random.default_rng(int(k * 100 + 1 / (1 - top) % 97))
    n = 6
    q = np.insert(rng.dirichlet(np.ones(n - 1)) * (1 - top), 2, top)
    p = rng.dirichlet(np.ones(n))
    ref = float(_exact_swor_alpha(p, q, k))
    for got in _both_kinds(p, q, k):
        assert np.isfinite(got) and abs(got - ref) <= 1e-12, (got, ref)


@pytest.mark.parametrize("mass", [1e-80, 1e-300])
def test_swor_tiny_masses(mass):
    """Masses far below 1e-16 outside the top token (k = 2 and 3)."""
    q = np.array([1 - 3 * mass, mass, mass, mass])
    p = np.array([mass, 1 - 3 * mass, mass, mass])
    for k in (2, 3):
        ref = float(_exact_swor_alpha(p, q, k))
        for got in _both_kinds(p, q, k):
            assert abs(got - ref) <= 1e-12, (k, got, ref)


# ----------------------------------------------------------------- the IID bucketed scan


def _star(P, Q, tp, tq, k):
    """P/tp + 1 − (Q/tq)ᵏ from exact integer sums, to 80 digits (exact sums, one rounding in
    the power: ``Fraction ** 10**6`` would not fit in memory)."""
    with mpmath.workprec(270):
        lam = mpmath.mpf(tq - Q) / tq  # exact complement of the exact sum, then one rounding
        man, exp = (mpmath.mpf(P) / tp - mpmath.expm1(k * mpmath.log1p(-lam))).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _exact_iid_alpha(p, q, k):
    """min over the ratio-order prefixes of P_j + 1 − Q_jᵏ with exact sums (integers scaled by
    2^1100: floats are dyadic) and an 80-digit power."""
    scale = 1 << 1100
    ip = [int(Fraction(float(x)) * scale) for x in p]
    iq = [int(Fraction(float(x)) * scale) for x in q]
    order = sorted(range(len(p)), key=lambda i: (iq[i] == 0, Fraction(ip[i], iq[i]) if iq[i] else 0, i))
    tp, tq = sum(ip), sum(iq)
    best, P, Q = Fraction(1), 0, 0
    for i in order:
        P += ip[i]
        Q += iq[i]
        best = min(best, _star(P, Q, tp, tq, k))
    return best


def _exact_star(p, q, k, subset):
    scale = 1 << 1100
    ip = [int(Fraction(float(x)) * scale) for x in p]
    iq = [int(Fraction(float(x)) * scale) for x in q]
    return _star(sum(ip[i] for i in subset), sum(iq[i] for i in subset), sum(ip), sum(iq), k)


def _nasty(rng, n):
    kind = int(rng.integers(0, 8))
    p = rng.dirichlet(np.full(n, float(rng.choice([0.05, 0.3, 1.0, 5.0]))))
    q = rng.dirichlet(np.full(n, float(rng.choice([0.05, 0.3, 1.0, 5.0]))))
    if kind == 1:
        p = q.copy()
    elif kind == 2:  # zeros in both, including p = q = 0 (truncated rows)
        p[rng.random(n) < 0.4] = 0.0
        q[rng.random(n) < 0.4] = 0.0
    elif kind == 3:  # ties: a coarse grid
        p = rng.integers(0, 4, n).astype(float)
        q = rng.integers(0, 4, n).astype(float)
    elif kind == 4:  # near-one-hot q and p
        q *= 1e-12
        q[0] = 1.0
        p *= 1e-9
        p[-1] = 1.0
    elif kind == 5:  # ratios spanning 600 orders of magnitude
        p *= 10.0 ** rng.uniform(-300, 0, n)
    elif kind == 6:  # a few ratios in a sea of equal ones
        q = p.copy()
        q[: max(1, n // 50)] *= 3
    if p.sum() == 0:
        p[0] = 1.0
    if q.sum() == 0:
        q[-1] = 1.0
    return p / p.sum(), q / q.sum()


@pytest.mark.parametrize(
    "trials,sizes",
    [(80, (1, 2, 5, 30, 300, 1500)), pytest.param(400, (1, 2, 5, 30, 300, 3000), marks=pytest.mark.slow)],
)
def test_iid_scan_against_full_sort_and_exact(trials, sizes):
    """The bucketed scan against the full-sort prefix scan and an exact integer reference,
    on random and nasty instances; its subset is a certificate: exact (★) there = α*."""
    rng = np.random.default_rng(60)
    for trial in range(trials):
        n = int(rng.choice(sizes))
        k = int(rng.choice([1, 2, 3, 8, 64, 10**6]))
        p, q = _nasty(rng, n)
        law = oa.IID(q, k)
        value, subset = _sorted.iid_scan(law.q, law.q, k) if trial % 23 == 0 else _sorted.iid_scan(p, law.q, k)
        pp = law.q if trial % 23 == 0 else p
        full = _sorted.iid_prefix_float(pp, law.q, k, law, "sorted").value
        # the full sort computes 1 − Qᵏ from a rounded running sum Q: up to ~n·k·ε absolute
        assert abs(value - full) <= 1e-13 + 2.3e-16 * n * k, (trial, value, full)
        if n > 300 and trial % 8:
            continue  # (the exact reference costs ~0.1 ms per token)
        # floating sums of n positive terms: a few ulps typically, more after a mass near 1
        # (trial 184: 25 ulps of a sum of 2943 terms, one of them 1 − 1e-9)
        exact = _exact_iid_alpha(pp, law.q, k)
        assert abs(Fraction(value) - exact) <= 1e-14 * exact + 1e-300, (trial, value, float(exact))
        star = _exact_star(pp, law.q, k, subset())
        assert abs(star - exact) <= 1e-14 * exact + 1e-300, (trial, float(star), float(exact))


def test_iid_scan_handles_negative_zero_and_scratch_reuse():
    p = np.array([-0.0, 0.5, 0.5])
    q = np.array([0.5, 0.25, 0.25])
    value, subset = _sorted.iid_scan(p, q, 2)
    assert value == pytest.approx(float(_exact_iid_alpha(np.abs(p), q, 2)), abs=1e-16)
    assert 0 in set(subset().tolist())
    # a later call of the same size reuses the scratch arrays: the first subset still holds
    first = (value, tuple(subset()))
    _sorted.iid_scan(q, p + 0.0, 3)
    assert tuple(subset()) == first[1]


def test_empty_batches_and_mixed_kinds():
    e = np.zeros((0, 5))
    for drafts in ("iid", "swor", "greedy"):
        out = batched_optimal_acceptance(e, e, 2, drafts)
        assert isinstance(out, np.ndarray) and out.shape == (0,)
    assert batched_verifier_acceptance(e, e, 2, "rrs").shape == (0,)
    if torch is not None:  # a tensor on either side gives a tensor
        p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
        out = batched_optimal_acceptance(p, torch.tensor(q), 2)
        assert isinstance(out, torch.Tensor)
        assert float(out[0]) == pytest.approx(float(batched_optimal_acceptance(p, q, 2)[0]), abs=1e-15)


def test_chunked_validation_names_the_right_row():
    """Rows are validated chunk by chunk; an error still names the row of the whole batch,
    and rescaled rows give one warning."""
    import warnings

    rng = np.random.default_rng(70)
    p, q = llm_like(rng, 5, 6)
    bad = p.copy()
    bad[3, 0] += 0.5
    with pytest.raises(InputError, match="row 3"):
        batched_optimal_acceptance(bad, q, 2, batch_size=2)
    q1 = q.copy()
    q1[4] = [1.0, 0, 0, 0, 0, 0]
    with pytest.raises(InputError, match="row 4"):
        batched_optimal_acceptance(p, q1, 2, "swor", batch_size=2)
    off = p * (1 + 1e-7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = batched_optimal_acceptance(off, q, 2, batch_size=2)
    assert sum(issubclass(w.category, oa.RenormalizedWarning) for w in caught) == 1
    np.testing.assert_allclose(got, batched_optimal_acceptance(p, q, 2), atol=1e-15)


@pytest.mark.parametrize("case", ["dirichlet", "tiny", "one_hot", "uniform_big_k"])
def test_swor_compiled_and_numpy_quadrature_agree(case, monkeypatch):
    """The compiled panel recursion (convex form, Taylor polynomials for small rates) and
    the numpy cumulative-sum form give the same prefix complements to 1e-13 on rows with
    subnormal-scale masses, a near-one-hot token and k up to 40; both are checked against
    exact values by the tests above."""
    from optaccept.drafts import _swor

    if _swor._dp_kernel() is None:
        pytest.skip("numba not installed: only the numpy form runs")
    rng = np.random.default_rng(len(case))
    n = 3000
    if case == "dirichlet":
        q, k = rng.dirichlet(np.full(n, 0.3)), 5
    elif case == "tiny":
        q = rng.dirichlet(np.ones(n)) * np.logspace(0, -300, n)
        q, k = q / q.sum(), 4
    elif case == "one_hot":
        q = np.insert(rng.dirichlet(np.ones(n - 1)) * 1e-12, 10, 1 - 1e-12)
        k = 8
    else:
        q, k = rng.dirichlet(np.full(n, 5.0)), 40
    compiled = _swor.prefix_complements(q, k)
    monkeypatch.setenv("OPTACCEPT_NO_JIT", "1")
    plain = _swor.prefix_complements(q, k)
    assert np.all(np.isfinite(compiled))
    assert np.max(np.abs(compiled - plain)) <= 1e-13


def test_swor_window_with_more_heavy_tokens_than_kept_apart(monkeypatch):
    """At nodes where more tokens before the window are heavy than the tables keep apart, the
    count's law falls back to the recursion over all of them: same complements."""
    from optaccept.drafts import _swor
    from optaccept.drafts._swor import window as _swor_window

    if _swor._dp_kernel() is None:
        pytest.skip("numba not installed: no window search")
    rng = np.random.default_rng(3)
    q = rng.dirichlet(np.full(3000, 0.3))
    full = _swor.prefix_complements(q, 5)
    monkeypatch.setattr(_swor_window, "_HEAVY_CAP", 16)
    w = _swor.window_complements(q, 5, 1500, 1700)
    assert np.max(np.abs(w - full[1500:1701])) <= 1e-13
