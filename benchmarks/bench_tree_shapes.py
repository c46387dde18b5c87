"""Timings of trees of any shape (tree.accepted_tokens(shape=..., children=...)).

1. Top-k trees exact at vocabulary 49,152: one tree of 64 nodes (branching (4, 4, 4)
   and an EAGLE-like 64-node index-path shape), target-only value; seconds per tree,
   against the baseline of the same models' calls alone (64 draft + 16–21 target laws),
   measured in the same run.
2. Sampled trees per second at vocabulary 49,152 (swor and iid children, shape (4, 2)):
   Rao-Blackwellised estimate of token, traversal and target_only on the same trees,
   against the baseline of the chain form (length=2, k=4, drafts="swor") in the same run.
3. The upper bound (docs/trees.md §4b) per sampled tree at 49,152.
4. With ``--lp-limit S``: the sequence LP ("optimal") per shape family — the largest
   vocabulary solved within S seconds (enumeration + build + HiGHS + certificate), with
   the exact token-level value of the same instance as the baseline in the same run.

Run:  python benchmarks/bench_tree_shapes.py                  (about a minute on 2 cores)
      python benchmarks/bench_tree_shapes.py --lp-limit 60    (the RESULTS.md LP table)
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from optaccept import tree
from optaccept.tree._budget import sequoia_shape
from optaccept.tree._shape import as_shape, topk_tree

N = 49_152


def _calls_only(target, draft, shape) -> float:
    t0 = time.perf_counter()
    Q = tree._models.as_model(draft, "draft").cached()
    P = tree._models.as_model(target, "target").cached()
    t = topk_tree(Q, as_shape(shape))
    for w in t.internal_prefixes():
        P(w)
    return time.perf_counter() - t0


def lp_limits(limit: float) -> None:
    print(f"\n## Sequence LP ('optimal') per shape family: largest vocabulary within {limit:.0f} s")
    print(
        "| shape | children | vocabulary | draft trees | LP variables | LP seconds | token exact seconds | next size |"
    )
    print("|---|---|---|---|---|---|---|---|")
    families = [
        ((2,), "swor"),
        ((2, 1), "swor"),
        ((2, 1), "iid"),
        ((1, 2), "iid"),
        ((2, 2), "swor"),
        ((3, 1), "swor"),
        ([(0,), (1,), (0, 0)], "swor"),
        ([(0,), (1,), (0, 0)], "iid"),
    ]
    for shape, children in families:
        best, last, nxt = None, None, "not reached (vocabulary 60)"
        for n in range(2, 61):
            target, draft = tree.synthetic_pair(n, rng=n)
            t0 = time.perf_counter()
            try:
                r = tree.accepted_tokens(
                    target, draft, tree.TreeDraftLaw(shape, children), verifier="optimal", max_trees=10**7
                )
            except (MemoryError, tree_errors()) as exc:
                nxt = f"n={n}: {type(exc).__name__}"
                break
            t = time.perf_counter() - t0
            if t > limit:
                nxt = f"n={n}: {t:.0f} s"
                break
            t0 = time.perf_counter()
            tree.accepted_tokens(target, draft, tree.TreeDraftLaw(shape, children), verifier="token", max_trees=10**7)
            t_tok = time.perf_counter() - t0
            assert r.certificate.ok
            best = (n, r.trees, r.certificate.variables, t, t_tok)
            if last is not None and t * (t / max(last, 1e-3)) > limit:  # the next size would pass the limit
                nxt = f"n={n + 1}: predicted > {limit:.0f} s"
                break
            last = t
        if best:
            n, trees, nv, t, t_tok = best
            print(f"| {shape} | {children} | {n} | {trees} | {nv} | {t:.2f} | {t_tok:.2f} | {nxt} |", flush=True)


def tree_errors():
    from optaccept import MethodError, SolverError

    return (MethodError, SolverError)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lp-limit", type=float, default=None, help="also the LP table, with this limit in seconds")
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}; vocabulary {N}")
    target, draft = tree.synthetic_pair(N, rng=0, scale=3.0)
    eagle_like = sequoia_shape(0.6 ** np.arange(1, 20), 64)  # a 64-node shape of decreasing width
    print("\n## Top-k trees, exact (target-only), one tree")
    print("| shape | nodes | seconds per tree | model calls alone (s) | ratio |")
    print("|---|---|---|---|---|")
    for name, shape in (("(4, 4, 4)", (4, 4, 4)), ("64-node index paths", eagle_like)):
        base = _calls_only(target, draft, shape)
        t0 = time.perf_counter()
        r = tree.accepted_tokens(target, draft, tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
        dt = time.perf_counter() - t0
        print(f"| {name} | {as_shape(shape).size} | {dt:.3f} | {base:.3f} | {dt / base:.2f}× |")
        assert r.method == "exact"
    print("\n## Sampled trees per second (shape (4, 2) vs the chain form length=2, k=4)")
    print("| children | trees | trees/s (shape) | trees/s (chains, baseline) | ratio |")
    print("|---|---|---|---|---|")
    trees = 40
    t0 = time.perf_counter()
    tree.sample_accepted_tokens(
        target, draft, drafts=tree.TreeDraftLaw(length=2, k=4, children="swor"), samples=trees, rng=1, progress=False
    )
    base = trees / (time.perf_counter() - t0)
    for children in ("swor", "iid"):
        t0 = time.perf_counter()
        tree.sample_accepted_tokens(
            target,
            draft,
            drafts=tree.TreeDraftLaw((4, 2), children),
            verifiers=("token", "traversal", "target_only"),
            samples=trees,
            rng=1,
            progress=False,
        )
        rate = trees / (time.perf_counter() - t0)
        print(f"| {children} | {trees} | {rate:.1f} | {base:.1f} | {rate / base:.2f}× |")
    print("\n## Upper bound (§4b), sampled, shape (4, 2)")
    print("| children | trees | seconds per tree |")
    print("|---|---|---|")
    for children in ("iid", "swor"):
        t0 = time.perf_counter()
        tree.upper_bound(
            target, draft, drafts=tree.TreeDraftLaw((4, 2), children), samples=10, rng=np.random.default_rng(0)
        )
        print(f"| {children} | 10 | {(time.perf_counter() - t0) / 10:.3f} |")
    if args.lp_limit is not None:
        lp_limits(args.lp_limit)


if __name__ == "__main__":
    main()
