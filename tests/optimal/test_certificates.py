"""``optaccept.verify`` proves both bounds: the subset (upper) and a feasible coupling or flow
(lower).  Correct results pass; a consistent-but-wrong value — (★) at a wrong subset, or an
inflated or deflated value — fails, for every method and law, and the report says which bound
failed.  References are exact enumerations in Fractions (tests/extreme_cases.py), written
apart from the library.  Also: every conditional law of the optimal verifier is a law (≥ 0,
finite, sum 1) and never outputs a token that p forbids."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_pair
from extreme_cases import REPRODUCERS, alpha_star, exact, instances, tuple_law

import optaccept as oa
from optaccept import verifiers

LAWS = ("iid", "swor", "greedy", "spechub", "independent", "joint")


def _law(kind: str, q: np.ndarray, k: int, rng: np.random.Generator):
    """(library law, exact reference tuple law) for the kind."""
    if kind == "independent":
        q2 = rng.dirichlet(np.ones(q.size))
        return oa.Independent([q, q2][:k] if k <= 2 else [q, q2, q][:k]), None
    if kind == "joint":
        m = int(rng.integers(2, 7))
        tuples = rng.integers(0, q.size, size=(m, k))
        probs = rng.dirichlet(np.ones(m))
        return oa.Joint(tuples, probs, n=q.size), None
    law = {
        "iid": lambda: oa.IID(q, k),
        "swor": lambda: oa.WithoutReplacement(q, k),
        "greedy": lambda: oa.Greedy(q, k),
        "spechub": lambda: oa.SpecHub(q),
    }[kind]()
    return law, kind


def _reference(p: np.ndarray, law, kind: str | None) -> Fraction:
    """α* exactly, from the law's tuples (enumerated here for the named kinds; for Independent
    and Joint from their own defining data) and all 2^n subsets."""
    if kind is not None:
        return alpha_star(exact(p), tuple_law(kind, exact(law.q), law.k))
    tuples, probs = law.tuple_law()
    table: dict[tuple[int, ...], Fraction] = {}
    for t, pr in zip(tuples.tolist(), np.asarray(probs, dtype=np.float64).tolist()):
        table[tuple(t)] = table.get(tuple(t), Fraction(0)) + Fraction(pr)
    tot = sum(table.values(), Fraction(0))
    return alpha_star(exact(p), {t: v / tot for t, v in table.items()})


def _star(p: np.ndarray, law, subset) -> float:
    mask = np.zeros(law.n, dtype=bool)
    mask[list(subset)] = True
    return float(p[mask].sum()) + 1.0 - float(law.subset_prob(mask))


def _methods(law, kind: str) -> list[str]:
    out = ["auto", "subsets", "lp"]
    if kind in ("iid", "swor", "greedy", "spechub"):
        out.append("sorted")
    if kind == "iid" and law.k == 2:
        out.append("closed_form")
    return out


def test_reproducer_wrong_value_with_empty_subset_is_rejected():
    """p = [.5, .5], IID([.9, .1], 1): α* = 0.6; a result claiming 1.0 with S = ∅ ((★) at ∅
    is 1) used to pass.  Its upper bound holds, its lower bound fails, and the report says so."""
    law = oa.IID([0.9, 0.1], 1)
    wrong = oa.AcceptanceResult(1.0, "sorted", law, subset=())
    v = oa.verify([0.5, 0.5], law, wrong)
    assert not v.ok
    assert v.upper_ok and not v.lower_ok
    assert abs(v.lower_bound - 0.6) <= 1e-15
    assert v.message.startswith("lower bound fails")
    assert oa.verify([0.5, 0.5], law, oa.optimal_acceptance([0.5, 0.5], law)).ok


@pytest.mark.parametrize("kind", LAWS)
def test_correct_accepted_and_wrong_rejected_for_every_method(kind: str):
    """Per law and method: the solver's result passes; (★) at a wrong subset (value 1e-6 or
    more above the exact α*) fails on its lower bound; the value ± 0.01 (or ∓ where it would
    leave [0, 1]) fails."""
    rng = np.random.default_rng(LAWS.index(kind) + 100)
    done = wrong_subsets = 0
    while done < 25:
        p, q = random_pair(rng, nmin=2, nmax=5)
        supp = int(np.count_nonzero(q))
        if kind == "spechub" and supp < 2:
            continue
        k = 2 if kind == "spechub" else int(rng.integers(1, min(supp, 3) + 1))
        law, ref_kind = _law(kind, q, k, rng)
        ref = float(_reference(p, law, ref_kind))
        for m in _methods(law, kind):
            res = oa.optimal_acceptance(p, law, m)
            assert abs(float(res.value) - ref) <= 1e-9, (m, p, q)
            chk = oa.verify(p, law, res)
            assert chk.ok, (m, p, q, law, chk)
            for delta in (0.01, -0.01):
                bad = float(res.value) + (delta if 0 <= float(res.value) + delta <= 1 else -delta)
                v = oa.verify(p, law, oa.AcceptanceResult(bad, m, law, subset=res.subset))
                assert not v.ok, (m, bad, v)
        # (★) at every wrong subset: consistent with its subset, wrong as a value
        for r in range(law.n + 1):
            for S in itertools.combinations(range(law.n), r):
                val = _star(p, law, S)
                if val > ref + 1e-6:
                    v = oa.verify(p, law, oa.AcceptanceResult(val, "sorted", law, subset=S))
                    assert v.upper_ok and not v.ok and not v.lower_ok, (S, val, ref, v)
                    wrong_subsets += 1
        done += 1
    assert wrong_subsets > 50


@pytest.mark.parametrize("kind", ("iid", "greedy", "joint"))
def test_exact_results_prove_both_bounds_exactly(kind: str):
    """Fractions: the correct value passes with zero gaps; (★) at a wrong subset and the value
    plus 1/1000 fail (exact witnesses: the line device, the greedy rule, an exact max flow)."""
    rng = np.random.default_rng(7)
    for _ in range(8):
        n = int(rng.integers(2, 5))
        p = [Fraction(int(v), 12) for v in rng.multinomial(12, np.ones(n) / n)]
        qi = rng.multinomial(10, np.ones(n) / n)
        q = [Fraction(int(v), 10) for v in qi]
        supp = sum(1 for v in q if v > 0)
        k = int(rng.integers(1, min(supp, 3) + 1))
        if kind == "iid":
            law, ref_law = oa.IID(q, k), tuple_law("iid", q, k)
        elif kind == "greedy":
            law, ref_law = oa.Greedy(q, k), tuple_law("greedy", q, k)
        else:
            tuples = [tuple(int(v) for v in rng.integers(0, n, size=k)) for _ in range(3)]
            probs = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
            law = oa.Joint(np.array(tuples), probs, n=n)
            ref_law = {}
            for t, pr in zip(tuples, probs):
                ref_law[t] = ref_law.get(t, Fraction(0)) + pr
        ref = alpha_star(p, ref_law)
        res = oa.optimal_acceptance(p, law, "subsets")
        assert res.value == ref
        v = oa.verify(p, law, res)
        assert v.ok and v.value_gap == 0 and v.lower_gap == 0, v
        assert not oa.verify(p, law, oa.AcceptanceResult(ref + Fraction(1, 1000), "subsets", law, subset=res.subset)).ok
        for r in range(n + 1):
            for S in itertools.combinations(range(n), r):
                val = sum((p[i] for i in S), Fraction(0)) + 1 - law.subset_prob(list(S))
                if val != ref:
                    v = oa.verify(p, law, oa.AcceptanceResult(val, "subsets", law, subset=S))
                    assert v.upper_ok and not v.ok, (S, val, ref)


@pytest.mark.parametrize("method", ("lp", "transport"))
def test_plan_results_keep_their_plan_as_the_witness(method: str):
    """An LP or transport result whose value is replaced by (★) at a wrong subset fails: its
    flow (or coupling) reaches α* only."""
    if method == "transport":
        pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    law = oa.IID(q, 2)
    res = oa.optimal_acceptance(p, law, method)
    v = oa.verify(p, law, res)
    assert v.ok and v.witness == "plan of the result"
    S = tuple(i for i in range(5) if i not in res.subset)
    val = _star(p, law, S)
    assert val > float(res.value) + 1e-6
    bad = oa.AcceptanceResult(val, method, law, subset=S, plan=res.plan)
    v = oa.verify(p, law, bad)
    assert v.upper_ok and not v.lower_ok and not v.ok


def test_extreme_instances_are_accepted():
    """Near-one-hot (1 − 1e-15), tiny and subnormal masses, zeros: correct results pass for
    every law and k from 1 to above the support (IID), and a value 1e-6 off fails."""
    count = 0
    for label, p, q in itertools.chain(instances(48, seed=11), ((k, *v) for k, v in REPRODUCERS.items())):
        supp = int(np.count_nonzero(q))
        for kind in ("iid", "swor", "greedy", "spechub"):
            ks = range(1, supp + 3) if kind == "iid" else range(1, supp + 1)
            for k in ks:
                if kind == "spechub" and (k != 2 or supp < 2):
                    continue
                law, _ = _law(kind, q, k, np.random.default_rng(0))
                res = oa.optimal_acceptance(p, law)
                v = oa.verify(p, law, res)
                assert v.ok, (label, kind, k, v)
                off = float(res.value) - 1e-6 if float(res.value) > 0.5 else float(res.value) + 1e-6
                assert not oa.verify(p, law, oa.AcceptanceResult(off, "sorted", law, subset=res.subset)).ok
                count += 1
    assert count > 300


def test_without_replacement_beyond_listable_sets_reports_a_valid_bound():
    """Without replacement with more than 200,000 draft sets (n = 40, k = 5): no optimal flow
    is known at this size.  The bound reported (a greedy vertex of the coverage polymatroid)
    never exceeds α*, and where it falls short the report says so."""
    rng = np.random.default_rng(5)
    for _ in range(3):
        p, q = rng.dirichlet(np.ones(40) * 0.3), rng.dirichlet(np.ones(40) * 0.3)
        law = oa.WithoutReplacement(q, 5)
        res = oa.optimal_acceptance(p, law)
        v = oa.verify(p, law, res)
        assert v.upper_ok
        assert v.lower_bound <= float(res.value) + 1e-12
        assert v.ok == (v.lower_gap <= 1e-9)
        if not v.ok:
            assert "lower bound not proved" in v.message and "greedy vertex" in v.message
            assert "lower bound fails" not in v.message


@pytest.mark.parametrize("kind", ("swor", "independent"))
def test_greedy_vertex_bound_never_exceeds_alpha_star(kind: str):
    """The fallback bound (Edmonds' greedy vertex of the coverage polymatroid, truncated by p)
    is a valid lower bound: never above the exact α*, on random and extreme small instances;
    and it is not vacuous (it reaches α* on some of them)."""
    from optaccept.optimal._witness import _greedy_vertex_bound

    rng = np.random.default_rng(31 + len(kind))
    pairs = [random_pair(rng, nmax=6) for _ in range(60)] + [(p, q) for _, p, q in instances(16, seed=8)]
    tight = 0
    for p, q in pairs:
        supp = int(np.count_nonzero(q))
        k = int(rng.integers(1, min(supp, 3) + 1))
        law, ref_kind = _law(kind, q, k, rng)
        ref = float(_reference(p, law, ref_kind))
        bound = _greedy_vertex_bound(p, law)["lower_bound"]
        assert bound <= ref + 1e-12, (p, q, k, bound, ref)
        tight += bound >= ref - 1e-12
    assert tight > 0


@pytest.mark.slow
def test_vocabulary_scale_verify():
    """n = 131,072: IID, Greedy and without-replacement results verify (IID and Greedy both
    bounds; without replacement the upper bound) in seconds (timed in the report)."""
    rng = np.random.default_rng(0)
    n = 131_072
    p, q = rng.dirichlet(np.ones(n) * 0.1), rng.dirichlet(np.ones(n) * 0.1)
    for law in (oa.IID(q, 4), oa.Greedy(q, 4)):
        res = oa.optimal_acceptance(p, law)
        assert oa.verify(p, law, res).ok
        bad = oa.AcceptanceResult(float(res.value) + 1e-6, "sorted", law, subset=res.subset)
        assert not oa.verify(p, law, bad).ok
    law = oa.WithoutReplacement(q, 4)
    v = oa.verify(p, law, oa.optimal_acceptance(p, law))
    assert v.upper_ok and v.lower_bound is not None


# --------------------------------------------------------------------- conditional laws


def _tuples(law, n: int, k: int):
    """Every ordered tuple the law drafts (all of them for small n)."""
    tuples, probs = law.tuple_law()
    return [tuple(t) for t, pr in zip(tuples.tolist(), np.asarray(probs, dtype=np.float64)) if pr > 0]


def _check_law(row: np.ndarray, p: np.ndarray, where) -> None:
    row = np.asarray(row, dtype=np.float64)
    assert np.isfinite(row).all(), where
    assert (row >= 0).all(), (where, row)
    assert abs(row.sum() - 1.0) <= 1e-12, (where, row.sum())
    assert (row[p == 0] == 0).all(), (where, row)  # a token that p forbids is never output


def test_reproducer_conditional_has_no_negative_entries():
    """p = [.353, .471, .176], q = [.3, .275, .425], k = 2, tuple (1, 2): the selection and the
    conditional had entries −2.2e-16."""
    p = np.array([0.353, 0.471, 0.176])
    ov = oa.optimal_verifier(p, oa.IID(np.array([0.3, 0.275, 0.425]), 2))
    sel = np.array(ov.selection((1, 2)))
    assert (sel >= 0).all() and abs(sel.sum() - 1) <= 1e-15
    _check_law(ov.conditional((1, 2)), p, (1, 2))
    np.random.default_rng(0).choice(3, p=ov.conditional((1, 2)))


def test_reproducer_zero_target_token_never_output():
    """p = [.6, .4, 0], q = [.5, .5 − 1e-30, 1e-30], k = 11: the all-2 tuple output token 2
    (its marginal rounds to s = 0 = p, and 0/0 was read as accept)."""
    p = np.array([0.6, 0.4, 0.0])
    law = oa.IID(np.array([0.5, 0.5 - 1e-30, 1e-30]), 11)
    ov = oa.optimal_verifier(p, law)
    row = ov.conditional((2,) * 11)
    _check_law(row, p, "all-2")
    y = ov.respond(np.full((2000, 11), 2), np.random.default_rng(1))
    assert (y != 2).all()
    torch = pytest.importorskip("torch")
    from optaccept.optimal import optimal_verifier_batched

    out = optimal_verifier_batched(
        torch.tensor(p[None, :]).repeat(50, 1),
        torch.tensor(law.q[None, :]).repeat(50, 1),
        torch.full((50, 11), 2),
        torch.Generator().manual_seed(0),
    )
    assert (out != 2).all()


@pytest.mark.parametrize("kind", ("iid", "swor", "greedy", "spechub", "independent", "joint"))
def test_every_conditional_is_a_law(kind: str):
    """Every row π(· | x̄) of every drafted tuple, on random and extreme instances: finite,
    ≥ 0, sums to 1, zero where p = 0; IID also its selection probabilities."""
    rng = np.random.default_rng(200 + len(kind))
    pairs = [random_pair(rng, nmax=5) for _ in range(30)]
    pairs += [(p, q) for _, p, q in instances(24, seed=3, nmax=4)]
    pairs += [(np.array([0.6, 0.4, 0.0]), np.array([0.5, 0.5 - 1e-30, 1e-30]))]
    rows = 0
    for p, q in pairs:
        supp = int(np.count_nonzero(q))
        if kind == "spechub" and supp < 2:
            continue
        for k in [2] if kind == "spechub" else range(1, min(supp, 3) + 1):
            law, _ = _law(kind, q, k, rng)
            ov = oa.optimal_verifier(p, law)
            for x in _tuples(law, law.n, k):
                _check_law(ov.conditional(x), p, (p, q, k, x))
                if kind == "iid":
                    sel = np.array(ov.selection(x))
                    assert (sel >= 0).all() and abs(sel.sum() - 1) <= 1e-12
                rows += 1
    assert rows > 200


def test_other_verifiers_never_output_a_forbidden_token():
    """Every verifier of optaccept.verifiers, sampled on targets with zeros (and the k = 11
    instance above): no output token has p = 0; the canonical decomposition's selection rows
    and p_I are laws."""
    rng = np.random.default_rng(9)
    cases = [(np.array([0.6, 0.4, 0.0]), np.array([0.5, 0.5 - 1e-30, 1e-30]), 11)]
    for _ in range(12):
        p, q = random_pair(rng, n=int(rng.integers(3, 6)))
        p[rng.integers(p.size)] = 0.0
        if p.sum() == 0:
            continue
        cases.append((p / p.sum(), q, int(rng.integers(1, 4))))
    for p, q, k in cases:
        for v in verifiers.ALL:
            kk = min(max(k, v.min_k), v.max_k or k)
            if kk > int(np.count_nonzero(q)) and v.name not in ("rrs", "sd", "nss", "naive_tree", "kseq", "optimal"):
                continue
            try:
                y, _ = v.sample(p, q, kk, rng, 400)
            except oa.MethodError:
                continue
            assert (p[y] > 0).all(), (v.name, p, q, kk)
        cd = verifiers.canonical_decomposition(p, oa.IID(q, min(k, 3)))
        assert (cd.beta >= 0).all() and np.allclose(cd.beta.sum(axis=1), 1.0, atol=1e-12)
        assert (cd.p_I >= 0).all() and abs(cd.p_I.sum() - 1) <= 1e-12


def test_verify_passes_normalize_to_an_optimal_verifier():
    """``normalize=True`` rescales p for a verifier as it does for a result."""
    p = np.array([0.2, 0.2, 0.1])
    law = oa.IID(np.array([0.5, 0.3, 0.2]), 2)
    assert oa.verify(p, law, oa.optimal_acceptance(p, law, normalize=True), normalize=True).ok
    assert oa.verify(p, law, oa.optimal_verifier(p, law, normalize=True), normalize=True).ok
    with pytest.raises(oa.InputError, match="normalize=True"):
        oa.verify(p, law, oa.optimal_verifier(p, law, normalize=True))


@pytest.mark.parametrize("n", [6, 12, 40])
def test_verify_proves_without_replacement_at_k_equal_to_the_support(n):
    """k = |supp q| draws without replacement draft the support with probability one, so
    α* = p(supp q); verify proves it although the ordered tuples (k!) are too many to list."""
    rng = np.random.default_rng(n)
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    q[: n // 3] = 0.0
    q /= q.sum()
    law = oa.WithoutReplacement(q, int(np.count_nonzero(q)))
    res = oa.optimal_acceptance(p, law)
    assert abs(float(res.value) - p[q > 0].sum()) <= 1e-12
    check = oa.verify(p, law, res)
    assert check.ok and abs(check.lower_bound - p[q > 0].sum()) <= 1e-12
    wrong = oa.AcceptanceResult(float(res.value) + 0.01, "sorted", law, subset=res.subset)
    assert not oa.verify(p, law, wrong).ok
    if n <= 12:  # exact mode
        px, qx = [Fraction(v) for v in p], [Fraction(v) for v in q]
        px = [v / sum(px) for v in px]
        qx = [v / sum(qx) for v in qx]
        lawx = oa.WithoutReplacement(qx, law.k)
        assert oa.verify(px, lawx, oa.optimal_acceptance(px, lawx)).ok
