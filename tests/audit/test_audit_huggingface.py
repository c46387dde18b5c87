"""Hugging Face transformers' own speculative sampler, audited: a real implementation that
nobody here wrote (`transformers.generation.utils._speculative_sampling`, CPU, offline).

γ = 1 goes through `audit.audit_verifier` (the emitted token, declared "sd"); γ = 1…4 run as a
decoding loop on context-free p, q (every position has the same target and draft law), whose
concatenated text must be i.i.d. p — audited from the log with `audit.audit_log` — and whose mean
number of accepted candidates per call must match the exact value of token-level verification
of one chain from `optaccept.tree`."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hf = pytest.importorskip("transformers.generation.utils")

from optaccept import audit, tree  # noqa: E402

P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


def _call(p, q, drafts, gamma):
    """One call of HF's sampler: logits from p and q at every position (bonus included)."""
    ids = torch.tensor([[0] + list(drafts)], dtype=torch.long)
    cand = torch.log(torch.tensor(q, dtype=torch.float64)).repeat(1, gamma, 1)
    new = torch.log(torch.tensor(p, dtype=torch.float64)).repeat(1, gamma + 1, 1)
    tokens, n = hf._speculative_sampling(ids, cand, gamma, new)
    return tokens[0].tolist(), int(n)


def test_gamma_one_audited_as_lossless_with_exact_sd_acceptance():
    def fn(P, Q, X, rng):
        torch.manual_seed(int(rng.integers(2**31)))
        return np.array([_call(P[b], Q[b], [int(X[b, 0])], 1)[0][0] for b in range(X.shape[0])])

    rep = audit.audit_verifier(
        fn, P0, Q0, k=1, drafts="iid", samples=20_000, rng=np.random.default_rng(0), declared="sd"
    )
    assert rep.lossless, rep
    assert abs(rep.acceptance - rep.expected) < 5 * rep.std_err, rep
    assert abs(rep.expected - np.minimum(P0, Q0).sum()) < 1e-12


@pytest.mark.parametrize("gamma", [1, 2, 3, 4])
def test_chain_decoding_loop_text_is_the_targets(gamma):
    rng = np.random.default_rng(gamma)
    torch.manual_seed(gamma)
    text, matches = [], []
    while len(text) < 12_000:
        drafts = rng.choice(P0.size, size=gamma, p=Q0).tolist()
        toks, n = _call(P0, Q0, drafts, gamma)
        text.extend(toks)
        matches.append(n)
    Y = np.array(text)
    T = Y.size
    rep = audit.audit_log(
        np.tile(P0, (T, 1)), np.tile(Q0, (T, 1)), np.zeros((T, 1), dtype=np.int64), Y, rng=np.random.default_rng(0)
    )
    assert rep.lossless, rep  # the generated text, token after token, has the target's law
    exact = float(
        tree.accepted_tokens(
            lambda u: P0, lambda u: Q0, drafts=tree.TreeDraftLaw(length=gamma, k=1, children="iid"), verifier="token"
        ).value
    )
    m = np.array(matches, dtype=float)
    assert abs(m.mean() - exact) < 5 * m.std() / np.sqrt(m.size) + 1e-12, (m.mean(), exact)


def test_truncated_q_fed_to_hf_sampler_is_caught():
    """The kind of bug of transformers #47932: the ratio's q is the top-k-truncated draft law
    while the drafts come from the full q.  The audit must find it."""
    top = np.where(Q0 >= np.sort(Q0)[-3], Q0, 1e-30)
    top = top / top.sum()

    def fn(P, Q, X, rng):
        torch.manual_seed(int(rng.integers(2**31)))
        return np.array([_call(P[b], top, [int(X[b, 0])], 1)[0][0] for b in range(X.shape[0])])

    rep = audit.audit_verifier(
        fn, P0, Q0, k=1, drafts="iid", samples=20_000, rng=np.random.default_rng(3), declared="sd"
    )
    assert not rep.lossless, rep


@pytest.mark.parametrize("w", [0.25, 0.6])
def test_static_ensemble_mode_lies_on_the_optimal_bias_rejection_front(w):
    """HF's declared-lossy `assistant_ensemble_weight` w at one token: measured acceptance and
    bias (TV of the output law from p) against the exact values 1 − w·TV(p, q) and (1 − w)·TV
    (its output law is v = (1 − w)q + wp: the accepted mass at x is q − w(q − p)₊, the
    rejections w·(p − q)₊ redraw from the residual), and their sum against Yin et al.'s
    Pareto front R + bias = TV(p, q) (Theorem 5, `optaccept.sequence.pareto_front`): the
    static ensemble is *on* the front — no lossy rule with its rejection rate has less bias."""
    from optaccept.sequence import pareto_front

    tv = 0.5 * np.abs(P0 - Q0).sum()
    front = np.asarray(pareto_front(P0, Q0))
    assert np.allclose(front.sum(axis=1), tv)  # the front, as the library states it
    rng = np.random.default_rng(11)
    torch.manual_seed(11)
    N = 60_000
    X = rng.choice(P0.size, size=N, p=Q0)
    cand = torch.log(torch.tensor(Q0)).repeat(1, 1, 1)
    new = torch.log(torch.tensor(P0)).repeat(1, 2, 1)
    Y = np.empty(N, dtype=np.int64)
    acc = np.empty(N, dtype=bool)
    for i in range(N):
        toks, n = hf._speculative_sampling(torch.tensor([[0, int(X[i])]]), cand, 1, new, assistant_ensemble_weight=w)
        Y[i], acc[i] = int(toks[0, 0]), n == 1
    a, se = acc.mean(), acc.std() / np.sqrt(N)
    assert abs(a - (1 - w * tv)) < 5 * se
    v = (1 - w) * Q0 + w * P0
    emp = np.bincount(Y, minlength=P0.size) / N
    assert np.all(np.abs(emp - v) < 5 * np.sqrt(v * (1 - v) / N))  # its output law is the ensemble
    bias = 0.5 * np.abs(v - P0).sum()
    assert abs(bias - (1 - w) * tv) < 1e-12
    assert abs((1 - (1 - w * tv)) + bias - tv) < 1e-12  # exactly on the front


@pytest.mark.parametrize("gamma", [2, 3])
def test_static_ensemble_over_chains(gamma):
    """HF's ensemble mode (w = 0.5) over chains of γ candidates, as a decoding loop on
    context-free p, q.  Exact values (docs/audit.md §5): every candidate position is accepted
    with β = 1 − w·TV(p, q) and emits a token of law v = (1 − w)q + wp; the bonus token after
    γ acceptances has law p.  So a call accepts Σ_{i=1}^{γ} β^i candidates on average and the
    text's pooled token law is u = (S·v + β^γ·p)/(S + β^γ), S = Σ_{i<γ} β^i, whose bias
    TV(u, p) = S/(S + β^γ)·(1 − w)·TV is below the one-token bias (1 − w)·TV by the share of
    bonus tokens.  Measured against these, and the audit finds the text not lossless."""
    w = 0.5
    tv = 0.5 * np.abs(P0 - Q0).sum()
    beta = 1 - w * tv
    S = sum(beta**i for i in range(gamma))
    v = (1 - w) * Q0 + w * P0
    u = (S * v + beta**gamma * P0) / (S + beta**gamma)
    rng = np.random.default_rng(40 + gamma)
    torch.manual_seed(40 + gamma)
    cand = torch.log(torch.tensor(Q0, dtype=torch.float64)).repeat(1, gamma, 1)
    new = torch.log(torch.tensor(P0, dtype=torch.float64)).repeat(1, gamma + 1, 1)
    text, matches = [], []
    while len(text) < 30_000:
        drafts = rng.choice(P0.size, size=gamma, p=Q0).tolist()
        ids = torch.tensor([[0] + drafts], dtype=torch.long)
        toks, n = hf._speculative_sampling(ids, cand, gamma, new, assistant_ensemble_weight=w)
        text.extend(toks[0].tolist())
        matches.append(int(n))
    m = np.array(matches, dtype=float)
    assert abs(m.mean() - sum(beta**i for i in range(1, gamma + 1))) < 5 * m.std() / np.sqrt(m.size)
    Y = np.array(text)
    # the pooled law: multinomial counts of dependent-but-regenerative text; 6 SE per token
    emp = np.bincount(Y, minlength=P0.size) / Y.size
    assert np.all(np.abs(emp - u) < 6 * np.sqrt(u * (1 - u) / Y.size))
    bias = 0.5 * np.abs(u - P0).sum()
    assert abs(bias - S / (S + beta**gamma) * (1 - w) * tv) < 1e-12
    T = Y.size
    rep = audit.audit_log(
        np.tile(P0, (T, 1)), np.tile(Q0, (T, 1)), np.zeros((T, 1), dtype=np.int64), Y, rng=np.random.default_rng(0)
    )
    assert not rep.lossless, rep


def _hf_chain(P, Q, X, rng, *, q_for_ratio=None):
    """Hugging Face's sampler on a batch of chains, as audit.audit_chain calls it."""
    torch.manual_seed(int(rng.integers(2**31)))
    B, gamma = X.shape
    m, y = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
    for b in range(B):
        ids = torch.tensor([[0] + X[b].tolist()], dtype=torch.long)
        qq = Q[b] if q_for_ratio is None else np.tile(q_for_ratio, (gamma, 1))
        cand = torch.log(torch.tensor(qq, dtype=torch.float64))[None]
        new = torch.log(torch.tensor(P[b], dtype=torch.float64))[None]
        tokens, n = hf._speculative_sampling(ids, cand, gamma, new)
        m[b], y[b] = int(n), int(tokens[0, -1])
    return m, y


@pytest.mark.parametrize("gamma", [2, 4])
def test_chain_audit_of_hf_sampler(gamma):
    """audit.audit_chain on HF's sampler with context-dependent models (a 5-token synthetic
    pair): lossless, mean accepted tokens = the exact token-level value of optaccept.tree, and
    the gap to the one-chain optimum (block verification) reported."""
    target, draft = tree.synthetic_pair(5, rng=gamma, scale=1.5)
    rep = audit.audit_chain(
        _hf_chain, target, draft, gamma, samples=4000, rng=np.random.default_rng(gamma), declared="token"
    )
    assert rep.lossless, rep
    assert abs(rep.expected_z) < 5, rep
    assert rep.optimum >= rep.expected - 1e-12 and abs(sum(rep.accepted_law) - 1) < 1e-12
    assert "Chain audit report" in str(rep)


def test_chain_audit_catches_a_truncated_q():
    target, draft = tree.synthetic_pair(5, rng=1, scale=1.5)
    flat = np.full(5, 0.2)  # the ratio against a law the drafts did not come from
    rep = audit.audit_chain(
        lambda P, Q, X, rng: _hf_chain(P, Q, X, rng, q_for_ratio=flat),
        target,
        draft,
        3,
        samples=4000,
        rng=np.random.default_rng(9),
    )
    assert not rep.lossless, rep
