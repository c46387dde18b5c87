"""Worst error per method, verifier and the batched path on extreme instances, and the
accuracy and time of without-replacement α* at large k.

1. The extreme-instance suite of ``tests/extreme_cases.py`` (near-one-hot laws at
   1 − 1e-6 … 1 − 1e-15, masses 1e-80 … 5e-324, k from 1 to the support size), every
   value against exact Fraction enumeration: the worst |error| per method / verifier.
2. Without replacement, uniform q, against the closed form C(|S|, k)/C(n, k): error and
   time of ``optimal_acceptance(p, WithoutReplacement(q, k))`` as k grows, with a plain
   ``np.sort`` of n floats timed in the same run as the baseline.

Run: ``.venv/bin/python benchmarks/bench_extremes.py [--quick] [--out FILE.md]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import extreme_cases as E  # noqa: E402

import optaccept as oa  # noqa: E402


def suite(count: int, lines: list[str]) -> None:
    worst: dict[str, tuple[float, str]] = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for label, p, q in E.instances(count, seed=11, nmax=6):
            for what, err in E.measure(p, q, range(1, p.size + 1), transport=True):
                if what not in worst or err > worst[what][0]:
                    worst[what] = (err, label)
    lines += [
        f"### Extreme-instance suite: {count} instances, k = 1 … n, {time.perf_counter() - t0:.0f} s",
        "",
        "| checked | worst error | on |",
        "|---|---|---|",
    ]
    for what in sorted(worst):
        err, label = worst[what]
        lines.append(f"| {what} | {err:.1e} | {label} |")
    lines.append("")


def large_k(cases, lines: list[str]) -> None:
    lines += [
        "### Without replacement at large k, uniform q (exact: C(|S|, k)/C(n, k))",
        "",
        "| n | k | time (s) | np.sort (ms) | |error| |",
        "|---|---|---|---|---|",
    ]
    rng = np.random.default_rng(0)
    for n, k in cases:
        q = np.full(n, 1.0 / n)
        p = E.concentrated_p(rng, n, k)  # α* < 1: a non-trivial instance
        t_sort = min(_timed(lambda: np.sort(q)) for _ in range(3))
        t0 = time.perf_counter()
        val = oa.optimal_acceptance(p, oa.WithoutReplacement(q, k)).value
        dt = time.perf_counter() - t0
        err = abs(val - E.uniform_alpha(p, k))
        lines.append(f"| {n} | {k} | {dt:.2f} | {t_sort * 1e3:.2f} | {err:.1e} |")
        print(lines[-1], flush=True)
    lines.append("")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--only", choices=("suite", "large-k"), help="run one part only")
    args = ap.parse_args()
    lines = [f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, numpy {np.__version__}", ""]
    if args.only != "large-k":
        suite(24 if args.quick else 96, lines)
    if args.only == "suite":
        print("\n".join(lines))
        return
    cases = [(2_000, 50), (2_000, 1_000), (2_000, 1_999)]
    if not args.quick:
        cases += [(20_000, 300), (20_000, 1_000)]
    large_k(cases, lines)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
