"""False-alarm rate and power of audit.audit_generation, measured over many seeds.

Loops (tests/_generation_loops.py, written from the rules' definitions): a plain sampler and
speculative sampling with one chain of γ drafts, correct or with one defect — the random
stream re-seeded identically at every step / every verifier call ("reuse"), the residual of
every position taken from the chain's first position ("stale"), drafts from q's two most
likely tokens with the ratio against the full q ("truncated").  Laws: optaccept.tree's
synthetic pair over 8 tokens (seed 3); prompts (1,) and (2, 3); ``--runs`` runs per prompt;
8 tokens read per text.  Each configuration is audited with ``--seeds`` different seeds at
false-alarm rate ``--delta``; the table gives the fraction declared not lossless and a 95 %
Clopper–Pearson interval.

Run:  python benchmarks/bench_audit_generation.py [--seeds 200] [--runs 100] [--delta 0.05]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _generation_loops import plain_loop, sd_loop  # noqa: E402

from optaccept import audit, tree  # noqa: E402


def _cp(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--power-seeds", type=int, default=100)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--delta", type=float, default=0.05)
    a = ap.parse_args()
    t, d = tree.synthetic_pair(8, rng=3)
    target, draft = functools.lru_cache(maxsize=None)(t), functools.lru_cache(maxsize=None)(d)
    configs = [
        ("plain sampler, correct", plain_loop(target, 8), None, a.seeds),
        ("SD γ = 4, correct", sd_loop(target, draft, 4, 8), 4, a.seeds),
        ("plain sampler, reused stream", plain_loop(target, 8, reuse=True), None, a.power_seeds),
        ("SD γ = 1, reused stream", sd_loop(target, draft, 1, 8, bug="reuse"), 1, a.power_seeds),
        ("SD γ = 4, reused stream", sd_loop(target, draft, 4, 8, bug="reuse"), 4, a.power_seeds),
        ("SD γ = 4, stale residual", sd_loop(target, draft, 4, 8, bug="stale"), 4, a.power_seeds),
        ("SD γ = 4, truncated q", sd_loop(target, draft, 4, 8, bug="truncated", top=2), 4, a.power_seeds),
    ]
    print(
        f"| loop | seeds | declared not lossless (δ = {a.delta:g}, {2 * a.runs} texts × 8 tokens) | 95 % interval | s / audit |"
    )
    print("|---|---|---|---|---|")
    for name, gen, gamma, seeds in configs:
        flagged = 0
        t0 = time.time()
        for s in range(seeds):
            kw = dict(drafting=audit.ChainDrafting(draft, gamma)) if gamma else {}
            rep = audit.audit_generation(
                gen,
                target,
                prompts=[(1,), (2, 3)],
                samples=a.runs,
                new_tokens=8,
                rng=s,
                false_alarm=a.delta,
                progress=False,
                **kw,
            )
            flagged += not rep.lossless
        lo, hi = _cp(flagged, seeds)
        print(
            f"| {name} | {seeds} | {flagged / seeds:.3f} | [{lo:.3f}, {hi:.3f}] | {(time.time() - t0) / seeds:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
