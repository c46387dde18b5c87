"""Chain logs audited against a declared rule other than token by token: the expected value is
that rule's E[m | chain], computed here independently by enumerating each call's accept/reject
outcomes, and a loop running one rule while declaring another is reported as "not the declared
rule"."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optaccept import audit
from optaccept._errors import InputError


def _expected_by_enumeration(px, qx, rule):
    """E[m | chain] by summing over every accept/reject pattern of the chain (m = first reject)."""
    g = len(px)
    acc = [min(1.0, a / b) if rule == "token" else a for a, b in zip(px, qx)]
    total = 0.0
    for pattern in itertools.product([0, 1], repeat=g):
        prob = 1.0
        for a, bit in zip(acc, pattern):
            prob *= a if bit else 1 - a
        m = next((i for i, bit in enumerate(pattern) if not bit), g)
        total += prob * m
    return total


def _log(rule, C=3000, g=3, seed=5):
    rng = np.random.default_rng(seed)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    q = np.array([0.1, 0.2, 0.3, 0.4])
    X = rng.choice(4, size=(C, g), p=q)
    if rule == "token":
        keep = rng.random((C, g)) < np.minimum(1, p[X] / q[X])
        residual = np.maximum(p - q, 0) / np.maximum(p - q, 0).sum()
    else:  # target only: accept x iff a target draw equals it; at a rejection emit that draw
        keep = rng.random((C, g)) < p[X]
        residual = None
    m = np.cumprod(keep, axis=1).sum(1)
    if residual is not None:
        Y = np.where(m < g, rng.choice(4, C, p=residual), rng.choice(4, C, p=p))
    else:
        Y = np.empty(C, dtype=np.int64)
        for c in range(C):
            if m[c] == g:
                Y[c] = rng.choice(4, p=p)
            else:  # a target draw conditioned on not being the rejected draft
                x = X[c, m[c]]
                w = p.copy()
                w[x] = 0
                Y[c] = rng.choice(4, p=w / w.sum())
    P, Q = np.tile(p, (C, g + 1, 1)), np.tile(q, (C, g, 1))
    return P, Q, X, m, Y, p, q


@pytest.mark.parametrize("rule", ["token", "target_only"])
def test_expected_value_is_the_declared_rules_and_token_value_is_shown(rule):
    P, Q, X, m, Y, p, q = _log(rule)
    rep = audit.audit_chain_log(P, Q, X, m, Y, declared=rule)
    want = np.mean([_expected_by_enumeration(p[x], q[x], rule) for x in X])
    assert rep.declared == rule
    assert rep.expected == pytest.approx(want, rel=1e-12)
    assert not rep.not_declared and rep.lossless
    if rule == "token":
        assert "token_value" not in rep.details
    else:
        token = np.mean([_expected_by_enumeration(p[x], q[x], "token") for x in X])
        assert rep.details["token_value"] == pytest.approx(token, rel=1e-12)
        assert "token by token" in str(rep)


def test_a_loop_running_another_rule_is_not_the_declared_rule():
    P, Q, X, m, Y, _, _ = _log("target_only")
    rep = audit.audit_chain_log(P, Q, X, m, Y)  # declared token by token, ran target-only
    assert rep.not_declared and rep.expected_z < -5


def test_unknown_declared_rule_is_refused_naming_the_argument():
    P, Q, X, m, Y, _, _ = _log("token", C=10)
    with pytest.raises(InputError, match="declared"):
        audit.audit_chain_log(P, Q, X, m, Y, declared="exact_match")
