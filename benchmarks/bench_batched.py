"""Benchmark of the batched α* and verifier acceptances against the numpy core, same run.

Rows: LLM-like next-token laws at vocabulary 49,152 — softmax of N(0, 3²) logits, target at
temperature 1.0 and draft at 1.5 (numpy default_rng(0)), float64.  For every draft law
and k: positions per second of

* the numpy core, one row at a time: ``optimal_acceptance(p[i], Law(q[i], k), "sorted")``
  (the baseline, measured in the same run);
* ``optaccept.batched_optimal_acceptance`` on numpy rows;
* the same on torch CPU tensors (when torch is installed);

and the same for the verifiers (core: ``Verifier().acceptance(p[i], q[i], k)``).  Every
batched value is checked against the core's (largest difference printed).

    .venv/bin/python benchmarks/bench_batched.py [--quick] [--rows B] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _timing import best_time_and_result

import optaccept as oa
from optaccept import verifiers as V

try:
    import torch
except ImportError:  # the numpy rows need no torch
    torch = None


def rows(B: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((B, n)) * 3.0

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return softmax(logits), softmax(logits / 1.5)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args()
    if torch is not None:
        torch.set_num_threads(args.threads)
    n = 49_152
    B = args.rows or (8 if args.quick else 32)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}, torch {torch.__version__ if torch else '-'} "
        f"({args.threads} thread), load average {load:.1f}; {B} rows × n = {n}\n"
    )
    p, q = rows(B, n)
    pt, qt = (torch.from_numpy(p), torch.from_numpy(q)) if torch is not None else (None, None)
    laws = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}
    print("## Batched α* (positions/s; ratio = batched / numpy core, same run)\n")
    print("| draft law | k | numpy core | batched numpy | ratio | batched torch CPU | ratio | max |Δα*| |")
    print("|---|---|---|---|---|---|---|---|")
    for k in (2, 4, 8):
        for name, law in laws.items():
            m, reps = B, 3  # (every law on every row, after one untimed call: the compiled kernels load once)
            t_core, ref = best_time_and_result(
                lambda law=law, k=k, m=m: [
                    float(oa.optimal_acceptance(p[i], law(q[i], k), method="sorted").value) for i in range(m)
                ],
                reps,
                warmup=True,
            )
            t_np, got = best_time_and_result(
                lambda name=name, k=k, m=m: oa.batched_optimal_acceptance(p[:m], q[:m], k, name), reps, warmup=True
            )
            err = float(np.max(np.abs(np.asarray(got) - ref)))
            r_core, r_np = m / t_core, m / t_np
            cells = [f"{r_core:.1f}", f"{r_np:.1f}", f"{r_np / r_core:.2f}"]
            if torch is not None:
                t_t, got_t = best_time_and_result(
                    lambda name=name, k=k, m=m: oa.batched_optimal_acceptance(pt[:m], qt[:m], k, name),
                    reps,
                    warmup=True,
                )
                err = max(err, float(np.max(np.abs(got_t.numpy() - ref))))
                cells += [f"{m / t_t:.1f}", f"{(m / t_t) / r_core:.2f}"]
            else:
                cells += ["—", "—"]
            print(f"| {name} | {k} | " + " | ".join(cells) + f" | {err:.1e} |", flush=True)

    print("\n## Batched verifier acceptance (positions/s; ratio = batched / numpy verifier class)\n")
    print("| verifier | k | numpy class | batched numpy | ratio | batched torch CPU | ratio | max |Δα| |")
    print("|---|---|---|---|---|---|---|---|")
    pairs = {
        "sd": (V.SD, "output"),
        "nss": (V.NSS, "output"),
        "rrs": (V.RRS, "output"),
        "kseq": (V.KSeq, "rule"),
        "kseq-output": (V.KSeq, "output"),
        "greedy": (V.HuGreedy, "output"),
    }
    for k in (2, 4):
        for name, (cls, notion) in pairs.items():
            kk = 1 if name == "sd" else k
            t_core, ref = best_time_and_result(
                lambda cls=cls, kk=kk, notion=notion: [
                    float(cls().acceptance(p[i], q[i], kk, notion=notion)) for i in range(B)
                ],
                3,
                warmup=True,
            )
            t_np, got = best_time_and_result(
                lambda name=name, kk=kk: V.batched_acceptance(p, q, kk, name), 3, warmup=True
            )
            err = float(np.max(np.abs(np.asarray(got) - ref)))
            cells = [f"{B / t_core:.1f}", f"{B / t_np:.1f}", f"{t_core / t_np:.2f}"]
            if torch is not None:
                t_t, got_t = best_time_and_result(
                    lambda name=name, kk=kk: V.batched_acceptance(pt, qt, kk, name), 3, warmup=True
                )
                err = max(err, float(np.max(np.abs(got_t.numpy() - ref))))
                cells += [f"{B / t_t:.1f}", f"{t_core / t_t:.2f}"]
            else:
                cells += ["—", "—"]
            print(f"| {name} | {kk} | " + " | ".join(cells) + f" | {err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
