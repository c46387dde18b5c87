"""``tree.accepted_tokens``: expected accepted tokens per step for chains and trees of drafts."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError, MethodError, SolverError
from .._lib.limits import show_progress
from .._lib.validation import one_renormalization_warning
from ._checks import PER_TREE, VERIFIERS, _is_markov, _plain, check_shaped, check_verifier, resolve_models
from ._draft import _chains, enumerate_trees, node_set_law
from ._draft_law import TreeDraftLaw, as_tree_law
from ._result import TreeResult
from ._sampling import sample_accepted_tokens
from ._shaped import shaped_accepted_tokens
from ._token_optimal import token_optimal_value

__all__ = ["accepted_tokens", "VERIFIERS", "PER_TREE", "resolve_models", "check_verifier", "check_shaped"]


@one_renormalization_warning
def accepted_tokens(
    target: Any,
    draft: Any = None,
    drafts: TreeDraftLaw | None = None,
    verifier: str = "token",
    *,
    prompt: int | None = None,
    temperature: float | None = None,
    samples: int | None = None,
    rng: np.random.Generator | None = None,
    progress: bool | None = None,
    max_trees: int = 200_000,
) -> TreeResult:
    """Expected number of draft tokens accepted in one step (correction/bonus token not counted).

    Parameters
    ----------
    target, draft : sequence models
        Callables ``prefix -> next-token probabilities`` (prefix: tuple of token ids
        after the prompt), objects with ``next_token_probs(prefix)``, or — as
        ``target`` alone — an :class:`optaccept.sequence.MarkovPair` /
        :class:`~optaccept.sequence.PositionPair`.
    drafts : TreeDraftLaw, optional
        The tree's draft law (default: one chain of one token).
        ``TreeDraftLaw(length=L, k=k, children="iid"|"swor")``: k chains of L tokens,
        independent, or with distinct first tokens drawn without replacement.
        ``TreeDraftLaw(shape, children)``: a shape, (b_1, …, b_L) or index paths in the
        Medusa/EAGLE convention ((i, j) is the j-th child of the i-th child of the
        root), whose children are at every node u the b most probable tokens of q(·|u)
        (``"topk"``, ties to the smaller id), b draws without replacement (``"swor"``),
        or b independent draws (``"iid"``, equal siblings stay separate nodes).  Top-k
        trees are deterministic, so every verifier's value is exact at any vocabulary.
    verifier : {"token", "block", "traversal", "optimal", "token_optimal", "target_only"}
        See docs/trees.md.  ``"block"`` needs one chain; ``"traversal"`` needs
        siblings drawn without replacement; ``"token"``, ``"traversal"`` and
        ``"block"`` need children drawn from q (not top-k).
    prompt : int, optional
        For a Markov pair: the state the step starts from (default: averaged over
        the pair's initial law).
    temperature : float, optional
        Apply p ∝ p^(1/T) to both models.
    samples : int, optional
        Estimate by Rao-Blackwellised sampling of this many draft trees instead of
        exact enumeration (needs ``rng``; see :func:`sample_accepted_tokens`).
    rng : numpy.random.Generator
        Randomness of the sampled estimate.
    progress : bool, optional
        Progress bar over draft trees, sampled or (from 1,000 trees) enumerated
        (default: on in a terminal or Jupyter).
    max_trees : int
        Refuse exact enumeration above this many draft trees (for ``verifier="optimal"``
        on chains: this many node sets, which the LP is written over).

    Returns
    -------
    TreeResult
        ``value`` is a Fraction when the models return Fractions and the verifier
        needs no LP (``"optimal"``, and ``"token_optimal"`` with k ≥ 2, are float).

    Examples
    --------
    Sun et al.'s example (arXiv 2403.10444, §2): two context-free models on {a, b}.

    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> chain = tree.TreeDraftLaw(length=2)
    >>> tree.accepted_tokens(p, q, chain, verifier="token").value
    Fraction(10, 9)
    >>> tree.accepted_tokens(p, q, chain, verifier="block").value
    Fraction(11, 9)
    """
    law = as_tree_law(drafts)
    if law.shape is not None:
        if _is_markov(target) and prompt is None:
            return _over_initial(
                target,
                draft,
                samples,
                lambda s: accepted_tokens(
                    target,
                    None,
                    law,
                    verifier,
                    prompt=s,
                    temperature=temperature,
                    samples=samples,
                    rng=rng,
                    progress=progress,
                    max_trees=max_trees,
                ),
            )
        P, Q = resolve_models(target, draft, prompt, temperature)
        return shaped_accepted_tokens(
            P, Q, law.shape, law.children, verifier, samples=samples, rng=rng, progress=progress, max_trees=max_trees
        )
    length, k, drafts = law.length, law.k, law.children
    check_verifier(verifier, k, drafts)
    if _is_markov(target) and prompt is None:
        return _over_initial(
            target,
            draft,
            samples,
            lambda s: accepted_tokens(
                target,
                None,
                law,
                verifier,
                prompt=s,
                temperature=temperature,
                samples=samples,
                rng=rng,
                progress=progress,
                max_trees=max_trees,
            ),
        )
    P, Q = resolve_models(target, draft, prompt, temperature)
    if samples is not None:
        return sample_accepted_tokens(
            P, Q, drafts=law, verifiers=(verifier,), samples=samples, rng=rng, progress=progress
        )[verifier]
    return exact_accepted_tokens(P, Q, length, k, drafts, verifier, max_trees=max_trees, progress=progress)


def _over_initial(pair: Any, draft: Any, samples: Any, one: Any) -> TreeResult:
    """Average over a Markov pair's initial law: ``one(state)`` is the result from a state."""
    if draft is not None:
        raise InputError("draft: leave it out when target is a MarkovPair (it holds both)")
    parts = [(float(w), one(s)) for s, w in enumerate(pair.initial) if w > 0]
    value = sum(w * float(r.value) for w, r in parts)
    err = None
    if samples is not None:
        err = float(np.sqrt(sum((w * r.std_err) ** 2 for w, r in parts)))
    r0 = parts[0][1]
    return TreeResult(
        value,
        r0.verifier,
        r0.drafts,
        r0.length,
        r0.k,
        method=r0.method,
        std_err=err,
        trees=sum(r.trees for _, r in parts),
        shape=r0.shape,
        details={"by_prompt": parts},
    )


def exact_accepted_tokens(
    P, Q, length: int, k: int, drafts: str, verifier: str, *, max_trees: int, progress: bool | None = None
) -> TreeResult:
    Pc, Qc = P.cached(), Q.cached()
    Pc(())
    Qc(())
    if P.n != Q.n:
        raise InputError(f"draft: vocabulary of {Q.n} tokens, target has {P.n}")
    if verifier == "token_optimal":
        v = token_optimal_value(Pc, Qc, length, k, drafts)
        return TreeResult(_plain(v), verifier, drafts, length, k, method="exact" if k == 1 else "lp")
    if verifier == "optimal":
        from ._optimal_lp import optimal_lp, optimal_lp_chains

        if drafts == "iid" and k >= 3:  # C(chains, k) node sets: generate node loads instead
            chains = list(_chains(Qc, (), length))
            if len(chains) > max_trees:
                raise MethodError(f"exact LP: {len(chains)} draft chains (more than max_trees={max_trees})")
            try:
                v, cert, details = optimal_lp_chains(chains, k, Pc, P.n, length)
            except SolverError:  # (a master the simplex could not certify): the hub form over the node sets
                pass
            else:
                return TreeResult(
                    v,
                    verifier,
                    drafts,
                    length,
                    k,
                    method="lp",
                    trees=details["trees"],
                    certificate=cert,
                    details=details,
                )
        law = node_set_law(Qc, length, k, drafts, max_sets=max_trees)
        v, cert, details = optimal_lp(law, Pc, P.n, length)
        return TreeResult(
            v, verifier, drafts, length, k, method="lp", trees=len(law), certificate=cert, details=details
        )
    from tqdm.auto import tqdm

    trees = enumerate_trees(Qc, length, k, drafts, max_trees=max_trees)
    fn = PER_TREE[verifier]
    total = 0
    bar = not show_progress(progress) or len(trees) < 1000
    for t, pr in tqdm(trees, desc="draft trees (exact)", unit="tree", disable=bar):
        total = total + pr * fn(t, Pc, Qc)
    return TreeResult(_plain(total), verifier, drafts, length, k, method="exact", trees=len(trees))
