"""The main job's part for engine teams (optaccept/jobs/engines.py, docs/engines.md §4):
the exact per-chain values against enumeration, the product-formula proxies where they must
equal the exact value (γ = 1, positions that do not depend on each other) and where they must
not (a hand-computed case), the Speed-of-Light comparison, the best-tree table, the figure in
the paper style, and the part itself in quick mode (twice, byte-identical)."""

from __future__ import annotations

import hashlib
import itertools
import math
from fractions import Fraction as F
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optaccept import InputError, plots, tree  # noqa: E402
from optaccept.jobs import engines  # noqa: E402


# ------------------------------------------------------------- small models, enumeration
def _chains_with_weights(Q, length):
    """Every chain of ``length`` tokens the draft can draw, with its probability Π q."""
    out = [((), 1.0)]
    for _ in range(length):
        nxt = []
        for w, pr in out:
            q = np.asarray(Q(w), dtype=np.float64)
            for x in np.flatnonzero(q > 0):
                nxt.append((w + (int(x),), pr * float(q[x])))
        out = nxt
    return out


class _Table:
    """A small context-dependent model: the law after a prefix is a fixed function of it."""

    def __init__(self, n, seed, kind, role):
        self.n, self.seed, self.kind, self.role = n, seed, kind, role

    def __call__(self, prefix):
        rng = np.random.default_rng([self.seed, len(prefix), *prefix])
        p = rng.dirichlet(np.ones(self.n))
        q = rng.dirichlet(np.ones(self.n))
        if self.kind == "equal":
            q = p
        elif self.kind == "zeros":
            p = p * (np.arange(self.n) % 2 == 0)
            q = q * (np.arange(self.n) != 0)
        elif self.kind == "disjoint":
            half = self.n // 2
            p = p * (np.arange(self.n) < half)
            q = q * (np.arange(self.n) >= half)
        elif self.kind == "one_hot":
            p = np.full(self.n, 1e-12 / (self.n - 1))
            p[len(prefix) % self.n] = 1 - 1e-12
        v = p if self.role == 0 else q
        return v / v.sum()


def _pair(kind, n=3, seed=0):
    return _Table(n, seed, kind, 0), _Table(n, seed, kind, 1)


KINDS = ["generic", "equal", "zeros", "disjoint", "one_hot"]


# ------------------------------------------------------------- exact values per chain
@pytest.mark.parametrize("kind", KINDS)
def test_chain_values_average_to_the_enumerated_exact_values(kind):
    """Σ over every drafted chain of Π q × (the chain's value) equals tree.accepted_tokens'
    enumeration, for token-level and block verification and γ = 1 … 3."""
    P, Q = _pair(kind)
    L = 3
    weighted = _chains_with_weights(Q, L)
    terms = [(w, engines.chain_terms(c, P, Q)) for c, w in weighted]
    assert math.isclose(sum(w for w, _ in terms), 1.0, rel_tol=1e-12)
    for g in range(1, L + 1):
        token = sum(w * t.token(g) for w, t in terms)
        block = sum(w * t.block[g - 1] for w, t in terms)
        want_token = float(tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=g), verifier="token").value)
        want_block = float(tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=g), verifier="block").value)
        assert token == pytest.approx(want_token, abs=1e-12)
        assert block == pytest.approx(want_block, abs=1e-12)


def test_block_values_rao_blackwellise_the_value_given_the_chain():
    """For each chain prefix, averaging ``tree._sampling.tree_value(..., "block")`` over the last token
    x_γ ~ q gives block_values' entry (the last weight averaged in closed form)."""
    P, Q = tree.synthetic_pair(4, rng=3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        c = tree._draft.sample_tree(Q, 3, 1, "iid", rng).chains[0]
        got = engines.block_values(c, P, Q)
        for g in range(1, 4):
            q = np.asarray(Q(c[: g - 1]))
            want = sum(
                q[x]
                * float(tree._sampling.tree_value(tree._draft.DraftTree((c[: g - 1] + (x,),), g, "iid"), P, Q, "block"))
                for x in range(4)
            )
            assert got[g - 1] == pytest.approx(want, abs=1e-12)


def test_chain_terms_refuse_a_token_the_draft_cannot_draw():
    P, Q = _pair("zeros")
    with pytest.raises(InputError, match="chain"):
        engines.chain_terms((0,), P, Q)  # q(0) = 0 in the "zeros" kind
    with pytest.raises(InputError, match="chain"):
        engines.chain_terms((), P, Q)


# ---------------------------------------------------------------------- the proxies
def test_proxies_are_exact_when_positions_do_not_depend_on_each_other():
    """Context-free laws: a_j = α at every position, so both proxies are 1 + Σ_{i≤γ} α^i, and
    so is the exact value (tree.accepted_tokens, enumeration with Fractions)."""
    p = [F(1, 6), F(1, 3), F(1, 2)]
    q = [F(1, 2), F(1, 4), F(1, 4)]
    alpha = sum(min(a, b) for a, b in zip(p, q))  # 1/6 + 1/4 + 1/4 = 2/3

    def P(prefix):
        return p

    def Q(prefix):
        return q

    chains = engines.chains_from_pairs([(P, Q)] * 3, 4, 5, rng=0)
    rows = {(r["length"], r["verifier"]): r for r in engines.proxy_rows(chains)}
    for g in range(1, 5):
        exact = 1 + tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=g), verifier="token").value
        assert exact == 1 + sum(alpha**i for i in range(1, g + 1))
        r = rows[(g, "token")]
        assert r["pooled"] == pytest.approx(float(exact), abs=1e-12)
        assert r["per_block"] == pytest.approx(float(exact), abs=1e-12)


def test_proxies_equal_the_exact_value_at_one_token():
    """γ = 1: the proxy is 1 + the mean of Σ min(p, q) at the contexts, the exact one-token
    acceptance; block verification of one token is token-level verification."""
    pairs = [tree.synthetic_pair(6, rng=s) for s in range(4)]
    chains = engines.chains_from_pairs(pairs, 2, 3, rng=np.random.default_rng(1))
    rows = {(r["length"], r["verifier"]): r for r in engines.proxy_rows(chains)}
    want = 1 + np.mean([float(tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=1)).value) for P, Q in pairs])
    for v in ("token", "block"):
        r = rows[(1, v)]
        assert r["exact"] == pytest.approx(want, abs=1e-12)
        assert r["pooled"] == pytest.approx(want, abs=1e-12)
        assert r["per_block"] == pytest.approx(want, abs=1e-12)
        assert r["pooled_minus_exact"] == pytest.approx(0.0, abs=1e-12)


def test_proxies_miss_the_dependence_between_positions():
    """A hand-computed case.  Root: p = (1/4, 3/4), q = (1/2, 1/2): a_1 = 3/4, token 0 is
    accepted with 1/2, token 1 with 1.  After 0 the draft can only propose 1, which the
    target never emits (a_2 = 0); after 1 the laws agree (a_2 = 1).  Token-level verification
    of two tokens accepts 3/4 + (1/2·1/2·0 + 1/2·1·1) = 5/4; the product formula gives
    3/4 + 3/4·(1/2·0 + 1/2·1) = 9/8: it ignores that the accepted first token is more often
    the one after which the draft is right."""
    half = [F(1, 2), F(1, 2)]

    def P(prefix):
        return {(): [F(1, 4), F(3, 4)], (0,): [F(1), F(0)]}.get(tuple(prefix)[:1], half)

    def Q(prefix):
        return {(0,): [F(0), F(1)]}.get(tuple(prefix)[:1], half)

    assert tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=2), verifier="token").value == F(5, 4)
    # every drafted chain, with multiplicity ∝ its probability: (0, 1) has 1/2, (1, 0) and (1, 1) 1/4
    chains = [engines.chain_terms(c, P, Q) for c in [(0, 1), (0, 1), (1, 0), (1, 1)]]
    r = {(x["length"], x["verifier"]): x for x in engines.proxy_rows(chains)}[(2, "token")]
    assert r["exact"] == pytest.approx(1 + 5 / 4, abs=1e-12)
    assert r["pooled"] == pytest.approx(1 + 9 / 8, abs=1e-12)
    assert r["per_block"] == pytest.approx(1 + 9 / 8, abs=1e-12)
    assert r["pooled_minus_exact"] == pytest.approx(-1 / 8, abs=1e-12)


def test_proxy_rows_standard_errors_cluster_by_context():
    """Duplicating every context's chains leaves means unchanged; with one context the
    clustered errors are 0 (nothing to cluster over)."""
    pairs = [tree.synthetic_pair(5, rng=s) for s in range(5)]
    chains = engines.chains_from_pairs(pairs, 3, 4, rng=2)
    a = engines.proxy_rows(chains)
    b = engines.proxy_rows(chains + chains)
    for x, y in zip(a, b):
        for key in ("exact", "pooled", "per_block"):
            assert x[key] == pytest.approx(y[key], abs=1e-12)
        assert x["exact_se"] > 0 or x["length"] == 1
    one = engines.proxy_rows([c for c in chains if c.group == 0])
    assert all(r["exact_se"] == 0 and r["pooled_se"] == 0 for r in one)
    with pytest.raises(InputError, match="lengths"):
        engines.proxy_rows(chains, lengths=[4])
    with pytest.raises(InputError, match="chains"):
        engines.proxy_rows([])


def test_chains_from_trees_refuses_chains_not_drawn_from_q():
    from optaccept.real import DraftTrees, trees_path

    with pytest.raises(InputError, match="i.i.d."):
        engines.chains_from_trees(DraftTrees.load(trees_path("swor")), progress=False)


# ------------------------------------------------------------------ Speed-of-Light
def test_entropy_moments_of_uniform_and_point_laws():
    n = 8
    mu, mu2 = engines.entropy_moments([np.full(n, 1 / n), np.eye(3)[1]])
    assert mu == pytest.approx(math.log(n) / 2, abs=1e-12)  # (ln 8 + 0) / 2
    assert mu2 == pytest.approx(math.log(n) ** 2 / 2, abs=1e-12)
    with pytest.raises(InputError, match="laws"):
        engines.entropy_moments([[0.5, 0.6]])
    with pytest.raises(InputError, match="laws"):
        engines.entropy_moments([])


def test_sol_leading_term_formula():
    mu, mu2 = 1.5, 3.0
    got = engines.sol_leading_term([1, 2, 64], mu, mu2)
    assert got[0] == 0.0
    assert got[2] == pytest.approx((1.5 + 3.0) * math.log(64) / 2.25, abs=1e-12)
    with pytest.raises(InputError, match="mu"):
        engines.sol_leading_term([2], 0.0, 1.0)


def test_oracle_tree_dominates_and_matches_brute_force():
    """The oracle tree of N nodes is the best of every prefix-closed set of N strings (brute
    force over the strings of length ≤ 2 on a 3-token vocabulary), and no drafted dynamic
    tree exceeds it."""
    pairs = [_pair("generic", n=3, seed=s) for s in range(3)]
    curve, mu, mu2, bound = engines.speed_of_light(pairs, (1, 2, 3, 4), progress=False)
    strings = [w for d in (1, 2) for w in itertools.product(range(3), repeat=d)]
    for i, (P, _) in enumerate(pairs):

        def pw(w, P=P):
            return math.prod(float(P(w[:j])[w[j]]) for j in range(len(w)))

        for j, N in enumerate((1, 2, 3, 4)):
            best = max(
                sum(pw(w) for w in s)
                for s in itertools.combinations(strings, N)
                if all(w[:-1] in s or len(w) == 1 for w in s)
            )
            assert curve.values["ceiling"][i, j] == pytest.approx(best, abs=1e-12)
    assert np.all(curve.values["dynamic"] <= curve.values["ceiling"] + 1e-12)
    assert bound.shape == (4,) and bound[0] == 0.0
    want_mu = np.mean([-(P(()) * np.log(P(()))).sum() for P, _ in pairs])
    assert mu == pytest.approx(want_mu, abs=1e-12)


def test_oracle_curve_equals_budget_curve_on_live_models():
    """The oracle and dynamic trees equal tree.budget_curve's "ceiling" and "dynamic" (which
    read ahead in batches; the order taken is the same)."""
    pairs = [tree.synthetic_pair(30, rng=s, noise=0.8) for s in range(3)]
    budgets = (1, 2, 5, 16, 40)
    got = engines.oracle_curve(pairs, budgets, progress=False)
    want = tree.budget_curve(pairs, budgets, strategies=("ceiling", "dynamic"), progress=False)
    for s in ("ceiling", "dynamic"):
        np.testing.assert_allclose(got.values[s], want.values[s], rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="budgets"):
        engines.oracle_curve(pairs, (4, 2))


def test_oracle_and_best_tree_read_only_recorded_laws(tmp_path):
    """Laws recorded the way the stored budget-curve laws are (optaccept.jobs.trees) are
    enough for the oracle curve to 64 nodes and the best-tree table: no unrecorded prefix is
    read, and the replayed values equal the live models' (up to the float32 storage)."""
    from optaccept.jobs import trees as T

    class Batch:
        def __init__(self, m):
            self.m = m

        def batch(self, prefixes):
            return [self.m(tuple(p)) for p in prefixes]

    pairs = [tree.synthetic_pair(40, rng=s, noise=0.7) for s in range(4)]
    recs = [(T._Recorder(Batch(t)), T._Recorder(Batch(d))) for t, d in pairs]
    for t, d in recs:
        t.next_token_probs(())
        d.next_token_probs(())
    for t, d in recs:
        tree.budget_curve([(t, d)], T.BUDGETS, calibration=recs, progress=False)
    stored = T.stored_budget_models(T._save_laws(recs, tmp_path / "laws.npz", T.BUDGETS, list(range(4))))
    replay = engines.oracle_curve(stored, engines.SOL_BUDGETS, progress=False)
    live = engines.oracle_curve(pairs, engines.SOL_BUDGETS, progress=False)
    np.testing.assert_allclose(replay.values["ceiling"], live.values["ceiling"], rtol=0, atol=1e-6)
    rows = engines.best_tree_rows(stored, engines.TREE_BUDGETS, engines.COST_CURVES)
    assert [r["size"] for r in rows[: len(engines.TREE_BUDGETS)]] == list(engines.TREE_BUDGETS)


def test_plot_speed_of_light_in_paper_style(tmp_path):
    from test_figures_paper import _check_figure, _check_pdf

    pairs = [tree.synthetic_pair(30, rng=s) for s in range(3)]
    curve, mu, mu2, bound = engines.speed_of_light(pairs, tuple(range(1, 17)), progress=False)
    ax = plots.plot_speed_of_light(curve, bound, title="synthetic")
    assert isinstance(ax, matplotlib.axes.Axes)
    _check_figure(ax.figure)
    pdf = [p for p in plots.save_figure(ax.figure, tmp_path / "sol") if p.suffix == ".pdf"][0]
    _check_pdf(pdf)
    plt.close(ax.figure)
    with pytest.raises(InputError, match="bound"):
        plots.plot_speed_of_light(curve, bound[:3])
    with pytest.raises(InputError, match="curve"):
        plots.plot_speed_of_light("x", bound)


# ------------------------------------------------------------------ best static tree
def test_best_tree_rows_cost_choice_agrees_with_the_budget_rows():
    """A cost row picks, among the budgets, the size of largest (value + 1)/cost — computed
    here from the budget rows — and its tree is that budget's; every vLLM string parses back
    to a tree of the row's size."""
    pairs = [tree.synthetic_pair(20, rng=s) for s in range(4)]
    budgets = (2, 4, 8)
    costs = {"flat": lambda n: 1.0, "steep": lambda n: 1.0 + 0.5 * n}
    rows = engines.best_tree_rows(pairs, budgets, costs)
    by_n = {r["size"]: r for r in rows if r["kind"] == "budget"}
    assert sorted(by_n) == list(budgets)
    for r in rows:
        assert tree.Shape.from_vllm(r["vllm"]).size == r["size"]
        assert r["tokens_per_step"] == pytest.approx(r["value"] + 1, abs=1e-12)
    for r in (x for x in rows if x["kind"] == "cost"):
        fn = costs[r["name"]]
        rate = {n: (by_n[n]["value"] + 1) / fn(n) for n in budgets}
        n_best = max(budgets, key=lambda n: (rate[n], -n))
        assert r["size"] == n_best
        assert r["vllm"] == by_n[n_best]["vllm"]
        assert r["tokens_per_cost"] == pytest.approx(rate[n_best], abs=1e-12)


# ------------------------------------------------------------------------ the part
def test_reports_on_the_synthetic_pair_are_reproducible(tmp_path):
    pairs = [tree.synthetic_pair(12, rng=s) for s in range(3)]

    def write(folder):
        chains = engines.chains_from_pairs(pairs, 3, 4, rng=0)
        paths = engines.proxy_report(engines.proxy_rows(chains), folder / "engines_proxy", "synthetic")
        curve, mu, mu2, bound = engines.speed_of_light(pairs, tuple(range(1, 9)), progress=False)
        paths += engines.speed_of_light_report(curve, mu, mu2, bound, folder / "engines_speed_of_light", "synthetic")
        rows = engines.best_tree_rows(pairs, (2, 4), {"1 + 0.1 n": lambda n: 1 + 0.1 * n})
        paths += engines.best_tree_report(rows, folder / "engines_best_tree", "synthetic", len(pairs))
        plt.close("all")
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}

    a, b = write(tmp_path / "a"), write(tmp_path / "b")
    assert a == b
    assert {"engines_proxy.md", "engines_proxy.csv", "engines_speed_of_light.png", "engines_best_tree.tex"} <= set(a)
    md = (tmp_path / "a" / "engines_best_tree.md").read_text()
    assert "speculative_token_tree" in md and "[(0,)" in md


def test_part_runs_in_quick_mode(tmp_path):
    from optaccept import jobs

    assert jobs._main.PARTS["engines"] == "engines"
    paths = engines.run(tmp_path, quick=True)
    names = {p.name for p in paths}
    assert {"engines_proxy.md", "engines_proxy.csv", "engines_proxy.tex"} <= names
    text = (tmp_path / "engines_proxy.csv").read_text().splitlines()
    assert text[0].startswith("length,verifier,exact")
    assert len(text) == 1 + 2 * 4  # γ = 1 … 4, two verifiers
    from optaccept.jobs.trees import BUDGET_LAWS

    if (Path(engines.__file__).resolve().parents[1] / "data" / BUDGET_LAWS).exists():
        assert {"engines_speed_of_light.pdf", "engines_speed_of_light.csv", "engines_best_tree.md"} <= names
        sol = (tmp_path / "engines_speed_of_light.csv").read_text().splitlines()
        assert len(sol) == 1 + 64  # N = 1 … 64
