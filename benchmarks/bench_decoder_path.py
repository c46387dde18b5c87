"""The decoder's path (issue 42, item 2): the optimal verifier's one-shot answer against the
α* solve and against one pass over the row, in one run.

For n = 49,152 and 131,072 and k = 2, 4, 8 (the ``logits`` family of
``bench_optimal_verifier.py``: p = softmax of N(0, 3²) logits, q = p·e^{N(0,1)}), best of
``--repeat`` calls each, the calls of the different timings interleaved round by round (the
host is shared: only ratios to baselines timed in the same run count):

- the α* solve, ``optimal_acceptance(p, IID(q, k), method="sorted")``;
- the floor: one pass over n (``np.sum`` of the row) and one ``np.argsort`` of it;
- the one-shot answer ``respond_one(p, q, k, x, u)`` (one position, one draft tuple drawn from
  the law; the tuples are drawn once per case, the uniforms of tuple i are those that the kept
  verifier below draws from seed i, and the time is the mean over them of each tuple's best), and its ratio to the solve and to the floor; the
  fraction of those tuples that reject (they pay the residual's marginal, O(n) more);
- its parts after the solve: the minimiser's indicator, the order (compiled), the masses and
  scan (compiled);
- a kept verifier asked for one output, ``optimal_verifier(p, law).respond(x, rng)`` with
  ``rng`` the Generator of seed i made before the call (it builds its shares, acceptance table
  and residual only on a second call), and its ratio to
  the one-shot answer on the same uniforms (the same selections, acceptances and rejections;
  the same output but where a rejection's residual draw, ``rng.choice`` against
  ``inverse_cdf``, rounds differently) and whether their outputs agree.

With ``--previous DIR`` (a copy of an earlier ``optaccept`` package renamed ``optaccept_old``
in DIR, e.g. ``git archive <commit> optaccept | tar -x -C DIR; mv DIR/optaccept
DIR/optaccept_old``) its one-shot answer runs interleaved with this one on the same tuples and
uniforms: its time, the ratio, and whether every output is the same; its kept verifier asked
for one output likewise (same drafts and seed: the same output).

Then the batched form ``optimal_verifier_batched`` at n = 49,152, k = 4 (128 ``logits``
rows, float64 CPU tensors), positions/s in one and two threads, against the α* solves of
the same rows in one thread.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_decoder_path.py [--repeat 9] [--no-batched] [--previous DIR]
        [--clock cpu|wall]

The one-position times are the calling thread's CPU time by default (``--clock wall``: wall
time), so that on a shared host a call that is preempted is not charged for the wait; the
batched form is timed in wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from bench_optimal_verifier import logit_pair

import optaccept as oa
from optaccept.optimal import _line_kernel, _line_oneshot, _line_order
from optaccept.optimal._line import respond_one
from optaccept.optimal._sorted import iid_scan

#: The clock of the one-position timings: the calling thread's CPU time (``--clock cpu``,
#: the default: on a shared host a call preempted half-way is not charged for the wait) or
#: wall time (``--clock wall``).  The batched form is timed in wall time (its threads).
CLOCK = time.thread_time


def _best(fn, repeat: int, clock=None) -> float:
    clock = clock or CLOCK
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def _interleaved(fns: dict, rounds: int, per_round: int = 3, clock=None) -> dict:
    """Best time of every function over ``rounds`` rounds of ``per_round`` calls each, the
    functions taking turns round by round (so a burst of load hits them alike)."""
    out = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            out[name] = min(out[name], _best(fn, per_round, clock))
    return out


_GENERATORS: dict = {}


def _generator(seed: int) -> np.random.Generator:
    """``np.random.default_rng(seed)`` made once and put back in its first state at every call
    (a few µs, against 20–120 µs of CPU to make a Generator from a seed here): the kept
    verifier's randomness is ready before its call, as ``respond_one``'s uniforms are."""
    if seed not in _GENERATORS:
        g = np.random.default_rng(seed)
        _GENERATORS[seed] = (g, g.bit_generator.state)
    g, state = _GENERATORS[seed]
    g.bit_generator.state = state
    return g


def _kept_uniforms(seed: int, k: int) -> np.ndarray:
    """The uniforms of ``respond_one`` that a kept verifier's first output draws from
    ``np.random.default_rng(seed)`` (a share per draft, a point in its cell, the acceptance, the
    residual): the one-shot answer and the kept verifier then select, accept and reject alike,
    so their ratio is not a count of rejections (a rejection costs every token's shares)."""
    g = np.random.default_rng(seed)
    u = np.zeros(3 * k + 2)
    u[:k] = g.random(k)
    u[k : 2 * k] = g.random(k)
    u[2 * k] = g.random(1)[0]
    u[2 * k + 1] = g.random(1)[0]
    return u


def one_position(repeat: int, previous=None, previous_kept=None, previous_iid=None) -> None:
    print("## The one-shot answer vs the α* solve and one pass over n (logits rows)\n")
    print(
        "| n | k | α* | solve (ms) | np.sum (ms) | np.argsort (ms) | one-shot (ms) | ÷ solve | accepted ÷ solve | "
        "÷ argsort | ÷ sum | rejected | indicator (ms) | order (ms) | masses + scan (ms) | kept, one output (ms) | "
        "kept ÷ one-shot | kept = one-shot |"
        + (
            " previous one-shot (ms) | previous ÷ new | previous kept (ms) | previous kept ÷ new | same outputs |"
            if previous
            else ""
        )
    )
    print("|---" * 18 + "|" + ("---|" * 5 if previous else ""))
    for n in (49_152, 131_072):
        p, q = logit_pair(n, seed=3)
        for k in (2, 4, 8):
            law = oa.IID(q, k)
            rng = np.random.default_rng(k)
            tuples = [(x, _kept_uniforms(i, k)) for i, x in enumerate(law.sample(rng, 5))]
            value, subset = iid_scan(p, q, k)
            in_a = subset.mask()
            a = _line_oneshot._arrays(n)
            order = _line_order._kernel(n)
            line, keys, ell, pl = a["line"], a["keys"], a["ell"], a["pl"]
            m = order(p, q, in_a, line, keys, keys.view(np.float64), a["work"], ell, pl, a["info"])
            nb = int(np.count_nonzero(~in_a[q > 0]))
            e, pp = ell[:m].copy(), pl[:m].copy()
            kern = _line_kernel._KERNEL
            base = {
                "solve": lambda: oa.optimal_acceptance(p, law, method="sorted"),
                "sum": lambda: np.sum(p),
                "argsort": lambda: np.argsort(p),
                "indicator": lambda: iid_scan(p, q, k)[1].mask(),
                "order": lambda: order(p, q, in_a, line, keys, keys.view(np.float64), a["work"], ell, pl, a["info"]),
                "device": lambda: kern(
                    e, pp, k, nb, a["mass"][:m], a["dens"][:m], a["x"], a["qpos"], a["qrem"], a["mp"], a["mc"], a["ma"]
                ),
            }
            law_old = previous_iid(q, k) if previous else None
            for i, (x, u) in enumerate(tuples):
                base[f"t{i}"] = lambda x=x, u=u: respond_one(p, q, k, x, u)
                base[f"k{i}"] = lambda x=x, i=i: oa.optimal_verifier(p, law).respond(x[None], _generator(i))
                if previous:
                    base[f"o{i}"] = lambda x=x, u=u: previous(p, q, k, x, u)
                    base[f"ok{i}"] = lambda x=x, i=i: previous_kept(p, law_old).respond(x[None], _generator(i))
            t = _interleaved(base, repeat)
            acc = [respond_one(p, q, k, x, u) in set(x.tolist()) for x, u in tuples]
            one = float(np.mean([t[f"t{i}"] for i in range(len(tuples))]))
            one_acc = float(np.mean([t[f"t{i}"] for i in range(len(tuples)) if acc[i]] or [np.nan]))
            kept = float(np.mean([t[f"k{i}"] for i in range(len(tuples))]))
            scan = _best(lambda: iid_scan(p, q, k), repeat)
            agree = sum(
                respond_one(p, q, k, x, u) == int(oa.optimal_verifier(p, law).respond(x[None], i)[0])
                for i, (x, u) in enumerate(tuples)
            )
            extra = ""
            if previous:
                old = float(np.mean([t[f"o{i}"] for i in range(len(tuples))]))
                old_kept = float(np.mean([t[f"ok{i}"] for i in range(len(tuples))]))
                same = all(previous(p, q, k, x, u) == respond_one(p, q, k, x, u) for x, u in tuples) and all(
                    np.array_equal(
                        previous_kept(p, law_old).respond(x[None], i), oa.optimal_verifier(p, law).respond(x[None], i)
                    )
                    for i, (x, _) in enumerate(tuples)
                )
                extra = (
                    f" {old * 1e3:.3f} | {old / one:.2f}× | {old_kept * 1e3:.3f} | {old_kept / kept:.2f}× | {same} |"
                )
            ms = {kk: v * 1e3 for kk, v in t.items()}
            print(
                f"| {n} | {k} | {value:.6f} | {ms['solve']:.3f} | {ms['sum']:.3f} | {ms['argsort']:.3f} | "
                f"{one * 1e3:.3f} | {one / t['solve']:.2f}× | {one_acc / t['solve']:.2f}× | {one / t['argsort']:.2f}× | "
                f"{one / t['sum']:.0f}× | {len(acc) - sum(acc)}/{len(tuples)} | "
                f"{max(ms['indicator'] - scan * 1e3, 0.0):.3f} | {ms['order']:.3f} | {ms['device']:.3f} | "
                f"{kept * 1e3:.3f} | {kept / one:.2f}× | {agree}/{len(tuples)} |{extra}"
            )


def batched(repeat: int, previous: bool = False) -> None:
    try:
        import torch
    except ImportError:
        print("\n(torch not installed: no batched form)")
        return
    from optaccept.optimal import optimal_verifier_batched

    n, k, rows = 49_152, 4, 128
    print(f"\n## The batched form at n = {n}, k = {k} ({rows} logits rows, float64 CPU tensors)\n")
    rng = np.random.default_rng(0)
    P, Q, D = [], [], []
    for r in range(rows):
        p, q = logit_pair(n, seed=100 + r)
        P.append(p)
        Q.append(q)
        D.append(oa.IID(q, k).sample(rng, 1)[0])
    Pt, Qt = torch.tensor(np.array(P)), torch.tensor(np.array(Q))
    Dt = torch.tensor(np.array(D), dtype=torch.int64)
    laws = [oa.IID(q, k) for q in Q]
    optimal_verifier_batched(Pt[:2], Qt[:2], Dt[:2], torch.Generator().manual_seed(0))
    fns = {
        "solves": lambda: [oa.optimal_acceptance(p, law, method="sorted") for p, law in zip(P, laws)],
        "1": lambda: optimal_verifier_batched(Pt, Qt, Dt, torch.Generator().manual_seed(0), threads=1),
        "2": lambda: optimal_verifier_batched(Pt, Qt, Dt, torch.Generator().manual_seed(0), threads=2),
    }
    if previous:
        from optaccept_old.optimal import optimal_verifier_batched as old

        old(Pt[:2], Qt[:2], Dt[:2], torch.Generator().manual_seed(0))
        for th in (1, 2):
            fns[f"previous, {th}"] = lambda th=th: old(Pt, Qt, Dt, torch.Generator().manual_seed(0), threads=th)
        same = all(
            bool(
                (
                    old(Pt, Qt, Dt, torch.Generator().manual_seed(s))
                    == optimal_verifier_batched(Pt, Qt, Dt, torch.Generator().manual_seed(s))
                ).all()
            )
            for s in range(2)
        )
        print(f"previous code's outputs the same on 2 × {rows} rows: {same}\n")
    t = _interleaved(fns, max(repeat // 3, 2), per_round=1, clock=time.perf_counter)
    print("| code | threads | seconds | positions/s | α* solves/s (1 thread) | ratio to solves |")
    print("|---|---|---|---|---|---|")
    for th in [x for x in fns if x != "solves"]:
        print(
            f"| {'previous' if th.startswith('previous') else 'this'} | {th[-1]} | {t[th]:.3f} | {rows / t[th]:.0f} | {rows / t['solves']:.0f} | "
            f"{t['solves'] / t[th]:.2f}× |"
        )
    # CPU time (the process's, all threads): what the rows cost whatever else runs on the host
    cpu = _interleaved(
        {x: fns[x] for x in ("solves", "1", "2")}, max(repeat // 3, 2), per_round=1, clock=time.process_time
    )
    print(
        f"\nCPU time (process, best of {max(repeat // 3, 2)}): {rows / cpu['1']:.0f} positions per CPU-second in one "
        f"thread, {rows / cpu['2']:.0f} in two (their CPU seconds summed); α* solves {rows / cpu['solves']:.0f} per "
        f"CPU-second; ratio to the solves {cpu['solves'] / cpu['1']:.2f}× (one thread)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--no-batched", action="store_true")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="clock of the one-position timings")
    ap.add_argument("--previous", default=None, help="a directory holding an earlier package as optaccept_old")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"# machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"numpy {np.__version__}; load average {load}; one-position clock: {args.clock}\n"
    )
    p0, q0 = logit_pair(4096, seed=1)  # compile or load the kernels first
    respond_one(p0, q0, 2, np.array([0, 1]), np.full(8, 0.5))
    previous = None
    if args.previous:
        import sys

        sys.path.insert(0, args.previous)
        from optaccept_old import IID as previous_iid
        from optaccept_old import optimal_verifier as previous_kept
        from optaccept_old.optimal._line import respond_one as previous

        previous(p0, q0, 2, np.array([0, 1]), np.full(8, 0.5))
        one_position(args.repeat, previous, previous_kept, previous_iid)
    else:
        one_position(args.repeat)
    if not args.no_batched:
        batched(args.repeat, previous is not None)
    if load is not None:
        print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
