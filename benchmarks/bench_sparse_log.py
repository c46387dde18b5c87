"""Regression gate and chain audit from sparse logs at a 131,072-token vocabulary: peak memory and
time, against the full rows they replace.

    .venv/bin/python benchmarks/bench_sparse_log.py [--steps 10000] [--n 131072] [--gamma 4]

Two chain logs of speculative sampling (a baseline and a worse draft, the same targets) are
decoded at vocabulary n with γ drafted tokens per step: each chain position takes its target and
draft rows (float32 softmax rows, float64 once cleaned) from a pool of 16 contexts, the drafts
are drawn from q, accepted with probability min(1, p/q), the correction drawn from (p − q)₊ and
the bonus from p, so the logged text is lossless.  Each step's sparse values are read from
per-context tables (the masses before every token in each order, block verification's masses
as a function of the running weight); the first steps are converted from their full rows by
``audit.SparseChainLog.from_rows`` and must agree with the tables (to 1e-12), the check that the
tables compute what an engine would store.  Then a fresh process loads the two ``.npz`` logs and
runs ``audit.regression_gate`` (block verification's values) and ``audit.audit_chain_log`` on
the baseline, measuring its peak resident memory: VmHWM of /proc/self/status, the process's own
peak (``getrusage``'s ru_maxrss would also count the parent's memory, copied at the fork).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from optaccept import audit
from optaccept._lib.stable import ratio_key

POOL = 16


def softmax32(z: np.ndarray) -> np.ndarray:
    z = z - z.max()
    e = np.exp(z)
    return (e / e.sum()).astype(np.float32)


def before(mass: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Mass of ``mass`` before each token in ascending ``key``, ties by token id (a sort)."""
    idx = np.argsort(key, kind="stable")
    out = np.empty_like(mass)
    out[idx] = np.cumsum(mass[idx]) - mass[idx]
    return out


class Context:
    """One chain position's rows (p, q) and the tables that give its sparse values."""

    def __init__(self, p32: np.ndarray, q32: np.ndarray) -> None:
        self.p32, self.q32 = p32, q32
        p, q = p32.astype(np.float64), q32.astype(np.float64)
        self.p, self.q = p / p.sum(), q / q.sum()
        p, q, ids = self.p, self.q, np.arange(p.size)
        self.text = np.stack([before(p, -p), before(p, -q), before(p, ratio_key(p, q)), before(p, ids)], 1)
        self.bonus = np.stack([before(p, -p), before(p, -p), before(p, ratio_key(p, p)), before(p, ids)], 1)
        self.draft = np.stack([before(q, -q), before(q, -p), before(q, ratio_key(q, p)), before(q, ids)], 1)
        self.cdf_q, self.cdf_p = np.cumsum(q), np.cumsum(p)
        res = np.maximum(p - q, 0.0)
        self.cdf_res = np.cumsum(res / res.sum())
        order = np.argsort(ratio_key(q, p), kind="stable")  # S(a) = Σ (a p − q)₊ over q/p < a
        self.ratio_sorted = ratio_key(q, p)[order]
        self.cum_p = np.concatenate([[0.0], np.cumsum(p[order])])
        self.cum_q = np.concatenate([[0.0], np.cumsum(q[order])])

    def block_mass(self, a: float) -> float:
        k = int(np.searchsorted(self.ratio_sorted, a, side="left"))
        return max(a * self.cum_p[k] - self.cum_q[k], 0.0)


def draw(cdf: np.ndarray, rng: np.random.Generator) -> int:
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), cdf.size - 1)


def decode(steps: int, n: int, gamma: int, noise: float, seed: int, check: int) -> tuple[dict, float]:
    rng = np.random.default_rng(seed)
    trng = np.random.default_rng(12345)  # the targets: the same for both logs
    logits = [trng.standard_normal(n) * 2.5 for _ in range(POOL)]
    pool = [
        Context(softmax32(z), softmax32(z + noise * rng.standard_normal(n)))
        for z in tqdm(logits, desc=f"contexts (noise {noise})", leave=False)
    ]
    T, g = steps, gamma
    out = {
        "X": np.zeros((T, g), np.int64),
        "px": np.zeros((T, g)),
        "qx": np.zeros((T, g)),
        "block_mass": np.full((T, g), np.nan),
        "m": np.zeros(T, np.int64),
        "Y": np.zeros(T, np.int64),
        "py": np.zeros(T),
        "text_below": np.full((T, g + 1, 4), np.nan),
        "draft_below": np.zeros((T, g, 4)),
        "request": np.arange(T) // 20,
    }
    ctx_of = rng.integers(0, POOL, (T, g + 1))
    for t in tqdm(range(T), desc=f"decode (noise {noise})", leave=False):
        cs = [pool[j] for j in ctx_of[t]]
        xs = [draw(cs[i].cdf_q, rng) for i in range(g)]
        a = 1.0
        m = g
        for i, x in enumerate(xs):
            px, qx = cs[i].p[x], cs[i].q[x]
            out["X"][t, i], out["px"][t, i], out["qx"][t, i] = x, px, qx
            out["draft_below"][t, i] = cs[i].draft[x]
            r = a * px / qx
            a = 1.0 if r >= 1 else r
            if i + 1 < g:
                out["block_mass"][t, i] = cs[i + 1].block_mass(a)
        for i, x in enumerate(xs):
            if rng.random() >= min(1.0, cs[i].p[x] / cs[i].q[x]):
                m = i
                break
        y = draw(cs[m].cdf_res, rng) if m < g else draw(cs[g].cdf_p, rng)
        out["m"][t], out["Y"][t], out["py"][t] = m, y, cs[m].p[y]
        for i in range(m):
            out["text_below"][t, i] = cs[i].text[xs[i]]
        out["text_below"][t, m] = (cs[m].text if m < g else cs[g].bonus)[y]
    # the first steps again, from their full rows, as an engine would convert them
    t0 = time.perf_counter()
    P = np.stack([np.stack([pool[j].p32 for j in ctx_of[t]]) for t in range(check)])
    Q = np.stack([np.stack([pool[j].q32 for j in ctx_of[t, :g]]) for t in range(check)])
    conv = audit.SparseChainLog.from_rows(P, Q, out["X"][:check], out["m"][:check], out["Y"][:check])
    per_step = (time.perf_counter() - t0) / check
    for key in ("px", "qx", "block_mass", "py", "text_below", "draft_below"):
        want = out[key][:check]
        got = getattr(conv, key)
        assert np.allclose(got, want, rtol=0, atol=1e-12, equal_nan=True), key
    return out, per_step


MEASURE = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from optaccept import audit
import scipy.stats


def status(key):  # this process's own resident memory, MB (Linux): VmRSS now, VmHWM its peak
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) / 1024


import_mb, before = status("VmHWM"), status("VmRSS")
t1 = time.perf_counter()
gate = audit.regression_gate(sys.argv[1], sys.argv[2], verifier="block")
t2 = time.perf_counter()
rep = audit.audit_chain_log(log=sys.argv[1])
t3 = time.perf_counter()
print(json.dumps(dict(
    peak_mb=status("VmHWM"), import_mb=import_mb, now_before=before, now_after=status("VmRSS"),
    gate_s=t2 - t1, audit_s=t3 - t2, regressed=gate.regressed, difference=gate.difference,
    std_err=gate.std_err, lossless=rep.lossless, drafts_follow_q=rep.details["drafts_follow_q"],
    accepted=rep.accepted, expected=rep.expected, optimum=rep.optimum, steps=rep.steps)))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=131_072)
    ap.add_argument("--gamma", type=int, default=4)
    ap.add_argument("--check", type=int, default=8, help="steps converted from full rows and compared")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        paths, per_step = [], []
        for name, noise, seed in (("baseline", 1.0, 1), ("candidate", 1.4, 2)):
            log, s = decode(args.steps, args.n, args.gamma, noise, seed, args.check)
            path = Path(tmp) / f"{name}.npz"
            np.savez(path, **log)
            paths.append(str(path))
            per_step.append(s)
            sparse_mb = sum(v.nbytes for v in log.values()) / 1e6
        gen_s = time.perf_counter() - t0
        res = json.loads(
            subprocess.run([sys.executable, "-c", MEASURE, *paths], capture_output=True, text=True, check=True).stdout
        )
    full_gb = args.steps * (2 * args.gamma + 1) * args.n * 4 / 1e9
    print(
        f"n = {args.n:,}, γ = {args.gamma}, {args.steps:,} steps per log ({args.steps // 20:,} requests of 20 steps); "
        f"two logs decoded in {gen_s:.0f} s"
    )
    print(
        f"sparse log {sparse_mb:.2f} MB per log on disk and in memory, against {full_gb:.1f} GB of float32 rows "
        f"(P: γ + 1 rows, Q: γ rows a step)"
    )
    print(
        f"SparseChainLog.from_rows on the full float32 rows: {1000 * np.mean(per_step):.0f} ms a step "
        f"({args.check} steps of each log, equal to the tables within 1e-12)"
    )
    print(
        f"gate (block verification) + chain audit in a fresh process: peak RSS {res['peak_mb']:.0f} MB "
        f"(peak {res['import_mb']:.0f} MB already after the imports; resident {res['now_before']:.0f} MB before the "
        f"gate, {res['now_after']:.0f} MB after the audit); gate {res['gate_s']:.2f} s, audit {res['audit_s']:.2f} s"
    )
    print(
        f"gate: regressed {res['regressed']}, difference {res['difference']:+.4f} ± {res['std_err']:.4f}; audit: "
        f"lossless {res['lossless']}, drafts follow q {res['drafts_follow_q']}, accepted {res['accepted']:.4f}, "
        f"expected {res['expected']:.4f}, optimum {res['optimum']:.4f}"
    )


if __name__ == "__main__":
    main()
