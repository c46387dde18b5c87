"""Peak memory and time of audit.audit_verifier and audit.audit_log at a 131,072-token
vocabulary with default arguments (the audit must stream: no per-row copies of p and q).

audit_verifier: 200,000 steps (the default) of speculative sampling with k = 1 i.i.d. draft,
written here vectorised over the batch.  audit_log: ``--steps`` logged float32 rows of p and q
(memory maps, as a capture tool writes them), drafts from q and outputs from speculative
sampling.  audit_verifier's peak is the process's largest resident set (ru_maxrss); audit_log's
is the peak of the *anonymous* memory (RssAnon, sampled every 20 ms during the call, as in
bench_audit_log.py: the memory-mapped pages it reads are page cache, not the audit's).

Run:  python benchmarks/bench_audit_memory.py [--steps 2000] [--skip-verifier]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from optaccept import audit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_log import Peak  # noqa: E402

N = 131_072


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _sd(P, Q, X, rng):
    B, n = P.shape
    rows = np.arange(B)
    x = X[:, 0]
    acc = rng.random(B) * Q[rows, x] < P[rows, x]
    out = x.copy()
    for b in np.flatnonzero(~acc):  # residual draws row by row: O(n) memory
        r = np.maximum(P[b] - Q[b], 0.0)
        c = np.cumsum(r)
        out[b] = min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), n - 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--skip-verifier", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    lp = rng.normal(0, 3, N)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    lq = lp + rng.normal(0, 1, N)
    q = np.exp(lq - lq.max())
    q /= q.sum()
    base = _peak_mb()
    t0 = time.time()
    if not a.skip_verifier:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            rep = audit.audit_verifier(_sd, p, q, k=1, rng=1, declared="sd")
        print(
            f"audit_verifier n = {N:,}, {rep.steps:,} steps: {time.time() - t0:.1f} s, peak RSS {_peak_mb():.0f} MB "
            f"(before: {base:.0f} MB), lossless {rep.lossless}, warnings {len(got)}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        T = a.steps
        Pm = np.lib.format.open_memmap(Path(tmp) / "P.npy", mode="w+", dtype=np.float32, shape=(T, N))
        Qm = np.lib.format.open_memmap(Path(tmp) / "Q.npy", mode="w+", dtype=np.float32, shape=(T, N))
        X = np.empty((T, 1), dtype=np.int64)
        Y = np.empty(T, dtype=np.int64)
        for t in range(T):
            lp = rng.normal(0, 3, N)
            pt = np.exp(lp - lp.max())
            pt /= pt.sum()
            lq = lp + rng.normal(0, 1, N)
            qt = np.exp(lq - lq.max())
            qt /= qt.sum()
            Pm[t], Qm[t] = pt, qt
            X[t, 0] = min(int(np.searchsorted(np.cumsum(qt), rng.random(), side="right")), N - 1)
            Y[t] = _sd(pt[None], qt[None], X[t : t + 1], rng)[0]
        Pm.flush()
        Qm.flush()
        del Pm, Qm
        P = np.load(Path(tmp) / "P.npy", mmap_mode="r")
        Q = np.load(Path(tmp) / "Q.npy", mmap_mode="r")
        t0 = time.time()
        with warnings.catch_warnings(record=True) as got, Peak() as peak:
            warnings.simplefilter("always")
            rep = audit.audit_log(P, Q, X, Y, declared="sd")
        print(
            f"audit_log n = {N:,}, {T:,} float32 rows: {time.time() - t0:.1f} s, peak anonymous memory "
            f"{peak.peak:.0f} MB, "
            f"lossless {rep.lossless}, warnings {len(got)}"
        )


if __name__ == "__main__":
    main()
