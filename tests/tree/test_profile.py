"""tree.acceptance_profile: per-position means equal the exact accepted tokens on deterministic
trees, per-depth rates equal enumeration (token-level) and simulation (block), and the engine
forms satisfy each engine's own checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from optaccept import InputError, MethodError, tree
from optaccept.tree._profile import _tree_rates


def _shift(model, ctx):
    return lambda u: model(ctx + tuple(u))


@pytest.mark.parametrize("shape", [3, (3, 2), (2, 2, 1), [(0,), (1,), (0, 0), (0, 1), (0, 0, 0)], (1,) * 5])
def test_profile_means_equal_exact_accepted_tokens_on_topk_trees(shape):
    pairs = [tree.synthetic_pair(7, rng=s) for s in (1, 2)]
    prof = tree.acceptance_profile(pairs, shape, verifier="target_only", positions=5, rng=3)
    spec = (1,) * shape if isinstance(shape, int) else shape
    exact = np.zeros(5)
    for (target, draft), text in zip(pairs, prof.details["texts"]):
        assert len(text) == 5
        for t in range(5):
            r = tree.accepted_tokens(
                _shift(target, text[:t]),
                _shift(draft, text[:t]),
                tree.TreeDraftLaw(spec, "topk"),
                verifier="target_only",
            )
            exact[t] += float(r.value) / len(pairs)
    np.testing.assert_allclose(prof.by_position.sum(axis=1), exact, rtol=1e-12)
    assert prof.mean_accepted == pytest.approx(exact.mean(), rel=1e-12)
    assert prof.al == pytest.approx(1 + exact.mean(), rel=1e-12)


def test_first_position_is_the_step_after_the_prompt():
    target, draft = tree.synthetic_pair(9, rng=4)
    prof = tree.acceptance_profile((target, draft), (3, 2, 1), positions=1)
    for v in ("target_only", "optimal", "token_optimal"):
        ref = tree.accepted_tokens(target, draft, tree.TreeDraftLaw((3, 2, 1), "topk"), verifier=v).value
        assert prof.mean_accepted == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("verifier", ["token", "target_only"])
def test_chain_rates_equal_enumeration(verifier):
    """Σ over drafted chains of q(chain)·rates(chain) against the tree package's enumeration of
    E[min(A, d)] = accepted_tokens(length=d), d = 1 … γ."""
    n, g = 3, 3
    rng = np.random.default_rng(7)
    tp = {u: rng.dirichlet(np.ones(n)) for L in range(g + 1) for u in itertools.product(range(n), repeat=L)}
    tq = {u: rng.dirichlet(np.ones(n)) for L in range(g) for u in itertools.product(range(n), repeat=L)}
    P, Q = (lambda u: tp[tuple(u)]), (lambda u: tq[tuple(u)])
    shp = tree._shape.as_shape((1,) * g)
    total = np.zeros(g)
    for chain in itertools.product(range(n), repeat=g):
        t = tree._shaped_tree.ShapedTree(shp, "iid", {(0,) * (i + 1): chain[i] for i in range(g)})
        total += math.prod(tq[chain[:i]][chain[i]] for i in range(g)) * _tree_rates(t, P, Q, verifier, g)
    cum = [0.0] + [
        float(tree.accepted_tokens(P, Q, tree.TreeDraftLaw(length=d), verifier=verifier).value) for d in range(1, g + 1)
    ]
    np.testing.assert_allclose(total, np.diff(cum), rtol=1e-12)


def test_block_rates_match_its_value_and_a_simulation():
    target, draft = tree.synthetic_pair(5, rng=2)
    prof = tree.acceptance_profile((target, draft), 3, verifier="block", positions=1, samples=1500, rng=1)
    exact = float(tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=3), verifier="block").value)
    assert abs(prof.mean_accepted - exact) < 0.03
    acc, _ = tree.simulate(
        target, draft, drafts=tree.TreeDraftLaw(length=3), verifier="block", samples=3000, rng=np.random.default_rng(0)
    )
    emp = np.array([(np.asarray(acc) >= d).mean() for d in (1, 2, 3)])
    np.testing.assert_allclose(prof.rates, emp, atol=4 * 0.5 / math.sqrt(3000) + 0.01)
    # per chain, Σ_d P(τ ≥ d) is block verification's exact value
    shp = tree._shape.as_shape((1, 1, 1))
    t = tree._shaped_tree.sample_shaped(draft, shp, "iid", np.random.default_rng(3))
    assert _tree_rates(t, target, draft, "block", 3).sum() == pytest.approx(
        float(tree._sampling.tree_value(t, target, draft, "block")), rel=1e-12
    )


def test_sampled_tree_profile_matches_exact_mean():
    target, draft = tree.synthetic_pair(4, rng=5)
    prof = tree.acceptance_profile(
        (target, draft), (2, 2), verifier="token", children="swor", positions=1, samples=3000, rng=2
    )
    exact = float(tree.accepted_tokens(target, draft, tree.TreeDraftLaw((2, 2), "swor"), verifier="token").value)
    assert abs(prof.mean_accepted - exact) < 0.03


def test_engine_forms():
    pairs = [tree.synthetic_pair(12, rng=s) for s in range(3)]
    prof = tree.acceptance_profile(pairs, 4, verifier="token", positions=3, samples=16, rng=0)
    v = prof.to_engine("vllm")
    rates = v["synthetic_acceptance_rates"]
    # vLLM's own checks (SpeculativeConfig._resolve_synthetic_acceptance_rates)
    assert v["rejection_sample_method"] == "synthetic" and len(rates) == v["num_speculative_tokens"] == 4
    assert all(0.0 <= r <= 1.0 for r in rates) and all(rates[i] <= rates[i - 1] for i in range(1, 4))
    assert 1 + sum(rates) == pytest.approx(prof.al, abs=1e-5)
    s = prof.to_engine("sglang")
    assert float(s["SGLANG_SIMULATE_ACC_LEN"]) == pytest.approx(prof.al, abs=1e-4)
    assert 1.0 <= float(s["SGLANG_SIMULATE_ACC_LEN"]) <= 5.0
    t = prof.to_engine("trtllm")
    assert float(t["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"]) == pytest.approx(prof.al - 1, abs=1e-4)
    law = prof.accepted_law
    assert law.sum() == pytest.approx(1.0) and (law >= -1e-15).all()
    assert "P(accepted ≥ d)" in str(prof)


def test_refusals():
    pair = tree.synthetic_pair(5, rng=0)
    with pytest.raises(MethodError, match="traversal"):
        tree.acceptance_profile(pair, (2, 1), verifier="traversal", children="swor")
    with pytest.raises(MethodError, match="top-k"):
        tree.acceptance_profile(pair, (2, 1), verifier="optimal", children="swor")
    with pytest.raises(MethodError):
        tree.acceptance_profile(pair, 2, verifier="token", children="topk")
    with pytest.raises(InputError, match="verifier"):
        tree.acceptance_profile(pair, 2, verifier="magic")
    with pytest.raises(InputError, match="shape"):
        tree.acceptance_profile(pair, 0)
    with pytest.raises(InputError, match="positions"):
        tree.acceptance_profile(pair, 2, positions=0)
    with pytest.raises(InputError, match="pairs"):
        tree.acceptance_profile(5, 2)
    with pytest.raises(InputError, match="name"):
        tree.acceptance_profile(pair, 2, positions=1).to_engine("tgi")


def test_standard_error_of_one_text_is_unknown_not_zero():
    """Issue 46: a profile of one text (its positions dependent) has no spread over texts: its
    std_err is None (unknown), shown as unknown, never 0.0; two or more texts keep the
    clustered standard error over the texts' means."""
    pair = tree.synthetic_pair(6, rng=0)
    for positions in (1, 4):
        for seed in (0, 1):
            prof = tree.acceptance_profile(pair, 3, "target_only", positions=positions, rng=seed)
            assert prof.texts == 1 and prof.std_err is None
            assert "unknown" in str(prof) and "± 0.0" not in str(prof)
            assert "unknown" in prof._repr_html_()
    pairs = [tree.synthetic_pair(6, rng=s) for s in range(3)]
    prof = tree.acceptance_profile(pairs, 3, "target_only", positions=4, rng=0)
    per_text = prof.details["per_text_mean"]
    assert prof.std_err == pytest.approx(float(np.std(per_text, ddof=1) / math.sqrt(3)), abs=1e-15)
    assert "unknown" not in str(prof)
