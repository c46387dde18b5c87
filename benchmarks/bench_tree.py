"""Timings of optaccept.tree: exact LP size limits and Rao-Blackwellised sampling speed.

1. The sequence-level LP (verifier "optimal"): for each (length, k) the vocabulary is
   raised until one solve (law of the node sets + build + HiGHS + certificate) passes the
   limit or the next size is predicted to; the table gives the largest size solved and
   its time.  Baseline in the same run: the LP exactly as docs/trees.md §4 first states
   it (one variable per tree, accepted node and emitted token; `tests/_reference_lp.py`)
   at the largest vocabulary it solved within 60 s, and the hub form the library solves
   on the same instance.  The vocabulary grows in steps of about 12 %.  benchmarks/RESULTS.md
   uses --limit 60 (about 30 minutes).
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
import sys
import time
from pathlib import Path

import numpy as np

from optaccept import tree

# the largest vocabulary the LP as first stated (one variable per tree, node and emitted
# token) solved within 60 s on this machine, per (length, k): the baseline sizes
PREVIOUS = {(1, 2): 40, (1, 4): 17, (2, 1): 28, (2, 2): 10, (2, 3): 5, (3, 1): 11, (3, 2): 4, (4, 1): 7}


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _stated_lp(target, draft, L, k):
    """The LP exactly as docs/trees.md §4 first states it, over the enumerated ordered trees."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _reference_lp import optimal_lp as stated

    from optaccept.tree._api import resolve_models
    from optaccept.tree._draft import enumerate_trees

    P, Q = resolve_models(target, draft, None, None)
    Pc, Qc = P.cached(), Q.cached()
    Pc(())
    Qc(())  # the vocabulary is known after the first call
    trees = enumerate_trees(Qc, L, k, "iid", max_trees=10**8)
    v, cert, _ = stated(trees, Pc, P.n, L)
    return v, cert


def lp_limits(limit: float, max_vocab: int, rows: list[tuple[int, int]]) -> None:
    print(f"\n## Exact LP ('optimal', iid drafts): largest vocabulary solved within {limit:.0f} s")
    print(
        "Baseline in the same run: the LP as first stated (`tests/_reference_lp.py`, ordered trees enumerated) "
        "at its previous largest vocabulary; the library (hub form; node-load vertices for k ≥ 3) on the same instance; "
        "then the library's own limit."
    )
    print(
        "| length | k | baseline vocabulary | stated LP (s) | library (s) | speed-up | |Δ value| "
        "| library: vocabulary | node sets | LP variables | LP constraints | LP seconds | ratio to baseline vocabulary "
        "| next size |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for L, k in rows:
        n0 = PREVIOUS[(L, k)]
        target, draft = tree.synthetic_pair(n0, rng=n0)
        (v0, c0), t0 = _timed(lambda: _stated_lp(target, draft, L, k))
        r1, t1 = _timed(
            lambda: tree.accepted_tokens(
                target, draft, tree.TreeDraftLaw(length=L, k=k, children="iid"), "optimal", max_trees=10**8
            )
        )
        assert c0.ok and r1.certificate.ok
        best, nxt = None, f"not reached (max vocabulary {max_vocab})"

        # the LP's size: node sets × nodes in the hub form, about nodes² rounds × nodes for the vertices
        def size_of(n: int, L: int = L, k: int = k) -> float:
            return float(n) ** (L * k) if k < 3 else float(n) ** (2 * L)

        last_t, last_size = t1, size_of(n0)
        n = n0
        while n < max_vocab:
            n = min(max_vocab, max(n + 1, int(n * 1.12)))  # steps of about 12 %
            size = size_of(n)
            predicted = last_t * (size / last_size) ** 1.3
            if predicted > limit:
                nxt = f"n={n}: predicted {predicted:.0f} s"
                break
            target, draft = tree.synthetic_pair(n, rng=n)
            r, t = _timed(
                lambda: tree.accepted_tokens(
                    target, draft, tree.TreeDraftLaw(length=L, k=k, children="iid"), "optimal", max_trees=10**8
                )
            )
            if t > limit:
                nxt = f"n={n}: {t:.0f} s"
                break
            assert r.certificate.ok
            best = (n, r.trees, r.certificate.variables, r.certificate.constraints, t)
            last_t, last_size = max(t, 1e-3), size
        if best is None:
            best = (n0, r1.trees, r1.certificate.variables, r1.certificate.constraints, t1)
        n, sets, nv, nc, t = best
        print(
            f"| {L} | {k} | {n0} | {t0:.2f} | {t1:.2f} | {t0 / t1:.1f}× | {abs(v0 - float(r1.value)):.1e} "
            f"| {n} | {sets} | {nv} | {nc} | {t:.2f} | {n / n0:.2f}× | {nxt} |",
            flush=True,
        )


def sampling_speed(vocab: int, trees: int) -> None:
    print(f"\n## Rao-Blackwellised sampling at vocabulary {vocab} (synthetic models, {trees} trees)")
    print(
        "| length | k | drafts | verifiers | RB trees/s | models alone trees/s | verifiers alone trees/s"
        " | MC runs/s (token) | RB std | MC std | efficiency RB/MC (token) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    target, draft = tree.synthetic_pair(vocab, rng=0, scale=2.0, noise=1.0)
    tree.sample_accepted_tokens(
        target, draft, drafts=tree.TreeDraftLaw(length=2, k=2, children="swor"), samples=2, rng=0, progress=False
    )  # warm-up
    tree.simulate(target, draft, drafts=tree.TreeDraftLaw(length=1), samples=2, rng=np.random.default_rng(0))
    for L, k, drafts in [(4, 1, "iid"), (4, 4, "iid"), (4, 4, "swor")]:
        t0 = time.perf_counter()
        out = tree.sample_accepted_tokens(
            target,
            draft,
            drafts=tree.TreeDraftLaw(length=L, k=k, children=drafts),
            samples=trees,
            rng=np.random.default_rng(1),
            progress=False,
        )
        t_rb = time.perf_counter() - t0
        # the models' own share: drawing the same trees and reading their laws only;
        # then the verifiers alone on those cached laws
        P, Q = tree._models.as_model(target, "target"), tree._models.as_model(draft, "draft")
        gen = np.random.default_rng(1)
        kept = []
        t0 = time.perf_counter()
        for i in range(trees):
            Pc, Qc = P.cached(), Q.cached()
            t = tree._draft.sample_tree(Qc, L, k, drafts, gen)
            for u in t.internal_nodes():
                Pc(u)
            if i < 50:
                kept.append((t, Pc, Qc))
        t_models = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t, Pc, Qc in kept:
            for v in out:
                tree._sampling.tree_value(t, Pc, Qc, v)
        t_ver = (time.perf_counter() - t0) / len(kept)
        # baseline: plain Monte Carlo, one run of the token verifier per drafted tree
        t0 = time.perf_counter()
        lens, _ = tree.simulate(
            target,
            draft,
            drafts=tree.TreeDraftLaw(length=L, k=k, children=drafts),
            verifier="token",
            samples=trees,
            rng=np.random.default_rng(2),
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
    ap.add_argument("--max-vocab", type=int, default=400)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--skip-lp", action="store_true")
    ap.add_argument("--skip-sampling", action="store_true")
    ap.add_argument("--rows", default="1x2,1x4,2x1,2x2,2x3,3x1,3x2,4x1", help="(length)x(k) rows of the LP table")
    args = ap.parse_args()
    print(
        f"# machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    if not args.skip_lp:
        rows = [tuple(int(x) for x in r.split("x")) for r in args.rows.split(",")]
        lp_limits(args.limit, args.max_vocab, rows)
    if not args.skip_sampling:
        sampling_speed(args.vocab, args.trees)


if __name__ == "__main__":
    main()
