"""Sparse chain logs (audit.SparseChainLog): the regression gate and the chain audit read a few
numbers per drafted token instead of the rows, and give what the full rows give.  References
here are independent of the sparse path: the chain audit as computed from full rows with the
sorting transforms (audit._pit.pit_values) and the tree package's block verification
(tree._sampling.tree_value), and the per-step values by explicit loops."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from optaccept import InputError, audit
from optaccept._lib.statistics import ks_threshold, ks_uniform, mean_std_err, within
from optaccept.audit._pit import ORDERS, pit_values
from optaccept.tree._draft import DraftTree
from optaccept.tree._sampling import tree_value

KINDS = ("dirichlet", "zeros", "ties", "same", "one_hot", "tiny", "disjoint")


def _pair(kind, n, rng):
    """A (p, q) pair of one of the nasty kinds."""
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    if kind == "zeros" and n > 2:
        p[rng.choice(n, n // 2, replace=False)] = 0.0
        q[rng.choice(n, n // 2, replace=False)] = 0.0
    elif kind == "ties":
        p = np.round(p * 4) + 1.0
        q = np.round(q * 4) + 1.0
    elif kind == "same":
        q = p.copy()
    elif kind == "one_hot":
        p = np.full(n, 1e-12 / (n - 1))
        p[rng.integers(n)] = 1 - 1e-12
    elif kind == "tiny":
        p[0] = 1e-300
    elif kind == "disjoint" and n > 2:
        cut = n // 2
        p[:cut], q[cut:] = 0.0, 0.0
    return p / p.sum(), q / q.sum()


def _random_log(rng, C=None):
    """Ragged calls: γ_c in 1..4, rows of a random nasty kind at every position, drafts from q,
    m at random in 0..γ_c, Y at random (the audit needs no particular law here)."""
    n = int(rng.integers(2, 8))
    C = int(rng.integers(1, 40)) if C is None else C
    P, Q, X, m, Y = [], [], [], [], []
    for _ in range(C):
        g = int(rng.integers(1, 5))
        rows = [_pair(KINDS[rng.integers(len(KINDS))], n, rng) for _ in range(g + 1)]
        Pc = np.array([r[0] for r in rows])
        Qc = np.array([r[1] for r in rows[:g]])
        Xc = [int(rng.choice(n, p=Qc[i])) for i in range(g)]
        P.append(Pc)
        Q.append(Qc)
        X.append(Xc)
        m.append(int(rng.integers(0, g + 1)))
        Y.append(int(rng.integers(0, n)))
    return P, Q, X, np.array(m), np.array(Y)


def _reference_chain_audit(P, Q, X, m, Y, rng, false_alarm=1e-6):
    """The chain audit from full rows, sorting each row for its transforms (the audit's
    computation before the sparse form)."""
    tp, tq, tt, dq, dp, dt, sd, bl = [], [], [], [], [], [], [], []
    for c in range(len(m)):
        Pc, Qc, Xc = np.asarray(P[c], float), np.asarray(Q[c], float), np.asarray(X[c])
        Pc, Qc = Pc / Pc.sum(1, keepdims=True), Qc / Qc.sum(1, keepdims=True)
        g = Xc.size
        for i in range(m[c] + 1):
            tp.append(Pc[i])
            tq.append(Qc[i] if i < g else Pc[i])
            tt.append(int(Xc[i]) if i < m[c] else int(Y[c]))
        dq.extend(Qc)
        dp.extend(Pc[:g])
        dt.extend(Xc.tolist())
        ratio = np.minimum(1.0, Pc[np.arange(g), Xc] / np.maximum(Qc[np.arange(g), Xc], 1e-300))
        sd.append(float(np.cumprod(ratio).sum()))
        chain = tuple(int(x) for x in Xc)
        rp = {chain[:i]: Pc[i] for i in range(g + 1)}
        rq = {chain[:i]: Qc[i] for i in range(g)}
        with np.errstate(divide="ignore", invalid="ignore"):
            bl.append(
                float(
                    tree_value(
                        DraftTree((chain,), g, "iid"),
                        lambda u, rp=rp: rp[tuple(u)],
                        lambda u, rq=rq: rq[tuple(u)],
                        "block",
                    )
                )
            )
    tp, tq, tt, dq, dp, dt = map(np.array, (tp, tq, tt, dq, dp, dt))
    eps, eps_d = ks_threshold(tt.size, false_alarm, len(ORDERS)), ks_threshold(dt.size, false_alarm, len(ORDERS))
    dist = {o: ks_uniform(pit_values(tp, tq, tt, o, rng)) for o in ORDERS}
    dist_d = {o: ks_uniform(pit_values(dq, dp, dt, o, rng)) for o in ORDERS}
    return {
        "lossless": within(dist, eps),
        "drafts_follow_q": within(dist_d, eps_d),
        "dist": dist,
        "dist_d": dist_d,
        "expected": float(np.mean(sd)),
        "optimum": float(np.mean(bl)),
        "accepted": mean_std_err(np.asarray(m, float)),
    }


def _padded(P, Q, X):
    """The ragged calls as padded arrays (uniform rows after a chain, −1 tokens)."""
    n, g = P[0].shape[1], max(len(x) for x in X)
    Pa, Qa = np.full((len(X), g + 1, n), 1.0 / n), np.full((len(X), g, n), 1.0 / n)
    Xa = np.full((len(X), g), -1)
    for c, x in enumerate(X):
        Pa[c, : len(x) + 1], Qa[c, : len(x)], Xa[c, : len(x)] = P[c], Q[c], x
    return Pa, Qa, Xa


@pytest.mark.parametrize("seed", range(40))
def test_chain_audit_from_sparse_log_equals_the_full_row_audit(seed):
    rng = np.random.default_rng(seed)
    P, Q, X, m, Y = _random_log(rng)
    ref = _reference_chain_audit(P, Q, X, m, Y, np.random.default_rng(seed + 100))
    full = audit.audit_chain_log(P, Q, X, m, Y, rng=seed + 100)
    sparse = audit.audit_chain_log(log=audit.SparseChainLog.from_rows(P, Q, X, m, Y), rng=seed + 100)
    assert sparse.to_json() == full.to_json()  # the full rows go through the sparse form: identical
    assert full.lossless == ref["lossless"] and full.details["drafts_follow_q"] == ref["drafts_follow_q"]
    for o in ORDERS:  # masses summed in another order than the sort's cumulative sum: float rounding
        assert full.ks_distance[o] == pytest.approx(ref["dist"][o], abs=1e-12)
        assert full.details["drafts_ks_distance"][o] == pytest.approx(ref["dist_d"][o], abs=1e-12)
    assert full.expected == pytest.approx(ref["expected"], rel=1e-12, abs=1e-15)
    assert full.optimum == pytest.approx(ref["optimum"], rel=1e-12, abs=1e-15)
    assert (full.accepted, full.std_err) == ref["accepted"]


def test_chain_audit_verdicts_on_a_correct_and_a_wrong_sampler():
    """Long logs of speculative sampling: the sparse audit passes it and flags a biased
    correction, as the full-row reference does."""
    rng = np.random.default_rng(7)
    n, g, C = 6, 3, 3000
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    X = rng.choice(n, size=(C, g), p=q)
    keep = rng.random((C, g)) < np.minimum(1, p[X] / q[X])
    m = np.cumprod(keep, axis=1).sum(1)
    res = np.maximum(p - q, 0) / np.maximum(p - q, 0).sum()
    for Yres, lossless in ((res, True), (q, False)):
        Y = np.where(m < g, rng.choice(n, C, p=Yres), rng.choice(n, C, p=p))
        P, Q = np.tile(p, (C, g + 1, 1)), np.tile(q, (C, g, 1))
        rep = audit.audit_chain_log(log=audit.SparseChainLog.from_rows(P, Q, X, m, Y))
        ref = _reference_chain_audit(list(P), list(Q), list(X), m, Y, np.random.default_rng(0))
        assert rep.lossless == ref["lossless"] == lossless
        assert rep.details["drafts_follow_q"] and ref["drafts_follow_q"]


def _reference_values(P, Q, X, verifier):
    out = []
    for c, x in enumerate(X):
        g = len(x)
        pr = [P[c][i][x[i]] for i in range(g)]
        qr = [Q[c][i][x[i]] for i in range(g)]
        if verifier == "block":
            chain = tuple(int(v) for v in x)
            rp = {chain[:i]: P[c][i] for i in range(g + 1)}
            rq = {chain[:i]: Q[c][i] for i in range(g)}
            out.append(
                float(
                    tree_value(
                        DraftTree((chain,), g, "iid"),
                        lambda u, rp=rp: rp[tuple(u)],
                        lambda u, rq=rq: rq[tuple(u)],
                        "block",
                    )
                )
            )
            continue
        total, run = 0.0, 1.0
        for i in range(g):
            run *= pr[i] if verifier == "target_only" else min(1.0, pr[i] / qr[i])
            total += run
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("verifier", ["token", "block", "target_only"])
@pytest.mark.parametrize("seed", range(12))
def test_gate_values_from_sparse_logs_equal_the_full_rows(verifier, seed):
    rng = np.random.default_rng(1000 + seed)
    P, Q, X, m, _ = _random_log(rng)
    Pa, Qa, Xa = _padded(P, Q, X)
    req = np.arange(len(X)) // 3
    full = audit._logs.step_values({"P": Pa, "Q": Qa, "X": Xa, "m": m, "request": req}, verifier)
    sp = audit.SparseChainLog.from_rows(Pa, Qa, Xa, request=req)
    sparse = audit._logs.step_values(
        {**{k: getattr(sp, k) for k in audit._logs.SPARSE_KEYS if getattr(sp, k) is not None}, "m": m}, verifier
    )
    np.testing.assert_array_equal(sparse.exact, full.exact)
    np.testing.assert_array_equal(sparse.counts, full.counts)
    np.testing.assert_allclose(full.exact, _reference_values(P, Q, X, verifier), rtol=1e-12, atol=1e-15)


def test_regression_gate_from_sparse_logs_matches_the_full_logs(tmp_path):
    base = audit._logs.synthetic_chain_log(30, tokens=10, gamma=3, n=12, noise=1.0, rng=0)
    cand = audit._logs.synthetic_chain_log(30, tokens=10, gamma=3, n=12, noise=1.6, rng=1)
    for verifier in ("token", "block", "target_only"):
        want = audit.regression_gate(base, cand, verifier=verifier, false_alarm=0.05)
        sb = audit.SparseChainLog.from_rows(base["P"], base["Q"], base["X"], request=base["request"])
        sc = audit.SparseChainLog.from_rows(cand["P"], cand["Q"], cand["X"], request=cand["request"])
        sc.save(tmp_path / "cand.npz")
        for got in (
            audit.regression_gate(sb, sc, verifier=verifier, false_alarm=0.05),
            audit.regression_gate(sb, tmp_path / "cand.npz", verifier=verifier, false_alarm=0.05),
        ):
            assert (got.regressed, got.difference, got.std_err, got.critical) == (
                want.regressed,
                want.difference,
                want.std_err,
                want.critical,
            )
            assert got.by_definition == want.by_definition


def test_concatenated_batches_equal_one_conversion():
    rng = np.random.default_rng(3)
    P, Q, X, m, Y = _random_log(rng, C=25)
    whole = audit.SparseChainLog.from_rows(P, Q, X, m, Y, request=np.arange(25))
    parts = [
        audit.SparseChainLog.from_rows(P[lo:hi], Q[lo:hi], X[lo:hi], m[lo:hi], Y[lo:hi], request=np.arange(lo, hi))
        for lo, hi in ((0, 7), (7, 8), (8, 25))
    ]
    joined = audit.SparseChainLog.concatenate(parts)
    for key in audit._logs.SPARSE_KEYS:
        np.testing.assert_array_equal(getattr(joined, key), getattr(whole, key))
    assert audit.audit_chain_log(log=joined).to_json() == audit.audit_chain_log(P, Q, X, m, Y).to_json()


def test_sparse_masses_are_the_sorted_cumulative_masses():
    """text_below / draft_below against a sort of each row (the definition), nasty rows."""
    rng = np.random.default_rng(11)
    P, Q, X, m, Y = _random_log(rng, C=60)
    sp = audit.SparseChainLog.from_rows(P, Q, X, m, Y)
    from optaccept._lib.stable import ratio_key

    def below(a, b, tok, order):
        key = {"p": -a, "q": -b, "p/q": ratio_key(a, b), "id": np.arange(a.size)}[order]
        idx = np.argsort(key, kind="stable")
        return float(np.cumsum(a[idx])[list(idx).index(tok)] - a[tok])

    for c in range(60):
        g = len(X[c])
        for i in range(m[c] + 1):
            tok = X[c][i] if i < m[c] else Y[c]
            b = Q[c][i] if i < g else P[c][i]
            for j, o in enumerate(ORDERS):
                assert sp.text_below[c, i, j] == pytest.approx(below(P[c][i], b, tok, o), abs=1e-15)
        for i in range(g):
            for j, o in enumerate(ORDERS):
                assert sp.draft_below[c, i, j] == pytest.approx(below(Q[c][i], P[c][i], X[c][i], o), abs=1e-15)
        assert sp.py[c] == pytest.approx(P[c][m[c]][Y[c]], rel=1e-14)


def test_refusals_name_what_is_missing():
    rng = np.random.default_rng(5)
    P, Q, X, m, Y = _random_log(rng, C=6)
    Pa, Qa, Xa = _padded(P, Q, X)
    only_p = {"X": Xa, "px": audit.SparseChainLog.from_rows(Pa, Qa, Xa).px, "request": np.arange(6) % 2}
    assert audit._logs.step_values(only_p, "target_only").exact.shape == (6,)
    with pytest.raises(InputError, match="needs qx"):
        audit.regression_gate(only_p, only_p)
    no_block = audit.SparseChainLog.from_rows(Pa, Qa, Xa, request=np.arange(6) % 2)
    no_block.block_mass = None
    with pytest.raises(InputError, match="needs block_mass"):
        audit.regression_gate(no_block, no_block, verifier="block")
    no_text = audit.SparseChainLog.from_rows(P, Q, X)  # without m and Y: no transforms' masses
    assert no_text.text_below is None
    with pytest.raises(InputError, match="no m, which the accepted tokens need"):
        audit.audit_chain_log(log=no_text)
    full = audit.SparseChainLog.from_rows(P, Q, X, m, Y)
    half = audit.SparseChainLog(**{**full.__dict__, "text_below": None})
    with pytest.raises(InputError, match="no text_below, which the losslessness test needs"):
        audit.audit_chain_log(log=half)
    with pytest.raises(InputError, match="not both"):
        audit.audit_chain_log(P, Q, X, m, Y, log=full)
    with pytest.raises(InputError, match="all five"):
        audit.audit_chain_log(P, Q, X)
    with pytest.raises(InputError, match="sparse chain log"):
        audit.audit_chain_log(log={"X": Xa})
    bad = [r.copy() for r in P]
    bad[3][1] *= 1.5
    with pytest.raises(InputError, match=r"P: .*step 3, row 1"):
        audit.SparseChainLog.from_rows(bad, Q, X, m, Y)
    with pytest.raises(InputError, match="m: step"):
        audit.SparseChainLog.from_rows(P, Q, X, np.full(6, 5), Y)
    with pytest.raises(InputError, match="bonus row"):
        audit.SparseChainLog.from_rows([r[:-1] for r in P], Q, X, np.array([len(x) for x in X]), Y)
    with pytest.raises(InputError, match="px must have shape"):
        audit.regression_gate({"X": Xa, "px": np.ones((6, 1))}, only_p)
    with pytest.raises(InputError, match="px must lie"):
        audit.regression_gate({"X": Xa, "px": np.where(Xa >= 0, 2.0, np.nan)}, only_p, verifier="target_only")
    with pytest.raises(InputError, match="some logs only"):
        audit.SparseChainLog.concatenate([full, no_text])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_sparse_gate_and_audit_memory_do_not_grow_with_the_vocabulary():
    """10,000 steps with token ids of a 131,072-token vocabulary, in a fresh process: the gate and
    the chain audit on the sparse log add well under 100 MB to the peak resident memory (the
    full rows would be 44 GiB; benchmarks/bench_sparse_log.py measures the whole run)."""
    code = textwrap.dedent(
        """
        import numpy as np
        from optaccept import audit

        def peak():  # this process's own peak resident memory (VmHWM), MB
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024

        rng = np.random.default_rng(0)
        T, g, n = 10_000, 4, 131_072
        px, qx = rng.uniform(0.01, 1, (T, g)), rng.uniform(0.01, 1, (T, g))
        m = rng.integers(0, g + 1, T)
        log = audit.SparseChainLog(
            X=rng.integers(0, n, (T, g)), px=px, qx=qx, block_mass=rng.uniform(0, 0.5, (T, g)), m=m,
            Y=rng.integers(0, n, T), py=rng.uniform(0.01, 1, T), text_below=rng.uniform(0, 0.5, (T, g + 1, 4)),
            draft_below=rng.uniform(0, 0.5, (T, g, 4)), request=np.arange(T) // 20)
        before = peak()
        audit.regression_gate(log, log, verifier="block")
        audit.audit_chain_log(log=log)
        print(peak() - before)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout.strip()) < 100, out.stdout
