"""False-alarm rate and power of ``audit.regression_gate`` on the built-in synthetic pair, the
requests each test needs (``audit.sample_size``) against the 0/1-average gate, and the power that
``sample_size``'s plans reach.

    .venv/bin/python benchmarks/bench_gate.py [--quick] [--out benchmarks/results/gate.md]

Pools: requests decoded with speculative sampling of γ = 3 drafted tokens per step on
``tree.synthetic_pair(n=32, rng=r, noise=…)`` (``audit._logs.synthetic_chain_log``; request r decodes
24 tokens), one pool for the baseline draft (noise 1.0) and one per worse draft (larger noise:
the same target, a draft that accepts less).  A simulated run draws its R requests with
replacement from a pool (a bootstrap from 3,000 decoded requests per draft); the baseline run and
the candidate run are drawn independently.  The drop of each worse draft is measured from its pool
(exact per-step expectations, standard error below 0.2 %).  Every test is one-sided at the stated
false-alarm rate; "0/1 counts" is the same clustered test on the accepted counts, and "fixed
rtol" is a fixed-threshold gate of today's kind (candidate AL below (1 − 5 %) of the baseline's, 80
requests, no standard error).

*Planned power.*  For each setting — the test (exact expectations or 0/1 counts: two per-request
variances), the drop (the measured drops of the worse drafts, which the plan is asked to detect)
and the baseline that plans (``R0`` requests drawn from the baseline pool, redrawn for every
simulated gate; or the whole pool, one plan) — ``runs`` simulated gates each plan with
``sample_size`` (false alarm 1e-3, power 0.9, the default confidence 0.9 of the variance bound),
then run the gate with the planned requests per run.  The measured power is the share that
declares the regression; the same runs are also decided with the plan of z-quantiles and the
point estimate of the variance (the previous ``sample_size``), for comparison.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student
from tqdm.auto import tqdm

from optaccept import audit
from optaccept.audit._gate import StepValues

GAMMA, N, TOKENS = 3, 32, 24


def pool(requests: int, noise: float, seed: int) -> StepValues:
    return audit._logs.synthetic_chain_log(requests, tokens=TOKENS, gamma=GAMMA, n=N, noise=noise, rng=seed, rows=False)


def per_request(sv: StepValues) -> dict[str, np.ndarray]:
    """Per-request sums of exact values and counts, and steps."""
    _, inv = np.unique(sv.request, return_inverse=True)
    R = int(inv.max()) + 1
    return {
        "exact": np.bincount(inv, weights=sv.exact, minlength=R),
        "counts": np.bincount(inv, weights=sv.counts, minlength=R),
        "steps": np.bincount(inv, minlength=R).astype(np.float64),
    }


def stats(sums: np.ndarray, steps: np.ndarray, definition: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and clustered SE of each row of (runs, R) request draws (the formulas of audit._gate)."""
    R = sums.shape[1]
    if definition == "pooled":
        T = steps.sum(axis=1)
        m = sums.sum(axis=1) / T
        dev = sums - m[:, None] * steps
        return m, np.sqrt(R / (R - 1) * (dev * dev).sum(axis=1)) / T
    means = sums / steps
    return means.mean(axis=1), means.std(axis=1, ddof=1) / math.sqrt(R)


def decide(base, cand, R, runs, what, definition, false_alarm, rng):
    """Share of ``runs`` simulated gates that declare a regression."""
    crit = float(student.ppf(1 - false_alarm, R - 1))
    hits = 0
    for lo in range(0, runs, 1000):
        b = rng.integers(0, base["steps"].size, size=(min(1000, runs - lo), R))
        c = rng.integers(0, cand["steps"].size, size=b.shape)
        mb, eb = stats(base[what][b], base["steps"][b], definition)
        mc, ec = stats(cand[what][c], cand["steps"][c], definition)
        hits += int(((mc - mb) / np.sqrt(eb * eb + ec * ec) < -crit).sum())
    return hits / runs


def fixed_rtol(base, cand, R, runs, rng, rtol=0.05):
    hits = 0
    for lo in range(0, runs, 1000):
        b = rng.integers(0, base["steps"].size, size=(min(1000, runs - lo), R))
        c = rng.integers(0, cand["steps"].size, size=b.shape)
        alb = 1 + base["counts"][b].sum(1) / base["steps"][b].sum(1)
        alc = 1 + cand["counts"][c].sum(1) / cand["steps"][c].sum(1)
        hits += int((alc < (1 - rtol) * alb).sum())
    return hits / runs


def pilot_log(sv: StepValues, steps_of: list[np.ndarray], take: np.ndarray) -> StepValues:
    """The steps of pool requests ``take`` (with repeats, renumbered) as one log."""
    idx = np.concatenate([steps_of[r] for r in take])
    req = np.repeat(np.arange(take.size), [steps_of[r].size for r in take])
    return StepValues(sv.exact[idx], sv.counts[idx], req, sv.kind, sv.verifier)


def z_plan(log: StepValues, what: str, change: float) -> int:
    """The previous plan: z-quantiles and the point estimate of the per-request variance."""
    from optaccept.audit._gate import _summary

    s = _summary(log.exact if what == "exact" else log.counts, log.request)
    z = norm.ppf(1 - 1e-3) + norm.ppf(0.9)
    var = s.pooled_se**2 * s.requests
    return max(2, math.ceil(2 * var * z * z / (change * (s.pooled + 1)) ** 2))


def planned_power(base_sv, reqs, worse, drop, R0, runs, rng, bar):
    """Measured power of gates planned by sample_size from a baseline of R0 requests (None: the
    whole pool, one plan), for both tests; and of the previous plan on the same draws."""
    steps_of = np.split(np.argsort(base_sv.request, kind="stable"), np.cumsum(reqs[1.0]["steps"].astype(int))[:-1])
    plans: dict[str, list[int]] = {"exact": [], "counts": []}
    old: dict[str, list[int]] = {"exact": [], "counts": []}
    for _ in range(1 if R0 is None else runs):
        log = base_sv if R0 is None else pilot_log(base_sv, steps_of, rng.integers(0, len(steps_of), R0))
        for what in ("exact", "counts"):  # each test is asked for the drop its own pools show
            s = audit.sample_size(log, change=drop[what], false_alarm=1e-3, power=0.9)
            plans[what].append(s.requests if what == "exact" else s.requests_counts)
            old[what].append(z_plan(log, what, drop[what]))
        if R0 is not None:
            bar.update(1)
    out = {}
    for what in ("exact", "counts"):
        res = []
        for R_list in (plans[what], old[what]):
            Rs = np.array(R_list * (runs if R0 is None else 1))
            hits = 0
            for R in np.unique(Rs):
                hits += (
                    decide(reqs[1.0], reqs[worse], int(R), int((Rs == R).sum()), what, "pooled", 1e-3, rng)
                    * (Rs == R).sum()
                )
            res.append((float(np.median(Rs)), float(np.percentile(Rs, 5)), float(np.percentile(Rs, 95)), hits / runs))
        out[what] = res
    if R0 is None:
        bar.update(runs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller pools and fewer runs")
    ap.add_argument("--out", default=None, help="also write the tables to this Markdown file")
    args = ap.parse_args()
    size, runs, plan_runs = (600, 2000, 1000) if args.quick else (3000, 20_000, 2000)
    t0 = time.perf_counter()
    pools = {noise: pool(size, noise, seed) for seed, noise in enumerate((1.0, 1.04, 1.113))}
    gen_s = time.perf_counter() - t0
    base_sv = pools[1.0]
    reqs = {k: per_request(v) for k, v in pools.items()}
    al = {k: 1 + float(v.exact.mean()) for k, v in pools.items()}
    # the vectorised statistics are those of the library's gate
    g = audit.regression_gate(base_sv, pools[1.113])
    m, se = stats(reqs[1.113]["exact"][None], reqs[1.113]["steps"][None], "pooled")
    assert abs(m[0] - g.candidate.pooled) < 1e-12 and abs(se[0] - g.candidate.pooled_se) < 1e-12
    rng = np.random.default_rng(0)
    drops = ", ".join(
        f"noise {w}: {100 * (1 - al[w] / al[1.0]):.2f} % exact, "
        f"{100 * (1 - (1 + pools[w].counts.mean()) / (1 + base_sv.counts.mean())):.2f} % in the pools' 0/1 counts"
        for w in (1.04, 1.113)
    )
    lines = [
        f"Pools: {size:,} requests per draft, {TOKENS} tokens each, γ = {GAMMA}, n = {N}; baseline AL "
        f"{al[1.0]:.4f} ({base_sv.exact.size / size:.1f} steps per request); generated in {gen_s:.0f} s. Drops of the "
        f"worse drafts' AL: {drops}.",
        "",
        "*Requests per run (`audit.sample_size`, false alarm 1e-3, power 0.9, variance bound at confidence 0.9)*",
        "",
        "| drop of AL | exact, pooled | exact, per request | 0/1 counts, pooled | 0/1 counts, per request |",
        "|---|---|---|---|---|",
    ]
    need = {}
    for change in (0.02, 0.05):
        row = []
        for definition in ("pooled", "per_request"):
            s = audit.sample_size(base_sv, change=change, false_alarm=1e-3, power=0.9, definition=definition)
            need[(change, definition)] = s
            row.append(s)
        lines.append(
            f"| {100 * change:g} % | {row[0].requests:,} | {row[1].requests:,} | {row[0].requests_counts:,} "
            f"| {row[1].requests_counts:,} |"
        )
    lines += [
        "",
        f"*Decisions over {runs:,} simulated runs (pooled definition; requests R per run as above)*",
        "",
        "| test | R | false alarms at 1e-3 | false alarms at 0.05 | power, measured drop "
        f"{100 * (1 - al[1.04] / al[1.0]):.2f} % | power, measured drop {100 * (1 - al[1.113] / al[1.0]):.2f} % |",
        "|---|---|---|---|---|---|",
    ]
    for change in (0.02, 0.05):
        s = need[(change, "pooled")]
        for what, R in (("exact", s.requests), ("counts", s.requests), ("counts", s.requests_counts)):
            fa3 = decide(reqs[1.0], reqs[1.0], R, runs, what, "pooled", 1e-3, rng)
            fa05 = decide(reqs[1.0], reqs[1.0], R, runs, what, "pooled", 0.05, rng)
            pw = [decide(reqs[1.0], reqs[w], R, runs, what, "pooled", 1e-3, rng) for w in (1.04, 1.113)]
            label = "exact expectations" if what == "exact" else "0/1 counts"
            lines.append(
                f"| {label} (sized for {100 * change:g} %) | {R:,} | {fa3:.4f} | {fa05:.4f} | {pw[0]:.3f} | {pw[1]:.3f} |"
            )
    fr = [fixed_rtol(reqs[1.0], reqs[w], 80, runs, rng) for w in (1.0, 1.04, 1.113)]
    lines.append(
        f"| fixed rtol 5 % on 0/1 counts | 80 | {fr[0]:.4f} (no stated rate) | — | {fr[1]:.3f} | {fr[2]:.3f} |"
    )
    se = math.sqrt(0.9 * 0.1 / plan_runs)
    lines += [
        "",
        f"*Power of planned gates: {plan_runs:,} simulated gates per setting, each planned by `audit.sample_size` "
        f"(false alarm 1e-3, power 0.9, variance at its 0.9 upper bound) from a baseline of R0 requests drawn from "
        f"the pool (redrawn for every gate), or from the whole pool (one plan); the measured power's standard error "
        f"at 0.9 is {se:.4f}.  Last columns: the previous plan (z-quantiles, point estimate of the variance) on the "
        f"same draws.  Each test is planned for the drop its own pools show (exact values or 0/1 counts)*",
        "",
        "| test | drop | R0 | requests per run, median (5–95 %) | power measured (stated 0.9) | previous plan: "
        "requests, median (5–95 %) | previous plan: power |",
        "|---|---|---|---|---|---|---|",
    ]
    settings = [(w, R0) for w in (1.04, 1.113) for R0 in (30, 200, None)]
    with tqdm(total=plan_runs * len(settings), desc="planned gates", unit="gate") as bar:
        for w, R0 in settings:
            drop = {
                "exact": 1 - al[w] / al[1.0],
                "counts": 1 - (1 + pools[w].counts.mean()) / (1 + base_sv.counts.mean()),
            }
            res = planned_power(base_sv, reqs, w, drop, R0, plan_runs, rng, bar)
            for what in ("exact", "counts"):
                (m1, l1, h1, p1), (m0, l0, h0, p0) = res[what]
                label = "exact expectations" if what == "exact" else "0/1 counts"
                lines.append(
                    f"| {label} | {100 * drop[what]:.2f} % | {'pool ' + format(size, ',') if R0 is None else R0} "
                    f"| {m1:,.0f} ({l1:,.0f}–{h1:,.0f}) | {p1:.3f} | {m0:,.0f} ({l0:,.0f}–{h0:,.0f}) | {p0:.3f} |"
                )
    lines.append("")
    lines.append(f"Total {time.perf_counter() - t0:.0f} s on the reference CPU.")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
