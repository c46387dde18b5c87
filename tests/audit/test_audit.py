"""optaccept.audit: correct implementations pass, the negative controls fail, a lossless but
weak rule passes with its gap reported; the transforms are exactly uniform under H₀; the
logged form agrees with the direct one.  The implementations below are written here, from the
rules' definitions, independently of the library's verifiers."""

from __future__ import annotations

import json

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit


def _sd(P, Q, X, rng, *, q_ratio=None, c=1.0, correction="residual"):
    """Speculative sampling on the first draft; optional bugs: the ratio against another q,
    the residual (p − c·q)+, the correction drawn from p."""
    B, n = P.shape
    rows = np.arange(B)
    x = X[:, 0]
    qr = Q if q_ratio is None else q_ratio
    accept = rng.random(B) * qr[rows, x] < P[rows, x]
    res = P if correction == "p" else np.clip(P - c * Q, 0.0, None)
    cum = np.cumsum(res, axis=1)
    u = rng.random(B) * cum[:, -1]
    draw = np.minimum((cum <= u[:, None]).sum(axis=1), n - 1)
    return np.where(accept, x, draw)


def _rrs(P, Q, X, rng):
    """Recursive rejection sampling with replacement (SpecInfer), rows share p and q."""
    B, n = P.shape
    y = np.full(B, -1)
    r = P[0].copy()
    q = Q[0]
    for j in range(X.shape[1]):
        x = X[:, j]
        todo = y < 0
        acc = todo & (rng.random(B) * q[x] < r[x])
        y[acc] = x[acc]
        nr = np.clip(r - q, 0.0, None)
        if nr.sum() <= 0:
            break
        r = nr / nr.sum()
    rest = y < 0
    y[rest] = rng.choice(n, size=int(rest.sum()), p=r)
    return y


def _target_only(P, Q, X, rng):
    """Target-only, as the engines run it: walk the drafted siblings with renormalised p."""
    B, n = P.shape
    y = np.empty(B, dtype=np.int64)
    u = rng.random(B)
    for b in range(B):
        seen = list(dict.fromkeys(X[b].tolist()))
        c = np.cumsum(P[b, seen])
        if u[b] < c[-1]:
            y[b] = seen[int(np.searchsorted(c, u[b], side="right"))]
        else:
            rest = P[b].copy()
            rest[seen] = 0.0
            y[b] = rng.choice(n, p=rest / rest.sum())
    return y


P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


@pytest.mark.parametrize("seed", range(3))
def test_correct_sd_passes_with_its_exact_acceptance(seed):
    rep = audit.audit_verifier(
        _sd, P0, Q0, k=1, drafts="iid", samples=100_000, rng=np.random.default_rng(seed), declared="sd"
    )
    assert rep.lossless
    assert abs(rep.expected - np.minimum(P0, Q0).sum()) < 1e-12
    assert abs(rep.acceptance - rep.expected) < 5 * rep.std_err
    assert abs(rep.alpha_star - np.minimum(P0, Q0).sum()) < 1e-12  # k = 1: SD is optimal
    assert rep.tv_upper < 0.05


def test_correct_rrs_passes():
    rep = audit.audit_verifier(
        _rrs, P0, Q0, k=3, drafts="iid", samples=100_000, rng=np.random.default_rng(5), declared="rrs"
    )
    assert rep.lossless and abs(rep.acceptance - rep.expected) < 5 * rep.std_err
    assert rep.gap > 0  # RRS is below α* of i.i.d. drafts here


def test_ratio_against_truncated_q_is_caught():
    top = np.where(Q0 >= np.sort(Q0)[-3], Q0, 0.0)
    top = top / top.sum()
    bug = lambda P, Q, X, rng: _sd(P, Q, X, rng, q_ratio=np.broadcast_to(top, Q.shape))  # noqa: E731
    assert not audit.audit_verifier(bug, P0, Q0, k=1, samples=100_000, rng=np.random.default_rng(1)).lossless


def test_residual_with_c_not_one_is_caught():
    bug = lambda P, Q, X, rng: _sd(P, Q, X, rng, c=0.6)  # noqa: E731
    assert not audit.audit_verifier(bug, P0, Q0, k=1, samples=100_000, rng=np.random.default_rng(2)).lossless


def test_correction_from_p_is_caught():
    bug = lambda P, Q, X, rng: _sd(P, Q, X, rng, correction="p")  # noqa: E731
    assert not audit.audit_verifier(bug, P0, Q0, k=1, samples=100_000, rng=np.random.default_rng(3)).lossless


def test_lossless_but_weak_rule_passes_with_its_gap():
    """Target-only where min(1, p/q) was meant: lossless, but it accepts Σ p·q, not Σ min(p, q)."""
    rep = audit.audit_verifier(
        _target_only, P0, Q0, k=1, samples=40_000, rng=np.random.default_rng(4), declared="target_only"
    )
    assert rep.lossless
    assert abs(rep.expected - float(P0 @ Q0)) < 1e-12
    assert abs(rep.acceptance - rep.expected) < 5 * rep.std_err
    assert rep.gap > 0.3  # α* = Σ min(p, q) = 0.73 against Σ p·q = 0.17: the gap is reported
    assert json.loads(rep.to_json())["lossless"] is True
    assert "Audit report" in str(rep) and "<table>" in rep._repr_html_()


def test_transforms_are_uniform_under_h0():
    """U = F(Y−) + V·p(Y) along each order: every U lies in its token's interval, computed here
    independently, and the intervals tile [0, 1] — so U is exactly uniform when Y ~ p and V is."""
    rng = np.random.default_rng(0)
    keys = {"id": np.arange(P0.size), "p": -P0, "q": -Q0, "p/q": P0 / Q0}
    Y = np.repeat(np.arange(P0.size), 50)
    P = np.tile(P0, (Y.size, 1))
    for order in audit._core.ORDERS:
        u = audit._core.pit_values(P, np.tile(Q0, (Y.size, 1)), Y, order, rng)
        idx = np.argsort(keys[order], kind="stable")
        lo = np.empty(P0.size)
        lo[idx] = np.concatenate([[0.0], np.cumsum(P0[idx])[:-1]])
        assert np.all(u >= lo[Y] - 1e-15) and np.all(u <= lo[Y] + P0[Y] + 1e-15), order
        starts = np.sort(lo)
        ends = np.sort(lo + P0)
        assert starts[0] == 0.0 and abs(ends[-1] - 1.0) < 1e-15 and np.allclose(starts[1:], ends[:-1], atol=1e-15)


def test_audit_log_heterogeneous_steps():
    rng = np.random.default_rng(9)
    T, n = 30_000, 12
    P = rng.dirichlet(np.ones(n), size=T)
    Q = rng.dirichlet(np.ones(n), size=T)
    X = np.array([rng.choice(n, p=q) for q in Q])[:, None]
    good = _sd_rows(P, Q, X, rng)
    rep = audit.audit_log(P, Q, X, good, declared="sd", drafts="iid", rng=np.random.default_rng(1))
    assert rep.lossless
    assert abs(rep.expected - np.minimum(P, Q).sum(axis=1).mean()) < 1e-12
    assert abs(rep.acceptance - rep.expected) < 5 * rep.std_err
    bad = _sd_rows(P, Q, X, rng, c=0.5)
    assert not audit.audit_log(P, Q, X, bad, drafts="iid", rng=np.random.default_rng(1)).lossless


def _sd_rows(P, Q, X, rng, c=1.0):
    """SD with a different p and q on every row."""
    B, n = P.shape
    rows = np.arange(B)
    x = X[:, 0]
    accept = rng.random(B) * Q[rows, x] < P[rows, x]
    res = np.clip(P - c * Q, 0.0, None)
    res[res.sum(axis=1) == 0] = P[res.sum(axis=1) == 0]
    cum = np.cumsum(res, axis=1)
    u = rng.random(B) * cum[:, -1]
    draw = np.minimum((cum <= u[:, None]).sum(axis=1), n - 1)
    return np.where(accept, x, draw)


def test_refusals():
    rng = np.random.default_rng(0)
    with pytest.raises(oa.InputError, match="^rng: must be a numpy.random.Generator"):
        audit.audit_verifier(_sd, P0, Q0, k=1, samples=10, rng=-1)
    with pytest.raises(oa.InputError, match="declared"):
        audit.audit_verifier(_sd, P0, Q0, k=1, samples=10, rng=rng, declared="magic")
    with pytest.raises(oa.InputError, match="fn"):
        audit.audit_verifier(lambda P, Q, X, r: np.zeros(3), P0, Q0, k=1, samples=10, rng=rng)
    with pytest.raises(oa.InputError, match="X"):
        audit.audit_log(np.tile(P0, (4, 1)), np.tile(Q0, (4, 1)), np.zeros(4, dtype=int), np.zeros(4, dtype=int))


def _log(tmp_path, name, bad=False):
    rng = np.random.default_rng(0)
    T, n = 3000, 6
    P = rng.dirichlet(np.ones(n), T).astype(np.float32)
    Q = rng.dirichlet(np.ones(n), T).astype(np.float32)
    X = np.array([rng.choice(n, p=q / q.sum()) for q in Q.astype(float)])[:, None]
    Y = np.zeros(T, dtype=int) if bad else np.array([rng.choice(n, p=p / p.sum()) for p in P.astype(float)])
    path = tmp_path / name
    np.savez(path, P=P, Q=Q, X=X, Y=Y)
    return path


def test_command_line_exit_status_and_errors(tmp_path, capsys):
    from optaccept.cli._main import main

    assert main(["audit", str(_log(tmp_path, "ok.npz")), "--declared", "target_only"]) == 0
    assert "lossless" in capsys.readouterr().out
    assert main(["audit", str(_log(tmp_path, "bad.npz", bad=True)), "--json"]) == 1  # not lossless: like a failing test
    assert json.loads(capsys.readouterr().out)["lossless"] is False
    np.savez(tmp_path / "part.npz", P=np.ones((2, 2)) / 2)
    (tmp_path / "junk.npz").write_text("not a zip")
    for f, msg in (
        ("part.npz", "missing array(s) Q, X, Y"),
        ("junk.npz", "not a .npz file"),
        ("none.npz", "No such file"),
    ):
        assert main(["audit", str(tmp_path / f)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("optaccept: error:") and msg in err[0], err
