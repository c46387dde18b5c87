"""Declared rules "exact_match" and "target_only" for single steps, chains and trees, top-k
drafts for single steps, and honest reports (estimates and bounds named as such, acceptance
above the lossless optimum reported as proof of a lossy rule, the run's resolution, refusals
before any call).  Reference values are computed here by enumeration from the rules'
definitions; the implementations under audit are written here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, tree

P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


def _draw_rows(P, rng):
    cum = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cum[:, -1]
    return np.minimum((cum <= u[:, None]).sum(axis=1), P.shape[1] - 1)


def _exact_match(P, Q, X, rng):
    """The target samples its own token; a draft is accepted iff equal to it."""
    return _draw_rows(P, rng)


def _target_only_walk(P, Q, X, rng):
    """Walk the distinct drafts with p renormalised, as engines run target-only."""
    B, n = P.shape
    y = np.empty(B, dtype=np.int64)
    for b in range(B):
        rest = P[b].copy()
        for x in dict.fromkeys(X[b].tolist()):
            if rng.random() * rest.sum() < rest[x]:
                y[b] = x
                break
            rest[x] = 0.0
        else:
            y[b] = rng.choice(n, p=rest / rest.sum())
    return y


def test_exact_match_single_step_iid_drafts():
    k = 3
    rep = audit.audit_verifier(_exact_match, P0, Q0, k=k, drafts="iid", samples=60_000, rng=0, declared="exact_match")
    want = float(np.sum(P0 * (1 - (1 - Q0) ** k)))  # Σ_x p(x) P(x among k i.i.d. drafts)
    assert rep.lossless
    assert rep.expected == pytest.approx(want, abs=1e-12)
    assert abs(rep.acceptance - want) < 5 * rep.std_err


@pytest.mark.parametrize("k", [1, 2, 4])
def test_topk_drafts_single_step(k):
    top = np.argsort(-Q0, kind="stable")[:k]
    want = float(P0[top].sum())  # deterministic drafts: acceptance = α* = p(T)
    for declared, fn in (("target_only", _target_only_walk), ("exact_match", _exact_match)):
        rep = audit.audit_verifier(fn, P0, Q0, k=k, drafts="topk", samples=20_000, rng=1, declared=declared)
        assert rep.lossless
        assert rep.expected == pytest.approx(want, abs=1e-12)
        assert rep.alpha_star == pytest.approx(want, abs=1e-12)
        assert abs(rep.acceptance - want) < 5 * max(rep.std_err, 1e-3)


def test_topk_refusals_before_any_call():
    calls = []

    def fn(P, Q, X, rng):
        calls.append(1)
        return X[:, 0]

    with pytest.raises(oa.InputError, match="^declared: 'sd'"):
        audit.audit_verifier(fn, P0, Q0, k=2, drafts="topk", samples=100, rng=0, declared="sd")
    with pytest.raises(oa.InputError, match="^k: top-k drafts with k = 3"):
        audit.audit_verifier(fn, [0.5, 0.5, 0.0], [0.5, 0.5, 0.0], k=3, drafts="topk", samples=100, rng=0)
    assert not calls


def test_above_the_optimum_is_reported_as_proof_of_a_lossy_rule():
    def always_first(P, Q, X, rng):  # accepts every draft: acceptance 1 > α*
        return X[:, 0]

    rep = audit.audit_verifier(always_first, P0, Q0, k=2, drafts="iid", samples=5_000, rng=0)
    assert rep.above_optimum and not rep.lossless
    assert "not lossless" in str(rep) and "resolution" in str(rep)
    ok = audit.audit_verifier(_exact_match, P0, Q0, k=2, drafts="iid", samples=5_000, rng=0)
    assert not ok.above_optimum and 0 < ok.detectable < 1


def _chain_exact_match(P, Q, X, rng):
    B, g = X.shape
    m = np.zeros(B, dtype=np.int64)
    Y = np.empty(B, dtype=np.int64)
    for b in range(B):
        for i in range(g + 1):
            y = int(rng.choice(P.shape[2], p=P[b, i]))
            if i == g or y != X[b, i]:
                m[b], Y[b] = i, y
                break
    return m, Y


def test_chain_exact_match_value_by_enumeration():
    target, draft = tree.synthetic_pair(3, rng=2)
    g = 2
    want = 0.0  # Σ over chains q(chain) Σ_i Π_{j≤i} p(x_j | x_<j)
    for chain in itertools.product(range(3), repeat=g):
        qprob, run, val = 1.0, 1.0, 0.0
        for i, x in enumerate(chain):
            qprob *= draft(chain[:i])[x]
            run *= target(chain[:i])[x]
            val += run
        want += qprob * val
    for declared in ("exact_match", "target_only"):
        rep = audit.audit_chain(_chain_exact_match, target, draft, g, samples=4_000, rng=3, declared=declared)
        assert rep.expected == pytest.approx(want, abs=1e-12)
        assert rep.lossless and abs(rep.accepted - want) < 5 * rep.std_err
        assert "(exact;" in str(rep)


def test_chain_refuses_before_running_fn():
    target, draft = tree.synthetic_pair(64, rng=0)
    calls = []

    def fn(P, Q, X, rng):
        calls.append(1)
        return np.zeros(X.shape[0], dtype=int), np.zeros(X.shape[0], dtype=int)

    with pytest.raises((oa.MethodError, oa.InputError)):
        audit.audit_chain(fn, target, draft, 5, samples=50, rng=0, declared="token")
    assert not calls


def test_sampled_values_are_labelled_estimates_and_bounds_as_bounds():
    target, draft = tree.synthetic_pair(3, rng=2)
    rep = audit.audit_chain(
        _chain_exact_match, target, draft, 2, samples=500, rng=3, declared="exact_match", samples_for_expected=300
    )
    text = str(rep)
    assert "estimate ±" in text and "300 sampled chains" in text
    assert "(exact;" not in text.split("declared rule")[1].split("\n")[0]
    bound = audit.ChainAuditReport(
        lossless=True,
        accepted=1.5,
        std_err=0.01,
        expected=None,
        optimum=2.051,
        length=3,
        steps=100,
        false_alarm=1e-6,
        ks_distance={"p": 0.01},
        ks_threshold=0.1,
        accepted_law=[0.5, 0.5],
        details={"optimum_method": "upper bound (docs/trees.md §4b)"},
    )
    assert "optimum, upper bound" in str(bound) and "gap ≤" in str(bound)


def test_tree_exact_match_equals_target_only_and_refuses_iid():
    target, draft = tree.synthetic_pair(3, rng=4)

    def fn(tokens, parents, P, Q, rng):  # walk down: accept the child equal to the target's sample
        B = tokens.shape[0]
        v = np.zeros(B, dtype=np.int64)
        Y = np.empty(B, dtype=np.int64)
        for b in range(B):
            node = 0
            while True:
                y = int(rng.choice(P.shape[2], p=P[b, node]))
                kids = [c for c in range(1, tokens.shape[1]) if parents[c] == node and tokens[b, c] == y]
                if not kids:
                    v[b], Y[b] = node, y
                    break
                node = kids[0]
        return v, Y

    shape = [(0,), (1,), (0, 0)]
    rep = audit.audit_tree(
        fn, target, draft, tree.TreeDraftLaw(shape, "topk"), samples=3_000, rng=0, declared="exact_match"
    )
    ref = tree.accepted_tokens(target, draft, drafts=tree.TreeDraftLaw(shape, "topk"), verifier="target_only").value
    # by hand: top-2 children of the root, the top child of the first one
    q0, p0 = draft(()), target(())
    a, b = np.argsort(-q0, kind="stable")[:2]
    c = int(np.argmax(draft((int(a),))))
    hand = p0[a] * (1 + target((int(a),))[c]) + p0[b]
    assert rep.expected == pytest.approx(hand, abs=1e-12) and ref == pytest.approx(hand, abs=1e-12)
    assert rep.lossless and abs(rep.accepted - hand) < 5 * rep.std_err
    as_vllm = audit.audit_tree(
        fn,
        target,
        draft,
        tree.TreeDraftLaw(tree.Shape.from_layout("[(1,), (0, 0), (0,)]"), "topk"),
        samples=200,
        rng=0,
        declared="exact_match",
    )
    assert as_vllm.expected == pytest.approx(hand, abs=1e-12)  # vLLM's tree string: the same shape
    calls = []
    with pytest.raises(oa.InputError, match="^declared: 'exact_match'"):
        audit.audit_tree(
            lambda *a: calls.append(1),
            target,
            draft,
            tree.TreeDraftLaw(shape, "iid"),
            samples=10,
            rng=0,
            declared="exact_match",
        )
    assert not calls


def test_audit_verifier_hands_views_of_one_row_not_copies():
    seen = []

    def fn(P, Q, X, rng):
        seen.append((P.strides[0], Q.strides[0], P.flags.writeable, P.shape))
        return _draw_rows(np.asarray(P), rng)

    n = 1 << 15
    p = np.full(n, 1.0 / n)
    audit.audit_verifier(fn, p, p, k=1, samples=1_000, rng=0)
    # rows are strided views of one vector (stride 0), read-only; batches of at most 2²³ / n rows
    assert all(s == (0, 0, False, s[3]) and s[3][0] <= (1 << 23) // n for s in seen)
    assert sum(s[3][0] for s in seen) == 1_000
