"""audit.audit_lossy: rules declared lossy, measured against their exact bias and acceptance
(computed here with Fractions from the rules' definitions) and placed against the
bias–acceptance front; the front itself against its closed form on nasty pairs."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit

P = [F(1, 2), F(3, 10), F(1, 5), F(0)]
Q = [F(1, 5), F(1, 5), F(3, 10), F(3, 10)]
PF = np.array([float(x) for x in P])
QF = np.array([float(x) for x in Q])
TV = sum(abs(a - b) for a, b in zip(P, Q)) / 2  # 2/5


def _ensemble(w):
    """Static ensemble v = w·p + (1 − w)·q (written here): accept x w.p. min(1, v(x)/q(x)),
    else draw from (v − q)₊ — speculative sampling against v."""

    def fn(Pm, Qm, X, rng):
        p, q = Pm[0], Qm[0]
        v = w * p + (1 - w) * q
        x = X[:, 0]
        acc = rng.random(x.size) * q[x] < v[x]
        r = np.maximum(v - q, 0.0)
        Y = np.where(acc, x, rng.choice(p.size, size=x.size, p=r / r.sum()))
        return acc, Y

    return fn


def _uno(Pm, Qm, X, rng):
    """Accept min(1, p/q), on a rejection draw from p itself (off the front)."""
    p, q = Pm[0], Qm[0]
    x = X[:, 0]
    acc = rng.random(x.size) * q[x] < p[x]
    return acc, np.where(acc, x, rng.choice(p.size, size=x.size, p=p))


def _accept_all(Pm, Qm, X, rng):
    return np.ones(X.shape[0], dtype=bool), X[:, 0]


@pytest.mark.parametrize("w", [F(1, 4), F(3, 5)])
def test_static_ensemble_exact_values_and_on_the_front(w):
    v = [w * a + (1 - w) * b for a, b in zip(P, Q)]
    accept = sum(min(a, b) for a, b in zip(v, Q))  # Σ min(v, q)
    bias = sum(abs(a - b) for a, b in zip(v, P)) / 2
    assert accept == 1 - w * TV and bias == (1 - w) * TV  # the rule's values, by hand
    rep = audit.audit_lossy(_ensemble(float(w)), PF, QF, samples=200_000, rng=1, declared="ensemble", weight=float(w))
    assert rep.expected == pytest.approx(float(accept), abs=1e-15)
    assert rep.expected_bias == pytest.approx(float(bias), abs=1e-15)
    assert rep.consistent and not rep.above_front
    assert rep.bias_low <= float(bias) <= rep.bias_high
    assert rep.bias_high - rep.bias_low < 0.013
    # on the front: the best acceptance at its bias is its own
    assert audit._lossy.front_acceptance(PF, QF, float(bias)) == pytest.approx(float(accept), abs=1e-12)
    assert abs(rep.gap) < 5 * rep.std_err + (rep.bias_high - rep.bias_low)
    assert "bias TV(output, p)" in str(rep) and "estimate ± s.e." in str(rep)


def test_rule_off_the_front_shows_its_gap():
    out = [min(a, b) + TV * a for a, b in zip(P, Q)]  # accepted mass + rejections redrawn from p
    bias = sum(abs(a - b) for a, b in zip(out, P)) / 2
    accept = 1 - TV
    best = 1 - max(F(0), TV - bias)
    assert (bias, accept, best) == (F(1, 10), F(3, 5), F(7, 10))
    rep = audit.audit_lossy(_uno, PF, QF, samples=200_000, rng=2)
    assert rep.bias_low <= float(bias) <= rep.bias_high
    assert abs(rep.accepted - float(accept)) < 5 * rep.std_err
    assert rep.gap > 0.08 and rep.consistent is None


def test_acceptance_above_the_front_is_flagged():
    w = 0.25
    lying = lambda *a: (np.ones(a[2].shape[0], dtype=bool), _ensemble(w)(*a)[1])  # noqa: E731
    rep = audit.audit_lossy(lying, PF, QF, samples=100_000, rng=3, declared="ensemble", weight=w)
    assert rep.above_front and not rep.consistent
    assert "ABOVE THE FRONT" in str(rep)
    ok = audit.audit_lossy(_accept_all, PF, QF, samples=100_000, rng=3, declared="accept_all")
    assert ok.consistent and not ok.above_front and ok.expected == 1.0


def _front_closed_form(p, q, b):
    tv = 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum()
    return 1 - max(0.0, tv - b)


@pytest.mark.parametrize("seed", range(10))
def test_front_against_its_closed_form(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    pairs = [
        (rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))),
        (np.eye(n)[0], np.eye(n)[1]),  # disjoint supports
        (np.full(n, 1 / n), np.full(n, 1 / n)),  # p = q
        (np.r_[1 - 1e-12, np.full(n - 1, 1e-12 / (n - 1))], rng.dirichlet(np.ones(n))),  # near one-hot
    ]
    p0 = rng.dirichlet(np.ones(n))
    p0[0] = 0.0
    pairs.append((p0 / p0.sum(), rng.dirichlet(np.ones(n))))  # a zero of p
    for p, q in pairs:
        for b in (0.0, 1e-9, 0.05, 0.3, 1.0, rng.random()):
            assert audit._lossy.front_acceptance(p, q, b) == pytest.approx(_front_closed_form(p, q, b), abs=1e-12)


def test_refusals_before_any_call():
    def boom(*a):
        raise AssertionError("fn was called")

    for kw, match in (
        (dict(declared="typical"), "declared"),
        (dict(declared="ensemble"), "weight"),
        (dict(declared="ensemble", weight=1.5), "weight"),
        (dict(weight=0.5), "weight"),
        (dict(declared="sd", weight=0.5), "weight"),
        (dict(false_alarm=0.0), "false_alarm"),
        (dict(samples=1), "samples"),
    ):
        with pytest.raises(oa.InputError, match=match):
            audit.audit_lossy(boom, PF, QF, rng=0, **kw)
    with pytest.raises(oa.InputError, match="fn"):
        audit.audit_lossy(lambda *a: a[2][:, 0], PF, QF, samples=10, rng=0)
    with pytest.raises(oa.InputError, match="bias"):
        audit._lossy.front_acceptance(PF, QF, -0.1)


def test_hugging_face_ensemble_mode():
    """transformers' own `_speculative_sampling` with `assistant_ensemble_weight`, one draft."""
    torch = pytest.importorskip("torch")
    hf = pytest.importorskip("transformers.generation.utils")
    w = 0.5

    def fn(Pm, Qm, X, rng):
        torch.manual_seed(int(rng.integers(2**31)))
        cand = torch.log(torch.tensor(Qm[0].copy())).repeat(1, 1, 1)
        new = torch.log(torch.tensor(Pm[0].copy())).repeat(1, 2, 1)
        acc = np.empty(X.shape[0], dtype=bool)
        Y = np.empty(X.shape[0], dtype=np.int64)
        for i in range(X.shape[0]):
            toks, m = hf._speculative_sampling(
                torch.tensor([[0, int(X[i, 0])]]), cand, 1, new, assistant_ensemble_weight=w
            )
            Y[i], acc[i] = int(toks[0, 0]), m == 1
        return acc, Y

    rep = audit.audit_lossy(fn, PF, QF, samples=15_000, rng=5, declared="ensemble", weight=w)
    assert rep.expected == pytest.approx(1 - w * float(TV)) and rep.consistent
