"""Benchmark of the optimal verifier (``optaccept.optimal_verifier``).

1. The one-shot answer for one position and one draft tuple (``respond_one``: what a serving
   engine calls; best of 5 over 5 tuples drawn from the law) and the build of a kept verifier
   (IID drafts) at n = 49,152 and 131,072, k = 2, 4, 8, each against the α* solve itself
   (``optimal_acceptance``, best of 7) measured in the same run, with the compiled kernels
   (numba; best of 5) and the build also with the numpy form (best of 3).
2. ``conditional`` per draft tuple at several n (goal: independent of n after the build).
3. The batched torch form, positions per second on this CPU, against one kept verifier per row.
4. The previous LP-plan verifier (draw a plan of the max-flow LP over draft sets, then
   condition on the set) at the largest n it reaches, against the new build on the same
   instances.
6. How far along the layout one draft tuple's pieces reach (``--parts 6``): what a layout
   limited to the cells a tuple touches could skip.
5. Without-replacement drafts from a draft truncated to its m most likely tokens at
   n = 49,152: the flow-plan verifier (sparse rows), its build against the α* solve, the
   conditional and the sampler (``--parts 5`` runs this part alone).

Instances: Zipf(1.1) laws with log-normal noise of scale σ on p and q independently
(σ = 1: α* well below 1; σ = 0.3: α* near 1, where the selection marginal must equal p).

    .venv/bin/python benchmarks/bench_optimal_verifier.py [--quick] [--parts 123456]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from _timing import best_time

import optaccept as oa
from optaccept.optimal import optimal_verifier
from optaccept.optimal._line import respond_one


def zipf_pair(n: int, sigma: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n + 1) ** 1.1
    p = base * np.exp(rng.normal(0, sigma, n))
    q = base * np.exp(rng.normal(0, sigma, n))
    return p / p.sum(), q / q.sum()


def logit_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The speed issue's family: p = softmax of N(0, 3²) logits, q = p perturbed by N(0, 1)
    in log space (renormalised)."""
    rng = np.random.default_rng(seed)
    lg = rng.normal(0.0, 3.0, n)
    p = np.exp(lg - lg.max())
    lq = lg + rng.normal(0.0, 1.0, n)
    q = np.exp(lq - lq.max())
    return p / p.sum(), q / q.sum()


def old_lp_plan_build(p: np.ndarray, law) -> None:
    """The previous verifier's set-up: the max-flow LP plan over draft sets, then the
    conditional rows per set (as in the LP-plan verifier it replaces)."""
    res = oa.optimal_acceptance(p, law, method="lp")
    plan = res.plan
    sl = law.set_law()
    dA = dict(zip(sl.sets, np.asarray(sl.probs, dtype=np.float64).tolist()))
    flow = np.clip(np.asarray(plan.flow, dtype=np.float64), 0.0, None)
    D = np.array([dA.get(s, 0.0) for s in plan.sets])
    u = np.clip(D - flow.sum(axis=1), 0.0, None)
    v = np.clip(p - flow.sum(axis=0), 0.0, None)
    cond = flow + (u[:, None] * (v / v.sum())[None, :] if v.sum() > 0 else 0.0)
    np.where(D[:, None] > 0, cond / np.maximum(D, 1e-300)[:, None], 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", default="123456", help="which parts to run, e.g. 5")
    args = ap.parse_args()
    print(
        f"# machine: {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    ns = (4096,) if args.quick else (49_152, 131_072)
    sigmas = (1.0, 0.3)
    if set("1234") & set(args.parts):
        _parts_1_to_4(args, ns, sigmas)
    if "6" in args.parts:
        _part_6(args)
    if "5" in args.parts:
        _part_5(args)


def _part_6(args) -> None:
    """How far along the layout one draft tuple's pieces reach (what a lazy layout could skip)."""
    from optaccept.optimal._line import _cell_masses, _line_of
    from optaccept.optimal._sorted import iid_scan
    from optaccept.optimal._swaps import side_matches

    print("\n## 6. Reach of one tuple's pieces along the layout (IID)\n")
    print(
        "Per side, the swap scan's queue (docs/optimal_verifier.md §3): its longest run without emptying. "
        "Per tuple (200 drawn from the law, seed 0): the fraction of the line, counted from its right end, "
        "that holds a drafted token of side A or a partner of one (1 where a token of side B is drafted: "
        "its cell's mass needs every cell to its right).\n"
    )
    print("| n | k | family | side B cells | longest busy run, B | longest busy run, A | reach, mean | reach, median |")
    print("|---|---|---|---|---|---|---|---|")
    n = 4096 if args.quick else 49_152
    fams = [
        ("logits", *logit_pair(n, seed=3)),
        ("zipf 1.0", *zipf_pair(n, 1.0, seed=3)),
        ("zipf 0.3", *zipf_pair(n, 0.3, seed=3)),
    ]
    for name, p, q in fams:
        for k in (2, 4, 8):
            in_a = np.zeros(n, dtype=bool)
            in_a[iid_scan(p, q, k)[1]()] = True
            line, nb, ell, pl = _line_of(p, q, in_a)
            m = line.size
            ell, mass = _cell_masses(ell, k, False)
            runs = []
            for x in (mass[:nb] - pl[:nb], (pl[nb:] - mass[nb:])[::-1]):
                e = np.cumsum(x)
                busy = (e - np.minimum(np.minimum.accumulate(e), 0.0)) > 0
                edges = np.diff(np.concatenate([[0], busy.astype(np.int64), [0]]))
                runs.append(int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max(initial=0)))
            lt, rt, _, _ = side_matches(mass[nb:], pl[nb:], upper=False)
            reach = np.arange(m)
            np.minimum.at(reach, rt + nb, lt + nb)
            pos = np.empty(n, dtype=np.int64)
            pos[line] = np.arange(m)
            rng = np.random.default_rng(0)
            fr = []
            for x in oa.IID(q, k).sample(rng, 200):
                h = pos[x]
                fr.append(1.0 if (h < nb).any() else (m - reach[h].min()) / m)
            print(
                f"| {n} | {k} | {name} | {nb} | {runs[0]} | {runs[1]} | {np.mean(fr):.2f} | {np.median(fr):.2f} |",
                flush=True,
            )


def _part_5(args) -> None:
    import math

    print("\n## 5. Without replacement, top-m drafts, n = 49,152: the flow-plan verifier\n")
    print(
        "Zipf(1.1) p and q with σ = 1 (seed m + k), q truncated to its m most likely tokens and "
        "renormalised. α* solve: `optimal_acceptance` (sorted prefix scan); build: "
        "`optimal_verifier` (set law, exact max flow by Dinic in integer units, sparse rows, certificate); one run each.\n"
    )
    print(
        "| m | k | draft sets | α* | α* solve (ms) | build (s) | acceptance − α* | conditional (µs) | "
        "sampler, 100k draws (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    cases = ((50, 2), (16, 8)) if args.quick else ((50, 2), (40, 3), (100, 3), (25, 5), (16, 8))
    n = 4096 if args.quick else 49_152
    for m, k in cases:
        p, q = zipf_pair(n, 1.0, seed=m + k)
        top = np.argsort(-q)[:m]
        qt = np.zeros(n)
        qt[top] = q[top]
        law = oa.WithoutReplacement(qt / qt.sum(), k)
        solve = best_time(lambda p=p, law=law: oa.optimal_acceptance(p, law), repeat=3)
        star = oa.optimal_acceptance(p, law).value
        t0 = time.perf_counter()
        ov = optimal_verifier(p, law)
        build = time.perf_counter() - t0
        sets = list(ov._index)[:300]
        t0 = time.perf_counter()
        for A in sets:
            ov.conditional(A)
        cond = (time.perf_counter() - t0) / len(sets)
        t0 = time.perf_counter()
        ov.sample(np.random.default_rng(0), 100_000)
        samp = time.perf_counter() - t0
        print(
            f"| {m} | {k} | {math.comb(m, k)} | {star:.6f} | {1e3 * solve:.1f} | {build:.2f} | "
            f"{ov.acceptance - star:.1e} | {1e6 * cond:.0f} | {samp:.2f} |",
            flush=True,
        )


def _parts_1_to_4(args, ns, sigmas) -> None:
    from optaccept.optimal import _line_kernel

    print("\n## 1. One position: the one-shot answer and the build vs the α* solve (IID)\n")
    if _line_kernel.available():
        t0 = time.perf_counter()
        p0, q0 = zipf_pair(64, 1.0, seed=1)
        optimal_verifier(p0, oa.IID(q0, 2))
        print(f"compiled kernels: first call (compile or load from numba's cache) {time.perf_counter() - t0:.2f} s\n")
    else:
        print("numba not installed: only the numpy form is timed\n")
    print(
        "Families: `logits` (p = softmax of N(0, 3²) logits, q = p·e^{N(0,1)}, renormalised), "
        "`zipf σ` (Zipf(1.1) with log-normal noise σ on p and q). α* solve: best of 7; builds: best of 5.\n"
    )
    print(
        "| n | k | family | α* | α* solve (ms) | one-shot (ms) | ratio to solve | build, compiled (ms) | "
        "ratio to solve | build, numpy (ms) | ratio to solve | acceptance − α* | shares |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        fams = [("logits", *logit_pair(n, seed=n % 89))]
        fams += [(f"zipf {sigma}", *zipf_pair(n, sigma, seed=n % 97)) for sigma in sigmas]
        for name, p, q in fams:
            for k in (2, 4, 8):
                law = oa.IID(q, k)
                base = best_time(lambda law=law, p=p: oa.optimal_acceptance(p, law), repeat=7)
                rng = np.random.default_rng(k)
                shots = [(x, rng.random(3 * k + 2)) for x in law.sample(rng, 5)]
                one = min(
                    best_time(lambda x=x, u=u, law=law, p=p: respond_one(p, law.q, k, x, u), repeat=5, warmup=True)
                    for x, u in shots
                )
                fast = float("nan")
                if _line_kernel.available():
                    fast = best_time(lambda law=law, p=p: optimal_verifier(p, law), repeat=5)
                os.environ["OPTACCEPT_NO_JIT"] = "1"
                try:
                    slow = best_time(lambda law=law, p=p: optimal_verifier(p, law), repeat=3)
                finally:
                    del os.environ["OPTACCEPT_NO_JIT"]
                ov = optimal_verifier(p, law)
                print(
                    f"| {n} | {k} | {name} | {ov.value:.6f} | {1e3 * base:.2f} | {1e3 * one:.2f} | {one / base:.1f}× | "
                    f"{1e3 * fast:.2f} | {fast / base:.1f}× | {1e3 * slow:.1f} | {slow / base:.0f}× | "
                    f"{ov.acceptance - ov.value:.1e} | "
                    f"{ov._plen.size} |",
                    flush=True,
                )

    print("\n## 2. `conditional` per draft tuple (k = 4, σ = 1; 300 tuples drawn from the law)\n")
    print("| n | µs per tuple (mean) | µs per tuple (max) | selection only, µs (mean) |")
    print("|---|---|---|---|")
    for n in (1000, 8192) if args.quick else (1000, 8192, 49_152):
        p, q = zipf_pair(n, 1.0, seed=3)
        law = oa.IID(q, 4)
        ov = optimal_verifier(p, law)
        tuples = law.sample(np.random.default_rng(1), 300)
        ts, tsel = [], []
        ov.conditional(tuples[0])  # warm-up (loads the compiled selection)
        for t in tuples:
            t0 = time.perf_counter()
            ov.conditional(t)
            ts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ov.selection(t)
            tsel.append(time.perf_counter() - t0)
        print(f"| {n} | {1e6 * np.mean(ts):.0f} | {1e6 * np.max(ts):.0f} | {1e6 * np.mean(tsel):.0f} |", flush=True)

    print("\n## 3. Batched torch form on this CPU (one draft tuple per row, rows in threads)\n")
    try:
        import torch

        from optaccept.optimal import optimal_verifier_batched

        print(
            "Rows of the `logits` family, k = 4. Baselines, measured in the same run: one kept "
            "verifier per row (`optimal_verifier(...)` then its output for the row's tuple), one thread; "
            "and the α* solve alone per row (`optimal_acceptance`, one thread), as positions/s. "
            "Batched: best of 3.\n"
        )
        print(
            "| n | rows | threads | seconds | positions/s | ratio to kept verifiers | α* solves/s | ratio to solves |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for n in (1000, 8192) if args.quick else (1000, 49_152, 131_072):
            rows = 32 if args.quick else 128
            P, Q, D = [], [], []
            for r in range(rows):
                p, q = logit_pair(n, seed=10 + r)
                P.append(p)
                Q.append(q)
                D.append(oa.IID(q, 4).sample(np.random.default_rng(r), 1)[0])
            uni = np.random.default_rng(0).random((rows, 14))
            t0 = time.perf_counter()
            for r in range(rows):
                optimal_verifier(P[r], oa.IID(Q[r], 4))._respond_uniform(D[r], uni[r])
            base = rows / (time.perf_counter() - t0)
            laws = [oa.IID(Q[r], 4) for r in range(rows)]
            t0 = time.perf_counter()
            for r in range(rows):
                oa.optimal_acceptance(P[r], laws[r])
            solves = rows / (time.perf_counter() - t0)
            Pt, Qt, Dt = torch.tensor(np.array(P)), torch.tensor(np.array(Q)), torch.tensor(np.array(D))
            optimal_verifier_batched(Pt[:2], Qt[:2], Dt[:2], torch.Generator().manual_seed(0))
            for threads in (1, 2):
                dt = best_time(
                    lambda threads=threads: optimal_verifier_batched(
                        Pt, Qt, Dt, torch.Generator().manual_seed(0), threads=threads
                    ),
                    repeat=3,
                )
                print(
                    f"| {n} | {rows} | {threads} | {dt:.3f} | {rows / dt:.0f} | {rows / dt / base:.2f}× | "
                    f"{solves:.0f} | {rows / dt / solves:.2f}× |",
                    flush=True,
                )
    except ImportError:
        print("torch not installed: skipped")

    print("\n## 4. Previous LP-plan verifier vs the new build (IID, k = 2, σ = 1)\n")
    print("| n | draft sets | LP plan (s) | new build (s) | ratio old/new |")
    print("|---|---|---|---|---|")
    for n in (20, 50) if args.quick else (20, 50, 100, 200):
        p, q = zipf_pair(n, 1.0, seed=5)
        law = oa.IID(q, 2)
        t0 = time.perf_counter()
        try:
            old_lp_plan_build(p, law)
            old = time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 — report the limit, keep the table
            print(f"| {n} | — | fails ({type(exc).__name__}) | — | — |")
            continue
        new = best_time(lambda p=p, law=law: optimal_verifier(p, law), repeat=3)
        print(f"| {n} | {n * (n + 1) // 2} | {old:.3f} | {new:.4f} | {old / new:.0f}× |", flush=True)
        if old > 60:
            break


if __name__ == "__main__":
    main()
