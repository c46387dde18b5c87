"""The exact oracle tree against the leading term of Pankratov & Alistarh's Speed-of-Light bound
(item 2 of :mod:`optaccept.jobs.engines`, docs/engines.md §4)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Estimate, write_table
from ..plots import plot_speed_of_light, save_figure
from ..tree import BudgetCurve
from ..tree._budget import best_first
from ..tree._models import as_model

__all__ = [
    "entropy_moments",
    "sol_leading_term",
    "oracle_curve",
    "speed_of_light",
    "speed_of_light_report",
    "SOL_BUDGETS",
]

#: Node budgets of the Speed-of-Light comparison.
SOL_BUDGETS = tuple(range(1, 65))


def entropy_moments(laws: Iterable[Any]) -> tuple[float, float]:
    """(μ, μ₂): the mean over ``laws`` of the entropy −Σ p ln p and of the second
    log-moment Σ p (ln p)² (natural logarithms; terms with p = 0 are 0).

    Raises
    ------
    InputError
        No law, or a law that is not a probability vector."""

    hs, ms = [], []
    for law in laws:
        p = np.asarray(law, dtype=np.float64).ravel()
        if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
            raise InputError("laws: each must be a probability vector (finite, >= 0, summing to 1)")
        nz = p[p > 0]
        lp = np.log(nz)
        hs.append(float(-(nz * lp).sum()))
        ms.append(float((nz * lp * lp).sum()))
    if not hs:
        raise InputError("laws: at least one law is needed")
    return float(np.mean(hs)), float(np.mean(ms))


def sol_leading_term(budgets: Sequence[int], mu: float, mu2: float) -> np.ndarray:
    """The leading term (μ + μ₂) ln N / μ² of Pankratov & Alistarh's bound on the expected
    tokens per speculative iteration for a verifier capacity of N tokens (the abstract of
    arXiv 2512.11718; its O(1) term is not included, natural logarithms)."""

    if not (mu > 0 and math.isfinite(mu) and math.isfinite(mu2)):
        raise InputError(f"mu: the mean entropy must be positive and finite, got {mu!r}")
    n = np.asarray(budgets, dtype=np.float64)
    return (mu + mu2) * np.log(n) / mu**2


def oracle_curve(pairs: Sequence[tuple[Any, Any]], budgets: Sequence[int] = SOL_BUDGETS, *, progress: bool = True):
    """The exact oracle tree and the drafted dynamic tree of each budget, per context.

    ``"ceiling"``: the N most probable target prefixes, Σ p(w) over them — the best
    deterministic tree of N nodes with perfect knowledge of the target (docs/trees.md §8b);
    ``"dynamic"``: the N strings of largest draft path probability (EAGLE-2), valued exactly
    by Σ p(w).  Both grow best first (``tree.budget_curve``'s rule, ties to the smaller
    ids), so one run to the largest budget gives every smaller one; the laws are read at the
    taken strings only (no read-ahead), so stored laws recorded for
    ``tree.budget_curve(..., strategies=("ceiling", "dynamic", …))`` at that largest budget
    suffice.  Returns a :class:`optaccept.tree.BudgetCurve` with those two strategies.
    """
    from tqdm.auto import tqdm

    bs = tuple(int(b) for b in budgets)
    if not bs or any(b < 1 or b > 4096 for b in bs) or list(bs) != sorted(set(bs)):
        raise InputError(f"budgets: increasing integers in 1..4096, got {tuple(budgets)!r}")
    if not pairs:
        raise InputError("pairs: at least one (target, draft) pair is needed")
    N, idx = bs[-1], np.array(bs) - 1
    values = {s: np.zeros((len(pairs), len(bs))) for s in ("ceiling", "dynamic")}
    for i, (t, d) in enumerate(tqdm(pairs, desc="positions", unit="position", disable=not progress)):
        P, Q = as_model(t, "target"), as_model(d, "draft")
        memo: dict[tuple[int, ...], np.ndarray] = {}

        def p_law(w: tuple[int, ...], P: Any = P, memo: dict = memo) -> np.ndarray:
            if w not in memo:
                memo[w] = np.asarray(P(w), dtype=np.float64)
            return memo[w]

        def p_of(w: tuple[int, ...]) -> float:
            return math.prod(float(p_law(w[:j])[w[j]]) for j in range(len(w)))

        taken = {
            "ceiling": [pw for _, pw in best_first(p_law, N)],
            "dynamic": [p_of(w) for w, _ in best_first(lambda w, Q=Q: np.asarray(Q(w), dtype=np.float64), N)],
        }
        for s, vals in taken.items():
            cum = np.cumsum(np.pad(np.asarray(vals, dtype=np.float64), (0, max(0, N - len(vals)))))
            values[s][i] = cum[idx]
    return BudgetCurve(bs, values, np.zeros(0), {"positions": len(pairs)})


def speed_of_light(pairs: Sequence[tuple[Any, Any]], budgets: Sequence[int] = SOL_BUDGETS, *, progress: bool = True):
    """:func:`oracle_curve`, the entropy moments of the contexts' target laws (at the empty
    prefix) and the bound's leading term at each budget.  Returns (curve, mu, mu2, bound)."""

    curve = oracle_curve(pairs, budgets, progress=progress)
    mu, mu2 = entropy_moments(as_model(t, "target")(()) for t, _ in pairs)
    return curve, mu, mu2, sol_leading_term(curve.budgets, mu, mu2)


def speed_of_light_report(
    curve: Any, mu: float, mu2: float, bound: np.ndarray, stem: Path, what: str, *, short: str | None = None
) -> list[Path]:
    """Figure (png, pdf) and table (md, csv, tex) of :func:`speed_of_light`; ``short`` titles
    the figure (default ``what``)."""
    import matplotlib.pyplot as plt

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    n_pos = curve.values["ceiling"].shape[0]
    ax = plot_speed_of_light(
        curve,
        bound,
        title=f"{short or what}\nbands: ± 2 standard errors over {n_pos} positions",
    )
    figs = save_figure(ax.figure, stem)
    plt.close(ax.figure)
    shown = [n for n in curve.budgets if n in (1, 2, 4, 8, 16, 32, 64)]
    idx = [curve.budgets.index(n) for n in shown]
    oracle_m, oracle_e = curve.mean("ceiling"), curve.std_err("ceiling")
    dyn_m, dyn_e = curve.mean("dynamic"), curve.std_err("dynamic")
    header = ["N", "exact oracle tree", "EAGLE-2 dynamic tree (draft)", "SoL leading term", "leading term − oracle"]
    body = [
        [
            curve.budgets[j],
            Estimate(float(oracle_m[j]), float(oracle_e[j])),
            Estimate(float(dyn_m[j]), float(dyn_e[j])),
            Estimate(float(bound[j]), 0.0),
            Estimate(float(bound[j] - oracle_m[j]), float(oracle_e[j])),
        ]
        for j in idx
    ]
    fields = ["budget", "oracle", "oracle_se", "dynamic", "dynamic_se", "sol_leading_term"]
    data = [
        [int(n), float(oracle_m[j]), float(oracle_e[j]), float(dyn_m[j]), float(dyn_e[j]), float(bound[j])]
        for j, n in enumerate(curve.budgets)
    ]
    notes = (
        f"{what}. Expected draft tokens accepted per step (bonus token not counted) for a node budget N, mean ± "
        f"standard error over {n_pos} positions (one per prompt, the first answer token). Exact oracle tree: the "
        "N most probable target prefixes of each position — the best deterministic tree of N nodes with perfect "
        "knowledge of the target (the tree ceiling, docs/trees.md §8b). EAGLE-2 dynamic tree: the N strings of "
        "largest draft path probability, valued exactly. SoL leading term: (μ + μ₂) ln N / μ² from the abstract "
        f"of Pankratov & Alistarh (EACL 2026, arXiv 2512.11718), μ = {mu:.4f} and μ₂ = {mu2:.4f} nats the mean "
        "entropy and second log-moment of the target's law at the positions; the bound's O(1) term is unknown "
        "here and left out, so the column is not a bound by itself (docs/engines.md §4b). The CSV holds every N "
        "from 1 to 64."
    )
    paths = write_table(
        stem,
        header,
        body,
        title="The exact oracle tree against the Speed-of-Light bound's leading term",
        notes=notes,
        data=(fields, data),
        latex=["$N$", "oracle tree", "dynamic tree", "SoL leading term", "term $-$ oracle"],
        caption="Expected accepted draft tokens of the exact oracle tree of $N$ nodes and the leading term of the "
        f"Speed-of-Light bound (its $O(1)$ term left out); {what}.",
    )
    return [*paths, *figs]
