"""Time and memory of ``optaccept tree --distributions`` on the shipped SmolLM2 file (1,091
positions, vocabulary 49,152, top-50 rows), against the baseline of the same best tree on
position pairs over the full vocabulary (``sequence.PositionPair`` + ``tree.model_pair``, how a
user would pass the file's rows to ``tree.best_tree`` by hand), in the same run.

Each side runs in its own process (so that peak memory is its own): the command line, and
the baseline script below; both print the tree's value, which must agree.  Reports the wall
time and the peak resident memory (``ru_maxrss`` of the child), best of ``--repeats``.

Run:  python benchmarks/bench_tree_distributions.py [--budget 8] [--contexts 200] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

BASELINE = """
import sys, numpy as np
from optaccept import real, sequence, tree
budget, contexts = int(sys.argv[1]), int(sys.argv[2])
data = real.Distributions.load(real.sample_path())
prompts = data.prompt_index
pairs = []
for t in range(len(data)):
    rows = slice(t, t + budget)
    if t + budget <= len(data) and (prompts[rows] == prompts[t]).all():
        pairs.append(tree.model_pair(sequence.PositionPair(data.target[rows], data.draft[rows])))
pairs = pairs[:contexts]
best = tree.best_tree(pairs, budget, progress=False)
print(best.meta["value"])
"""

#: the command line in a child that reports its own peak resident memory on stderr
CLI = """
import resource, runpy, sys
sys.argv = ["optaccept"] + sys.argv[1:]
try:
    runpy.run_module("optaccept", run_name="__main__")
except SystemExit:
    pass
"""

#: appended to both children: their own peak resident memory (kB), on stderr
PEAK = """
import resource, sys
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident MB and stdout of one child process."""
    t0 = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    return wall, int(run.stderr.strip().splitlines()[-1]) / 1024, run.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=8)
    ap.add_argument("--contexts", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    from optaccept import real

    path = str(real.sample_path())
    cli = [sys.executable, "-c", CLI + PEAK, "tree", "--distributions", path, "--budget", str(a.budget)]
    cli += ["--contexts", str(a.contexts), "--json"]
    base = [sys.executable, "-c", BASELINE + PEAK, str(a.budget), str(a.contexts)]
    rows = {"command line": [], "baseline (full vocabulary)": []}
    for _ in range(a.repeats):  # interleaved, so that both sides see the same load
        for name, argv in (("baseline (full vocabulary)", base), ("command line", cli)):
            wall, mb, out = _run(argv)
            value = json.loads(out)["accepted"] if name == "command line" else float(out)
            rows[name].append((wall, mb, value))
    ref = min(w for w, _, _ in rows["baseline (full vocabulary)"])
    print(f"budget {a.budget}, {a.contexts} contexts, best of {a.repeats}")
    for name, r in rows.items():
        wall = min(w for w, _, _ in r)
        peak = min(m for _, m, _ in r)
        print(f"{name:28s} {wall:7.2f} s  ({wall / ref:.2f}x)  value {r[0][2]:.12f}  peak {peak:7.0f} MB")


if __name__ == "__main__":
    main()
