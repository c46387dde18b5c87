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

``--overhead``: the audit's own time against the loop's.  Each loop runs alone over the same
prompts and runs (fresh generators, torch seeded the same way), then under
``audit_generation``; the audit's overhead is (audit time − loop time) / loop time, each the
median of ``--repeats`` alternating measurements in one process (the machine may be shared:
ratios, not times, are what compare).  The Hugging Face-style loops
(tests/_generation_loops.py: ``hf_style_sd``, which re-scores the whole text at every forward,
and ``hf_cached_sd``, which feeds only new tokens through key/value caches) run on
``audit.torch_lm``; their loop time is also measured on a hand-written toy module (log-laws
read from a dict, no checks, no cache) — the cost of ``torch_lm`` itself.

Run:  python benchmarks/bench_audit_generation.py [--seeds 200] [--runs 100] [--delta 0.05]
      python benchmarks/bench_audit_generation.py --overhead [--runs 50] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
import types
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _generation_loops import hf_cached_sd, hf_style_sd, plain_loop, sd_loop  # noqa: E402

from optaccept import audit, tree  # noqa: E402


def _cp(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def _toy_lm(target, vocab):
    """A hand-written Hugging Face-style module: log-laws from a dict, no checks, no cache."""
    import numpy as np
    import torch

    memo = {}

    class Toy(torch.nn.Module):
        def forward(self, input_ids, **kwargs):
            rows = input_ids.tolist()
            out = np.empty((len(rows), len(rows[0]), vocab))
            for b, r in enumerate(rows):
                for t in range(len(r)):
                    u = tuple(r[: t + 1])
                    if u not in memo:
                        with np.errstate(divide="ignore"):
                            memo[u] = np.log(target(u))
                    out[b, t] = memo[u]
            return types.SimpleNamespace(logits=torch.as_tensor(out, dtype=torch.float32))

    return Toy()


def _hf(loop):
    import torch

    def generate(prompt, rng):
        out, counts = loop(torch.tensor([list(prompt)]))
        return out[0, len(prompt) :].tolist(), counts

    return generate


def overhead(runs: int, repeats: int) -> None:
    import numpy as np
    import torch

    t, d = tree.synthetic_pair(8, rng=3)
    target, draft = functools.lru_cache(maxsize=None)(t), functools.lru_cache(maxsize=None)(d)
    prompts = [(1,), (2, 3)]
    lm = {m: audit.torch_lm(m, 8) for m in (target, draft)}
    toy = {m: _toy_lm(m, 8) for m in (target, draft)}
    loops = [
        ("plain sampler (numpy)", plain_loop(target, 8), None, None),
        ("SD γ = 4 (numpy)", sd_loop(target, draft, 4, 8), 4, None),
        (
            "HF-style SD γ = 3, whole text re-scored (torch_lm)",
            _hf(hf_style_sd(lm[draft], lm[target], 3, 8)),
            3,
            _hf(hf_style_sd(toy[draft], toy[target], 3, 8)),
        ),
        ("HF-style SD γ = 3, key/value caches (torch_lm)", _hf(hf_cached_sd(lm[draft], lm[target], 3, 8)), 3, None),
    ]

    def alone(gen, seed):
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        for _ in range(runs):
            for pr in prompts:
                child = np.random.default_rng(rng.integers(2**63))
                torch.manual_seed(int(rng.integers(2**63)))
                gen(pr, child)
        return time.perf_counter() - t0

    print("| loop | loop alone (s) | toy module (s) | audit (s) | audit overhead / loop time | calls |")
    print("|---|---|---|---|---|---|")
    for name, gen, gamma, toy_gen in loops:
        kw = dict(drafting=audit.ChainDrafting(draft, gamma, "sd")) if gamma else {}
        t_loop, t_toy, t_audit, calls = [], [], [], 0
        for r in range(repeats):
            t_loop.append(alone(gen, r))
            if toy_gen is not None:
                t_toy.append(alone(toy_gen, r))
            t0 = time.perf_counter()
            rep = audit.audit_generation(
                gen, target, prompts=prompts, samples=runs, new_tokens=8, rng=r, progress=False, **kw
            )
            t_audit.append(time.perf_counter() - t0)
            calls = rep.calls
        tl, ta = statistics.median(t_loop), statistics.median(t_audit)
        base = statistics.median(t_toy) if t_toy else tl
        toy_s = f"{statistics.median(t_toy):.3f}" if t_toy else "—"
        print(
            f"| {name} | {tl:.3f} | {toy_s} | {ta:.3f} | {(ta - base) / base:.2f}× | {calls or '—'} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--power-seeds", type=int, default=100)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--overhead", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    if a.overhead:
        overhead(a.runs, a.repeats)
        return
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
