"""Memory and time of audit.audit_log on float32 logs at vocabulary 49,152, read from
memory maps (the log never in memory at once).

Writes P and Q (steps × 49,152 float32) as .npy files in a temporary folder, the drafts
X from q and the outputs Y from p (a lossless, target-only rule), then runs audit_log on
memory maps.  Reports the wall time per step and the peak of the process's *anonymous*
memory (RssAnon, sampled every 20 ms: the memory the audit allocates; the memory-mapped
file pages it reads are page cache the kernel reclaims), against the baseline of reading
the same memory maps once chunk by chunk in the same run.

Run:  python benchmarks/bench_audit_log.py [--steps 10000]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from optaccept import audit

N = 49_152


def _rss_anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Peak:
    def __init__(self) -> None:
        self.peak, self._stop = _rss_anon_mb(), False
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, _rss_anon_mb())
            time.sleep(0.02)

    def __enter__(self) -> Peak:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._t.join()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    args = ap.parse_args()
    T, rng = args.steps, np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        pP, pQ = np.lib.format.open_memmap(Path(d) / "P.npy", "w+", np.float32, (T, N)), None
        pQ = np.lib.format.open_memmap(Path(d) / "Q.npy", "w+", np.float32, (T, N))
        X = np.empty((T, 2), dtype=np.int64)
        Y = np.empty(T, dtype=np.int64)
        for lo in range(0, T, 500):
            hi = min(T, lo + 500)
            lp = rng.normal(0, 3, (hi - lo, N))
            p = np.exp(lp - lp.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            lq = lp + rng.normal(0, 1, (hi - lo, N))
            q = np.exp(lq - lq.max(1, keepdims=True))
            q /= q.sum(1, keepdims=True)
            pP[lo:hi], pQ[lo:hi] = p, q
            cq, cp = np.cumsum(q, 1), np.cumsum(p, 1)
            X[lo:hi] = np.minimum((cq[:, None, :] < rng.random((hi - lo, 2, 1))).sum(-1), N - 1)
            Y[lo:hi] = np.minimum((cp < rng.random((hi - lo, 1))).sum(-1), N - 1)
        pP.flush()
        pQ.flush()
        del pP, pQ, p, q, lp, lq, cq, cp
        P = np.load(Path(d) / "P.npy", mmap_mode="r")
        Q = np.load(Path(d) / "Q.npy", mmap_mode="r")
        base0 = _rss_anon_mb()
        t0 = time.perf_counter()
        with Peak() as pk0:
            s = 0.0
            for lo in range(0, T, 85):
                s += float(
                    np.asarray(P[lo : lo + 85], np.float64).sum() + np.asarray(Q[lo : lo + 85], np.float64).sum()
                )
        t_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        with Peak() as pk:
            rep = audit.audit_log(P, Q, X, Y, declared="target_only")
        t_audit = time.perf_counter() - t0
    print(f"vocabulary {N:,}, {T:,} logged steps, float32 memory maps ({2 * T * N * 4 / 2**30:.1f} GiB on disk)")
    print("| what | seconds | ms per step | peak anonymous memory above start (MB) |")
    print("|---|---|---|---|")
    print(
        f"| read P and Q once, chunk by chunk (baseline) | {t_read:.1f} | {1e3 * t_read / T:.2f} | "
        f"{pk0.peak - base0:.0f} |"
    )
    print(
        f"| audit_log (4 transforms, Σ α*, target-only exact) | {t_audit:.1f} | {1e3 * t_audit / T:.2f} | "
        f"{pk.peak - base0:.0f} |"
    )
    print(
        f"ratio audit / read: {t_audit / t_read:.1f}×; lossless = {rep.lossless}, acceptance "
        f"{rep.acceptance:.4f} vs expected {rep.expected:.4f}; 100,000 steps extrapolate to "
        f"{t_audit * 100_000 / T / 60:.0f} min at the same memory"
    )


if __name__ == "__main__":
    main()
