"""Verifiers: output law = p and acceptance at fixed seeds; exact acceptance ≤ α*;
the papers' claims (SpecHub and Hu's greedy verifier are optimal, the K-SEQ bound,
RRS = Yin et al.'s batch SD).

Reference α* here is computed independently of the library: the dual (★) by brute
force over all 2^n subsets, with D(set ⊆ S) summed over an explicitly enumerated
tuple law written in this file.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import optaccept as oa
from optaccept import verifiers as V
from optaccept._errors import InputError, MethodError

N_DRAWS = 100_000
#: Per-test false-alarm rate of the chi-square test of the output law.  With the
#: 20-odd sampler tests below the family-wise false-alarm rate is below 1e-3.
ALPHA_FALSE = 5e-5


# ---------------------------------------------------------------- reference laws
def tuple_law(kind: str, q: np.ndarray, k: int) -> list[tuple[tuple[int, ...], float]]:
    """Ordered draft tuples and probabilities, written out from docs/theory.md §1."""
    n = q.size
    out = []
    if kind == "iid":
        for t in itertools.product(range(n), repeat=k):
            pr = math.prod(q[i] for i in t)
            if pr > 0:
                out.append((t, pr))
    elif kind == "swor":
        for t in itertools.permutations(range(n), k):
            pr, used = 1.0, 0.0
            for i in t:
                pr *= q[i] / (1.0 - used) if used < 1 else 0.0
                used += q[i]
            if pr > 0:
                out.append((t, pr))
    elif kind in ("greedy", "spechub"):
        order = sorted(range(n), key=lambda i: (-q[i], i))
        top = tuple(order[: k - 1])
        rest = 1.0 - sum(q[i] for i in top)
        for j in range(n):
            if j not in top and q[j] > 0:
                out.append((top + (j,), q[j] / rest))
    return out


def ref_alpha_star(p: np.ndarray, tuples: list[tuple[tuple[int, ...], float]]) -> float:
    """min over S of p(S) + 1 − D(set ⊆ S), all 2^n subsets."""
    n = p.size
    masks = np.array([sum(1 << i for i in set(t)) for t, _ in tuples])
    probs = np.array([pr for _, pr in tuples])
    best = 2.0
    for S in range(1 << n):
        pS = sum(p[i] for i in range(n) if S >> i & 1)
        inside = probs[(masks & ~S) == 0].sum()
        best = min(best, pS + 1.0 - inside)
    return best


LAW_KIND = {
    "sd": "iid",
    "nss": "iid",
    "naive_tree": "iid",
    "rrs": "iid",
    "rrs_wor": "swor",
    "kseq": "iid",
    "spechub": "spechub",
    "khisti_is": "iid",
    "hu_greedy": "greedy",
    "optimal": "iid",
}


def instances(count: int, seed: int):
    """Random (p, q, k): n in 3..6, Dirichlet concentrations in {0.3, 1, 3}, some zeros."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n = int(rng.integers(3, 7))
        p = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 3.0])))
        q = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 3.0])))
        if rng.random() < 0.25:
            p[rng.integers(n)] = 0.0
            p /= p.sum()
        if rng.random() < 0.25:
            q[rng.integers(n)] = 0.0
            q /= q.sum()
        k = int(rng.integers(1, 5))
        if np.count_nonzero(q) < max(k, 2):
            continue
        out.append((p, q, k))
    return out


# ---------------------------------------------------------------- statistical tests
P0 = np.array([0.30, 0.05, 0.25, 0.12, 0.20, 0.08])
Q0 = np.array([0.10, 0.30, 0.15, 0.25, 0.05, 0.15])
CASES = [(v, k) for v in V.ALL for k in (1, 2, 3) if v.supports(k) and (k > 1 or v.name == "sd")]


def chi2_pvalue(y: np.ndarray, p: np.ndarray) -> float:
    counts = np.bincount(y, minlength=p.size)
    assert counts[p == 0].sum() == 0, "a token of target probability 0 was output"
    keep = p > 0
    return float(stats.chisquare(counts[keep], p[keep] * y.size).pvalue)


@pytest.mark.parametrize(("verifier", "k"), CASES, ids=[f"{v.name}-k{k}" for v, k in CASES])
def test_sampler_law_and_acceptance(verifier, k):
    d = verifier.simulate(P0, Q0, k, np.random.default_rng(12345 + k), N_DRAWS)
    assert d.y.shape == (N_DRAWS,) and d.drafts.shape == (N_DRAWS, k)
    assert chi2_pvalue(d.y, P0) > ALPHA_FALSE
    for notion, flags in (("output", d.in_drafts), ("rule", d.rule_accepted)):
        a = verifier.acceptance(P0, Q0, k, notion=notion)
        sigma = math.sqrt(max(a * (1 - a), 1e-12) / N_DRAWS)
        assert abs(flags.mean() - a) <= 5 * sigma, (notion, flags.mean(), a)
    y, acc = verifier.sample(P0, Q0, k, np.random.default_rng(7), 1000)
    assert y.dtype.kind == "i" and acc.dtype == bool


@pytest.mark.parametrize("verifier", [v for v in V.ALL if v.supports(2)], ids=lambda v: v.name)
def test_sampler_sparse_target(verifier):
    """Target with zeros and a draft that over-weights them: still exactly p."""
    p = np.array([0.0, 0.5, 0.0, 0.3, 0.2])
    q = np.array([0.4, 0.1, 0.3, 0.1, 0.1])
    d = verifier.simulate(p, q, 2, np.random.default_rng(99), N_DRAWS)
    assert chi2_pvalue(d.y, p) > ALPHA_FALSE
    a = verifier.acceptance(p, q, 2)
    assert abs(d.in_drafts.mean() - a) <= 5 * math.sqrt(max(a * (1 - a), 1e-12) / N_DRAWS)


def test_caller_arrays_untouched():
    p, q = P0.copy(), Q0.copy()
    for v in V.ALL:
        if v.supports(2):
            v.sample(p, q, 2, np.random.default_rng(0), 100)
            v.acceptance(p, q, 2)
    assert np.array_equal(p, P0) and np.array_equal(q, Q0)


# ---------------------------------------------------------------- exact checks
INST = instances(300, seed=2024)


def test_exact_acceptance_below_alpha_star_300_instances():
    checked = 0
    for p, q, k in INST:
        cache = {}
        for v in V.ALL:
            if not v.supports(k):
                continue
            kind = LAW_KIND[v.name]
            if kind == "swor" and k > np.count_nonzero(q):
                continue
            if kind not in cache:
                cache[kind] = ref_alpha_star(p, tuple_law(kind, q, k))
            star = cache[kind]
            out = v.acceptance(p, q, k)
            rule = v.acceptance(p, q, k, notion="rule")
            assert -1e-12 <= rule <= out + 1e-9, (v.name, rule, out)
            assert out <= star + 1e-9, (v.name, p, q, k, out, star)
            checked += 1
    assert checked > 1500


def test_spechub_and_hu_greedy_attain_alpha_star():
    for p, q, k in INST:
        if k >= 2:
            star = ref_alpha_star(p, tuple_law("greedy", q, k))
            assert V.HuGreedy().acceptance(p, q, k) == pytest.approx(star, abs=1e-10)
            star2 = ref_alpha_star(p, tuple_law("spechub", q, 2))
            assert V.SpecHubVerifier().acceptance(p, q, 2) == pytest.approx(star2, abs=1e-10)
            assert V.SpecHubVerifier().acceptance(p, q, 2) == pytest.approx(
                oa.optimal_acceptance(p, oa.SpecHub(q)).value, abs=1e-12
            )


def test_optimal_verifier_and_canonical_decomposition_equal_alpha_star():
    for p, q, k in INST[:60]:
        star = ref_alpha_star(p, tuple_law("iid", q, k))
        assert V.Optimal().acceptance(p, q, k) == pytest.approx(star, abs=1e-9)
        cd = V.canonical_decomposition(p, oa.IID(q, k))
        assert cd.value == pytest.approx(star, abs=1e-7)
        assert np.allclose(cd.beta.sum(axis=1), 1.0)
        for a, s in enumerate(cd.sets):
            off = np.ones(p.size, dtype=bool)
            off[list(s)] = False
            assert np.all(cd.beta[a, off] == 0)
        assert np.allclose(cd.set_probs @ cd.beta, cd.p_I)
        assert cd.value == pytest.approx(np.minimum(p, cd.p_I).sum(), abs=1e-12)


def test_canonical_decomposition_other_laws():
    rng = np.random.default_rng(5)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        for kind, law in (("swor", oa.WithoutReplacement(q, 3)), ("greedy", oa.Greedy(q, 3))):
            cd = V.canonical_decomposition(p, law)
            assert cd.value == pytest.approx(ref_alpha_star(p, tuple_law(kind, q, 3)), abs=1e-7)


def test_kseq_lower_bound_claim():
    """SpecTr: α_K-SEQ ≥ (1 − (1 − 1/k)^k) α*(iid)."""
    worst = np.inf
    for p, q, k in INST:
        star = ref_alpha_star(p, tuple_law("iid", q, k))
        a = V.KSeq().acceptance(p, q, k, notion="rule")
        bound = (1 - (1 - 1 / k) ** k) * star
        worst = min(worst, a - bound)
        assert a >= bound - 1e-12, (p, q, k, a, bound)
    assert worst >= -1e-12


def test_kseq_rho_is_the_root():
    for p, q, k in INST[:100]:
        rho = V._kseq.kseq_rho(p, q, k)
        assert 1.0 <= rho <= k
        beta = np.minimum(q, p / rho).sum()
        h = rho * beta - (1 - (1 - beta) ** k)
        assert h >= -1e-15
        if rho > 1.0:
            lo = rho - 1e-9
            b2 = np.minimum(q, p / lo).sum()
            assert lo * b2 - (1 - (1 - b2) ** k) <= 1e-12
        # at the root the residual cannot hit a rejected draft: notions agree
        assert V.KSeq().acceptance(p, q, k) == pytest.approx(V.KSeq().acceptance(p, q, k, notion="rule"), abs=1e-9)


def _rrs_by_paths(p, q, tuples, without_replacement):
    """The RRS algorithm run on every ordered tuple (independent of the closed forms)."""
    total = 0.0
    for t, pr in tuples:
        r, used, reach = p.copy(), set(), 1.0
        for x in t:
            if without_replacement:
                qm = np.array([0.0 if i in used else q[i] for i in range(q.size)])
                qm = qm / qm.sum()
            else:
                qm = q
            a = min(1.0, r[x] / qm[x])
            total += pr * reach * a
            reach *= 1 - a
            if reach == 0:
                break
            r = np.clip(r - qm, 0, None)
            r = r / r.sum()
            used.add(x)
    return total


def test_rrs_equals_batch_sd_and_path_enumeration():
    for p, q, k in INST[:120]:
        # Yin et al., Theorem 3: P(all M rejected) = Π TV(p^m, q), p^{m+1} = (p^m − q)+ / TV
        r, prod = p.copy(), 1.0
        for _ in range(k):
            tv = np.clip(r - q, 0, None).sum()
            prod *= tv
            if tv == 0:
                break
            r = np.clip(r - q, 0, None) / tv
        a = V.RRS().acceptance(p, q, k)
        assert a == pytest.approx(1 - prod, abs=1e-12)
        assert a == pytest.approx(_rrs_by_paths(p, q, tuple_law("iid", q, k), False), abs=1e-10)
        if k <= np.count_nonzero(q):
            b = V.RRSWithoutReplacement().acceptance(p, q, k)
            assert b == pytest.approx(_rrs_by_paths(p, q, tuple_law("swor", q, k), True), abs=1e-10)


@pytest.mark.parametrize("M", [1, 2, 3, 5, 8])
def test_rrs_yin_closed_forms(M):
    # draft uniform on V (|V| = 12), target uniform on V' (|V'| = 4): r = 3,
    # BI = (1 − 1/r) − (1 − 1/r)^M, i.e. P(all rejected) = (1 − 1/r)^M
    q = np.full(12, 1 / 12)
    p = np.zeros(12)
    p[:4] = 1 / 4
    assert V.RRS().acceptance(p, q, M) == pytest.approx(1 - (1 - 1 / 3) ** M, abs=1e-12)
    # draft Ber(u), target Ber(v), u ≥ v: BI = (u − v)(1 − u^{M−1})
    for u, v in ((0.7, 0.2), (0.5, 0.5), (0.9, 0.1)):
        q2, p2 = np.array([1 - u, u]), np.array([1 - v, v])
        bi = (u - v) - (1 - V.RRS().acceptance(p2, q2, M))
        assert bi == pytest.approx((u - v) * (1 - u ** (M - 1)), abs=1e-12)


def test_rrs_matches_the_sequence_modules_batch_rejection():
    from optaccept.sequence._batch import batch_rejection_probability

    for p, q, k in INST[:50]:
        assert V.RRS().acceptance(p, q, k) == pytest.approx(1 - batch_rejection_probability(p, q, k), abs=1e-12)


def test_naive_tree_and_nss_closed_forms_by_enumeration():
    for p, q, k in INST[:80]:
        tl = tuple_law("iid", q, k)
        # NSS: Y ~ p independent of the drafts
        nss = sum(pr * sum(p[y] for y in set(t)) for t, pr in tl)
        assert V.NSS().acceptance(p, q, k) == pytest.approx(nss, abs=1e-12)
        # NaiveTree: SD on x1, residual (p − q)+ may equal a later draft
        res = np.clip(p - q, 0, None)
        res = res / res.sum() if res.sum() > 0 else res
        nt = 0.0
        for t, pr in tl:
            a = min(1.0, p[t[0]] / q[t[0]])
            nt += pr * (a + (1 - a) * sum(res[y] for y in set(t)))
        assert V.NaiveTree().acceptance(p, q, k) == pytest.approx(nt, abs=1e-12)


def test_single_draft_everyone_is_sd():
    for p, q, _k in INST[:50]:
        sd = np.minimum(p, q).sum()
        for v in V.ALL:
            if v.supports(1) and v.name != "nss":
                assert v.acceptance(p, q, 1) == pytest.approx(sd, abs=1e-9), v.name


def test_khisti_two_drafts_optimal_when_lp_covers_vocabulary():
    """With s ≥ n the two-draft LP is Khisti et al.'s full LP: it attains α*."""
    for p, q, _k in INST[:100]:
        star = ref_alpha_star(p, tuple_law("iid", q, 2))
        assert V.KhistiIS(s=p.size).acceptance(p, q, 2, notion="rule") == pytest.approx(star, abs=1e-8)


# ---------------------------------------------------------------- errors and limits
def test_errors():
    with pytest.raises(MethodError):
        V.SpecHubVerifier().acceptance(P0, Q0, 3)
    with pytest.raises(MethodError):
        V.SD().drafts(Q0, 2)
    with pytest.raises(InputError):
        V.RRS().acceptance(P0, Q0, 2, notion="both")
    with pytest.raises(InputError):
        V.RRS().acceptance(P0, Q0[:5], 2)
    with pytest.raises(InputError):
        V.RRS().acceptance(-P0, Q0, 2)
    with pytest.raises(InputError, match="rng: must be"):
        V.RRS().sample(P0, Q0, 2, rng=-1, size=10)
    with pytest.raises(InputError):
        V.KhistiIS(s=0)
    with pytest.raises(InputError):
        V.Optimal("nope")


def test_enumeration_limits_raise_method_error():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(60)), rng.dirichlet(np.ones(60))
    with pytest.raises(MethodError):
        V.KhistiIS().acceptance(p, q, 4)  # 60^4 tuples > MAX_TUPLES
    assert 0 < V.KhistiIS().acceptance(p, q, 4, notion="rule") <= 1
    p, q = rng.dirichlet(np.ones(200)), rng.dirichlet(np.ones(200))
    with pytest.raises(MethodError):
        V.RRSWithoutReplacement().acceptance(p, q, 5)


def test_polynomial_methods_at_large_n():
    rng = np.random.default_rng(1)
    n = 5000
    p, q = rng.dirichlet(np.full(n, 0.3)), rng.dirichlet(np.full(n, 0.3))
    star = oa.optimal_acceptance(p, oa.IID(q, 2)).value
    for v in (V.RRS(), V.KSeq(), V.NaiveTree(), V.NSS()):
        assert 0 <= v.acceptance(p, q, 2) <= star + 1e-9
    assert V.KhistiIS().acceptance(p, q, 2, notion="rule") <= star + 1e-9
    assert (
        V.RRSWithoutReplacement().acceptance(p, q, 2)
        <= oa.optimal_acceptance(p, oa.WithoutReplacement(q, 2)).value + 1e-9
    )


def test_rrs_wor_last_levels_and_padding_by_path_enumeration():
    """The last two levels summed over all parent states at once, and tokens outside
    both supports dropped: equal to the path enumeration, with and without padding."""
    rng = np.random.default_rng(2024)
    for t in range(40):
        n = int(rng.integers(4, 8))
        k = int(rng.integers(2, min(n, 5) + 1))
        p = rng.dirichlet(np.full(n, 0.5))
        q = rng.dirichlet(np.full(n, 0.5))
        if t % 3 == 0:
            p[0] = 0.0
            p /= p.sum()
        want = _rrs_by_paths(p, q, tuple_law("swor", q, k), True)
        assert V.RRSWithoutReplacement().acceptance(p, q, k) == pytest.approx(want, abs=1e-10)
        pad = np.zeros(2 * n + 3)
        idx = rng.permutation(pad.size)[:n]
        pp, qq = pad.copy(), pad.copy()
        pp[idx], qq[idx] = p, q
        assert V.RRSWithoutReplacement().acceptance(pp, qq, k) == pytest.approx(want, abs=1e-10)
