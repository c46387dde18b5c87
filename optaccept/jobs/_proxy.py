"""The trainers' product-formula proxy of the accepted length against the exact value, chain by
chain (item 1 of :mod:`optaccept.jobs.engines`, docs/engines.md §4)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Estimate, write_table
from .._lib.statistics import clustered_mean as _clustered
from .._lib.statistics import jackknife_std_err
from .._lib.validation import check_rng
from ..tree._draft import sample_tree
from ..tree._models import as_model
from ..tree._verifiers import pos

__all__ = [
    "ChainTerms",
    "chain_terms",
    "block_values",
    "chains_from_trees",
    "chains_from_pairs",
    "proxy_rows",
    "proxy_report",
    "VERIFIER_NAMES",
]


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
    given the whole chain (``tree._sampling.tree_value(..., "block")``), with the same mean.  At γ = 1
    it is Σ_v min(p(v), q(v)), token-level verification's exact value.
    """

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
    (``optaccept.real.DraftTrees``), grouped by prompt.

    Raises
    ------
    InputError
        Trees whose chains were not drawn i.i.d. from q (the first tokens of ``"swor"``
        trees are not draws from q)."""
    from tqdm.auto import tqdm

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


def _pooled_proxy(alpha: np.ndarray, gamma: int) -> float:
    """1 + Σ_{i≤γ} Π_{j≤i} ā_j from the rows a_j of the chains."""
    return 1.0 + float(np.cumprod(alpha[:, :gamma].mean(axis=0)).sum())


def _jackknife(stat: Callable[[np.ndarray], float], groups: np.ndarray) -> float:
    """Standard error of ``stat(mask)`` by the delete-one-group jackknife; below
    :data:`_ROUNDING` (float rounding of a statistic that is constant) it is 0."""
    return _clean(jackknife_std_err(stat, groups))


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
        latex=[
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
