"""Main-job part for engine teams (docs/engines.md §4): what the trainers' proxy, the
Speed-of-Light bound and the best static tree say on the built-in real pair.

1. **The product-formula proxy against the exact value** (``engines_proxy.{md,csv,tex}``).
   Draft trainers log τ = 1 + Σ_{i≤γ} Π_{j≤i} a_j with a_j a per-position acceptance rate
   measured without conditioning on the earlier positions' acceptance.  On the shipped
   i.i.d. draft trees of the built-in pair (SmolLM2-135M-Instruct and its layer-skip draft,
   top-50; every one of a tree's 4 chains is a chain drawn from q, with p and q stored at
   every node) each chain gives, for γ = 1 … 4 (the stored length), the exact expected
   accepted length of token-level verification and of block verification given the chain
   (Rao–Blackwellised), and both proxies, with a_j = Σ_v min(p_j(v), q_j(v)) at the chain's
   own context (the exact one-draft acceptance there):
   * *product of pooled rates* (NeMo Automodel ``tau_sim``, vLLM speculators ``EAL``):
     τ = 1 + Σ_i Π_{j≤i} ā_j, ā_j the mean of a_j over every chain;
   * *mean of per-block products* (DeepSpec ``tau_probabilistic``): the mean over chains of
     1 + Σ_i Π_{j≤i} a_j.

2. **The exact oracle tree against the Speed-of-Light bound** (``engines_speed_of_light``
   figure and table): the best deterministic tree of N nodes for each context is the N most
   probable target prefixes (the tree ceiling, docs/trees.md §8b), for N = 1 … 64, against
   the leading term (μ + μ₂) ln N / μ² of Pankratov & Alistarh's bound (EACL 2026), μ and
   μ₂ the mean entropy and second log-moment of the target's next-token law.
3. **The best static tree per budget and per cost curve** (``engines_best_tree``):
   ``tree.best_tree(..., strategy="sequoia")`` with its vLLM ``speculative_token_tree``.
4. Full mode only: chains of 8 tokens drafted afresh by the model on this machine (4 after
   each built-in prompt), their proxy table in the untracked ``<figures>/local/`` folder.

Items 2 and 3 read the laws stored once in ``optaccept/data`` (the budget curve's, see
``optaccept.jobs.trees.record_budget_laws``); without that file they are skipped with a
message.  Items 1–3 are float64 arithmetic on stored data: a re-run rewrites the same bytes.
``--quick`` reads the small tree files (36 prompts, 2 trees each).

Items 1–3 are computed in ``_proxy``, ``_speed_of_light`` and ``_best_tree``; their public
names are importable from here.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..llm import builtin_prompts
from ..real import DraftTrees, trees_path
from ..tree import TreeDraftLaw
from ._best_tree import COST_CURVES, TREE_BUDGETS, best_tree_report, best_tree_rows
from ._proxy import (
    ChainTerms,
    block_values,
    chain_terms,
    chains_from_pairs,
    chains_from_trees,
    proxy_report,
    proxy_rows,
)
from ._speed_of_light import (
    SOL_BUDGETS,
    entropy_moments,
    oracle_curve,
    sol_leading_term,
    speed_of_light,
    speed_of_light_report,
)
from .llm import _one_torch_thread
from .trees import BUDGET_LAWS, TOP_K, stored_budget_models

__all__ = [
    "run",
    "ChainTerms",
    "chain_terms",
    "block_values",
    "chains_from_trees",
    "chains_from_pairs",
    "proxy_rows",
    "proxy_report",
    "entropy_moments",
    "sol_leading_term",
    "oracle_curve",
    "speed_of_light",
    "speed_of_light_report",
    "best_tree_rows",
    "best_tree_report",
    "COST_CURVES",
    "SOL_BUDGETS",
    "TREE_BUDGETS",
]

#: Full mode: chains of this many tokens drafted afresh by the model (the shipped trees' chains
#: have 4), this many after each built-in prompt.
FRESH_LENGTH = 8
FRESH_TREES = 4


# ------------------------------------------------------------------------------- the part
def run(figures_dir: Path, *, quick: bool = False) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")

    figures_dir = Path(figures_dir)
    prompts = "builtin" if quick else "extended"
    t0 = time.perf_counter()
    trees = DraftTrees.load(trees_path("iid", prompts))
    chains = chains_from_trees(trees, progress=not quick)
    n_chains = len(chains)
    rows = proxy_rows(chains)
    del trees, chains  # the trees' cached laws (about 1 GB in full mode) before the model loads
    print(f"   proxy against exact on {n_chains} chains: {time.perf_counter() - t0:.1f} s")
    paths = proxy_report(
        rows,
        figures_dir / "engines_proxy",
        f"SmolLM2-135M-Instruct and its layer-skip draft, top-k 50 (i.i.d. draft trees shipped in optaccept/data, "
        f"`trees_path('iid', {prompts!r})`)",
    )

    laws = Path(__file__).resolve().parents[1] / "data" / BUDGET_LAWS
    if not laws.exists():
        print(f"   skipped the Speed-of-Light figure and the best-tree table: no stored laws ({laws.name})")
    else:
        pairs = stored_budget_models(laws)
        paths += _bounds_and_trees(pairs, figures_dir, quick)
    if quick:
        return paths
    return paths + _fresh_chains(figures_dir)


def _fresh_chains(figures_dir: Path) -> list[Path]:
    """Full mode: chains of :data:`FRESH_LENGTH` tokens freshly drafted by the model on this
    machine (the shipped trees stop at 4 tokens), their proxy table in the untracked
    ``<figures>/local/`` (the model's float32 sums depend on the CPU)."""
    from ..llm import extract_trees, smollm2_layerskip

    t0 = time.perf_counter()
    try:
        with _one_torch_thread():
            pair = smollm2_layerskip(top_k=TOP_K)
            fresh = extract_trees(
                pair,
                builtin_prompts(),
                drafts=TreeDraftLaw(length=FRESH_LENGTH, k=1, children="iid"),
                trees_per_prompt=FRESH_TREES,
                rng=0,
            )
    except ImportError as exc:  # the llm extra (torch, transformers) is not installed
        print(f"   skipped the fresh chains of {FRESH_LENGTH} tokens: {exc}")
        return []
    chains = chains_from_trees(fresh)
    print(f"   fresh chains of {FRESH_LENGTH} tokens: {len(chains)} in {time.perf_counter() - t0:.1f} s")
    return proxy_report(
        proxy_rows(chains),
        Path(figures_dir) / "local" / "engines_proxy_fresh",
        f"SmolLM2-135M-Instruct and its layer-skip draft, top-k 50 ({FRESH_TREES} chains of {FRESH_LENGTH} tokens "
        "after each built-in prompt, drafted by the model on this machine)",
    )


def _bounds_and_trees(pairs: list, figures_dir: Path, quick: bool) -> list[Path]:
    t0 = time.perf_counter()
    curve, mu, mu2, bound = speed_of_light(pairs, SOL_BUDGETS, progress=not quick)
    print(f"   oracle and dynamic trees for N = 1..64: {time.perf_counter() - t0:.1f} s (mu {mu:.4f}, mu2 {mu2:.4f})")
    what = "SmolLM2-135M-Instruct and its layer-skip draft, top-k 50 (laws stored in optaccept/data)"
    paths = speed_of_light_report(
        curve,
        mu,
        mu2,
        bound,
        figures_dir / "engines_speed_of_light",
        what,
        short="SmolLM2-135M-Instruct, layer-skip draft, top-k 50",
    )
    t0 = time.perf_counter()
    tree_rows = best_tree_rows(pairs, TREE_BUDGETS, COST_CURVES)
    print(f"   best static trees: {time.perf_counter() - t0:.1f} s")
    paths += best_tree_report(tree_rows, figures_dir / "engines_best_tree", what, len(pairs))
    return paths
