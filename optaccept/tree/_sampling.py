"""Rao-Blackwellised estimates at vocabulary scale (docs/trees.md §5).

Draft trees are sampled from the draft model; for each tree the verifier's expected
accepted length *given the tree* is computed exactly (its own coin flips summed out,
:mod:`optaccept.tree._verifiers`), and the estimate is the mean over trees with its
standard error.  Conditioning can only lower the variance against running the
verifier once per tree.  For k = 1 the block value of each chain is Sun et al.'s exact
E[τ | chain].

A run with ``checkpoint=folder`` writes one shard per finished chunk of trees;
running again with the same settings skips the finished chunks, so an interrupted
run resumes without losing or repeating trees (chunk c always uses the generator
``default_rng([seed, c])``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.limits import show_progress
from .._lib.statistics import clustered_mean
from .._lib.statistics import std_err as sample_std_err
from .._lib.validation import one_renormalization_warning, seed_of
from ._checks import PER_TREE, check_shaped, check_verifier, resolve_models
from ._draft import DraftTree, sample_tree
from ._draft_law import TreeDraftLaw, as_tree_law
from ._models import _Cached, as_model
from ._result import TreeResult
from ._shaped_tree import ShapedTree, sample_shaped

__all__ = ["sample_accepted_tokens", "tree_value", "rao_blackwell"]


def tree_value(tree: DraftTree | ShapedTree, target: Any, draft: Any, verifier: str = "token") -> Any:
    """Expected accepted length of ``verifier`` on one given tree (its coin flips summed
    out).  ``target`` and ``draft`` are sequence models or the cached
    laws of a stored tree (any callable prefix -> probabilities).

    Parameters
    ----------
    tree : DraftTree or ShapedTree
        The drafted tree.
    target, draft : sequence models
        ``prefix -> next-token probabilities``.
    verifier : {"token", "block", "traversal", "target_only"}
        The rule valued.

    Returns
    -------
    float or Fraction
        The expected accepted drafted tokens given the tree (exact with Fraction laws).

    Raises
    ------
    MethodError
        If ``verifier`` has no per-tree value or does not apply to the tree.
    """

    if verifier not in PER_TREE:
        raise MethodError(f"verifier {verifier!r} has no per-tree value; per-tree verifiers: {tuple(PER_TREE)}")
    _check_tree(verifier, tree)
    # an already validated, cached model (Model.cached()) is used as it is
    P = target if isinstance(target, _Cached) else as_model(target, "target").cached()
    Q = draft if isinstance(draft, _Cached) else as_model(draft, "draft").cached()
    return PER_TREE[verifier](tree, P, Q)


@one_renormalization_warning
def sample_accepted_tokens(
    target: Any,
    draft: Any = None,
    *,
    drafts: TreeDraftLaw | None = None,
    verifiers: tuple[str, ...] | None = None,
    samples: int = 1000,
    rng: Any,
    chunk: int = 100,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    temperature: float | None = None,
) -> dict[str, TreeResult]:
    """Rao-Blackwellised estimate of the accepted tokens per step, one result per verifier.

    Parameters
    ----------
    target, draft : sequence models (see :func:`accepted_tokens`).
        For a Markov pair, give the models of one prompt state,
        ``*tree.model_pair(pair, prompt=s)``.
    drafts : TreeDraftLaw, optional
        The tree's draft law, as in :func:`accepted_tokens` (default: one chain of one
        token).
    verifiers : tuple of str, optional
        Among ``"token"``, ``"block"`` (one chain), ``"traversal"`` (siblings without
        replacement, or one chain), ``"target_only"``.  Default: all that apply.
    samples : int
        Number of sampled draft trees.
    rng : numpy.random.Generator or int
        Randomness; an integer seed makes a checkpointed run resumable.
    chunk : int
        Trees per checkpoint shard.
    checkpoint : path, optional
        Folder of shards (see the module docstring).
    progress : bool, optional
        tqdm progress bar over trees (default: on in a terminal or Jupyter).

    Returns
    -------
    dict
        verifier -> :class:`TreeResult` with ``std_err``; ``details["values"]`` holds
        the per-tree values.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> import numpy as np
    >>> law = tree.TreeDraftLaw(length=2)
    >>> est = tree.sample_accepted_tokens(
    ...     p, q, drafts=law, verifiers=("token",), samples=200, rng=np.random.default_rng(0), progress=False
    ... )
    >>> res = est["token"]
    >>> res.method, res.trees, abs(res.value - 10 / 9) < 5 * res.std_err  # the exact value: 10/9
    ('sampled', 200, True)
    """
    from tqdm.auto import tqdm

    law = as_tree_law(drafts)
    shp, length, k, drafts = law.shape, law.length, law.k, law.children
    if shp is not None:

        def applies(v: str) -> bool:
            try:
                check_shaped(v, shp, drafts)
            except MethodError:
                return False
            return True

        check = lambda v: check_shaped(v, shp, drafts)  # noqa: E731
    else:

        def applies(v: str) -> bool:
            return not (v == "block" and k != 1)

        check = lambda v: check_verifier(v, k, drafts)  # noqa: E731
    for name, v in (("trees", samples), ("chunk", chunk)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2 - (name == "chunk"):
            raise InputError(f"{name}: must be an integer >= {2 - (name == 'chunk')}, got {v!r}")
    if verifiers is None:
        verifiers = tuple(v for v in PER_TREE if applies(v))
    verifiers = tuple(verifiers)
    for v in verifiers:
        if v not in PER_TREE:
            raise MethodError(
                f"verifier {v!r}: sampled estimates exist for {tuple(PER_TREE)}; "
                "'optimal' and 'token_optimal' need exact laws (small vocabularies, method exact)"
            )
        check(v)
    P, Q = resolve_models(target, draft, None, temperature)
    seed = seed_of(rng)
    config = {
        "length": length,
        "k": k,
        "drafts": drafts,
        "verifiers": list(verifiers),
        "seed": seed,
        "chunk": int(chunk),
        "temperature": temperature,
        "prompt": None,  # (a prompt state is now given through the models)
        **({"shape": [list(t) for t in shp.paths]} if shp is not None else {}),
    }
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    n_chunks = -(-int(samples) // int(chunk))
    done: dict[int, np.ndarray] = {}
    folder = Path(checkpoint) if checkpoint is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        for shard in sorted(folder.glob("trees-*.npz")):
            with np.load(shard) as z:
                if str(z["config_sha256"]) != digest:
                    raise InputError(
                        f"checkpoint: {folder} holds shards made with other settings; use another folder or delete it"
                    )
                c = int(z["chunk_index"])
                if c < n_chunks:
                    done[c] = z["values"]

    bar = tqdm(total=int(samples), desc="trees", unit="tree", disable=not show_progress(progress))
    bar.update(sum(min(int(chunk), int(samples) - c * int(chunk)) for c in done))
    for c in range(n_chunks):
        if c in done:
            continue
        gen = np.random.default_rng([seed, c])
        size = min(int(chunk), int(samples) - c * int(chunk))
        vals = np.empty((size, len(verifiers)))
        for i in range(size):
            Pc, Qc = P.cached(), Q.cached()  # per-tree caches: memory stays O(tree)
            t = sample_tree(Qc, length, k, drafts, gen) if shp is None else sample_shaped(Qc, shp, drafts, gen)
            Pc.prefetch(t.internal_prefixes())
            for j, v in enumerate(verifiers):
                vals[i, j] = float(PER_TREE[v](t, Pc, Qc))
            bar.update(1)
        if folder is not None:
            tmp = folder / f"partial-{c:06d}.npz"
            np.savez(tmp, values=vals, chunk_index=c, config_sha256=digest, config=json.dumps(config))
            os.replace(tmp, folder / f"trees-{c:06d}.npz")
        done[c] = vals
    bar.close()
    allv = np.concatenate([done[c] for c in range(n_chunks)], axis=0)[: int(samples)]
    return {v: _sampled(allv[:, j], v, drafts, length, k, shape=shp, seed=seed) for j, v in enumerate(verifiers)}


def rao_blackwell(
    items: Any,
    *,
    verifiers: tuple[str, ...] = ("token",),
    groups: Any = None,
    progress: bool | None = None,
    total: int | None = None,
) -> dict[str, TreeResult]:
    """Average per-tree values over given trees, e.g. trees stored with their laws.

    Parameters
    ----------
    items : iterable of (tree, target, draft)
        A :class:`DraftTree` or :class:`ShapedTree` drawn from the draft model and two
        sequence models answering at least its internal nodes (e.g. lookups into a
        stored tree's laws), such as :meth:`optaccept.real.DraftTrees.items`.
    verifiers : tuple of str
        Per-tree verifiers (``"token"``, ``"block"``, ``"traversal"``, ``"target_only"``).
    groups : sequence, optional
        The cluster (prompt) of each item: trees drawn after one prompt share it and are
        not independent, so the standard error is clustered by group,
        sqrt(G/(G − 1)·Σ_g S_g²)/N with S_g the sum of the deviations of group g (as
        :func:`tree_table`; NaN with a single group).  Default: ``items.groups`` when
        ``items`` has it (the items of a stored file carry their prompts), else every
        tree its own group.
    progress : bool, optional
        Show a progress bar (unit: trees; default: on in a terminal or Jupyter).
    total : int, optional
        Number of items, for the progress bar (default ``len(items)`` when known).

    Returns
    -------
    dict
        verifier -> :class:`TreeResult` with the mean and its standard error;
        ``details["values"]`` holds the per-tree values and ``details["clusters"]`` the
        number of groups the error was clustered over.
    """
    from tqdm.auto import tqdm

    if groups is None:
        groups = getattr(items, "groups", None)
    if total is None and hasattr(items, "__len__"):
        total = len(items)
    if groups is not None and hasattr(items, "__len__") and np.size(groups) != len(items):
        raise InputError(f"groups: one group per item ({len(items)} items), got {np.size(groups)}")
    vals: dict[str, list[float]] = {v: [] for v in verifiers}
    meta = None

    bar = not show_progress(progress)
    for tree, target, draft in tqdm(items, total=total, desc="trees", unit="tree", disable=bar):
        if not isinstance(tree, (DraftTree, ShapedTree)):
            raise InputError(f"items: each item must be (DraftTree, target, draft), got {type(tree).__name__}")
        meta = meta or (tree.drafts, tree.length, tree.k, getattr(tree, "shape", None))
        P, Q = as_model(target, "target").cached(), as_model(draft, "draft").cached()
        for v in verifiers:
            if v not in PER_TREE:
                raise MethodError(f"verifier {v!r} has no per-tree value; per-tree verifiers: {tuple(PER_TREE)}")
            _check_tree(v, tree)
            vals[v].append(float(PER_TREE[v](tree, P, Q)))
    if meta is None or len(next(iter(vals.values()))) < 2:
        raise InputError("items: at least two trees are needed for a standard error")
    n = len(next(iter(vals.values())))
    if groups is not None:
        groups = np.asarray(groups)
        if groups.ndim != 1 or groups.size != n:
            raise InputError(f"groups: one group per item ({n} items), got {groups.size}")
    drafts, length, k, shape = meta
    out = {}
    for v, xs in vals.items():
        x = np.asarray(xs)
        if groups is None:
            out[v] = _sampled(x, v, drafts, length, k, shape=shape, clusters=int(x.size))
        else:
            # one prompt (few=nan): its trees say nothing of the spread across prompts
            _, se = clustered_mean(x, groups, few=float("nan"))
            out[v] = _sampled(x, v, drafts, length, k, shape=shape, std_err=se, clusters=int(np.unique(groups).size))
    return out


def _check_tree(verifier: str, tree: Any) -> None:
    if isinstance(tree, ShapedTree):
        check_shaped(verifier, tree.shape, tree.children)
    else:
        check_verifier(verifier, tree.k, tree.drafts)


def _sampled(
    x: np.ndarray,
    verifier: str,
    drafts: str,
    length: int,
    k: int,
    shape: Any = None,
    std_err: float | None = None,
    **details: Any,
) -> TreeResult:
    """The mean of per-tree values with its standard error (of independent trees unless
    given), as a :class:`TreeResult`."""
    return TreeResult(
        float(x.mean()),
        verifier,
        drafts,
        length,
        k,
        method="sampled",
        std_err=sample_std_err(x, few=float("nan")) if std_err is None else float(std_err),
        trees=int(x.size),
        shape=shape,
        details={"values": x, **details},
    )
