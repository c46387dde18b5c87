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
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

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
#: Node budgets of the Speed-of-Light comparison.
SOL_BUDGETS = tuple(range(1, 65))
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


# --------------------------------------------------------------------------- 1. the proxy
@dataclass(frozen=True)
class ChainTerms:
    """The per-position quantities of one drafted chain x_1 … x_L after one context.

    Attributes
    ----------
    group : int
        The context (prompt) the chain was drafted after; standard errors cluster on it.
    alpha : numpy.ndarray
        a_j = Σ_v min(p_j(v), q_j(v)), the one-draft acceptance at the context x_{<j}.
    beta : numpy.ndarray
        β_j = min(1, p_j(x_j) / q_j(x_j)), the probability that token-level verification
        accepts x_j once it has reached it.
    block : numpy.ndarray
        block[γ − 1]: block verification's (Sun et al., ICLR 2025) expected accepted tokens
        given x_1 … x_{γ−1}, the last token averaged over x_γ ~ q (see :func:`block_values`).
    """

    group: int
    alpha: np.ndarray
    beta: np.ndarray
    block: np.ndarray

    def token(self, gamma: int) -> float:
        """Token-level verification's expected accepted tokens given the chain, further
        Rao–Blackwellised over the last position reached: Σ_{i≤γ} (Π_{j<i} β_j) a_i (the
        expectation over x_i ~ q of β_i is a_i)."""
        reach = np.concatenate(([1.0], np.cumprod(self.beta[: gamma - 1])))
        return float(reach @ self.alpha[:gamma])


def chain_terms(chain: Sequence[int], target: Any, draft: Any, group: int = 0) -> ChainTerms:
    """:class:`ChainTerms` of one chain drafted after one context.

    Parameters
    ----------
    chain : sequence of int
        The drafted tokens x_1 … x_L (each with q > 0 at its context).
    target, draft : sequence models
        ``prefix -> next-token law`` (callables or objects with ``next_token_probs``).
    group : int
        The context's label (for clustered standard errors).

    Raises
    ------
    InputError
        An empty chain, or a drafted token the draft gives no mass.
    """
    from .._errors import InputError
    from ..tree import as_model

    x = tuple(int(t) for t in chain)
    if not x:
        raise InputError("chain: at least one drafted token is needed")
    P, Q = as_model(target, "target").cached(), as_model(draft, "draft").cached()
    L = len(x)
    alpha, beta = np.empty(L), np.empty(L)
    for j in range(L):
        p = np.asarray(P(x[:j]), dtype=np.float64)
        q = np.asarray(Q(x[:j]), dtype=np.float64)
        if not q[x[j]] > 0:
            raise InputError(f"chain: token {x[j]} at position {j + 1} has draft mass 0; it cannot have been drafted")
        alpha[j] = float(np.minimum(p, q).sum())
        beta[j] = min(1.0, float(p[x[j]] / q[x[j]]))
    return ChainTerms(int(group), alpha, beta, block_values(x, P.model, Q.model))


def block_values(chain: Sequence[int], target: Any, draft: Any) -> np.ndarray:
    """Block verification's expected accepted tokens for γ = 1 … L, given the chain's first
    γ − 1 tokens and averaged over its γ-th token x_γ ~ q(·|x_{<γ}).

    With Sun et al.'s stopping weights h_1 … h_γ (``optaccept.tree._verifiers.block_rates``),
    E[τ] = Σ_i i·h_i·Π_{j>i}(1 − h_j) is affine in h_γ = min(1, p_{γ−1}·P(x_γ)/Q(x_γ)), the
    only weight that reads x_γ, so the average over x_γ replaces h_γ by
    Σ_v min(Q(v), p_{γ−1}·P(v)) at the context x_{<γ}: a Rao–Blackwellisation of the value
    given the whole chain (``tree.tree_value(..., "block")``), with the same mean.  At γ = 1
    it is Σ_v min(p(v), q(v)), token-level verification's exact value.
    """
    from ..tree import as_model
    from ..tree._verifiers import pos

    target, draft = as_model(target, "target").cached(), as_model(draft, "draft").cached()
    x = tuple(int(t) for t in chain)
    out = np.empty(len(x))
    p_run = 1.0
    hs: list[float] = []  # h_1 … h_{i-1} as weights of non-final positions
    for i in range(1, len(x) + 1):
        u = x[: i - 1]
        pu = np.asarray(target(u), dtype=np.float64)
        qu = np.asarray(draft(u), dtype=np.float64)
        last = float(np.minimum(qu, p_run * pu).sum())
        total, tail = 0.0, 1.0
        weights = hs + [last]
        for j in range(len(weights), 0, -1):
            total += j * weights[j - 1] * tail
            tail *= 1.0 - weights[j - 1]
        out[i - 1] = total
        if i < len(x):
            p_run = min(1.0, p_run * float(pu[x[i - 1]] / qu[x[i - 1]]))
            v = x[:i]
            S = float(
                pos(p_run * np.asarray(target(v), dtype=np.float64) - np.asarray(draft(v), dtype=np.float64)).sum()
            )
            den = S + 1.0 - p_run
            hs.append(1.0 if den == 0 else S / den)
    return out


def chains_from_trees(trees: Any, *, progress: bool = True) -> list[ChainTerms]:
    """:class:`ChainTerms` of every chain of stored i.i.d. draft trees
    (``optaccept.llm.DraftTrees``), grouped by prompt.

    Raises
    ------
    InputError
        Trees whose chains were not drawn i.i.d. from q (the first tokens of ``"swor"``
        trees are not draws from q)."""
    from tqdm.auto import tqdm

    from .._errors import InputError

    if trees.drafts != "iid":
        raise InputError(f"trees: the chains must be drawn i.i.d. from q, got drafts={trees.drafts!r}")
    out = []
    for i in tqdm(range(trees.n_trees), desc="chains of the stored trees", unit="tree", disable=not progress):
        P, Q = trees.models(i, compact=True)
        for c in trees.draft_tree(i, compact=True).chains:
            out.append(chain_terms(c, P, Q, int(trees.prompt_index[i])))
    return out


def chains_from_pairs(pairs: Iterable[tuple[Any, Any]], length: int, chains: int, rng: Any) -> list[ChainTerms]:
    """:class:`ChainTerms` of ``chains`` chains of ``length`` tokens drawn from the draft
    after each (target, draft) context (e.g. ``tree.synthetic_pair``); ``rng`` a numpy
    Generator or an int seed."""
    from .._errors import InputError
    from .._validation import check_rng
    from ..tree import as_model, sample_tree

    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise InputError(f"length: an integer >= 1, got {length!r}")
    if isinstance(chains, bool) or not isinstance(chains, (int, np.integer)) or chains < 1:
        raise InputError(f"chains: an integer >= 1, got {chains!r}")
    gen = check_rng(rng)
    out = []
    for g, (t, d) in enumerate(pairs):
        P, Q = as_model(t, "target").cached(), as_model(d, "draft").cached()
        for _ in range(int(chains)):
            c = sample_tree(Q, int(length), 1, "iid", gen).chains[0]
            out.append(chain_terms(c, P, Q, g))
    return out


def _clustered(x: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    from ..real._tables import _clustered as clustered

    return clustered(x, groups)


def _pooled_proxy(alpha: np.ndarray, gamma: int) -> float:
    """1 + Σ_{i≤γ} Π_{j≤i} ā_j from the rows a_j of the chains."""
    return 1.0 + float(np.cumprod(alpha[:, :gamma].mean(axis=0)).sum())


def _jackknife(stat: Callable[[np.ndarray], float], groups: np.ndarray) -> float:
    """Standard error of ``stat(mask)`` by the delete-one-group jackknife; below
    :data:`_ROUNDING` (float rounding of a statistic that is constant) it is 0."""
    ids = np.unique(groups)
    G = ids.size
    if G < 2:
        return 0.0
    vals = np.array([stat(groups != g) for g in ids])
    return _clean(math.sqrt((G - 1) / G * float(((vals - vals.mean()) ** 2).sum())))


#: Differences and standard errors below this are float rounding of an exact 0 (the proxies
#: and the exact value agree to the last bits at γ = 1); they are written as 0.
_ROUNDING = 1e-12


def _clean(x: float) -> float:
    return 0.0 if abs(x) < _ROUNDING else float(x)


def proxy_rows(chains: Sequence[ChainTerms], lengths: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The product-formula proxies against the exact values, one row per (γ, verifier).

    Every value is an accepted length AL = 1 + E[accepted draft tokens] per step.  ``exact``
    averages the chains' exact values (token-level: :meth:`ChainTerms.token`; block:
    ``ChainTerms.block``); ``pooled`` is 1 + Σ_i Π_{j≤i} ā_j (NeMo ``tau_sim``, speculators
    ``EAL`` + 1), ``per_block`` the mean of 1 + Σ_i Π_{j≤i} a_j (DeepSpec
    ``tau_probabilistic``).  Standard errors are clustered by the chains' groups (contexts):
    the cluster-robust formula for means and paired differences, the delete-one-group
    jackknife for the pooled proxy and its difference.  ``lengths`` defaults to 1 … the
    chains' length.
    """
    from .._errors import InputError

    if not chains:
        raise InputError("chains: at least one chain is needed")
    L = min(c.alpha.size for c in chains)
    lengths = list(range(1, L + 1)) if lengths is None else [int(g) for g in lengths]
    if any(g < 1 or g > L for g in lengths):
        raise InputError(f"lengths: each in 1..{L} (the chains' length), got {lengths}")
    groups = np.array([c.group for c in chains])
    alpha = np.stack([c.alpha[:L] for c in chains])
    rows = []
    for g in lengths:
        per_block = 1.0 + np.cumprod(alpha[:, :g], axis=1).sum(axis=1)
        pooled = _pooled_proxy(alpha, g)
        pooled_se = _jackknife(lambda m, g=g: _pooled_proxy(alpha[m], g), groups)
        pb, pb_se = _clustered(per_block, groups)
        for verifier in ("token", "block"):
            exact = 1.0 + np.array([c.token(g) if verifier == "token" else float(c.block[g - 1]) for c in chains])
            ex, ex_se = _clustered(exact, groups)
            d_pb, d_pb_se = _clustered(per_block - exact, groups)
            d_po_se = _jackknife(lambda m, g=g, e=exact: _pooled_proxy(alpha[m], g) - float(e[m].mean()), groups)
            rows.append(
                dict(
                    length=g,
                    verifier=verifier,
                    exact=ex,
                    exact_se=ex_se,
                    pooled=pooled,
                    pooled_se=pooled_se,
                    pooled_minus_exact=_clean(pooled - ex),
                    pooled_minus_exact_se=d_po_se,
                    per_block=pb,
                    per_block_se=pb_se,
                    per_block_minus_exact=_clean(d_pb),
                    per_block_minus_exact_se=_clean(d_pb_se),
                    chains=len(chains),
                    contexts=int(np.unique(groups).size),
                )
            )
    return rows


VERIFIER_NAMES = {"token": "token-level (SD)", "block": "block verification"}


def proxy_report(rows: list[dict[str, Any]], stem: Path, what: str) -> list[Path]:
    """Table (md, csv, tex) of :func:`proxy_rows`."""
    from .._display import Estimate, write_table

    header = [
        "γ",
        "verifier",
        "exact AL",
        "proxy: product of pooled rates",
        "pooled − exact",
        "proxy: mean of per-block products",
        "per-block − exact",
    ]
    body = [
        [
            r["length"],
            VERIFIER_NAMES[r["verifier"]],
            Estimate(r["exact"], r["exact_se"]),
            Estimate(r["pooled"], r["pooled_se"]),
            Estimate(r["pooled_minus_exact"], r["pooled_minus_exact_se"]),
            Estimate(r["per_block"], r["per_block_se"]),
            Estimate(r["per_block_minus_exact"], r["per_block_minus_exact_se"]),
        ]
        for r in rows
    ]
    fields = [
        "length",
        "verifier",
        "exact",
        "exact_se",
        "pooled",
        "pooled_se",
        "pooled_minus_exact",
        "pooled_minus_exact_se",
        "per_block",
        "per_block_se",
        "per_block_minus_exact",
        "per_block_minus_exact_se",
        "chains",
        "contexts",
    ]
    r0 = rows[0]
    notes = (
        f"{what}. {r0['chains']} chains drafted i.i.d. from q after {r0['contexts']} prompts (the first answer "
        "token), cut to γ tokens. Every entry is an accepted length AL = 1 + expected draft tokens accepted per "
        "step, ± standard error clustered by prompt. Exact: the expected accepted length given each drafted chain "
        "(token-level: Σ_i Π_{j<i} min(1, p_j(x_j)/q_j(x_j)) · a_i; block verification of Sun et al.: its exact "
        "value given the chain's first γ − 1 tokens, the last averaged over q), averaged over the chains. Proxies, with a_j = Σ_v min(p_j(v), q_j(v)) at the "
        "chain's context: product of pooled rates 1 + Σ_i Π_{j≤i} ā_j (NeMo Automodel tau_sim, vLLM speculators "
        "EAL + 1) and mean of per-block products 1 + Σ_i Π_{j≤i} a_j (DeepSpec tau_probabilistic). Both model "
        "token-level verification and ignore how the positions depend on each other; at γ = 1 they equal the "
        "token-level value exactly (differences below 1e-12, float rounding, are written as 0; docs/engines.md §4a)."
    )
    return write_table(
        stem,
        header,
        body,
        title="The product-formula proxy against the exact accepted length",
        notes=notes,
        data=(fields, [[r[f] for f in fields] for r in rows]),
        latex_header=[
            "$\\gamma$",
            "verifier",
            "exact AL",
            "pooled",
            "pooled $-$ exact",
            "per-block",
            "per-block $-$ exact",
        ],
        caption="Accepted length (1 + expected accepted draft tokens) of one chain of $\\gamma$ tokens, exact and "
        f"by the trainers' product formula (± standard error clustered by prompt); {what}.",
    )


# --------------------------------------------------------------- 2. the Speed-of-Light bound
def entropy_moments(laws: Iterable[Any]) -> tuple[float, float]:
    """(μ, μ₂): the mean over ``laws`` of the entropy −Σ p ln p and of the second
    log-moment Σ p (ln p)² (natural logarithms; terms with p = 0 are 0).

    Raises
    ------
    InputError
        No law, or a law that is not a probability vector."""
    from .._errors import InputError

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
    from .._errors import InputError

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

    from .._errors import InputError
    from ..tree import BudgetCurve, as_model
    from ..tree._budget import best_first

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
    from ..tree import as_model

    curve = oracle_curve(pairs, budgets, progress=progress)
    mu, mu2 = entropy_moments(as_model(t, "target")(()) for t, _ in pairs)
    return curve, mu, mu2, sol_leading_term(curve.budgets, mu, mu2)


def speed_of_light_report(
    curve: Any, mu: float, mu2: float, bound: np.ndarray, stem: Path, what: str, *, short: str | None = None
) -> list[Path]:
    """Figure (png, pdf) and table (md, csv, tex) of :func:`speed_of_light`; ``short`` titles
    the figure (default ``what``)."""
    import matplotlib.pyplot as plt

    from .._display import Estimate, write_table
    from ..plots import plot_speed_of_light, save_figure

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
        latex_header=["$N$", "oracle tree", "dynamic tree", "SoL leading term", "term $-$ oracle"],
        caption="Expected accepted draft tokens of the exact oracle tree of $N$ nodes and the leading term of the "
        f"Speed-of-Light bound (its $O(1)$ term left out); {what}.",
    )
    return [*paths, *figs]


# ------------------------------------------------------------------ 3. the best static tree
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
    from ..tree import best_tree

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
    from .._display import write_table

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


# ------------------------------------------------------------------------------- the part
def run(figures_dir: Path, *, quick: bool = False) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")

    from ..llm import DraftTrees, trees_path

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
    from .trees import BUDGET_LAWS, stored_budget_models

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
    from ..llm import builtin_prompts, extract_trees, smollm2_layerskip
    from .trees import TOP_K

    t0 = time.perf_counter()
    try:
        from .llm import _one_torch_thread

        with _one_torch_thread():
            pair = smollm2_layerskip(top_k=TOP_K)
            fresh = extract_trees(
                pair, builtin_prompts(), k=1, length=FRESH_LENGTH, drafts="iid", trees_per_prompt=FRESH_TREES, seed=0
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
