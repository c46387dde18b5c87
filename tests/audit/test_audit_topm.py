"""audit.audit_topm_log: logs with the target's top-m probabilities only.  The intervals
must contain the full-law values on every instance, the losslessness test keeps its rate on
correct implementations and still catches bugs that move mass between logged tokens."""

from __future__ import annotations

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit
from optaccept.verifiers._target_only import target_only_acceptance


def _log(T, n, m, k, rng, rule, scale=2.0):
    lp = rng.normal(0, scale, (T, n))
    P = np.exp(lp - lp.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    lq = lp + rng.normal(0, 1, (T, n))
    Q = np.exp(lq - lq.max(1, keepdims=True))
    Q /= Q.sum(1, keepdims=True)
    X = np.stack([rng.choice(n, size=k, p=Q[t]) for t in range(T)])
    Y = np.array([rule(P[t], Q[t], X[t], rng) for t in range(T)])
    ids = np.argsort(-P, axis=1, kind="stable")[:, :m]
    return P, Q, X, Y, ids, np.take_along_axis(P, ids, axis=1)


def _sd(p, q, x, rng):
    x = int(x[0])
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    r = np.maximum(p - q, 0)
    return int(rng.choice(p.size, p=r / r.sum()))


def _biased_sd(p, q, x, rng):  # the correction drawn from p instead of the residual (p − q)+
    x = int(x[0])
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return int(rng.choice(p.size, p=p))


@pytest.mark.parametrize("m", [3, 10, 40])
def test_intervals_contain_the_full_law_values(m):
    rng = np.random.default_rng(m)
    for drafts, k in (("iid", 1), ("iid", 3), ("swor", 2)):
        P, Q, X, Y, ids, probs = _log(300, 60, m, k, rng, lambda p, q, x, r: int(r.choice(p.size, p=p)))
        rep = audit.audit_topm_log(ids, probs, Q, X, Y, declared="target_only", drafts=drafts)
        law = {"iid": oa.IID, "swor": oa.WithoutReplacement}[drafts]
        true_alpha = np.mean([oa.optimal_acceptance(P[t], law(Q[t], k)).value for t in range(300)])
        lo, hi = rep.details["alpha_star_interval"]
        assert lo - 1e-12 <= true_alpha <= hi + 1e-12, (drafts, k, lo, true_alpha, hi)
        true_to = np.mean([target_only_acceptance(P[t], law(Q[t], k)) for t in range(300)])
        elo, ehi = rep.details["expected_interval"]
        assert elo - 1e-12 <= true_to <= ehi + 1e-12
        assert rep.lossless  # outputs drawn from p: H0 holds
        assert "truncated log" in str(rep)


def test_merged_test_keeps_power_on_logged_tokens_and_rate_on_correct_rules():
    rng = np.random.default_rng(0)
    P, Q, X, Y, ids, probs = _log(20_000, 30, 8, 1, rng, _sd, scale=1.0)
    rep = audit.audit_topm_log(ids, probs, Q, X, Y, declared="sd")
    assert rep.lossless and rep.details["expected_interval"][0] <= rep.acceptance + 5 * rep.std_err
    P, Q, X, Y, ids, probs = _log(20_000, 30, 8, 1, rng, _biased_sd, scale=1.0)
    bad = audit.audit_topm_log(ids, probs, Q, X, Y)
    assert not bad.lossless


def test_topm_errors():
    with pytest.raises(oa.InputError, match="ids, probs"):
        audit.audit_topm_log(
            np.zeros((2, 3), int), np.zeros((2, 2)), np.ones((2, 5)) / 5, np.zeros((2, 1), int), np.zeros(2, int)
        )
    with pytest.raises(oa.InputError, match="declared"):
        audit.audit_topm_log(
            np.zeros((2, 1), int),
            np.full((2, 1), 0.5),
            np.ones((2, 5)) / 5,
            np.zeros((2, 1), int),
            np.zeros(2, int),
            declared="rrs",
        )


def test_topm_log_without_q():
    """Capture tools that log no q: the test along p and id orders, target-only bracketed from
    p alone, α* reported as unbounded; a correction-from-p bug still caught."""
    import json

    rng = np.random.default_rng(5)
    P, Q, X, Y, ids, probs = _log(20_000, 30, 8, 2, rng, lambda p, q, x, r: int(r.choice(p.size, p=p)), scale=1.0)
    rep = audit.audit_topm_log(ids, probs, None, X, Y, declared="target_only", n=30)
    assert rep.lossless and set(rep.ks_distance) == {"p", "id"}
    lo, hi = rep.details["expected_interval"]
    truth = np.mean([target_only_acceptance(P[t], oa.IID(Q[t], 2)) for t in range(2000)])
    assert lo - 0.02 <= truth <= hi + 0.02  # the bracket of the per-step p(set(X)), averaged
    assert lo - 5 * rep.std_err <= rep.acceptance <= hi + 5 * rep.std_err
    assert "no q" in str(rep) and json.loads(rep.to_json())["alpha_star"] is None

    # without q the orders by q and p/q are gone: a bug must move mass along p or the ids to be
    # seen — here 5 % of the outputs forced to the most likely token
    def greedy_leak(p, q, x, r):
        return int(np.argmax(p)) if r.random() < 0.05 else int(r.choice(p.size, p=p))

    P, Q, X, Y, ids, probs = _log(20_000, 30, 8, 1, rng, greedy_leak, scale=1.0)
    assert not audit.audit_topm_log(ids, probs, None, X, Y, n=30).lossless
    with pytest.raises(oa.InputError, match="n:"):
        audit.audit_topm_log(ids, probs, None, X, Y)
