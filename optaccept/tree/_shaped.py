"""``accepted_tokens`` on a tree shape (``shape=``, ``children=``; docs/trees.md §1b)."""

from __future__ import annotations

from typing import Any

from .._errors import InputError, MethodError
from .._lib.limits import show_progress
from ._checks import PER_TREE, _plain, check_shaped
from ._draft_law import TreeDraftLaw
from ._result import TreeResult
from ._sampling import sample_accepted_tokens
from ._shape import as_shape, check_children
from ._shaped_tree import enumerate_shaped, topk_tree
from ._token_optimal import token_optimal_shaped
from ._verifiers import target_only_value

__all__ = ["shaped_accepted_tokens"]

#: on a deterministic (top-k) tree the best lossless verifier, sequence-level or node by
#: node, is target-only (docs/trees.md §1b, Proposition 1.1)
_DETERMINISTIC_OPTIMUM = ("target_only", "token_optimal", "optimal")


def shaped_accepted_tokens(
    P: Any,
    Q: Any,
    shape: Any,
    children: Any,
    verifier: str,
    *,
    samples: int | None,
    rng: Any,
    progress: bool,
    max_trees: int,
) -> TreeResult:
    """Expected accepted tokens per step for a tree of ``shape`` filled by ``children``."""

    shp = as_shape(shape)
    if children is None:
        raise InputError("children: give 'topk', 'swor' or 'iid' with shape=")
    children = check_children(children)
    check_shaped(verifier, shp, children)
    Pc, Qc = P.cached(), Q.cached()
    Pc(())
    Qc(())
    if P.n != Q.n:
        raise InputError(f"draft: vocabulary of {Q.n} tokens, target has {P.n}")
    leaves = sum(1 for t in shp.paths if shp.branches(t) == 0)

    def result(value: Any, method: str, trees: int, **kw: Any) -> TreeResult:
        return TreeResult(value, verifier, children, shp.depth, leaves, method=method, trees=trees, shape=shp, **kw)

    if children == "topk":
        t = topk_tree(Qc, shp)
        Pc.prefetch(t.internal_prefixes())
        v = target_only_value(t, Pc) if verifier in _DETERMINISTIC_OPTIMUM else PER_TREE[verifier](t, Pc, Qc)
        return result(_plain(v), "exact", 1, details={"tree": t})
    if samples is not None:
        if verifier not in PER_TREE:
            raise MethodError(
                f"verifier {verifier!r}: sampled estimates exist for {tuple(PER_TREE)}; 'optimal' and "
                "'token_optimal' need exact laws (small vocabularies) or a top-k tree; see tree.upper_bound"
            )

        return sample_accepted_tokens(
            P, Q, drafts=TreeDraftLaw(shp, children), verifiers=(verifier,), samples=samples, rng=rng, progress=progress
        )[verifier]
    if verifier == "token_optimal":
        v = token_optimal_shaped(Pc, Qc, shp, children)
        chainlike = all(shp.branches(u) <= 1 for u in shp.internal())
        return result(_plain(v), "exact" if chainlike else "lp", 0)
    trees = enumerate_shaped(Qc, shp, children, max_trees=max_trees)
    if verifier == "optimal":
        from ._optimal_lp import optimal_lp

        v, cert, details = optimal_lp(trees, Pc, P.n, shp.depth)
        return result(v, "lp", len(trees), certificate=cert, details=details)
    from tqdm.auto import tqdm

    fn = PER_TREE[verifier]
    total = 0
    bar = not show_progress(progress) or len(trees) < 1000
    for t, pr in tqdm(trees, desc="draft trees (exact)", unit="tree", disable=bar):
        total = total + pr * fn(t, Pc, Qc)
    return result(_plain(total), "exact", len(trees))
