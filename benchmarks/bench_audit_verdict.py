"""Benchmark of the audits' one verdict: the false-alarm rate over correct implementations
(every alarm counted: law checks pooled and per depth, the optimum, the declared rule),
against the stated rate, and the power against a tree verifier that breaks its precondition
of distinct siblings.

    .venv/bin/python benchmarks/bench_audit_verdict.py [--audits 200] [--power 10]

Each setting runs ``--audits`` independent audits (seeds 0, 1, …) of an implementation written
here from its rule's definition; an audit raises an alarm when its report is not ``ok`` (the
verdict "not lossless", or "not the declared rule").  The rate is stated per audit, so the
alarms are at most Binomial(audits, δ): the table gives the count, the observed rate and its
exact (Clopper–Pearson) 95 % upper bound, and the per-kind counts.  The verdicts' mix
(lossless / inconclusive) is printed too.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
from scipy.stats import beta

from optaccept import audit, tree

P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


def _draw_rows(P, rng):
    cum = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cum[:, -1]
    return np.minimum((cum <= u[:, None]).sum(axis=1), P.shape[1] - 1)


def sd(P, Q, X, rng):
    """Speculative sampling on the first draft."""
    B = P.shape[0]
    rows = np.arange(B)
    x = X[:, 0]
    keep = rng.random(B) * Q[rows, x] < P[rows, x]
    return np.where(keep, x, _draw_rows(np.clip(P - Q, 0.0, None), rng))


def target_only(P, Q, X, rng):
    """Target-only over the distinct drafts, p renormalised after each rejection."""
    B, n = P.shape
    y = np.empty(B, dtype=np.int64)
    for b in range(B):
        rest = P[b].copy()
        for x in dict.fromkeys(X[b].tolist()):
            if rng.random() * rest.sum() < rest[x]:
                y[b] = x
                break
            rest[x] = 0.0
        else:
            y[b] = rng.choice(n, p=rest / rest.sum())
    return y


def chain_exact_match(P, Q, X, rng):
    """The target samples each position; drafts kept while equal to its samples."""
    B, g = X.shape
    T = np.stack([_draw_rows(P[:, i], rng) for i in range(g + 1)], axis=1)
    m = np.cumprod(T[:, :-1] == X, axis=1).sum(1)
    return m, T[np.arange(B), m]


def tree_walk(tokens, parents, P, Q, rng, dup_bug=False):
    """Target-only on a drafted tree; ``dup_bug``: child nodes accepted one after the other with
    p of their token, so a token drafted twice is accepted against 2·p(x)."""
    B, N1 = tokens.shape
    n = P.shape[2]
    v = np.zeros(B, dtype=np.int64)
    Y = np.zeros(B, dtype=np.int64)
    for b in range(B):
        node = 0
        while True:
            kids = [c for c in range(1, N1) if parents[c] == node and tokens[b, c] >= 0]
            p = P[b, node]
            if dup_bug:
                u, acc, nxt = rng.random(), 0.0, None
                for c in kids:
                    acc += p[tokens[b, c]]
                    if u < acc:
                        nxt = c
                        break
                if nxt is None:
                    rest = p.copy()
                    rest[[tokens[b, c] for c in kids]] = 0.0
                    y = rng.choice(n, p=rest / rest.sum()) if rest.sum() > 0 else rng.choice(n, p=p)
            else:
                y = rng.choice(n, p=p)
                nxt = next((c for c in kids if tokens[b, c] == y), None)
            if nxt is None:
                v[b], Y[b] = node, y
                break
            node = nxt
    return v, Y


def chain_log(seed, C=300, g=2):
    """A logged chain loop running speculative sampling (the same rows at every position)."""
    rng = np.random.default_rng(10_000 + seed)
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.full(4, 0.25)
    X = rng.choice(4, size=(C, g), p=q)
    keep = rng.random((C, g)) < np.minimum(1, p[X] / q[X])
    m = np.cumprod(keep, axis=1).sum(1)
    res = np.maximum(p - q, 0) / np.maximum(p - q, 0).sum()
    Y = np.where(m < g, rng.choice(4, C, p=res), rng.choice(4, C, p=p))
    return np.tile(p, (C, g + 1, 1)), np.tile(q, (C, g, 1)), X, m, Y


TARGET4, DRAFT4 = tree.synthetic_pair(4, rng=0)
TARGET6, DRAFT6 = tree.synthetic_pair(6, rng=3)
TREE = tree.TreeDraftLaw([(0,), (1,), (0, 0), (1, 0)], "iid")


def settings(delta, cheap=False):
    out = {
        "audit_verifier · sd, k = 1, 2,000 steps": lambda s: audit.audit_verifier(
            sd, P0, Q0, k=1, samples=2000, rng=s, declared="sd", false_alarm=delta
        ),
        "audit_verifier · sd, k = 1, 40,000 steps": lambda s: audit.audit_verifier(
            sd, P0, Q0, k=1, samples=40_000, rng=s, declared="sd", false_alarm=delta
        ),
        "audit_verifier · target_only, k = 3 i.i.d., 1,000 steps": lambda s: audit.audit_verifier(
            target_only, P0, Q0, k=3, samples=1000, rng=s, declared="target_only", false_alarm=delta
        ),
        "audit_chain · exact_match, γ = 2, 500 calls": lambda s: audit.audit_chain(
            chain_exact_match, TARGET4, DRAFT4, 2, samples=500, rng=s, declared="exact_match", false_alarm=delta
        ),
        "audit_tree · target_only, 4 nodes i.i.d., 300 trees": lambda s: audit.audit_tree(
            tree_walk, TARGET6, DRAFT6, TREE, samples=300, rng=s, declared="target_only", false_alarm=delta
        ),
        "audit_chain_log · sd, γ = 2, 300 calls": lambda s: audit.audit_chain_log(
            *chain_log(s), rng=s, false_alarm=delta
        ),
    }
    return dict(list(out.items())[:4]) if cheap else out


def upper95(k, n):
    return 1.0 if k == n else float(beta.ppf(0.95, k + 1, n - k))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=200)
    ap.add_argument("--power", type=int, default=10)
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.05, 1e-6])
    ap.add_argument("--only", default="", help="run the settings whose name holds this text")
    ap.add_argument("--cheap-below", type=float, default=1e-3, help="rates below this: the three fast settings only")
    args = ap.parse_args()
    print("## False alarms over correct implementations\n")
    print(
        "| setting | δ stated | audits | alarms | rate (95 % upper) | by kind | verdicts | s/audit |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for delta in args.deltas:
        for name, run in settings(delta, cheap=delta < args.cheap_below).items():
            if args.only not in name:
                continue
            alarms, kinds, verdicts = 0, Counter(), Counter()
            t0 = time.perf_counter()
            for s in range(args.audits):
                rep = run(s)
                alarms += not rep.ok
                kinds.update({c.kind for c in rep.decision.alarms})
                verdicts[rep.verdict] += 1
            dt = (time.perf_counter() - t0) / args.audits
            by = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "—"
            mix = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
            print(
                f"| {name} | {delta:g} | {args.audits} | {alarms} | {alarms / args.audits:.3f} "
                f"({upper95(alarms, args.audits):.3f}) | {by} | {mix} | {dt:.2f} |",
                flush=True,
            )
    if args.power:
        print("\n## Power: duplicated siblings under target-only's distinct-siblings rule, 4,000 trees\n")
        print("| implementation | runs | not lossless | not the declared rule | median z |\n|---|---|---|---|---|")
        for bug in (False, True):
            lossy = notdec = 0
            zs = []
            for s in range(args.power):
                rep = audit.audit_tree(
                    lambda *a, b=bug: tree_walk(*a, dup_bug=b),
                    TARGET6,
                    DRAFT6,
                    TREE,
                    samples=4000,
                    rng=100 + s,
                    declared="target_only",
                )
                lossy += not rep.lossless
                notdec += rep.not_declared
                zs.append(rep.expected_z)
            label = "duplicates accepted against 2·p(x)" if bug else "correct target-only walk"
            print(f"| {label} | {args.power} | {lossy} | {notdec} | {float(np.median(zs)):+.1f} |", flush=True)


if __name__ == "__main__":
    main()
