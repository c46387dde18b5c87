"""Timings of optaccept.tree: exact LP size limits and Rao-Blackwellised sampling speed.

1. The sequence-level LP (verifier "optimal"): for each (length, k) the vocabulary is
   raised until one solve (enumeration + build + HiGHS + certificate) passes the limit
   or the next size is predicted to; the table gives the largest size solved and its
   time.  benchmarks/RESULTS.md uses --limit 60 (about 25 minutes); the default
   --limit 10 runs in a few minutes.  Baseline in the same run: the exact token-level value of the
   same instance (enumeration + recursion).
2. Sampled estimation at vocabulary 49,152 with synthetic random sequence models: trees
   per second of the Rao-Blackwellised estimator (every per-tree verifier), against the
   baseline of plain Monte Carlo (one run of the token verifier per tree), with the
   variance of both: efficiency = (variance × time) of Monte Carlo / that of RB.

Run:  python benchmarks/bench_tree.py            (a few minutes on 2 cores)
      python benchmarks/bench_tree.py --limit 60     (the RESULTS.md table)
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from optaccept import tree


def lp_limits(limit: float, max_vocab: int) -> None:
    print(f"\n## Exact LP ('optimal', iid drafts): largest vocabulary solved within {limit:.0f} s")
    print(
        "| length | k | vocabulary | draft trees | LP variables | LP constraints | LP seconds | token exact seconds"
        " | next size |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for L, k in [(1, 2), (1, 4), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (4, 1)]:
        best = None
        last_t, last_size = None, None
        for n in range(2, max_vocab + 1):
            size = n ** (L * k + 1)
            if last_t is not None and last_t * (size / last_size) ** 1.2 > limit:
                nxt = f"n={n}: predicted {last_t * (size / last_size) ** 1.2:.0f} s"
                break
            target, draft = tree.synthetic_pair(n, seed=n)
            t0 = time.perf_counter()
            try:
                r = tree.accepted_tokens(target, draft, L, k, "iid", "optimal", max_trees=10**8)
            except MemoryError:
                nxt = f"n={n}: out of memory"
                break
            t = time.perf_counter() - t0
            t0 = time.perf_counter()
            tree.accepted_tokens(target, draft, L, k, "iid", "token", max_trees=10**8)
            t_tok = time.perf_counter() - t0
            if t > limit:
                nxt = f"n={n}: {t:.0f} s"
                break
            assert r.certificate.ok
            best = (n, r.trees, r.certificate.variables, r.certificate.constraints, t, t_tok)
            last_t, last_size = max(t, 1e-3), size
        else:
            nxt = f"not reached (max vocabulary {max_vocab})"
        if best:
            n, trees, nv, nc, t, t_tok = best
            print(f"| {L} | {k} | {n} | {trees} | {nv} | {nc} | {t:.2f} | {t_tok:.2f} | {nxt} |", flush=True)


def sampling_speed(vocab: int, trees: int) -> None:
    print(f"\n## Rao-Blackwellised sampling at vocabulary {vocab} (synthetic models, {trees} trees)")
    print(
        "| length | k | drafts | verifiers | RB trees/s | models alone trees/s | verifiers alone trees/s"
        " | MC runs/s (token) | RB std | MC std | efficiency RB/MC (token) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    target, draft = tree.synthetic_pair(vocab, seed=0, scale=2.0, noise=1.0)
    tree.sample_accepted_tokens(target, draft, length=2, k=2, drafts="swor", trees=2, rng=0, progress=False)  # warm-up
    tree.simulate(target, draft, length=1, steps=2, rng=np.random.default_rng(0))
    for L, k, drafts in [(4, 1, "iid"), (4, 4, "iid"), (4, 4, "swor")]:
        t0 = time.perf_counter()
        out = tree.sample_accepted_tokens(
            target, draft, length=L, k=k, drafts=drafts, trees=trees, rng=np.random.default_rng(1), progress=False
        )
        t_rb = time.perf_counter() - t0
        # the models' own share: drawing the same trees and reading their laws only;
        # then the verifiers alone on those cached laws
        P, Q = tree.as_model(target, "target"), tree.as_model(draft, "draft")
        gen = np.random.default_rng(1)
        kept = []
        t0 = time.perf_counter()
        for i in range(trees):
            Pc, Qc = P.cached(), Q.cached()
            t = tree.sample_tree(Qc, L, k, drafts, gen)
            for u in t.internal_nodes():
                Pc(u)
            if i < 50:
                kept.append((t, Pc, Qc))
        t_models = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t, Pc, Qc in kept:
            for v in out:
                tree.tree_value(t, Pc, Qc, v)
        t_ver = (time.perf_counter() - t0) / len(kept)
        # baseline: plain Monte Carlo, one run of the token verifier per drafted tree
        t0 = time.perf_counter()
        lens, _ = tree.simulate(
            target, draft, length=L, k=k, drafts=drafts, verifier="token", steps=trees, rng=np.random.default_rng(2)
        )
        t_mc = time.perf_counter() - t0
        rb = out["token"].details["values"]
        eff = (lens.var(ddof=1) * t_mc) / (rb.var(ddof=1) * t_rb)
        print(
            f"| {L} | {k} | {drafts} | {', '.join(out)} | {trees / t_rb:.1f} | {trees / t_models:.1f} | "
            f"{1 / t_ver:.0f} | "
            f"{trees / t_mc:.1f} | {rb.std(ddof=1):.3f} | {lens.std(ddof=1):.3f} | {eff:.2f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=10.0, help="seconds allowed for one LP solve")
    ap.add_argument("--max-vocab", type=int, default=40)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--skip-lp", action="store_true")
    args = ap.parse_args()
    print(
        f"# machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    if not args.skip_lp:
        lp_limits(args.limit, args.max_vocab)
    sampling_speed(args.vocab, args.trees)


if __name__ == "__main__":
    main()
