"""The engines' deterministic top-k draft law ("topk", optaccept.drafts.TopK) and its place in
the audits' draft-law comparison, against an independent slow reference: the set T found by
its defining property (every drafted token beats every other one, ties to the lower index)
and α* by brute force over all 2^n subsets S of the dual min_S p(S) + 1 − D(set ⊆ S), in
exact Fractions, on random and nasty rows (zeros, ties, p = q, disjoint supports, tiny masses,
near-one-hot rows, k from 1 to above the support)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, drafts
from optaccept.tree._shape import topk_indices


def _reference_top(q, k):
    """T by its definition: |T| = k and each i in T beats each j outside (q_i > q_j, or equal
    and i < j) — found by trying every k-subset, no sorting."""
    n = len(q)
    found = [
        T
        for T in itertools.combinations(range(n), k)
        if all(q[i] > q[j] or (q[i] == q[j] and i < j) for i in T for j in range(n) if j not in T)
    ]
    assert len(found) == 1
    return set(found[0])


def _reference_alpha(p, T):
    """min over all S ⊆ Ω of p(S) + 1 − [T ⊆ S], exact (p as Fractions)."""
    n = len(p)
    best = None
    for bits in range(1 << n):
        S = {i for i in range(n) if bits >> i & 1}
        v = sum((p[i] for i in S), Fraction(0)) + 1 - (1 if T <= S else 0)
        best = v if best is None else min(best, v)
    return best


def _fractions(v):
    return [Fraction(x).limit_denominator(10**12) for x in v]


def _normalise(v):
    v = np.asarray(v, dtype=np.float64)
    return v / v.sum()


def _nasty_pairs(rng):
    n = 6
    yield _normalise([1, 1, 1, 1, 0, 0]), _normalise([2, 2, 1, 1, 0, 0])  # ties in q and p, zeros
    p = _normalise(rng.random(n))
    yield p, p.copy()  # p = q
    yield _normalise([1, 1, 1, 0, 0, 0]), _normalise([0, 0, 0, 1, 2, 3])  # disjoint supports
    yield _normalise([1, 1e-12, 1e-12, 2, 0, 3]), _normalise([1e-12, 1, 1, 1e-12, 1, 1])  # tiny masses
    near = np.full(n, 1e-12 / (n - 1))
    near[2] = 1 - 1e-12
    yield _normalise(rng.random(n)), near  # near-one-hot draft: T = {2} then the 1e-12 ties by index
    yield near, _normalise([3, 3, 3, 1, 1, 1])  # three-way ties in q
    for _ in range(8):
        p = rng.random(n) * (rng.random(n) < 0.8)
        q = rng.integers(0, 4, n).astype(float)  # many ties and zeros
        if p.sum() == 0:
            p[0] = 1
        if q.sum() == 0:
            q[1] = 1
        yield _normalise(p), _normalise(q)


def _cases():
    rng = np.random.default_rng(7)
    for p, q in _nasty_pairs(rng):
        for k in range(1, int(np.count_nonzero(q)) + 1):
            yield p, q, k


def test_top_set_and_alpha_against_brute_force():
    count = 0
    for p, q, k in _cases():
        T = _reference_top(q.tolist(), k)
        law = oa.TopK(q, k)
        assert set(law.top) == T
        assert [q[i] for i in law.top] == sorted((q[i] for i in law.top), reverse=True)  # most likely first
        ref = _reference_alpha(_fractions(p), T)
        assert abs(oa.optimal_acceptance(p, law).value - float(ref)) <= 1e-12
        row = oa.batched_optimal_acceptance(p[None, :], q[None, :], k, "topk")
        assert abs(row[0] - float(ref)) <= 1e-12
        count += 1
    assert count > 40


def test_exact_fractions_agree_with_brute_force_including_ties():
    q = [Fraction(1, 4), Fraction(1, 4), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8), Fraction(0)]
    p = [Fraction(1, 6)] * 6
    for k in range(1, 6):
        T = _reference_top(q, k)
        law = oa.TopK(q, k)
        assert set(law.top) == T and law.exact
        assert oa.optimal_acceptance(p, law).value == _reference_alpha(p, T)
        assert oa.optimal_acceptance(p, law, method="subsets").value == _reference_alpha(p, T)


def test_k_above_the_support_is_refused_with_one_line():
    q = np.array([0.5, 0.5, 0.0, 0.0])
    with pytest.raises(
        oa.InputError, match=r"^k: top-k drafts with k = 3 need at least 3 tokens with q > 0, but q has 2$"
    ) as exc:
        oa.TopK(q, 3)
    assert "\n" not in str(exc.value)
    with pytest.raises(oa.InputError, match=r"^k: drafting the top k=3 tokens needs k <= \|supp q\|, but row 1"):
        oa.batched_optimal_acceptance(np.tile([0.25] * 4, (2, 1)), np.stack([[0.25] * 4, q]), 3, "topk")


def test_one_tie_rule_across_the_package():
    """Greedy's fixed tokens are TopK's first k − 1, and a top-k tree's children are TopK's drafts."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        q = _normalise(rng.integers(1, 4, 7).astype(float))
        for k in range(1, 8):
            law = oa.TopK(q, k)
            assert oa.Greedy(q, k).top == law.top[: k - 1]
            assert tuple(topk_indices(q, k)) == law.top


def test_laws_round_trip_through_the_registry_and_sample_the_fixed_tuple():
    q = np.array([0.1, 0.4, 0.1, 0.4])
    law = drafts.law_from_name("topk", q, 3)
    assert isinstance(law, oa.TopK) and law.top == (1, 3, 0)
    assert (law.sample(np.random.default_rng(0), 5) == [1, 3, 0]).all()
    assert law.subset_prob([0, 1, 3]) == 1.0 and law.subset_prob([1, 3]) == 0.0
    assert "topk" in drafts.law_names(batched=True)


def _log(rng, T, n, k, sparse=False):
    P = rng.random((T, n)) ** 3
    Q = rng.integers(0, 4, (T, n)).astype(float) if sparse else rng.random((T, n)) ** 2
    Q[:, 0] += 1e-3  # no empty row
    Q[Q.sum(1) == 0, 0] = 1
    P /= P.sum(1, keepdims=True)
    Q /= Q.sum(1, keepdims=True)
    X = np.stack([rng.choice(n, size=k, replace=False, p=None) for _ in range(T)])
    return P, Q, X, X[:, 0].copy()


def test_audit_log_compares_topk_with_the_brute_force_mean():
    rng = np.random.default_rng(11)
    P, Q, X, Y = _log(rng, 12, 6, 2, sparse=True)
    rep = audit.audit_log(P, Q, X, Y, compare_laws=True, chunk=5)
    ref = np.mean([float(_reference_alpha(_fractions(p), _reference_top(q.tolist(), 2))) for p, q in zip(P, Q)])
    assert set(rep.alpha_by_law) == {"iid", "swor", "greedy", "topk"}
    assert abs(rep.alpha_by_law["topk"] - ref) <= 1e-12
    assert "topk" in str(rep)  # the report's "gap, by part" line names every compared law
    # the reference law itself may be topk
    rep2 = audit.audit_log(P, Q, X, Y, drafts="topk", compare_laws=True)
    assert abs(rep2.alpha_star - ref) <= 1e-12


def test_audit_log_leaves_out_distinct_laws_when_a_row_has_too_small_a_support():
    rng = np.random.default_rng(12)
    P, Q, X, Y = _log(rng, 6, 5, 3)
    Q[4] = [0.5, 0.5, 0, 0, 0]  # two tokens: no three distinct drafts in this row
    rep = audit.audit_log(P, Q, X, Y, compare_laws=True, chunk=4)
    assert set(rep.alpha_by_law) == {"iid"}


def test_audit_verifier_compares_topk_and_audits_topk_drafts():
    p = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
    q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])

    def fn(P, Q, X, rng):  # target-only: emit the target's own sample (rows of P are equal)
        return rng.choice(P.shape[1], size=P.shape[0], p=P[0])

    rep = audit.audit_verifier(fn, p, q, k=2, drafts="topk", samples=4000, rng=0, declared="target_only")
    ref = float(_reference_alpha(_fractions(p), _reference_top(q.tolist(), 2)))
    assert abs(rep.alpha_by_law["topk"] - ref) <= 1e-12 and abs(rep.alpha_star - ref) <= 1e-12
    assert abs(rep.expected - ref) <= 1e-12  # target-only attains α* on a fixed set


def test_the_command_line_compares_topk_and_takes_it_as_the_law(tmp_path, capsys):
    import json

    from optaccept.cli._main import main

    rng = np.random.default_rng(13)
    P, Q, X, Y = _log(rng, 10, 5, 2, sparse=True)
    path = tmp_path / "log.npz"
    np.savez(path, P=P, Q=Q, X=X, Y=Y)
    ref = np.mean([float(_reference_alpha(_fractions(p), _reference_top(q.tolist(), 2))) for p, q in zip(P, Q)])
    main(["audit", str(path), "--compare-laws", "--json"])
    got = json.loads(capsys.readouterr().out)
    assert got["alpha_by_law"]["topk"] == pytest.approx(ref, abs=1e-12)
    main(["audit", str(path), "--drafts", "topk"])
    out = capsys.readouterr().out
    assert f"α* of the draft law  {ref:.5f}" in out


def test_target_only_verifier_on_topk_drafts_attains_alpha_star():
    from optaccept import verifiers

    for p, q, k in _cases():
        ref = float(_reference_alpha(_fractions(p), _reference_top(q.tolist(), k)))
        assert abs(verifiers.TargetOnly("topk").acceptance(p, q, k) - ref) <= 1e-12


def test_batched_rows_in_torch_follow_the_same_tie_rule():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    for _ in range(5):
        P = rng.dirichlet(np.ones(7), size=6)
        Q = rng.integers(0, 3, (6, 7)).astype(float)  # ties and zeros
        Q[:, 3] += 1
        Q /= Q.sum(1, keepdims=True)
        k = int((Q > 0).sum(1).min())
        ref = [float(_reference_alpha(_fractions(p), _reference_top(q.tolist(), k))) for p, q in zip(P, Q)]
        vals, mask = oa.batched_optimal_acceptance(torch.tensor(P), torch.tensor(Q), k, "topk", return_subset=True)
        assert np.abs(vals.numpy() - ref).max() <= 1e-12
        assert [set(np.flatnonzero(m)) for m in np.asarray(mask)] == [_reference_top(q.tolist(), k) for q in Q]
