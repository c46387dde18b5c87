"""Double description of the K-draft Farkas cone: time and ray counts per (n, k).

Each case runs in its own process under a wall-clock limit (``--limit`` seconds).
Baseline: the full cone over ordered tuples (Khisti et al.'s system); the ratio
printed is full-cone time / set-cone time on the cases both finish.

    python benchmarks/bench_polyhedra.py [--limit 600] [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys

CASE = """
import json, sys, time
from optaccept.polyhedra import farkas_cone, extreme_rays, check_k_draft_condition
n, k, red = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
cone = farkas_cone(n, k, reduced=red)
cr = extreme_rays(cone)
t0 = time.perf_counter()
rep = check_k_draft_condition(n, k, "iid", reduce=red)
print(json.dumps({"dim": cone.dim, "constraints": len(cone.edges), "rays": len(cr.rays),
                  "lineality": len(cr.lineality), "dd": cr.seconds,
                  "read": time.perf_counter() - t0, "holds": rep.holds}))
"""


def run_case(n: int, k: int, reduced: bool, limit: float) -> dict:
    try:
        out = subprocess.run(
            [sys.executable, "-c", CASE, str(n), str(k), "1" if reduced else "0"],
            capture_output=True,
            text=True,
            timeout=limit,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": limit}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=600.0)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        full = [(3, 2), (3, 3), (4, 2)]
        red = [(3, 2), (3, 3), (4, 2), (5, 5)]
    else:
        full = [(2, 2), (2, 4), (2, 6), (3, 2), (3, 3), (3, 4), (3, 5), (4, 2), (4, 3), (4, 4), (5, 2), (5, 3)]
        red = sorted(
            {(n, k) for n in range(2, 8) for k in range(2, n + 1)}
            | {(2, 6), (3, 5), (8, 2), (8, 3), (8, 4), (9, 2), (10, 2)}
        )
    import numpy

    print(
        f"machine: {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}, "
        f"numpy {numpy.__version__}"
    )
    print("| n | k | cone | dim | constraints | rays | DD time (s) | reading (s) | holds | full/set time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    res_red = {}
    for n, k in red:
        r = run_case(n, k, True, args.limit)
        res_red[(n, k)] = r
        if "timeout" in r:
            print(f"| {n} | {k} | set | | | | > {args.limit:g} | | | |", flush=True)
        else:
            print(
                f"| {n} | {k} | set | {r['dim']} | {r['constraints']} | {r['rays']} | {r['dd']:.3f} | "
                f"{r['read']:.2f} | {r['holds']} | |",
                flush=True,
            )
    for n, k in full:
        r = run_case(n, k, False, args.limit)
        if "timeout" in r:
            print(f"| {n} | {k} | tuple | | | | > {args.limit:g} | | | |", flush=True)
            continue
        base = res_red.get((n, k)) or run_case(n, k, True, args.limit)
        ratio = f"{r['dd'] / base['dd']:.0f}x" if "dd" in base and base["dd"] > 0 else ""
        print(
            f"| {n} | {k} | tuple | {r['dim']} | {r['constraints']} | {r['rays']} | {r['dd']:.3f} | "
            f"{r['read']:.2f} | {r['holds']} | {ratio} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
