"""The audit of torch implementations (audit._core.torch_adapter) and the gap split into its
verifier and draft-law parts."""

from __future__ import annotations

import json

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit

torch = pytest.importorskip("torch")


def _torch_rrs(P, Q, X, gen, *, truncate=None):
    """Recursive rejection sampling with replacement, in torch (rows in parallel).
    ``truncate``: compute the ratio against q cut to its top-m tokens (a known bug)."""
    B, n = P.shape
    r = P.clone()
    q = Q.clone()
    if truncate is not None:
        top = torch.topk(Q, truncate, dim=1).indices
        q = torch.zeros_like(Q).scatter(1, top, Q.gather(1, top))
        q = q / q.sum(1, keepdim=True)
    y = torch.full((B,), -1, dtype=torch.long)
    for j in range(X.shape[1]):
        x = X[:, j]
        live = y < 0
        rx, qx = r.gather(1, x[:, None])[:, 0], q.gather(1, x[:, None])[:, 0]
        u = torch.rand(B, generator=gen, dtype=P.dtype)
        acc = live & (u * qx < rx)
        y = torch.where(acc, x, y)
        res = torch.clamp(r - q, min=0)
        s = res.sum(1, keepdim=True)
        r = torch.where(live[:, None] & (s > 0), res / torch.where(s > 0, s, torch.ones_like(s)), r)
    left = y < 0
    draw = torch.multinomial(r, 1, generator=gen)[:, 0]
    return torch.where(left, draw, y)


def test_torch_implementation_audited_through_the_adapter():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))
    fn = audit._core.torch_adapter(_torch_rrs, dtype=torch.float64)
    rep = audit.audit_verifier(fn, p, q, k=3, samples=100_000, rng=np.random.default_rng(0), declared="rrs")
    assert rep.lossless and abs(rep.expected_z) < 5
    # the same code with the ratio against a truncated q (the drafts came from the full q)
    bad = audit._core.torch_adapter(lambda P, Q, X, g: _torch_rrs(P, Q, X, g, truncate=3), dtype=torch.float64)
    rep_bad = audit.audit_verifier(bad, p, q, k=3, samples=100_000, rng=np.random.default_rng(0))
    assert not rep_bad.lossless
    # reproducible: the torch generator is seeded from the audit's numpy generator
    again = audit.audit_verifier(fn, p, q, k=3, samples=20_000, rng=np.random.default_rng(5))
    twice = audit.audit_verifier(fn, p, q, k=3, samples=20_000, rng=np.random.default_rng(5))
    assert again.acceptance == twice.acceptance


def test_gap_split_into_verifier_and_draft_law_parts():
    rng = np.random.default_rng(4)
    p, q = rng.dirichlet(np.ones(10) * 0.5), rng.dirichlet(np.ones(10) * 0.5)
    fn = audit._core.torch_adapter(_torch_rrs, dtype=torch.float64)
    rep = audit.audit_verifier(fn, p, q, k=3, drafts="iid", samples=50_000, rng=np.random.default_rng(1))
    want = {
        "iid": oa.optimal_acceptance(p, oa.IID(q, 3)).value,
        "swor": oa.optimal_acceptance(p, oa.WithoutReplacement(q, 3)).value,
        "greedy": oa.optimal_acceptance(p, oa.Greedy(q, 3)).value,
        "topk": float(np.sort(p[np.argsort(-q, kind="stable")[:3]]).sum()),  # p of the 3 most likely draft tokens
    }
    assert rep.alpha_by_law == pytest.approx(want, abs=1e-12)
    assert rep.verifier_gap == pytest.approx(want["iid"] - rep.acceptance)
    assert rep.draft_gap == pytest.approx(max(want.values()) - want["iid"], abs=1e-12)
    assert rep.best_law == max(want, key=want.get)
    assert "gap, by part" in str(rep) and json.loads(rep.to_json())["draft_gap"] == pytest.approx(rep.draft_gap)


def test_audit_log_streams_memory_maps_and_compares_laws(tmp_path):
    rng = np.random.default_rng(7)
    T, n = 3000, 30
    P = rng.dirichlet(np.ones(n), size=T).astype(np.float32)
    Q = rng.dirichlet(np.ones(n), size=T).astype(np.float32)
    np.save(tmp_path / "P.npy", P)
    np.save(tmp_path / "Q.npy", Q)
    Pm, Qm = np.load(tmp_path / "P.npy", mmap_mode="r"), np.load(tmp_path / "Q.npy", mmap_mode="r")
    X = np.stack([rng.choice(n, size=2, p=Q[t] / Q[t].sum()) for t in range(T)])
    fn = audit._core.torch_adapter(_torch_rrs, dtype=torch.float64)
    Y = np.concatenate(
        [
            fn(P[i : i + 500].astype(np.float64), Q[i : i + 500].astype(np.float64), X[i : i + 500], rng)
            for i in range(0, T, 500)
        ]
    )
    rep = audit.audit_log(Pm, Qm, X, Y, declared="rrs", chunk=256, compare_laws=True)
    assert rep.lossless and set(rep.alpha_by_law) == {"iid", "swor", "greedy", "topk"}
    assert rep.alpha_by_law["iid"] == pytest.approx(rep.alpha_star, abs=1e-12)
