"""``tree.accepted_tokens``: expected accepted tokens per step for chains and trees of drafts."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError, MethodError, SolverError
from ._draft import _chains, _check, enumerate_trees, node_set_law
from ._models import as_model, model_pair
from ._result import TreeResult
from ._verifiers import block_value, target_only_value, token_value, traversal_value

__all__ = ["accepted_tokens", "VERIFIERS", "PER_TREE", "resolve_models", "check_verifier", "check_shaped"]

VERIFIERS = ("token", "block", "traversal", "optimal", "token_optimal", "target_only")
#: verifiers whose expected accepted length given one drafted tree is computed exactly
PER_TREE = {"token": token_value, "block": block_value, "traversal": traversal_value, "target_only": target_only_value}


def _is_pair(obj: Any) -> bool:
    """A MarkovPair / PositionPair (checked without importing optaccept.sequence)."""
    if not type(obj).__module__.startswith("optaccept.sequence"):
        return False
    from ..sequence import MarkovPair, PositionPair

    return isinstance(obj, (MarkovPair, PositionPair))


def _is_markov(obj: Any) -> bool:
    """A MarkovPair (whose initial state is a prompt to give)."""
    if not _is_pair(obj):
        return False
    from ..sequence import MarkovPair

    return isinstance(obj, MarkovPair)


def check_verifier(verifier: Any, k: int, drafts: str) -> str:
    if verifier not in VERIFIERS:
        raise InputError(f"verifier: must be one of {VERIFIERS}, got {verifier!r}")
    if verifier == "block" and k != 1:
        raise MethodError(f"verifier 'block' verifies one chain (k = 1), got k = {k}; use 'traversal' or 'token'")
    return verifier


def check_shaped(verifier: Any, shape: Any, children: str) -> str:
    """Which verifiers apply to a tree shape and a way of filling its children."""
    if verifier not in VERIFIERS:
        raise InputError(f"verifier: must be one of {VERIFIERS}, got {verifier!r}")
    if children == "topk" and verifier in ("token", "traversal", "block"):
        raise MethodError(
            f"verifier {verifier!r} compares p with the law q the drafts were drawn from, so it is lossless only "
            "for children drawn from q: top-k children are deterministic; use verifier='target_only' "
            "(optimal for a deterministic tree) or children='swor'/'iid'"
        )
    if verifier == "block" and not shape.is_chain:
        raise MethodError(f"verifier 'block' verifies one chain; shape {shape!r} branches: use 'traversal' or 'token'")
    return verifier


def resolve_models(target: Any, draft: Any, prompt: Any = None, temperature: float | None = None):
    """(target Model, draft Model) from two sequence models or one Markov/position pair."""
    if _is_pair(target):
        if draft is not None:
            raise InputError("draft: leave it out when target is a MarkovPair or PositionPair (it holds both)")
        target, draft = model_pair(target, prompt=prompt)
    elif draft is None:
        raise InputError("draft: a draft sequence model is required")
    return as_model(target, "target", temperature=temperature), as_model(draft, "draft", temperature=temperature)


def accepted_tokens(
    target: Any,
    draft: Any = None,
    length: int | None = None,
    k: int | None = None,
    drafts: str | None = None,
    verifier: str = "token",
    *,
    shape: Any = None,
    children: str | None = None,
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
    length : int
        Tokens per drafted chain (default 1).
    k : int
        Number of chains (chains sharing a prefix form a tree; default 1).
    drafts : {"iid", "swor"}
        Independent chains, or distinct first tokens drawn without replacement
        (default "iid").
    verifier : {"token", "block", "traversal", "optimal", "token_optimal", "target_only"}
        See docs/trees.md.  ``"block"`` needs one chain; ``"traversal"`` needs
        siblings drawn without replacement; ``"token"``, ``"traversal"`` and
        ``"block"`` need children drawn from q (not top-k).
    shape : branching tuple or list of index paths, optional
        Instead of ``length, k, drafts``: the tree's shape, (b_1, …, b_L) or index
        paths in the Medusa/EAGLE convention ((i, j) is the j-th child of the i-th
        child of the root), filled by ``children``.
    children : {"topk", "swor", "iid"}
        With ``shape``: the b most probable tokens of q(·|u) (ties to the smaller id),
        b draws without replacement, or b independent draws (equal siblings stay
        separate nodes) at every node u.  Top-k trees are deterministic, so every
        verifier's value is exact at any vocabulary.
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
    >>> tree.accepted_tokens(p, q, length=2, verifier="token").value
    Fraction(10, 9)
    >>> tree.accepted_tokens(p, q, length=2, verifier="block").value
    Fraction(11, 9)
    """
    if shape is not None:
        if length is not None or k is not None or drafts is not None:
            raise InputError("shape: give either shape= and children= or length=, k=, drafts=, not both")
        from ._shaped import shaped_accepted_tokens

        if _is_markov(target) and prompt is None:
            return _over_initial(
                target,
                draft,
                samples,
                lambda s: accepted_tokens(
                    target,
                    None,
                    verifier=verifier,
                    shape=shape,
                    children=children,
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
            P, Q, shape, children, verifier, samples=samples, rng=rng, progress=progress, max_trees=max_trees
        )
    if children is not None:
        raise InputError("children: goes with shape=; for k chains use drafts=")
    length = 1 if length is None else length
    k = 1 if k is None else k
    drafts = "iid" if drafts is None else drafts
    length, k, drafts = _check(length, k, drafts)
    check_verifier(verifier, k, drafts)
    if _is_markov(target) and prompt is None:
        return _over_initial(
            target,
            draft,
            samples,
            lambda s: accepted_tokens(
                target,
                None,
                length,
                k,
                drafts,
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
        from ._sampling import sample_accepted_tokens

        return sample_accepted_tokens(
            P, Q, length=length, k=k, drafts=drafts, verifiers=(verifier,), trees=samples, rng=rng, progress=progress
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
        from ._token_optimal import token_optimal_value

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

    from .._limits import show_progress

    trees = enumerate_trees(Qc, length, k, drafts, max_trees=max_trees)
    fn = PER_TREE[verifier]
    total = 0
    bar = not show_progress(progress) or len(trees) < 1000
    for t, pr in tqdm(trees, desc="draft trees (exact)", unit="tree", disable=bar):
        total = total + pr * fn(t, Pc, Qc)
    return TreeResult(_plain(total), verifier, drafts, length, k, method="exact", trees=len(trees))


def _plain(v: Any) -> Any:
    from fractions import Fraction

    if isinstance(v, Fraction):
        return v
    if isinstance(v, int):
        return Fraction(v)
    return float(v)
