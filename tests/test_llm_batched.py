"""Batched α* and verifier acceptances (optaccept.llm) against independent references:
exhaustive subset search with enumerated draft laws, the k = 2 closed form, exact
enumeration of the verifiers' algorithms over draft tuples, and the numpy core."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from optaccept import InputError  # noqa: E402
from optaccept.llm import batched_optimal_acceptance, batched_verifier_acceptance  # noqa: E402
from optaccept.llm._batched import _swor_general, _swor_k2  # noqa: E402

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
    general = float(_swor_general(torch.tensor(p[None]), torch.tensor(q[None]), k)[0])
    assert abs(got - ref) < 1e-9
    assert abs(general - ref) < 1e-9


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


def llm_like(rng, b, n, scale=3.0, temps=(1.0, 1.5)):
    logits = torch.tensor(rng.standard_normal((b, n)) * scale)
    return (torch.softmax(logits / temps[0], 1).numpy(), torch.softmax(logits / temps[1], 1).numpy())


@pytest.mark.parametrize("n", [50, 2000])
def test_swor_general_matches_k2_closed_form_at_scale(n):
    """The quadrature path (forced at k = 2) against Σ q_i (q(S) - q_i)/(1 - q_i)."""
    rng = np.random.default_rng(n)
    p, q = llm_like(rng, 3, n)
    pt, qt = torch.tensor(p), torch.tensor(q)
    general = _swor_general(pt, qt, 2).numpy()
    closed = _swor_k2(pt, qt).numpy()
    np.testing.assert_allclose(general, closed, atol=1e-9, rtol=0)


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


@pytest.mark.parametrize("drafts", ["iid", "swor", "greedy"])
def test_float32_within_1e5_of_float64(drafts):
    rng = np.random.default_rng(2)
    p, q = llm_like(rng, 4, 4096)
    v64 = batched_optimal_acceptance(p, q, 3, drafts)
    v32 = batched_optimal_acceptance(torch.tensor(p, dtype=torch.float32),
                                     torch.tensor(q, dtype=torch.float32), 3, drafts)
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
    t = batched_optimal_acceptance(torch.tensor(p), torch.tensor(q), 3, "iid", device="auto")
    assert isinstance(t, torch.Tensor)


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
            ref = [float(oa.optimal_acceptance(p[i], law(q[i], k), method="sorted").value)
                   for i in range(3)]
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
    pairs = {"sd": ("SD", "output"), "nss": ("NSS", "output"), "rrs": ("RRS", "output"),
             "kseq-output": ("KSeq", "output"), "kseq": ("KSeq", "rule"),
             "greedy": ("HuGreedy", "output")}
    for k in (1, 2, 3):
        for name, (cls, notion) in pairs.items():
            kk = 1 if name == "sd" else k
            got = batched_verifier_acceptance(p, q, kk, name)
            ref = [getattr(ver, cls)().acceptance(p[i], q[i], kk, notion=notion) for i in range(3)]
            np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0, err_msg=f"{name} k={k}")


def test_swor_candidate_chunks_agree(monkeypatch):
    import optaccept.llm._batched as b

    rng = np.random.default_rng(21)
    p, q = llm_like(rng, 3, 400, scale=1.0)
    pt, qt = torch.tensor(p), torch.tensor(q)
    whole = _swor_general(pt, qt, 3).numpy()
    monkeypatch.setattr(b, "_CHUNK_ELEMENTS", 1)
    chunked = _swor_general(pt, qt, 3).numpy()
    np.testing.assert_allclose(whole, chunked, atol=1e-14)


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
