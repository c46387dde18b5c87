"""Positions per second of the batched optimal verifier on 64 rows of 49,152 tokens (k = 4,
the `logits` family of ``bench_optimal_verifier.py``), one and two threads, best of 5, with
``np.sort`` of 49,152 floats timed in the same run for the host's speed.  To compare two
versions of the library, run it under each checkout alternately::

    PYTHONPATH=<checkout> .venv/bin/python benchmarks/bench_verifier_rows.py <label> [--builds]

The last field prints the first outputs: equal versions give equal tokens for the same seeds.
With ``--builds`` it also times one build (``optimal_verifier``) against the α* solve at
n = 49,152 and 131,072, k = 2, 4, 8 (`logits` rows, best of 15).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from optaccept.optimal import optimal_verifier_batched


def builds(label: str) -> None:
    import optaccept as oa
    from optaccept.optimal import optimal_acceptance, optimal_verifier

    def best(f, reps: int = 15) -> float:
        f()
        out = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            f()
            out = min(out, time.perf_counter() - t)
        return out * 1e3

    rows = []
    for n in (49152, 131072):
        for k in (2, 4, 8):
            rng = np.random.default_rng(n + k)
            lg = rng.normal(0, 3, n)
            p = np.exp(lg - lg.max())
            p /= p.sum()
            q = p * np.exp(rng.normal(0, 1, n))
            q /= q.sum()
            law = oa.IID(q, k)
            solve = best(lambda: optimal_acceptance(p, law))
            build = best(lambda: optimal_verifier(p, law))
            rows.append(f"{n}/{k}: solve {solve:.2f} ms, build {build:.2f} ms ({build / solve:.1f}x)")
    print(f"{label} builds: " + "; ".join(rows))


def main() -> None:
    torch.set_num_threads(1)
    args = [a for a in sys.argv[1:] if a != "--builds"]
    label = args[0] if args else "this checkout"
    if "--builds" in sys.argv[1:]:
        builds(label)
    rng = np.random.default_rng(0)
    n, rows, k = 49152, 64, 4
    P, Q, X = [], [], []
    for _ in range(rows):
        lg = rng.normal(0, 3, n)
        p = np.exp(lg - lg.max())
        p /= p.sum()
        q = p * np.exp(rng.normal(0, 1, n))
        q /= q.sum()
        P.append(p)
        Q.append(q)
        X.append(rng.choice(n, size=k, p=q))
    p, q, x = torch.tensor(np.array(P)), torch.tensor(np.array(Q)), torch.tensor(np.array(X))
    optimal_verifier_batched(p[:2], q[:2], x[:2], torch.Generator().manual_seed(0), threads=1)  # compile
    rate = {}
    for threads in (1, 2):
        times = []
        for rep in range(5):
            g = torch.Generator().manual_seed(rep)
            t = time.perf_counter()
            out = optimal_verifier_batched(p, q, x, g, threads=threads)
            times.append(time.perf_counter() - t)
        rate[threads] = rows / min(times)
    a = np.random.default_rng(1).random(n)
    t = time.perf_counter()
    for _ in range(50):
        np.sort(a)
    sort_ms = (time.perf_counter() - t) / 50 * 1e3
    print(
        f"{label}: positions/s 1 thread {rate[1]:.0f}, 2 threads {rate[2]:.0f}; np.sort {sort_ms:.3f} ms; "
        f"out[:8] {out[:8].tolist()}"
    )


if __name__ == "__main__":
    main()
