"""`optaccept audit` on chain logs, top-m logs and with --compare-laws: the kind of log is read
from its arrays; a correct speculative sampler exits 0, a biased one 1, bad input 2."""

from __future__ import annotations

import json

import numpy as np

from optaccept.cli._main import main


def _laws(rng, T, n):
    lp = rng.normal(0, 2, (T, n))
    P = np.exp(lp - lp.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    lq = lp + rng.normal(0, 1, (T, n))
    Q = np.exp(lq - lq.max(-1, keepdims=True))
    Q /= Q.sum(-1, keepdims=True)
    return P, Q


def _sd_step(p, q, x, rng, biased=False):
    if rng.random() * q[x] < p[x]:
        return x, True
    r = p if biased else np.maximum(p - q, 0.0)
    return int(rng.choice(p.size, p=r / r.sum())), False


def _chain_log(path, biased=False, C=1500, g=3, n=6):
    """Calls whose rows are independent laws (a context-free log): each call drafts γ tokens."""
    rng = np.random.default_rng(1)
    P, Q = _laws(rng, C * (g + 1), n)
    P = P.reshape(C, g + 1, n)
    Q = Q.reshape(C, g + 1, n)[:, :g]
    X = np.empty((C, g), dtype=np.int64)
    m = np.empty(C, dtype=np.int64)
    Y = np.empty(C, dtype=np.int64)
    for c in range(C):
        X[c] = [rng.choice(n, p=Q[c, i]) for i in range(g)]
        for i in range(g + 1):
            if i == g:
                m[c], Y[c] = g, rng.choice(n, p=P[c, g])
                break
            y, ok = _sd_step(P[c, i], Q[c, i], X[c, i], rng, biased)
            if not ok:
                m[c], Y[c] = i, y
                break
    np.savez(path, P=P, Q=Q, X=X, m=m, Y=Y)
    return path


def test_chain_log(tmp_path, capsys):
    assert main(["audit", str(_chain_log(tmp_path / "ok.npz"))]) == 0
    assert "accepted tokens / call" in capsys.readouterr().out
    assert main(["audit", str(_chain_log(tmp_path / "bad.npz", biased=True)), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["lossless"] is False
    np.savez(tmp_path / "part.npz", P=np.ones((2, 3, 2)) / 2, m=np.zeros(2, dtype=int))
    assert main(["audit", str(tmp_path / "part.npz")]) == 2
    assert "missing array(s) Q, X, Y" in capsys.readouterr().err


def test_topm_log_with_and_without_q(tmp_path, capsys):
    rng = np.random.default_rng(2)
    T, n, m = 3000, 12, 4
    P, Q = _laws(rng, T, n)
    X = np.array([[rng.choice(n, p=q)] for q in Q])
    Y = np.array([_sd_step(P[t], Q[t], X[t, 0], rng)[0] for t in range(T)])
    ids = np.argsort(-P, axis=1)[:, :m]
    probs = np.take_along_axis(P, ids, axis=1)
    np.savez(tmp_path / "topm.npz", ids=ids, probs=probs, Q=Q, X=X, Y=Y)
    assert main(["audit", str(tmp_path / "topm.npz"), "--declared", "sd", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    lo, hi = rep["details"]["expected_interval"]
    assert lo <= np.minimum(P, Q).sum(1).mean() <= hi  # the full-law value, computed here
    np.savez(tmp_path / "noq.npz", ids=ids, probs=probs, X=X, Y=Y, n=n)
    assert main(["audit", str(tmp_path / "noq.npz")]) == 0
    capsys.readouterr()
    np.savez(tmp_path / "bad.npz", ids=ids, probs=probs * 3, Q=Q, X=X, Y=Y)
    assert main(["audit", str(tmp_path / "bad.npz")]) == 2
    assert "probs: row" in capsys.readouterr().err


def test_compare_laws(tmp_path, capsys):
    rng = np.random.default_rng(3)
    T, n = 400, 8
    P, Q = _laws(rng, T, n)
    X = np.array([rng.choice(n, size=2, p=q) for q in Q])
    Y = np.array([_sd_step(P[t], Q[t], X[t, 0], rng)[0] for t in range(T)])
    np.savez(tmp_path / "steps.npz", P=P, Q=Q, X=X, Y=Y)
    assert main(["audit", str(tmp_path / "steps.npz"), "--compare-laws", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep["alpha_by_law"]) == {"iid", "swor", "greedy", "topk"}
