"""Main-job part for trees of drafts: accepted tokens per step on the built-in real pair.

1. The shipped draft trees (``optaccept.llm.trees_path("iid", "extended")`` and
   ``("swor", "extended")``: SmolLM2-135M-Instruct as target, its layer-skip copy as
   draft, both top-50; 4 chains of 4 tokens, 12 trees after each of the 296 extended
   prompts — in quick mode the small files, 2 trees after each of the 36 built-in
   prompts): the table ``trees_accepted_tokens.{md,csv,tex}`` with its paired
   differences and the figure ``trees_accepted_tokens.{png,pdf}`` (one panel per draft
   length) — reproducible, committed.
2. Full mode only: a fresh extraction of the same trees from the model (on cuda when
   available), with its table and figure in the untracked ``<figures>/local/`` folder
   (its numbers depend on the machine's floating point), and the extraction speed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["run", "SHIPPED_SETTINGS", "accepted_tokens_report"]

#: How the shipped files were made (``optaccept.llm.extract_trees`` arguments).
SHIPPED_SETTINGS = dict(k=4, length=4, trees_per_prompt=2, seed=0)
TOP_K = 50
#: node budgets of the best-tree curves
BUDGETS = (4, 8, 16, 32, 64)


def accepted_tokens_report(trees: dict[str, Any], stem: Path, what: str, *, progress: bool = True) -> list[Path]:
    """Table (md, csv, tex) and figure (png, pdf) of accepted tokens per step for
    stored trees (draft law -> DraftTrees); returns the paths written."""
    import matplotlib.pyplot as plt

    from ..plots import TEXT_WIDTH, paper_figure, plot_accepted_tokens, save_figure
    from ..tree._real import tree_table

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    table = tree_table(trees, progress=progress)
    first = next(iter(trees.values()))
    m = first.meta
    notes = (
        f"{what}.\n\nTarget: {m.get('target_model')} {m.get('target_warp')}; draft: {m.get('draft_model')} "
        f"{m.get('draft_warp')}. Trees: "
        + ", ".join(f"{d}: {t.n_trees} trees of {t.k} chains × {t.length} tokens" for d, t in trees.items())
        + ", cut to k chains of L tokens. "
        + f"Prompts: {len(set(first.prompt_index.tolist()))}. Entries: expected draft tokens accepted per step "
        "(bonus or correction token not counted) ± standard error clustered by prompt. L = 1: exact per prompt "
        "(token-level RRS with and without replacement, traversal = RRS without replacement at one token, batch SD "
        "of Yin et al., and the optimum α* of the root's draft law), averaged over the trees' prompts. L ≥ 2: "
        "Rao–Blackwellised mean over the trees; the optimum is known at this scale for k = 1 (= block "
        "verification, Sun et al.); elsewhere the upper bound of docs/trees.md §4b (one-token optimum at depth 1, "
        "union bound below) caps every lossless verifier. Verifier comparisons (second table): paired differences "
        "on the same trees, clustered by prompt; across draft laws (different trees after the same prompts), "
        "paired by prompt: the mean over prompts of the difference of the prompt means, with its standard "
        "error over the prompts."
    )
    md = stem.with_suffix(".md")
    md.write_text(
        f"# Accepted tokens per step on the built-in pair\n\n{notes}\n\n"
        + table.to_markdown()
        + "\n\n## Paired differences (same trees, or same prompts across draft laws)\n\n"
        + table.differences_markdown()
        + "\n"
    )
    tex = stem.with_suffix(".tex")
    tex.write_text(table.to_latex())
    csv_path = table.to_csv(stem.with_suffix(".csv"))
    diff_path = table.differences_csv(stem.parent / f"{stem.name}_differences.csv")
    lengths = sorted({r["length"] for r in table.rows})
    ncols = 2 if len(lengths) > 2 else len(lengths)
    nrows = -(-len(lengths) // ncols)
    fig, axes = paper_figure(
        nrows, ncols, width=TEXT_WIDTH, height=2.0 * nrows + 0.9, squeeze=False, layout="constrained"
    )
    flat = axes.ravel()
    for i, (ax, L) in enumerate(zip(flat, lengths)):
        plot_accepted_tokens(table, L, ax=ax, legend=False)
        ax.set_ylabel("")  # one label for the whole figure (fig.supylabel below)
        if i < len(lengths) - ncols:
            ax.set_xlabel("")
    for ax in flat[len(lengths) :]:
        ax.set_visible(False)
    handles, labels = flat[len(lengths) - 1].get_legend_handles_labels()
    for ax in flat[: len(lengths)]:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab, strict=True):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    from ..tree._real import VERIFIER_NAMES

    rank = {name: i for i, name in enumerate(VERIFIER_NAMES.values())}  # one legend order for any data
    order = sorted(range(len(labels)), key=lambda i: rank.get(labels[i], len(rank)))
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    fig.supylabel("expected accepted tokens per step", fontsize=8)
    fig.suptitle("SmolLM2-135M-Instruct, layer-skip draft (error bars ± 2 s.e.)")
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False, fontsize=7)
    figs = save_figure(fig, stem)
    plt.close(fig)
    print(table.to_markdown())
    return [md, csv_path, diff_path, tex, *figs]


def budget_report(curve: Any, stem: Path, what: str) -> list[Path]:
    """Table (md, csv) and figure (png, pdf) of a :class:`optaccept.tree.BudgetCurve`."""
    import matplotlib.pyplot as plt

    from ..plots import plot_budget_curve, save_figure

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    notes = (
        f"{what}. Expected draft tokens accepted per step (target-only verification, which is optimal on a "
        "deterministic tree: docs/trees.md Proposition 1.1) of the best tree of N nodes found by each strategy, "
        f"mean ± standard error over {curve.meta['positions']} positions (one per prompt, the first token of the "
        "answer); Sequoia's positional rates calibrated in-sample on the same positions. The ceiling (the N "
        "most probable target prefixes) bounds every deterministic tree of N nodes."
    )
    md = stem.with_suffix(".md")
    md.write_text(f"# The best tree for a node budget on the built-in pair\n\n{notes}\n\n{curve.to_markdown()}\n")
    csv_path = curve.to_csv(stem.with_suffix(".csv"))
    ax = plot_budget_curve(curve)
    figs = save_figure(ax.figure, stem)
    plt.close(ax.figure)
    print(curve.to_markdown())
    return [md, csv_path, *figs]


def run(figures_dir: Path, *, quick: bool = False) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")

    from ..llm import DraftTrees, trees_path

    figures_dir = Path(figures_dir)
    prompts = "builtin" if quick else "extended"
    shipped = {d: DraftTrees.load(trees_path(d, prompts)) for d in ("iid", "swor")}
    paths = accepted_tokens_report(
        shipped,
        figures_dir / "trees_accepted_tokens",
        f"From the draft trees shipped in optaccept/data (`trees_path(drafts, {prompts!r})`)",
        progress=not quick,
    )
    if quick:
        return paths
    from ..llm import builtin_prompts, extract_trees, smollm2_layerskip
    from .llm import _one_torch_thread

    fresh = {}
    with _one_torch_thread():
        pair = smollm2_layerskip(top_k=TOP_K)
        for d in ("iid", "swor"):
            t0 = time.perf_counter()
            fresh[d] = extract_trees(pair, builtin_prompts(), drafts=d, **SHIPPED_SETTINGS)
            dt = time.perf_counter() - t0
            print(f"   extracted {fresh[d]} in {dt:.1f} s ({fresh[d].n_nodes / dt:.1f} nodes/s)")
    local = figures_dir / "local"
    paths += accepted_tokens_report(
        fresh, local / "trees_accepted_tokens", "From draft trees freshly extracted on this machine"
    )
    from ..llm import sequence_models
    from ..tree import budget_curve

    t0 = time.perf_counter()
    with _one_torch_thread():
        models = [sequence_models(pair, p) for p in builtin_prompts()]
        curve = budget_curve(models, BUDGETS, progress=True)
    print(f"   budget curves: {time.perf_counter() - t0:.1f} s")
    paths += budget_report(
        curve, figures_dir / "trees_budget", "SmolLM2-135M-Instruct and its layer-skip draft, top-k 50"
    )
    return paths
