"""`real.tree_table` on the shipped 3,552-tree files against the per-tree path it replaces.

Baseline, in the same run: every cell computed tree by tree as the table was first built —
`rao_blackwell` over `DraftTrees.items` (each tree's laws read from 49,152-wide dense rows
and checked again for every cell), `tree_bound_terms` per tree and cell, and the one-token
closed forms on the prompts' full 49,152-token root rows; the table itself computes every
tree and cut at once (optaccept/tree/_batched_verifiers.py on the nodes' stored entries,
optaccept/real/_tree_values.py).  Goal: the table in about a tenth of the baseline's CPU
time (≤ 10 s on the 2-core machine), ≤ 1 GB.  Each side runs in a fresh
process (wall, CPU and peak resident memory of that process, the files' loading included);
the tables are compared number by number.

Run:  python benchmarks/bench_tree_table.py             (both sides, ~2.5 min on 2 cores)
      python benchmarks/bench_tree_table.py --trees 600 (the first 600 trees of each file)
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _baseline_table(files: dict) -> tuple[list, list]:
    """The table's numbers through the per-tree functions (rows and paired differences)."""
    from optaccept.drafts import IID, WithoutReplacement
    from optaccept.optimal import optimal_acceptance
    from optaccept.real._tables import VERIFIER_NAMES, _clustered
    from optaccept.sequence._batch import batch_rejection_probability
    from optaccept.tree._bounds import tree_bound_terms
    from optaccept.tree._sampling import rao_blackwell
    from optaccept.verifiers import RRS, RRSWithoutReplacement

    rows, diffs = [], []
    for f in files.values():
        groups = f.prompt_index
        prompts, first, of_tree = np.unique(groups, return_index=True, return_inverse=True)
        p, q = f.rows(np.flatnonzero(f.parent < 0)[first])  # dense 49,152-token rows
        for k in range(1 if f.drafts == "iid" else 2, f.k + 1):
            rule = RRS() if f.drafts == "iid" or k == 1 else RRSWithoutReplacement()
            law = IID if f.drafts == "iid" else WithoutReplacement
            one = {
                "token": np.array([rule.acceptance(a, b, k=k) for a, b in zip(p, q, strict=True)]),
                "optimal": np.array([float(optimal_acceptance(a, law(b, k)).value) for a, b in zip(p, q, strict=True)]),
            }
            if k == 1:
                one["block"] = one["token"]
            if f.drafts == "swor":
                one["traversal"] = one["token"]
            if f.drafts == "iid":
                one["batch"] = np.array([1 - batch_rejection_probability(a, b, k) for a, b in zip(p, q, strict=True)])
            for L in range(1, f.length + 1):
                if L == 1:
                    per_tree = {v: x[of_tree] for v, x in one.items()}
                else:
                    vs = ("token",) + (("block",) if k == 1 else ()) + (("traversal",) if f.drafts == "swor" else ())
                    res = rao_blackwell(f.items(k=k, length=L), verifiers=vs, progress=False)
                    per_tree = {v: np.asarray(res[v].details["values"]) for v in vs}
                    if k == 1:
                        per_tree["optimal"] = per_tree["block"]
                    per_tree["bound"] = np.array(
                        [
                            one["optimal"][of_tree[i]] + float(tree_bound_terms(t, P, Q, f.drafts, k)[2:].sum())
                            for i, (t, P, Q) in enumerate(f.items(k=k, length=L))
                        ]
                    )
                for v, x in per_tree.items():
                    d = "iid" if v in ("block", "batch") else f.drafts
                    if (v, d) in VERIFIER_NAMES:
                        rows.append((d, v, k, L, *_clustered(x, groups)))
                practical = [v for v in ("token", "block", "traversal") if v in per_tree]
                best = max(practical, key=lambda v: float(per_tree[v].mean()))
                pairs = [(v, "token") for v in practical[1:]]
                pairs += [(t, best) for t in ("optimal", "bound") if t in per_tree and not (t == "bound" and L == 1)]
                for a, b in pairs:
                    diffs.append((f.drafts, k, L, a, b, *_clustered(per_tree[a] - per_tree[b], groups)))
    return rows, diffs


def _child(side: str, trees: int | None, out: str) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    from optaccept import real

    files = {d: real.DraftTrees.load(real.trees_path(d, "extended")) for d in ("iid", "swor")}
    if trees:
        files = {d: f.select(slice(0, trees)) for d, f in files.items()}
    if side == "new":
        table = real.tree_table(files, progress=False)
        rows = [(r["drafts"], r["verifier"], r["k"], r["length"], r["value"], r["std_err"]) for r in table.rows]
        diffs = [
            (d["drafts"], d["k"], d["length"], d["a"], d["b"], d["value"], d["std_err"])
            for d in table.differences
            if not d["drafts"].startswith("swor vs")
        ]
    else:
        rows, diffs = _baseline_table(files)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: kB)
    Path(out).write_text(json.dumps({"wall": wall, "cpu": cpu, "peak_mib": peak, "rows": rows, "diffs": diffs}))


def _compare(a: list, b: list, keys: int) -> tuple[int, int, float, float]:
    """(numbers, bit-identical, worst relative difference where |x| > 1e-9, worst absolute)."""
    look = {tuple(r[:keys]): r[keys:] for r in b}
    if len(look) != len(a) or any(tuple(r[:keys]) not in look for r in a):
        raise SystemExit("the two tables hold different cells")
    n = same = 0
    rel = ab = 0.0
    for r in a:
        for x, y in zip(r[keys:], look[tuple(r[:keys])], strict=True):
            n += 1
            same += x == y
            ab = max(ab, abs(x - y))
            if abs(x) > 1e-9:
                rel = max(rel, abs(x - y) / abs(x))
    return n, same, rel, ab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", type=int, default=None, help="first N trees of each file (default: all 3,552)")
    ap.add_argument("--child", choices=("new", "baseline"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.trees, args.out)
        return
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side in ("new", "baseline"):
            out = str(Path(tmp) / f"{side}.json")
            cmd = [sys.executable, __file__, "--child", side, "--out", out]
            subprocess.run(cmd + (["--trees", str(args.trees)] if args.trees else []), check=True)
            res[side] = json.loads(Path(out).read_text())
    new, base = res["new"], res["baseline"]
    print(
        f"# real.tree_table on {args.trees or 3552} trees per draft law ({platform.machine()}, {platform.python_version()})"
    )
    print("| side | wall (s) | CPU (s) | peak RSS (MiB) |\n|---|---|---|---|")
    for name, r in (("tree_table", new), ("per-tree baseline", base)):
        print(f"| {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['peak_mib']:.0f} |")
    print(f"speed-up (CPU): {base['cpu'] / new['cpu']:.1f}×; memory: {base['peak_mib'] / new['peak_mib']:.1f}× less")
    for what, keys in (("rows", 4), ("diffs", 5)):
        n, same, rel, ab = _compare(base[what], new[what], keys)
        print(f"{what}: {n} numbers, {same} bit-identical, worst relative {rel:.2g}, worst absolute {ab:.2g}")


if __name__ == "__main__":
    main()
