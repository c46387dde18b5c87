"""The audits' one verdict (optaccept/audit/_verdict.py): three verdicts with a stated margin,
a ``lossless`` field that never contradicts a proof of loss (report, repr, JSON, CLI), "not
the declared rule" with its z and sample size, per-depth law checks that a departure at one
depth cannot hide in, no z from a zero standard error, and runs without power named.  The
implementations under audit, and every reference value, are written here from the rules'
definitions (thresholds from the DKW formula, Markov's bound in exact fractions)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from optaccept import audit, tree
from optaccept.audit._verdict import decide, mean_check
from optaccept.cli._main import main

P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


def _draw_rows(P, rng):
    cum = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cum[:, -1]
    return np.minimum((cum <= u[:, None]).sum(axis=1), P.shape[1] - 1)


def _sd_one_draft(P, Q, X, rng):
    """Speculative sampling with one draft, written from its definition."""
    x = X[:, 0]
    B = len(x)
    p, q = P[np.arange(B), x], Q[np.arange(B), x]
    keep = rng.random(B) * q < p
    res = np.maximum(P - Q, 0.0)
    res_sum = res.sum(1, keepdims=True)
    res = np.where(res_sum > 0, res / np.where(res_sum > 0, res_sum, 1), P)
    return np.where(keep, x, _draw_rows(res, rng))


def _accept_all(P, Q, X, rng):
    return X[:, 0].copy()


def _tree_walk(tokens, parents, P, Q, rng, dup_bug):
    """Target-only on a drafted tree: walk down while a child is the target's own sample.  With
    ``dup_bug`` each child node is accepted with p of its token, one node after the other, so a
    token drafted twice is accepted against 2·p(x) (a precondition of distinct siblings broken)."""
    B, N1 = tokens.shape
    n = P.shape[2]
    v = np.zeros(B, dtype=np.int64)
    Y = np.zeros(B, dtype=np.int64)
    for b in range(B):
        node = 0
        while True:
            kids = [c for c in range(1, N1) if parents[c] == node and tokens[b, c] >= 0]
            p = P[b, node]
            if dup_bug:
                u, acc, nxt = rng.random(), 0.0, None
                for c in kids:
                    acc += p[tokens[b, c]]
                    if u < acc:
                        nxt = c
                        break
                if nxt is None:
                    rest = p.copy()
                    rest[[tokens[b, c] for c in kids]] = 0.0
                    y = rng.choice(n, p=rest / rest.sum()) if rest.sum() > 0 else rng.choice(n, p=p)
            else:
                y = rng.choice(n, p=p)
                nxt = next((c for c in kids if tokens[b, c] == y), None)
            if nxt is None:
                v[b], Y[b] = node, y
                break
            node = nxt
    return v, Y


# -- the verdict function against independent formulas --------------------------------------


def test_thresholds_split_the_rate_over_every_check():
    law = {"a": (0.01, 1000), "b": (0.02, 4000)}
    d = decide(
        law,
        1e-3,
        declared=mean_check(0.5, 0.01, 0.5, 1000),
        optimum=mean_check(0.5, 0.01, (0.0, 0.9), 1000),
    )
    m = 4  # two law checks, the declared rule, the optimum
    for c in d.checks:
        if c.kind == "law":
            n = law[c.name][1]
            assert c.threshold == pytest.approx(math.sqrt(math.log(2 * m / 1e-3) / (2 * n)), rel=1e-12)
            assert c.upper == pytest.approx(law[c.name][0] + c.threshold)
    from scipy.stats import norm

    assert d.check("declared").threshold == pytest.approx(norm.isf(1e-3 / m / 2))
    assert d.check("optimum").threshold == pytest.approx(norm.isf(1e-3 / m))


def test_three_verdicts_from_the_statistics():
    # a departing law check: not lossless, whatever else
    assert decide({"a": (0.5, 1000)}, 1e-6).verdict == "not lossless"
    # every upper bound under the margin: lossless; a margin below the bound: inconclusive
    small = decide({"a": (0.001, 10**6)}, 1e-6, margin=0.02, samples=10**6)
    assert small.verdict == "lossless" and small.lossless and small.bound < 0.02
    tight = decide({"a": (0.001, 10**6)}, 1e-6, margin=0.001, samples=10**6)
    assert tight.verdict == "inconclusive" and tight.lossless
    thr = math.sqrt(math.log(2 / 1e-6) / (2 * 10**6))
    assert tight.samples_to_decide == math.ceil(10**6 * (2 * thr / 0.001) ** 2)
    # no power overrides the margin; the reason is kept
    nop = decide({"a": (0.001, 10**6)}, 1e-6, no_power=["nothing was drafted"])
    assert nop.verdict == "inconclusive" and nop.no_power == ("nothing was drafted",)
    # departing from the declared rule is not a loss
    dec = decide({"a": (0.001, 10**6)}, 1e-6, declared=mean_check(0.6, 0.01, 0.5, 10**6))
    assert dec.verdict == "lossless" and dec.declared_rule is False
    # above the optimum is a loss
    opt = decide({"a": (0.001, 10**6)}, 1e-6, optimum=mean_check(0.6, 0.01, (0.0, 0.5), 10**6))
    assert opt.verdict == "not lossless" and not opt.lossless


def test_no_z_from_a_zero_standard_error_markov_bound_in_fractions():
    # every one of N values at the top of [0, 2] against a mean of 1.5: P <= (1.5 / 2)^N
    for N, departs in ((10, False), (60, True)):
        d = decide({"a": (0.0, 1000)}, 1e-6, declared=mean_check(2.0, 0.0, 1.5, N, (0.0, 2.0)))
        c = d.check("declared")
        assert c.statistic is None and c.departs is departs
        bound = Fraction(3, 4) ** N
        assert (bound <= Fraction(1e-6) / 2 / 2) is departs  # share δ/m, two-sided: δ/(2m), m = 2
        assert f"{float(bound):.2e}" in c.note
    huge = decide({}, 1e-6, optimum=mean_check(1.0, 0.0, (0.0, 0.71), 3000, (0.0, 1.0))).check("optimum")
    assert huge.departs and f"10^{3000 * math.log10(0.71):.0f}" in huge.note
    # constant at the reference: consistent, z = 0; constant inside the range: not tested
    assert decide({}, 1e-6, declared=mean_check(1.0, 0.0, 1.0, 50, (0.0, 2.0))).check("declared").statistic == 0.0
    inner = decide({}, 1e-6, declared=mean_check(1.0, 0.0, 1.5, 50, (0.0, 2.0))).check("declared")
    assert inner.statistic is None and not inner.departs and "not tested" in inner.note


# -- item 1: lossless is False wherever a proof of loss is reported -------------------------


def test_above_the_optimum_sets_lossless_false_in_report_repr_and_json():
    rep = audit.audit_verifier(_accept_all, P0, Q0, k=1, drafts="iid", samples=3000, rng=0)
    assert rep.above_optimum and not rep.lossless and rep.verdict == "not lossless" and not rep.ok
    assert "lossless=False" in repr(rep) and "not lossless" in str(rep)
    js = json.loads(rep.to_json())
    assert js["lossless"] is False and js["verdict"] == "not lossless" and js["above_optimum"] is True
    assert js["decision"]["lossless"] is False
    # every step accepted, so the acceptance has no spread: no z, Markov's bound decides
    c = rep.decision.check("optimum")
    assert rep.std_err == 0.0 and c.statistic is None and c.departs and "no spread" in c.note
    assert "e+" not in str(rep)  # no astronomically large z anywhere


def test_a_hand_built_report_cannot_contradict_its_proof():
    rep = audit.ChainAuditReport(
        lossless=True,
        accepted=2.0,
        std_err=0.01,
        expected=None,
        optimum=1.5,
        length=3,
        steps=1000,
        false_alarm=1e-6,
        ks_distance={"p": 0.01},
        ks_threshold=0.1,
        accepted_law=[0.0, 0.0, 1.0, 0.0],
    )
    assert rep.above_optimum and rep.lossless is False and json.loads(rep.to_json())["lossless"] is False


def test_cli_reports_lossless_false_for_acceptance_above_the_optimum(tmp_path, capsys):
    rng = np.random.default_rng(3)
    T = 4000
    X = rng.choice(7, size=(T, 1), p=Q0)
    np.savez(tmp_path / "lossy.npz", P=np.tile(P0, (T, 1)), Q=np.tile(Q0, (T, 1)), X=X, Y=X[:, 0])
    assert main(["audit", str(tmp_path / "lossy.npz"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["lossless"] is False and out["above_optimum"] is True and out["verdict"] == "not lossless"


def test_chain_accepting_everything_is_not_lossless_without_a_z():
    target, draft = tree.synthetic_pair(4, rng=0)

    def accept_all(P, Q, X, rng):
        B, g = X.shape
        return np.full(B, g), _draw_rows(P[:, g], rng)

    rep = audit.audit_chain(accept_all, target, draft, 2, samples=1500, rng=0, declared="token")
    assert not rep.lossless and rep.above_optimum and rep.not_declared
    assert rep.std_err == 0.0 and rep.expected_z is None
    assert "no spread" in rep.decision.check("declared").note and "e+" not in str(rep)


# -- item 2: not the declared rule; per-depth law checks ------------------------------------


def test_duplicated_siblings_under_a_distinct_siblings_rule_flagged_at_4000_trees():
    target, draft = tree.synthetic_pair(6, rng=3)
    law = tree.TreeDraftLaw([(0,), (1,), (0, 0), (1, 0)], "iid")  # i.i.d. children: duplicates happen
    bad = audit.audit_tree(
        lambda *a: _tree_walk(*a, dup_bug=True), target, draft, law, samples=4000, rng=1, declared="target_only"
    )
    c = bad.decision.check("declared")
    assert bad.not_declared and c.departs and c.samples == 4000 and c.statistic > c.threshold
    assert "NOT THE DECLARED RULE" in str(bad) and not bad.ok
    # the departure sits at depth 1: its own law checks see it, the pooled ones alone do not
    assert any(a.name.startswith("depth 1,") for a in bad.decision.alarms) and not bad.lossless
    assert not any(c.departs for c in bad.decision.checks if c.name in ("p", "q", "p/q", "id"))
    good = audit.audit_tree(
        lambda *a: _tree_walk(*a, dup_bug=False), target, draft, law, samples=4000, rng=1, declared="target_only"
    )
    assert good.ok and good.lossless and not good.not_declared and not good.decision.alarms


def test_per_depth_checks_are_the_transforms_of_each_depth():
    target, draft = tree.synthetic_pair(3, rng=2)

    def exact_match(P, Q, X, rng):
        B, g = X.shape
        T = np.stack([_draw_rows(P[:, i], rng) for i in range(g + 1)], axis=1)
        m = np.cumprod(T[:, :-1] == X, axis=1).sum(1)
        return m, T[np.arange(B), m]

    rep = audit.audit_chain(exact_match, target, draft, 2, samples=600, rng=5, declared="exact_match")
    names = [c.name for c in rep.decision.checks if c.kind == "law"]
    assert {f"depth {i}, {o}" for i in (1, 2, 3) for o in ("p", "q", "p/q", "id")} <= set(names)
    sizes = {c.name: c.samples for c in rep.decision.checks}
    assert sizes["p"] == 3 * 600 and sizes["depth 2, p"] == 600
    assert len(rep.decision.checks) == 4 * 4 + 2  # pooled + 3 depths per order, declared, optimum


# -- item 3: three verdicts on real runs; no power named -------------------------------------


def test_inconclusive_names_a_size_that_decides():
    small = audit.audit_verifier(_sd_one_draft, P0, Q0, k=1, samples=3000, rng=2, declared="sd")
    assert small.verdict == "inconclusive" and small.lossless and small.ok
    need = small.decision.samples_to_decide
    assert need > 3000 and f"{need:,} steps would decide" in str(small)
    big = audit.audit_verifier(_sd_one_draft, P0, Q0, k=1, samples=need, rng=3, declared="sd")
    assert big.verdict == "lossless" and big.decision.bound <= big.decision.margin
    assert "lossless within 0.02" in str(big)


def test_nothing_rejected_is_inconclusive_and_says_why():
    rep = audit.audit_verifier(_sd_one_draft, P0, P0, k=1, samples=200_000, rng=0, declared="sd")  # p = q
    assert rep.acceptance == 1.0 and rep.verdict == "inconclusive" and rep.lossless
    assert "rejection path was never exercised" in str(rep) and rep.decision.samples_to_decide is None


# -- the stated false-alarm rate, measured on correct implementations -----------------------


def test_false_alarm_rate_of_correct_verifiers_stays_as_stated():
    """200 audits of a correct verifier at δ = 0.2 (a rate 200 audits can measure): every alarm
    of the verdict counts (law checks, optimum, declared rule).  Under the stated rate the count
    is at most Binomial(200, 0.2), whose 0.999 quantile is 59."""
    alarms = 0
    for seed in range(200):
        rep = audit.audit_verifier(
            _sd_one_draft, P0, Q0, k=1, samples=400, rng=seed, declared="sd", false_alarm=0.2, batch=400
        )
        alarms += not rep.ok
    assert alarms <= 59, alarms


# -- whole loops: the same verdict -----------------------------------------------------------


def _accept_all_loop(target, draft, gamma, new_tokens):
    """Drafts γ tokens from the draft and keeps them all, then a bonus token from the target."""

    def generate(prompt, rng):
        toks, counts = [], []
        while len(toks) < new_tokens:
            pre = tuple(prompt) + tuple(toks)
            chain = []
            for _ in range(gamma):
                chain.append(int(rng.choice(len(draft(pre)), p=draft(pre + tuple(chain)))))
            bonus = int(rng.choice(len(target(pre)), p=target(pre + tuple(chain))))
            toks += chain + [bonus]
            counts.append(gamma)
        return toks, counts

    return generate


def _never_drafting_loop(target, new_tokens):
    """Samples the target one token per call and reports no accepted draft."""

    def generate(prompt, rng):
        toks = []
        for _ in range(new_tokens):
            law = target(tuple(prompt) + tuple(toks))
            toks.append(int(rng.choice(len(law), p=law)))
        return toks, [0] * new_tokens

    return generate


def test_generation_above_the_optimum_is_not_lossless_and_no_drafts_has_no_power():
    target, draft = tree.synthetic_pair(5, rng=4)
    drafting = audit.ChainDrafting(draft, 2, "sd")
    bad = audit.audit_generation(
        _accept_all_loop(target, draft, 2, 6),
        target,
        prompts=[(1,)],
        samples=150,
        new_tokens=6,
        rng=0,
        drafting=drafting,
        progress=False,
    )
    assert bad.above_optimum and not bad.lossless and bad.verdict == "not lossless"
    assert json.loads(bad.to_json())["lossless"] is False and "NOT LOSSLESS" in str(bad)
    idle = audit.audit_generation(
        _never_drafting_loop(target, 6),
        target,
        prompts=[(1,)],
        samples=150,
        new_tokens=6,
        rng=0,
        drafting=drafting,
        progress=False,
    )
    assert idle.lossless and idle.verdict == "inconclusive"
    assert any("never used" in r for r in idle.decision.no_power) and "never used" in str(idle)


@pytest.mark.parametrize("rule, cls, k", [("sd", "SD", 1), ("rrs", "RRS", 2), ("kseq", "KSeq", 3), ("nss", "NSS", 2)])
def test_correct_verifiers_match_their_declared_rule(rule, cls, k):
    """The declared check of correct verifiers (the library's sampling verifiers) against each
    rule's closed-form P(Y ∈ drafts) (optaccept.verifiers.batched_acceptance) raises no alarm."""
    from optaccept import testing, verifiers

    fn = testing.verifier_fn(getattr(verifiers, cls)())
    rep = audit.audit_verifier(fn, P0, Q0, k=k, samples=30_000, rng=7, declared=rule)
    assert rep.ok and not rep.not_declared and abs(rep.expected_z) < rep.decision.check("declared").threshold
