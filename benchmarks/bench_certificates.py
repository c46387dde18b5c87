"""Certificates for drafts without replacement at vocabulary scale (issue 43, part 1).

Rows: softmax of Student-t and Gumbel logits (q a noisy, tempered copy of p), near-one-hot q
(1 − 1e-12 on one token), exact zeros in p and q, disjoint supports; n = 32,000 … 131,072,
k = 2 … 16.  For each row: the α* solve timed, ``verify`` of the correct result timed (its
``ok`` must be True), and ``verify`` of the value moved by +1e-7 and −1e-7 and of a wrong
subset (the minimiser without its last token in the p/q order) — each must be False.

Run: ``PYTHONPATH=$PWD python benchmarks/bench_certificates.py [rows]`` (default 100).
"""

from __future__ import annotations

import os
import platform
import sys
import time

import numpy as np

import optaccept as oa


def sm(z: np.ndarray) -> np.ndarray:
    w = np.exp(z - z.max())
    return w / w.sum()


def row(i: int, rng: np.random.Generator) -> tuple[str, np.ndarray, np.ndarray, int]:
    n = int(rng.choice([32_000, 50_000, 65_536, 100_000, 131_072]))
    k = int(rng.choice([2, 3, 4, 5, 6, 8, 12, 16]))
    kind = ("student-t", "gumbel", "near-one-hot", "zeros", "disjoint")[i % 5]
    if kind == "student-t":
        z = rng.standard_t(4, size=n) * rng.uniform(1.0, 2.5)
        p, q = sm(z), sm(rng.uniform(0.5, 1.0) * z + rng.normal(0, rng.uniform(1, 3), size=n))
    elif kind == "gumbel":
        g = rng.gumbel(size=n) * rng.uniform(1.0, 3.0)
        p, q = sm(g), sm(g + rng.normal(0, 1.5, size=n))
    elif kind == "near-one-hot":
        q = rng.dirichlet(np.ones(n) * 0.3) * 1e-12
        q[int(rng.integers(n))] += 1.0 - 1e-12
        p = sm(rng.standard_t(4, size=n) * 1.5)
    elif kind == "zeros":
        z = rng.standard_t(4, size=n) * 1.5
        p, q = sm(z), sm(z + rng.normal(0, 2, size=n))
        p[rng.choice(n, n // 4, replace=False)] = 0.0
        q[rng.choice(n, n // 4, replace=False)] = 0.0
    else:
        p, q = np.zeros(n), np.zeros(n)
        cut = n // 3
        p[:cut] = sm(rng.standard_t(4, size=cut) * 1.5)
        q[cut - 10 :] = sm(rng.standard_t(4, size=n - cut + 10) * 1.5)  # overlapping on 10 tokens
    return kind, p / p.sum(), q / q.sum(), k


def main(rows: int = 100) -> None:
    rng = np.random.default_rng(43)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    warm = oa.WithoutReplacement(np.full(50, 0.02), 3)
    oa.verify(np.full(50, 0.02), warm, oa.optimal_acceptance(np.full(50, 0.02), warm))
    good = bad_refused = bad_total = 0
    ratios, t_cert, t_solve = [], [], []
    print("  # kind          n       k  alpha*              solve s  cert s  ratio  ok  refused")
    for i in range(rows):
        kind, p, q, k = row(i, rng)
        law = oa.WithoutReplacement(q, k)
        t0 = time.perf_counter()
        res = oa.optimal_acceptance(p, law)
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        v = oa.verify(p, law, res)
        tc = time.perf_counter() - t0
        good += v.ok
        wrongs = [oa.AcceptanceResult(float(res.value) + d, "sorted", law, subset=res.subset) for d in (1e-7, -1e-7)]
        if res.subset:
            pos = [j for j in res.subset if q[j] > 0]
            last = max(pos, key=lambda j: p[j] / q[j]) if pos else res.subset[-1]
            sub = tuple(j for j in res.subset if j != last)
            m = np.zeros(law.n, dtype=bool)
            m[list(sub)] = True
            if abs(float(p[m].sum()) + 1 - float(law.subset_prob(m)) - float(res.value)) > 1e-8:
                wrongs.append(oa.AcceptanceResult(float(res.value), "sorted", law, subset=sub))
        refused = sum(not oa.verify(p, law, w).ok for w in wrongs)
        bad_refused += refused
        bad_total += len(wrongs)
        t_cert.append(tc)
        t_solve.append(ts)
        ratios.append(tc / ts)
        print(
            f"{i:3d} {kind:12s} {law.n:7d} {k:3d}  {float(res.value):.15f}  {ts:7.3f} {tc:7.3f} {tc / ts:6.1f}"
            f"  {v.ok!s:5s} {refused}/{len(wrongs)}",
            flush=True,
        )
    r = np.array(ratios)
    print(
        f"rows {rows}: ok {good}/{rows}; wrong results refused {bad_refused}/{bad_total}; "
        f"certificate median {np.median(t_cert):.2f} s (max {max(t_cert):.2f} s), solve median "
        f"{np.median(t_solve):.2f} s; ratio median {np.median(r):.1f}x, p90 {np.quantile(r, 0.9):.1f}x, "
        f"max {r.max():.1f}x; rows with ratio <= 10: {(r <= 10).sum()}/{rows}"
    )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
