"""Benchmark of the verifiers: exact acceptance time per verifier at n ∈ {1k, 50k}
(k = 2, and k = 4 where the method stays polynomial) and sampler throughput.

Baseline measured in the same run: α* of i.i.d. drafts by the sorted-prefix method
(``optimal_acceptance(p, IID(q, k))``); ratios are time / baseline time.

    .venv/bin/python benchmarks/bench_verifiers.py [--quick]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from _timing import best_time

import optaccept as oa
from optaccept import verifiers as V


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ns = (1000,) if args.quick else (1000, 50_000)
    print(
        f"# machine: {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    print("\n## Exact acceptance (seconds, best of 3; ratio to α* sorted baseline)\n")
    print("| n | k | verifier | notion | time (s) | ratio |")
    print("|---|---|---|---|---|---|")
    for n in ns:
        p = rng.dirichlet(np.full(n, 0.3))
        q = rng.dirichlet(np.full(n, 0.3))
        for k in (2, 4):
            base = best_time(lambda p=p, q=q, k=k: oa.optimal_acceptance(p, oa.IID(q, k)))
            print(f"| {n} | {k} | α* (sorted, baseline) | — | {base:.4f} | 1.0 |")
            for v in V.ALL:
                if not v.supports(k):
                    continue
                notion = "output"
                if v.name == "khisti_is":
                    notion = "rule"  # output notion enumerates n^k tuples
                if v.name == "rrs_wor" and k > 2:
                    continue  # path enumeration, exponential in k
                t = best_time(lambda v=v, notion=notion, p=p, q=q, k=k: v.acceptance(p, q, k, notion=notion))
                print(f"| {n} | {k} | {v.name} | {notion} | {t:.4f} | {t / base:.1f} |")
    print("\n## Samplers (draws per second, 100k draws, k = 2)\n")
    print("| verifier | n | draws/s |")
    print("|---|---|---|")
    size = 100_000
    for v in V.ALL:  # the optimal verifier builds its rule once per call (the line device for IID)
        n = 1000
        p = rng.dirichlet(np.full(n, 0.3))
        q = rng.dirichlet(np.full(n, 0.3))
        k = 1 if v.name == "sd" else 2
        t = best_time(lambda v=v, p=p, q=q, k=k: v.sample(p, q, k, np.random.default_rng(1), size), repeat=2)
        print(f"| {v.name} (k={k}) | {n} | {size / t:,.0f} |")


if __name__ == "__main__":
    main()
