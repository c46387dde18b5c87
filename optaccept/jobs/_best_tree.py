"""The best static tree per node budget and per cost curve, with its vLLM string (item 3 of
:mod:`optaccept.jobs.engines`, docs/engines.md §4)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._lib.display import write_table
from ..tree import best_tree

__all__ = ["best_tree_rows", "best_tree_report", "COST_CURVES", "TREE_BUDGETS"]

#: Node budgets of the best-static-tree table (those the stored laws were recorded for).
TREE_BUDGETS = (4, 8, 16, 32, 64)
#: Cost curves (seconds per verification of n nodes, in units of one verification of one
#: node; ``tree.best_tree`` maximises (accepted + 1) / cost over the sizes of
#: :data:`TREE_BUDGETS`): name -> cost(n).
COST_CURVES: dict[str, Callable[[int], float]] = {
    "flat (memory-bound): 1": lambda n: 1.0,
    "1 + 0.01 n": lambda n: 1.0 + 0.01 * n,
    "1 + 0.05 n": lambda n: 1.0 + 0.05 * n,
    "1 + 0.2 n": lambda n: 1.0 + 0.2 * n,
}


def best_tree_rows(
    pairs: Sequence[tuple[Any, Any]],
    budgets: Sequence[int] = TREE_BUDGETS,
    costs: dict[str, Callable[[int], float]] | None = None,
    *,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """``tree.best_tree(pairs, ..., strategy="sequoia")`` for each budget, and for each
    cost curve over the sizes ``budgets``: one row each, with the shape's size, its exact
    expected accepted tokens on ``pairs`` (top-k children, target-only verification),
    tokens per step, the cost and tokens per unit cost, and the vLLM string."""

    costs = COST_CURVES if costs is None else costs
    rows = []
    for n in budgets:
        s = best_tree(pairs, budget=int(n), strategy="sequoia", progress=progress)
        rows.append(_tree_row("budget", f"N = {n}", s))
    for name, fn in costs.items():
        table = {int(n): float(fn(int(n))) for n in budgets}
        s = best_tree(pairs, cost=table, strategy="sequoia", progress=progress)
        rows.append(_tree_row("cost", name, s))
    return rows


def _tree_row(kind: str, name: str, shape: Any) -> dict[str, Any]:
    m = shape.meta
    return dict(
        kind=kind,
        name=name,
        size=shape.size,
        depth=shape.depth,
        value=float(m["value"]),
        tokens_per_step=float(m["tokens_per_step"]),
        cost=float(m.get("cost", float("nan"))),
        tokens_per_cost=float(m.get("tokens_per_second", float("nan"))),
        vllm=shape.to_vllm(),
    )


def best_tree_report(rows: list[dict[str, Any]], stem: Path, what: str, positions: int) -> list[Path]:
    """Table (md, csv, tex) of :func:`best_tree_rows`; the LaTeX table leaves the vLLM
    strings out (they are in the Markdown and CSV)."""

    def num(x: float) -> Any:
        return "—" if not math.isfinite(x) else round(x, 4)

    header = [
        "chosen for",
        "nodes",
        "depth",
        "accepted tokens",
        "tokens per step",
        "cost",
        "tokens per cost",
        "vLLM speculative_token_tree",
    ]
    body = [
        [
            r["name"],
            r["size"],
            r["depth"],
            num(r["value"]),
            num(r["tokens_per_step"]),
            num(r["cost"]),
            num(r["tokens_per_cost"]),
            f"`{r['vllm']}`",
        ]
        for r in rows
    ]
    fields = ["kind", "name", "size", "depth", "value", "tokens_per_step", "cost", "tokens_per_cost", "vllm"]
    notes = (
        f"{what}. The best static tree of Sequoia's dynamic programme (`tree.best_tree(pairs, budget=N)` or "
        '`cost=`, strategy "sequoia", top-k children verified by target-only — the optimum for a deterministic '
        f"tree), rates and values on the same {positions} positions (one per prompt, the first answer token). "
        "Accepted tokens: exact mean over the positions; tokens per step = accepted + 1. Cost curves: seconds per "
        "verification of n nodes in units of one node's, searched over the sizes "
        f"{', '.join(str(n) for n in TREE_BUDGETS)}; the size chosen maximises tokens per unit cost. Pass the string "
        "as vLLM's `speculative_token_tree` with `num_speculative_tokens` = nodes (docs/trees.md §8c)."
    )
    lat_rows = [
        [
            r["name"],
            r["size"],
            r["depth"],
            num(r["value"]),
            num(r["tokens_per_step"]),
            num(r["cost"]),
            num(r["tokens_per_cost"]),
        ]
        for r in rows
    ]
    return write_table(
        stem,
        header,
        body,
        title="The best static tree per node budget and per cost curve on the built-in pair",
        notes=notes,
        data=(
            fields,
            [[None if isinstance(r[f], float) and not math.isfinite(r[f]) else r[f] for f in fields] for r in rows],
        ),
        latex=(["chosen for", "nodes", "depth", "accepted", "tokens/step", "cost", "tokens/cost"], lat_rows),
        caption=f"The best static tree (Sequoia's programme) for each node budget and cost curve; {what}.",
    )
