"""Benchmark of optaccept.audit: false alarms of correct implementations, power against
bugs of known size, and speed (ratios against the implementation's own time, measured in
the same run).

    .venv/bin/python benchmarks/bench_audit.py [--quick]

Instances: p, q on 7 tokens (the test suite's P0, Q0) for the decisions; n = 1,000 Dirichlet(1)
rows for the speed.  The bug of size ε mixes the output with a law that moves ε of mass from
the lowest-p tokens to the highest (TV = ε exactly).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from optaccept import audit

P0 = np.array([0.30, 0.22, 0.18, 0.12, 0.08, 0.06, 0.04])
Q0 = np.array([0.12, 0.30, 0.08, 0.20, 0.15, 0.05, 0.10])


def sd(P, Q, X, rng):
    """Speculative sampling on the first draft (correct)."""
    B, n = P.shape
    rows = np.arange(B)
    x = X[:, 0]
    accept = rng.random(B) * Q[rows, x] < P[rows, x]
    res = np.clip(P - Q, 0.0, None)
    cum = np.cumsum(res, axis=1)
    u = rng.random(B) * cum[:, -1]
    return np.where(accept, x, np.minimum((cum <= u[:, None]).sum(axis=1), n - 1))


def biased(eps):
    """SD whose output law is p moved by TV = eps: with probability eps/δ the output is
    replaced by a draw from p + δ·(e_top − e_bottom)/… (δ = the smallest p)."""
    order = np.argsort(P0)
    lo, hi = order[0], order[-1]

    def fn(P, Q, X, rng):
        y = sd(P, Q, X, rng)
        move = (y == lo) & (rng.random(y.size) < eps / P0[lo])
        y[move] = hi
        return y

    return fn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    seeds = 20 if args.quick else 100
    print("## False alarms of a correct SD (declared lossless-test rate 1e-6)\n")
    print("| steps | runs | alarms | largest KS / threshold |\n|---|---|---|---|")
    for N in (20_000, 200_000):
        alarms, worst = 0, 0.0
        for s in range(seeds if N < 100_000 else max(seeds // 5, 5)):
            r = audit.audit_verifier(sd, P0, Q0, k=1, samples=N, rng=np.random.default_rng(s))
            alarms += not r.lossless
            worst = max(worst, max(r.ks_distance.values()) / r.ks_threshold)
        print(f"| {N:,} | {s + 1} | {alarms} | {worst:.2f} |")
    print("\n## Power: share of runs that find a bug of size TV = ε\n")
    print("| ε | steps | runs | detected |\n|---|---|---|---|")
    for eps, Ns in ((0.01, (50_000, 100_000, 200_000)), (0.001, (2_000_000,) if args.quick else (10_000_000,))):
        for N in Ns:
            runs = 3 if N > 1_000_000 else 10
            hit = sum(
                not audit.audit_verifier(
                    biased(eps), P0, Q0, k=1, samples=N, rng=np.random.default_rng(100 + s)
                ).lossless
                for s in range(runs)
            )
            print(f"| {eps} | {N:,} | {runs} | {hit} |")
    print("\n## Speed: 200,000 steps at n = 1,000 (k = 2, i.i.d. drafts)\n")
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(1000)), rng.dirichlet(np.ones(1000))
    t_fn = [0.0]

    def timed(P, Q, X, r):
        t0 = time.perf_counter()
        y = sd(P, Q, X, r)
        t_fn[0] += time.perf_counter() - t0
        return y

    t0 = time.perf_counter()
    audit.audit_verifier(timed, p, q, k=2, samples=200_000, rng=np.random.default_rng(1), declared="sd")
    total = time.perf_counter() - t0
    print(
        f"audit total {total:.2f} s, of which fn {t_fn[0]:.2f} s: audit beyond fn {total - t_fn[0]:.2f} s "
        f"({(total - t_fn[0]) / max(t_fn[0], 1e-9):.2f}× fn's own time)"
    )
    print(
        "\nSamples the DKW bound needs for a KS distance ε along one order at rate 1e-6 (4 orders): "
        + ", ".join(f"ε = {e}: {math.log(8 / 1e-6) / (2 * e * e):,.0f}" for e in (0.01, 0.001))
    )


if __name__ == "__main__":
    main()
