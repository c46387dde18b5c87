"""audit.regression_gate / audit.sample_size: exact per-step values against the tree package's
enumeration, clustered standard errors against their definition, and the gate's decisions
(false alarms and power on a small simulation; the full tables are benchmarks/bench_gate.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from optaccept import InputError, audit, tree
from optaccept.audit._gate import _summary


def _cf_pair(n, seed):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    return p, q


@pytest.mark.parametrize("verifier", ["token", "block", "target_only"])
@pytest.mark.parametrize("seed", [0, 1])
def test_chain_step_values_average_to_the_enumerated_value(verifier, seed):
    """Σ_chains q(chain)·E[accepted | chain] over every drafted chain equals the tree package's
    exact expected accepted tokens (an independent enumeration)."""
    n, g = 3, 3
    rng = np.random.default_rng(seed)
    table_p = {u: rng.dirichlet(np.ones(n)) for L in range(g + 1) for u in itertools.product(range(n), repeat=L)}
    table_q = {u: rng.dirichlet(np.ones(n)) for L in range(g) for u in itertools.product(range(n), repeat=L)}
    chains = list(itertools.product(range(n), repeat=g))
    P = np.array([[table_p[c[:i]] for i in range(g + 1)] for c in chains])
    Q = np.array([[table_q[c[:i]] for i in range(g)] for c in chains])
    weight = np.array([math.prod(table_q[c[:i]][c[i]] for i in range(g)) for c in chains])
    vals = audit._logs.step_values({"P": P, "Q": Q, "X": np.array(chains)}, verifier).exact
    ref = tree.accepted_tokens(
        lambda u: table_p[tuple(u)], lambda u: table_q[tuple(u)], drafts=tree.TreeDraftLaw(length=g), verifier=verifier
    ).value
    assert float(weight @ vals) == pytest.approx(float(ref), rel=1e-12)


def test_padded_chains_and_zero_ratios():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    P = np.tile(p, (2, 3, 1))
    Q = np.tile(q, (2, 2, 1))
    X = np.array([[0, 2], [1, -1]])  # token 2 has p = 0: nothing after it; a chain of one
    vals = audit._logs.step_values({"P": P, "Q": Q, "X": X}).exact
    np.testing.assert_allclose(vals, [1.0, 1.0])


def test_tree_log_matches_exact_topk_value():
    target, draft = tree.synthetic_pair(6, rng=3)
    shape = tree._shape.as_shape((3, 2))
    ref = tree.accepted_tokens(target, draft, drafts=tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
    t = ref.details["tree"]
    paths = list(shape.paths)
    index = {(): 0} | {u: i + 1 for i, u in enumerate(paths)}
    parents = np.array([-1] + [index[u[:-1]] for u in paths])
    tokens = np.array([[-1] + [t.tokens.get(u, -1) for u in paths]])
    P = np.array([[target(t.prefix(u)) if u in t.tokens or u == () else np.full(6, 1 / 6) for u in [(), *paths]]])
    vals = audit._logs.step_values({"tokens": tokens, "parents": parents, "P": P}).exact
    assert vals[0] == pytest.approx(float(ref.value), rel=1e-12)


def test_clustered_errors_match_their_definition():
    from optaccept.real._tables import _clustered  # the tree tables' own implementation

    rng = np.random.default_rng(0)
    x = rng.random(40)
    req = rng.integers(0, 7, size=40)
    s = _summary(x, req)
    m, se = _clustered(x, req)
    assert s.pooled == pytest.approx(m) and s.pooled_se == pytest.approx(se, rel=1e-12)
    means = [x[req == r].mean() for r in np.unique(req)]
    R = len(means)
    assert s.per_request == pytest.approx(sum(means) / R)
    var = sum((v - sum(means) / R) ** 2 for v in means) / (R - 1)
    assert s.per_request_se == pytest.approx(math.sqrt(var / R), rel=1e-12)


@pytest.fixture(scope="module")
def pools():
    """Two small decoded pools on the built-in pair: the same prompts, a good and a worse draft."""
    kw = dict(tokens=12, gamma=3, n=16)
    base = audit._logs.synthetic_chain_log(240, noise=1.0, rng=0, rows=False, **kw)
    worse = audit._logs.synthetic_chain_log(240, noise=1.6, rng=1, rows=False, **kw)
    return base, worse


def _take(sv, idx):
    keep = np.isin(sv.request, idx)
    return audit._logs.StepValues(sv.exact[keep], sv.counts[keep], sv.request[keep], sv.kind, sv.verifier)


def test_exact_values_have_the_counts_mean_and_less_noise(pools):
    base, _ = pools
    s_exact, s_counts = _summary(base.exact, base.request), _summary(base.counts, base.request)
    assert abs(s_exact.pooled - s_counts.pooled) < 4 * s_counts.pooled_se
    assert s_exact.pooled_se < 0.8 * s_counts.pooled_se


def test_gate_false_alarms_and_power_on_a_small_simulation(pools):
    base, worse = pools
    rng = np.random.default_rng(5)
    alarms = detected = 0
    runs = 300
    for _ in range(runs):
        perm = rng.permutation(240)
        a, b = _take(base, perm[:60]), _take(base, perm[60:120])
        alarms += audit.regression_gate(a, b, false_alarm=0.05).regressed
        detected += audit.regression_gate(a, _take(worse, perm[120:180]), false_alarm=0.05).regressed
    assert alarms / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
    assert detected / runs >= 0.9


def test_gate_reports_both_definitions_counts_and_al(pools):
    base, worse = pools
    g = audit.regression_gate(base, worse)
    assert g.regressed and g.difference < 0 and g.std_err > 0
    assert set(g.by_definition) == {"pooled", "per_request"} and g.counts is not None
    assert g.counts["std_err"] > g.std_err
    text = str(g)
    assert "AL − 1" in text and "per_request" in text and "noisier" in text
    g2 = audit.regression_gate(worse, base)
    assert not g2.regressed and g2.difference == pytest.approx(-g.difference)


def test_counts_only_logs_say_they_are_noisier():
    req = np.repeat(np.arange(30), 5)
    rng = np.random.default_rng(0)
    a = {"accepted": rng.integers(0, 4, size=150), "request": req}
    g = audit.regression_gate(a, a)
    assert not g.regressed and g.difference == 0 and "noisier" in g.note and g.method == "0/1 counts"
    s = audit.sample_size(a)
    assert s.requests is None and s.requests_counts >= 2


def test_sample_size_is_the_fewest_requests_with_the_power(pools):
    """Against its definition: the t-test's power (noncentral t, R − 1 degrees of freedom) with
    the per-request variance at its chi-square upper bound reaches ``power`` at R, not at R − 1."""
    from scipy.stats import chi2, nct
    from scipy.stats import t as student

    base, _ = pools
    ref = _summary(base.exact, base.request)
    for conf in (0.5, 0.9, 0.99):
        s = audit.sample_size(base, change=0.05, false_alarm=1e-3, power=0.9, confidence=conf)
        df0 = ref.requests - 1
        var = ref.pooled_se**2 * ref.requests * df0 / chi2.ppf(1 - conf, df0)
        delta = 0.05 * (ref.pooled + 1)

        def power(R, var=var, delta=delta):
            return nct.sf(student.ppf(1 - 1e-3, R - 1), R - 1, delta / math.sqrt(2 * var / R))

        assert power(s.requests) >= 0.9 > power(s.requests - 1)
        assert s.requests < s.requests_counts and s.confidence == conf and s.baseline_requests == ref.requests
    assert audit.sample_size(base, change=0.02).requests > s.requests
    with pytest.raises(InputError, match="confidence"):
        audit.sample_size(base, confidence=1.0)


def _normal_run(R, rng, shift=0.0, steps=4):
    """R requests of ``steps`` steps: a request effect N(0, 0.3²) and step noise N(0, 0.5²)."""
    u = rng.normal(0.0, 0.3, R)
    v = 2.0 - shift + np.repeat(u, steps) + rng.normal(0.0, 0.5, R * steps)
    return audit._logs.StepValues(v, None, np.repeat(np.arange(R), steps), "chain", "token")


def test_planned_gates_reach_the_stated_power():
    """200 simulated plans from a small baseline (5 requests, so its variance is uncertain), each
    followed by a gate with the planned requests against a 10 % drop: the detections reach the
    stated power 0.9 (a binomial bound at 1e-3; planning with z-quantiles and the point estimate
    of the variance detected about 0.8), and false alarms stay at the stated 0.05."""
    from scipy.stats import binom

    rng = np.random.default_rng(2026)
    sims = 200
    detected = alarms = 0
    for _ in range(sims):
        s = audit.sample_size(_normal_run(5, rng), change=0.1, false_alarm=0.05, power=0.9)
        R = s.requests
        drop = 0.1 * 3.0  # 10 % of AL = 1 + 2
        detected += audit.regression_gate(_normal_run(R, rng), _normal_run(R, rng, drop), false_alarm=0.05).regressed
        alarms += audit.regression_gate(_normal_run(R, rng), _normal_run(R, rng), false_alarm=0.05).regressed
    assert detected >= binom.ppf(1e-3, sims, 0.9)
    assert alarms <= binom.isf(1e-3, sims, 0.05)


def test_npz_round_trip_and_refusals(tmp_path):
    log = audit._logs.synthetic_chain_log(4, tokens=6, gamma=2, n=8, rng=0)
    path = tmp_path / "log.npz"
    np.savez(path, **log)
    g = audit.regression_gate(path, log)
    assert g.difference == 0 and not g.regressed
    with pytest.raises(InputError, match="false_alarm"):
        audit.regression_gate(path, path, false_alarm=1.5)
    with pytest.raises(InputError, match="definition"):
        audit.regression_gate(path, path, definition="mean")
    with pytest.raises(InputError, match="verifier"):
        audit.regression_gate(path, path, verifier="rrs")
    with pytest.raises(InputError, match="baseline_log"):
        audit.regression_gate(tmp_path / "missing.npz", path)
    with pytest.raises(InputError, match="missing array"):
        audit.regression_gate({"P": log["P"], "request": log["request"]}, path)
    with pytest.raises(InputError, match="two requests"):
        audit.regression_gate({"accepted": [1, 2], "request": [0, 0]}, {"accepted": [1, 2], "request": [0, 1]})


@pytest.mark.parametrize(
    "verifier,cls,k", [("rrs", "RRS", 2), ("sd", "SD", 1), ("target_only", "TargetOnly", 3), ("kseq-output", "KSeq", 2)]
)
def test_one_token_log_values_are_each_rows_exact_acceptance(verifier, cls, k):
    from optaccept import verifiers

    rng = np.random.default_rng(4)
    T, n = 40, 5
    P, Q = rng.dirichlet(np.ones(n), size=T), rng.dirichlet(np.ones(n), size=T)
    P[:5, 0] = 0.0  # zeros
    P[:5] /= P[:5].sum(axis=1, keepdims=True)
    Q[5:8] = P[5:8]  # p = q
    X = rng.integers(0, n, size=(T, k))
    vals = audit._logs.step_values({"P": P, "Q": Q, "X": X, "request": np.arange(T) // 4}, verifier).exact
    ref = [getattr(verifiers, cls)().acceptance(P[t], Q[t], k) for t in range(T)]
    np.testing.assert_allclose(vals, ref, rtol=0, atol=1e-12)
