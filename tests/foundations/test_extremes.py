"""Numerical robustness at the extremes: near-one-hot laws (1 − 1e-6 … 1 − 1e-15 on one
token), tiny and subnormal masses (1e-80 … 5e-324), k from 1 to the support size.

Every value is checked against an exact reference built without the library
(:mod:`extreme_cases`: the floats read as exact rationals, tuples enumerated in
Fractions, the dual (★) over all subsets), or against a closed form (uniform q).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import extreme_cases as E
import numpy as np
import pytest

import optaccept as oa
from optaccept import verifiers
from optaccept._lib import stable as _stable

TOL = 1e-12


def _check_all(p, q, ks, label, **kw) -> None:
    bad = [(what, err) for what, err in E.measure(p, q, ks, **kw) if not err <= TOL]
    assert not bad, (label, bad[:5])


@pytest.mark.parametrize("chunk", range(3))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_method_verifier_and_batched_path_is_exact_on_extreme_instances(chunk) -> None:
    cases = list(E.instances(18, seed=10))[chunk * 6 : (chunk + 1) * 6]
    for label, p, q in cases:
        n = p.size
        _check_all(p, q, sorted({1, 2, 3, n}), label, transport=chunk == 0)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_extreme_sweep_large() -> None:
    for label, p, q in E.instances(96, seed=11, nmax=6):
        _check_all(p, q, range(1, p.size + 1), label, transport=True)


# -- the reproducers of the report, one by one ------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_reproducer_spechub_is_not_above_alpha_star() -> None:
    p, q = E.REPRODUCERS["spechub cancellation"]
    acc = verifiers.SpecHubVerifier().acceptance(p, q, 2)
    ref = E.alpha_star(E.exact(p), E.tuple_law("spechub", E.exact(q), 2))
    assert acc <= float(ref) + TOL
    assert abs(acc - float(ref)) <= TOL  # here SpecHub attains α* (0.500000000002)


def test_reproducer_rrs_without_replacement_reaches_one() -> None:
    p, q = E.REPRODUCERS["rrs_wor cancellation"]
    assert abs(verifiers.RRSWithoutReplacement().acceptance(p, q, 4) - 1.0) <= TOL


@pytest.mark.parametrize("method", ["auto", "sorted", "subsets", "lp", "transport"])
def test_reproducer_without_replacement_mass_1e80(method) -> None:
    p, q = E.REPRODUCERS["swor 1e-80"]
    assert abs(oa.optimal_acceptance(p, oa.WithoutReplacement(q, 2), method=method).value - 0.5) <= TOL


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("method", ["auto", "sorted", "subsets", "lp"])
def test_reproducer_subnormal_without_replacement(method) -> None:
    p, q = E.REPRODUCERS["swor subnormal"]
    law = oa.WithoutReplacement(q, 4)
    assert abs(float(np.sum(law.set_law().probs)) - 1.0) <= TOL
    assert abs(oa.optimal_acceptance(p, law, method=method).value - 0.75) <= TOL


def test_subnormal_set_law_matches_exact_enumeration() -> None:
    q = np.array([5e-324, 1.0, 1.5e-323, 1e-310, 2.5e-323])
    for k in range(1, 6):
        law = oa.WithoutReplacement(q, k).set_law()
        ref = E.tuple_law("swor", E.exact(q), k)
        agg: dict[tuple[int, ...], Fraction] = {}
        for t, pr in ref.items():
            key = tuple(sorted(t))
            agg[key] = agg.get(key, Fraction(0)) + pr
        got = dict(zip(law.sets, np.asarray(law.probs).tolist()))
        assert set(got) == {s for s, v in agg.items() if v > 0} | {s for s in got if agg.get(s, 0) == 0}
        for s, v in agg.items():
            assert abs(got.get(s, 0.0) - float(v)) <= TOL, (k, s)


# -- large k: uniform q against C(|S|, k) / C(n, k) --------------------------------------


@pytest.mark.parametrize("n,k", [(300, 3), (300, 50), (300, 150), (300, 299), (300, 300), (1000, 100)])
def test_without_replacement_large_k_uniform(n, k) -> None:
    rng = np.random.default_rng(n + k)
    q = np.full(n, 1.0 / n)
    p = E.concentrated_p(rng, n, k)
    law = oa.WithoutReplacement(q, k)
    ref = E.uniform_alpha(p, k)
    assert k == n or ref < 1.0  # a non-trivial instance
    assert abs(oa.optimal_acceptance(p, law).value - ref) <= TOL
    for m in (k, (k + n) // 2, n - 1):
        S = np.arange(m)
        exact_d = Fraction(math.comb(m, k), math.comb(n, k))
        assert abs(law.subset_prob(S) - float(exact_d)) <= TOL, m


@pytest.mark.slow
@pytest.mark.parametrize("n,k", [(20_000, 300), (5_000, 1_000), (3_000, 2_999)])
def test_without_replacement_large_k_uniform_big(n, k) -> None:
    rng = np.random.default_rng(1)
    q = np.full(n, 1.0 / n)
    p = E.concentrated_p(rng, n, k)
    assert E.uniform_alpha(p, k) < 1.0
    assert abs(oa.optimal_acceptance(p, oa.WithoutReplacement(q, k)).value - E.uniform_alpha(p, k)) <= TOL


def test_without_replacement_near_one_hot_rest_and_large_k() -> None:
    """Near-one-hot q with a uniform rest: after the big token is drawn (almost surely
    first), the other k − 1 are uniform without replacement from the rest."""
    n, eps = 40, 1e-13
    q = np.full(n, eps / (n - 1))
    q[0] = 1 - eps
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(n))
    for k in (3, 10, 39, 40):
        law = oa.WithoutReplacement(q, k)
        for m in (k, n - 5, n - 1):
            if m < k:
                continue
            S = np.arange(m)  # holds the big token
            ref = Fraction(math.comb(m - 1, k - 1), math.comb(n - 1, k - 1))
            assert abs(law.subset_prob(S) - float(ref)) <= 1e-11, (k, m)
        assert 0.0 <= oa.optimal_acceptance(p, law).value <= 1.0


# -- guards before work, and advice that is never circular --------------------------------


def _named(msg: str) -> str | None:
    m = re.search(r"method='(\w+)'", msg)
    return m.group(1) if m else None


@pytest.mark.parametrize(
    "n, k, method",
    [(5, 10**6, "transport"), (5, 10**6, "lp"), (30, 10**6, "subsets"), (60, 4, "transport"), (12, 6, "lp")],
)
def test_huge_sizes_are_refused_at_once_naming_a_working_method(n, k, method) -> None:
    q = np.full(n, 1.0 / n)
    p = np.linspace(1.0, 2.0, n)
    p /= p.sum()
    for law in (oa.IID(q, k), oa.WithoutReplacement(q, min(k, n))):
        try:
            res = oa.optimal_acceptance(p, law, method=method)
        except oa.MethodError as exc:
            other = _named(str(exc))
            assert other is not None and other != method, str(exc)
            assert 0.0 <= oa.optimal_acceptance(p, law, method=other).value <= 1.0
        else:
            assert 0.0 <= res.value <= 1.0


def test_lp_refuses_a_vocabulary_of_200_with_three_drafts_quickly() -> None:
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(200)), rng.dirichlet(np.ones(200))
    for law in (oa.IID(q, 3), oa.WithoutReplacement(q, 3)):
        with pytest.raises(oa.MethodError, match="sorted"):
            oa.optimal_acceptance(p, law, method="lp")


def test_khisti_refuses_a_million_drafts_at_once() -> None:
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    with pytest.raises(oa.MethodError, match="stages"):
        verifiers.KhistiIS().acceptance(p, q, 10**6)
    with pytest.raises(oa.MethodError):
        verifiers.KhistiIS().plan(p, q, 10**6)


def test_exact_auto_never_names_a_method_that_refuses_fractions() -> None:
    for n in (15, 16, 20):
        qx = [Fraction(1, n)] * n
        px = [Fraction(1, 2 * n)] * (n - 1) + [Fraction(1, 2 * n) + Fraction(1, 2)]
        for law in (oa.WithoutReplacement(qx, 3), oa.Independent([qx, qx])):
            with pytest.raises(oa.MethodError) as info:
                oa.optimal_acceptance(px, law)
            msg = str(info.value)
            named = _named(msg)
            assert named is not None and "float" in msg
            pf = np.array([float(v) for v in px])
            assert oa.optimal_acceptance(pf, type(law)(*_float_args(law)), method=named).value <= 1.0


def _float_args(law):
    if isinstance(law, oa.Independent):
        return ([np.asarray(r, dtype=float) for r in law.qs],)
    return (law.q, law.k)


@pytest.mark.parametrize("n", [21, 300])
def test_advice_for_independent_drafts_is_not_circular(n) -> None:
    q = np.full(n, 1.0 / n)
    law = oa.Independent([q, q] if n < 100 else [q, q, q])  # 300³ tuples: nothing enumerates them
    for method in ("sorted", "subsets", "closed_form") + (("auto", "lp", "transport") if n > 100 else ()):
        with pytest.raises(oa.MethodError) as info:
            oa.optimal_acceptance(q, law, method=method)
        other = _named(str(info.value))
        if other is not None:
            assert other != method
            assert oa.optimal_acceptance(q, law, method=other).value == pytest.approx(1.0, abs=1e-9)
        else:
            assert "no method" in str(info.value)


@pytest.mark.parametrize("bad", [np.array([0.5 + 0j, 0.5]), np.array([True, False]), ["0.5", "0.5"]])
def test_complex_boolean_and_string_input_is_refused(bad) -> None:
    with pytest.raises(oa.InputError):
        oa.IID(bad, 2)
    with pytest.raises(oa.InputError):
        oa.optimal_acceptance(bad, oa.IID(np.array([0.5, 0.5]), 2))


# -- KhistiIS: one optimum per stage, the same on every run and for permuted tokens --------


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_khisti_is_deterministic_and_permutation_equivariant(k) -> None:
    p = np.array([0.08, 0.38, 0.41, 0.03, 0.10])
    q = np.array([0.08, 0.21, 0.13, 0.29, 0.29])
    v = verifiers.KhistiIS()
    runs = {v.acceptance(p, q, k) for _ in range(3)}
    assert len(runs) == 1
    base = runs.pop()
    _, pi = v.plan(p, q, k)
    for seed in range(4):
        perm = np.random.default_rng(seed).permutation(5)
        assert abs(v.acceptance(p[perm], q[perm], k) - base) <= 1e-9
        _, pi_perm = v.plan(p[perm], q[perm], k)
        assert np.abs(pi_perm - pi[perm]).max() <= 1e-9
    ref = E.alpha_star(E.exact(p), E.tuple_law("iid", E.exact(q), k))
    assert base <= float(ref) + TOL


# -- canonical decomposition and the two-draft condition -----------------------------------


@pytest.mark.parametrize("eps", [1e-6, 1e-9, 1e-12, 1e-15])
def test_canonical_decomposition_on_near_one_hot_q(eps) -> None:
    rng = np.random.default_rng(int(-math.log10(eps)))
    for _ in range(5):
        n = 4
        q = np.insert(rng.dirichlet(np.ones(n - 1)) * eps, 0, 1 - eps)
        p = rng.dirichlet(np.ones(n))
        for kind, k in (("iid", 2), ("swor", 2), ("iid", 3), ("greedy", 2)):
            law = E._law(oa, kind, q, k)
            ref = float(E.alpha_star(E.exact(p), E.tuple_law(kind, E.exact(q), k)))
            cd = verifiers.canonical_decomposition(p, law)
            assert abs(cd.value - ref) <= TOL, (kind, k, cd.value, ref)


def test_two_draft_condition_on_the_exact_boundary() -> None:
    # p({0}) = q({0})² exactly (dyadic floats): the condition holds, with tol = 0.
    for q0 in (0.5, 0.25, 0.75, 2.0**-20):
        p = np.array([q0 * q0, 1 - q0 * q0])
        q = np.array([q0, 1 - q0])
        assert oa.two_draft_condition(p, q, tol=0.0) == (True, None)
        # one ulp below the boundary: violated, with {0} as the witness
        below = np.nextafter(q0 * q0, 0.0)
        holds, S = oa.two_draft_condition(np.array([below, 1 - below]), q, tol=0.0)
        exact_holds = Fraction(below) / (Fraction(below) + Fraction(1 - below)) >= Fraction(q0) ** 2
        assert holds == exact_holds
        if not holds:
            assert S == (0,)


# -- the shared complement helpers: numpy and torch, one formula ---------------------------


def test_stable_helpers_relative_accuracy_and_torch_agreement() -> None:
    torch = pytest.importorskip("torch")
    q = np.array([1 - 3e-300, 1e-300, 2e-300, 0.0])
    c = _stable.others_sum(q)
    assert c[0] == pytest.approx(3e-300, rel=1e-15)
    lam = _stable.suffix_sums(q)
    assert lam[1] == pytest.approx(3e-300, rel=1e-15) and lam[-1] == 0.0
    assert _stable.one_minus_pow1m(np.array([1e-300]), 7)[0] == pytest.approx(7e-300, rel=1e-15)
    comp = _stable.swor2_prefix_complement(np.array([1 - 2e-80, 1e-80, 1e-80]))
    assert comp.tolist() == pytest.approx([1.0, 1.0, 0.5, 0.0], abs=1e-15)
    rng = np.random.default_rng(0)
    Q = rng.dirichlet(np.ones(7), size=3)
    Q[0] = [1 - 6e-13] + [1e-13] * 6
    T = torch.tensor(Q, dtype=torch.float64)
    for fn in (_stable.others_sum, _stable.suffix_sums, _stable.prefix_sums, _stable.swor2_prefix_complement):
        assert np.allclose(fn(T, axis=1).numpy(), fn(Q, axis=1), rtol=1e-14, atol=0), fn.__name__


def test_without_replacement_sampler_with_subnormal_masses() -> None:
    """Ring times E/q overflow to a tie at inf for subnormal q; the sampler orders log
    ring times instead.  Reproducer 4's law: token 1 always, then 3 of the 4 equal tiny
    tokens uniformly — each of them is drafted with probability 3/4."""
    q = np.array([1.5e-323, 1.0] + [1.5e-323] * 3)
    size = 20_000
    d = oa.WithoutReplacement(q, 4).sample(np.random.default_rng(7), size)
    assert (d[:, 0] == 1).all()
    for tok in (0, 2, 3, 4):
        freq = (d == tok).any(axis=1).mean()
        assert abs(freq - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / size)
    y, acc = verifiers.RRSWithoutReplacement().sample(
        *E.REPRODUCERS["swor subnormal"], 4, np.random.default_rng(8), size
    )
    assert (y == 0).mean() > 0.99  # Y ~ p = (almost) one-hot on token 0
    assert abs(acc.mean() - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / size)
