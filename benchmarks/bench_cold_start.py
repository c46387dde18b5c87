"""First answers: CPU seconds of fresh interpreters, cold (an empty numba cache) and warm (the
cache filled by a previous process), for the README's five-token tour and the first small
calls of ``optimal_verifier``, ``tree.accepted_tokens`` and ``audit.audit_verifier``; each as a
ratio to ``python -c "import numpy"`` measured in the same run (issue 42).

    .venv/bin/python benchmarks/bench_cold_start.py [--repeat 3] [--forced] [--crossover]
        [--out benchmarks/results/cold_start.md]

``--forced`` also runs the tour with every kernel compiled at any size
(``OPTACCEPT_JIT_MIN_N=0``: what a small problem cost before the size thresholds).
``--crossover`` measures, in one warm process, the per-call times of each family's plain form
(numpy or plain Python) and compiled form at a range of sizes — the measurement behind
``optaccept._lib.jit.THRESHOLDS``.

CPU time of a child is read from ``resource.getrusage(RUSAGE_CHILDREN)`` (user + system),
best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ENTRIES = {
    "tour": """
import numpy as np, optaccept as oa
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
res = oa.optimal_acceptance(p, oa.IID(q, k=2)); oa.verify(p, oa.IID(q, k=2), res)
""",
    "optimal_verifier": """
import numpy as np, optaccept as oa
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
ov = oa.optimal_verifier(p, oa.IID(q, k=4))
ov.conditional((1, 3, 1, 4)); ov.sample(np.random.default_rng(0), size=1000)
""",
    "tree.accepted_tokens": """
from optaccept import tree
target, draft = tree.synthetic_pair(5, rng=2)
tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=2, k=2, children="iid"), verifier="optimal")
""",
    "audit.audit_verifier": """
import numpy as np
from optaccept import audit
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
def fn(P, Q, X, rng):
    u = rng.random(P.shape[0])
    return np.minimum((np.cumsum(P, axis=1) < u[:, None]).sum(axis=1), P.shape[1] - 1)
audit.audit_verifier(fn, p, q, k=2, drafts="iid", samples=20000, rng=np.random.default_rng(0), declared="target_only")
""",
}


def child_cpu(code: str, cache: str, **env_extra) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPTACCEPT_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), **env_extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(out.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, out.stderr.strip()


def cold_warm(code: str, repeat: int, **env) -> tuple[float, float, str]:
    cold, warm, notice = float("inf"), float("inf"), ""
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            c, err = child_cpu(code, cache, **env)
            cold = min(cold, c)
            notice = notice or err
            w, _ = child_cpu(code, cache, **env)
            warm = min(warm, w)
    return cold, warm, notice


def crossover() -> list[str]:
    """Per-call times (ms), plain against compiled, best of 5 rounds, in this process."""
    import numpy as np

    import optaccept as oa
    from optaccept.optimal import _sorted

    def per_call(fn, reps):
        fn()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            best = min(best, (time.perf_counter() - t0) / reps)
        return best * 1e3

    def both(fn, reps):
        os.environ["OPTACCEPT_JIT_MIN_N"] = str(10**12)
        plain = per_call(fn, reps)
        os.environ["OPTACCEPT_JIT_MIN_N"] = "0"
        fast = per_call(fn, reps)
        del os.environ["OPTACCEPT_JIT_MIN_N"]
        return plain, fast

    rng = np.random.default_rng(0)
    rows = ["| family | n | k | plain (ms) | compiled (ms) | saved (ms) |", "|---|---|---|---|---|---|"]
    sizes = {
        "scan": (1_024, 16_384, 65_536, 98_304, 131_072, 262_144),
        "line": (16, 64, 128, 192, 256, 1_024),
        "swor": (16, 64, 128, 256, 1_024),
    }
    for family, ns in sizes.items():
        for n in ns:
            logits = rng.normal(0.0, 3.0, n)
            p = np.exp(logits - logits.max())
            p /= p.sum()
            lq = np.log(p) + rng.normal(0.0, 1.0, n)
            q = np.exp(lq - lq.max())
            q /= q.sum()
            k = 4
            reps = max(2, 20_000 // n) if family != "swor" else max(2, 2_000 // n)
            if family == "scan":
                plain, fast = both(lambda: _sorted.iid_scan(p, q, k), reps)
            elif family == "line":
                law = oa.IID(q, k)
                plain, fast = both(lambda: oa.optimal_verifier(p, law), reps)
            else:
                law = oa.WithoutReplacement(q, k)
                plain, fast = both(lambda: oa.optimal_acceptance(p, law), reps)
            rows.append(f"| {family} | {n:,} | {k} | {plain:.3f} | {fast:.3f} | {plain - fast:.3f} |")
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--forced", action="store_true")
    ap.add_argument("--crossover", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    load = os.getloadavg()
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the start.",
        "",
        "| run | cold CPU (s) | ratio to `import numpy` | warm CPU (s) | ratio | notice printed |",
        "|---|---|---|---|---|---|",
    ]
    base, _, _ = cold_warm("import numpy", args.repeat)
    lines.append(f'| `python -c "import numpy"` | {base:.3f} | 1.0× | — | — | |')
    print(lines[-1], flush=True)
    runs = [(name, code, {}) for name, code in ENTRIES.items()]
    if args.forced:
        runs.append(
            ("tour, compiled at every size (`OPTACCEPT_JIT_MIN_N=0`)", ENTRIES["tour"], {"OPTACCEPT_JIT_MIN_N": "0"})
        )
    for name, code, env in runs:
        cold, warm, notice = cold_warm(code, 1 if env else args.repeat, **env)
        lines.append(
            f"| {name} | {cold:.3f} | {cold / base:.1f}× | {warm:.3f} | {warm / base:.1f}× | {notice or 'none'} |"
        )
        print(lines[-1], flush=True)
    load = os.getloadavg()
    lines.append("")
    lines.append(f"Load average at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.")
    if args.crossover:
        lines += ["", *crossover()]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
