"""Per-tree values of the stored draft trees behind :func:`optaccept.real.tree_table`, every tree at once.

* the one-token values on each prompt root's support (:func:`_root_values`);
* the upper bound's terms for every tree and length from p(w) and q(w) products along the
  parent pointers (:func:`_bound_terms_all`), the root inclusion probabilities once per
  distinct root row, for all its tokens at once (:meth:`optaccept.WithoutReplacement.inclusion`);
* the sampled verifiers — token-level RRS, block, traversal — of every tree and every
  (k, L) cut from the batched forms of :mod:`optaccept.tree._batched_verifiers` on the
  nodes' stored entries (:func:`_sampled_values`); :func:`_tree_laws` gives one tree's
  laws for the per-tree functions (the reference, and the rare trees the batched
  traversal leaves to them).

``tests/real/test_tree_table_values.py`` checks each against the per-tree functions fed from
dense rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._lib import stable as _stable
from ..drafts import IID, WithoutReplacement
from ..optimal import optimal_acceptance
from ..tree import _batched_verifiers as batched
from ..tree._checks import PER_TREE
from ..tree._draft import DraftTree
from ..tree._models import Model

__all__: list[str] = []


def _prompt_roots(trees: Any) -> dict[str, Any]:
    """p and q at the root of the first tree of each prompt, each on its own support
    (tokens with p > 0 or q > 0: every one-token value ignores tokens with p = q = 0), and
    each tree's prompt row."""
    roots = np.flatnonzero(np.asarray(trees.parent) < 0)
    prompts, first, of_tree = np.unique(trees.prompt_index, return_index=True, return_inverse=True)
    sparse = trees._rows
    rows = [sparse.compact([r], sparse.support([r])) for r in roots[first]]
    return {"p": [p[0] for p, _ in rows], "q": [q[0] for _, q in rows], "of_tree": of_tree, "prompts": prompts}


def _exact_root_values(roots: dict[str, Any], drafts: str, k: int, cache: dict) -> dict[str, np.ndarray]:
    """One-token values per prompt: token-level RRS (= traversal and block at one token),
    the optimum α* and, for i.i.d. drafts, Yin et al.'s batch SD (cached per law and k)."""
    key = (id(roots), drafts, k)
    if key not in cache:
        cache[key] = _root_values(roots, drafts, k)
    return cache[key]


def _root_values(roots: dict[str, Any], drafts: str, k: int) -> dict[str, np.ndarray]:
    p, q = roots["p"], roots["q"]
    from ..sequence._batch import batch_rejection_probability
    from ..verifiers import RRS, RRSWithoutReplacement

    rule = RRS() if drafts == "iid" or k == 1 else RRSWithoutReplacement()
    law = IID if drafts == "iid" else WithoutReplacement
    out = {
        "token": np.array([rule.acceptance(pi, qi, k=k) for pi, qi in zip(p, q, strict=True)]),
        "optimal": np.array([float(optimal_acceptance(pi, law(qi, k)).value) for pi, qi in zip(p, q, strict=True)]),
    }
    if k == 1:
        out["block"] = out["token"]
    if drafts == "swor" and k > 1:
        out["traversal"] = out["token"]  # at one token traversal's root rate stays 1: it is RRS-WOR
    if drafts == "iid":
        out["batch"] = np.array([1 - batch_rejection_probability(pi, qi, k) for pi, qi in zip(p, q, strict=True)])
    return out


def _bound_values(f: Any, k: int, L: int, roots: dict[str, Any], cache: dict) -> np.ndarray:
    """Per-tree values of tree.upper_bound (docs/trees.md §4b) on the stored trees cut to
    k chains of L tokens: α* of the root's law plus the depth ≥ 2 terms of
    :func:`optaccept.tree.tree_bound_terms`, computed for every tree at once."""
    alpha1 = _exact_root_values(roots, f.drafts, k, cache)["optimal"]
    key = ("bound terms", id(f), k)
    if key not in cache:
        cache[key] = _bound_terms_all(f, k, cache)
    terms = cache[key]
    return alpha1[roots["of_tree"]] + terms[:, 2 : L + 1].sum(axis=1)


def _node_laws(f: Any, cache: dict) -> dict[str, np.ndarray]:
    """Per node (depth ≥ 1): p(w) and q(w), the products of the conditionals p(x | parent)
    and q(x | parent) from the root (rows renormalised), read from the sparse rows."""
    key = ("node laws", id(f))
    if key in cache:
        return cache[key]
    rows = f._rows
    s_p, s_q = rows.row_sums()
    parent, depth = np.asarray(f.parent), np.asarray(f.depth)
    inner = parent >= 0
    t, d = rows.values_at(parent[inner], np.asarray(f.token)[inner])
    p_cond = np.zeros(f.n_nodes)
    q_cond = np.zeros(f.n_nodes)
    p_cond[inner] = t.astype(np.float64) / s_p[parent[inner]]
    q_cond[inner] = d.astype(np.float64) / s_q[parent[inner]]
    pw = np.ones(f.n_nodes)
    qw = np.ones(f.n_nodes)
    for level in range(1, int(depth.max(initial=0)) + 1):  # left to right along each path
        at = np.flatnonzero(depth == level)
        pw[at] = pw[parent[at]] * p_cond[at]
        qw[at] = qw[parent[at]] * q_cond[at]
    cache[key] = {"pw": pw, "qw": qw, "q_cond": q_cond}
    return cache[key]


def _root_inclusions(f: Any, k: int, cache: dict) -> np.ndarray:
    """Per depth-1 node: P(its token is among k draws without replacement from the root's
    q) (as :class:`optaccept.tree._bounds._Pi` gives it): the root law's
    :meth:`~optaccept.WithoutReplacement.inclusion`, the law built once per distinct root row
    and asked once for all its depth-1 tokens."""

    rows = f._rows
    parent, depth, token = np.asarray(f.parent), np.asarray(f.depth), np.asarray(f.token)
    out = np.zeros(f.n_nodes)
    wanted: dict[bytes, tuple[int, list[int]]] = {}  # root row -> (the row, its depth-1 nodes)
    for j in np.flatnonzero(depth == 1).tolist():
        r = int(parent[j])
        lo, hi = int(rows.indptr[r]), int(rows.indptr[r + 1])
        rid = rows.indices[lo:hi].tobytes() + rows.draft_values[lo:hi].tobytes()
        wanted.setdefault(rid, (r, []))[1].append(j)
    laws: dict[bytes, Any] = cache.setdefault(("root laws", id(f)), {})
    for rid, (r, nodes) in wanted.items():
        if (rid, k) not in laws:  # the root's q on its draft support
            lo, hi = int(rows.indptr[r]), int(rows.indptr[r + 1])
            drafted = rows.draft_values[lo:hi] > 0
            q = rows.compact([r], rows.indices[lo:hi])[1][0][drafted]
            laws[(rid, k)] = (WithoutReplacement(q, min(k, q.size)), rows.indices[lo:hi][drafted].astype(np.int64))
        law, cols = laws[(rid, k)]
        x = token[nodes].astype(np.int64)
        where = np.minimum(np.searchsorted(cols, x), cols.size - 1)
        hit = cols[where] == x  # a token off the draft support is never drawn
        out[np.asarray(nodes)[hit]] = law.inclusion(where[hit])
    return out


def _bound_terms_all(f: Any, k: int, cache: dict) -> np.ndarray:
    """(trees, length + 1): Σ_{w ∈ tree, |w| = d} min(1, p(w)/π(w)) for every stored tree cut
    to its first k chains (column d; columns 0 and 1 zero), π(w) = P(w is a node of a
    drawn tree) as in :func:`optaccept.tree.tree_bound_terms`."""
    laws = _node_laws(f, cache)
    pw = laws["pw"]
    if f.drafts == "iid":
        with np.errstate(divide="ignore"):  # q(w) = 1: π = 1
            pi = _stable.one_minus_pow1m(np.minimum(laws["qw"], 1.0), k) if k > 1 else laws["qw"]
    else:
        parent, depth = np.asarray(f.parent), np.asarray(f.depth)
        pi = _root_inclusions(f, k, cache)
        for level in range(2, int(depth.max(initial=0)) + 1):
            at = np.flatnonzero(depth == level)
            pi[at] = pi[parent[at]] * laws["q_cond"][at]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(pw > 0, np.minimum(1.0, pw / pi), 0.0)
    out = np.zeros((f.n_trees, f.length + 1))
    for d in range(2, f.length + 1):
        nodes = np.sort(np.asarray(f.chains_nodes)[:, :k, d - 1], axis=1)
        first = np.ones(nodes.shape, dtype=bool)
        first[:, 1:] = nodes[:, 1:] != nodes[:, :-1]  # each node once, however many chains pass it
        out[:, d] = np.where(first, term[nodes], 0.0).sum(axis=1)
    return out


def _cell_verifiers(drafts: str, k: int) -> tuple[str, ...]:
    """Per-tree verifiers of a sampled cell: token-level RRS, block (one chain) and
    traversal (without replacement)."""
    return ("token",) + (("block",) if k == 1 else ()) + (("traversal",) if drafts == "swor" else ())


def _tree_laws(f: Any, i: int) -> tuple[Any, Any, dict[int, int]]:
    """Tree ``i``'s target and draft laws as checked, cached models on its compact
    vocabulary (as ``as_model(f.models(i, compact=True)[j]).cached()``, the rows checked
    at once), and the map from token to compact index."""

    index = f.prefixes(i)
    nodes = list(index.values())
    keep = f._rows.support(nodes)  # f.vocabulary(i)
    new = {int(t): j for j, t in enumerate(keep.tolist())}
    keys = [tuple(new[t] for t in key) for key in index]
    out = []
    for side, rows in zip(("target", "draft"), f._rows.compact(nodes, keep), strict=True):
        if not np.isfinite(rows).all() or (rows < 0).any():
            raise InputError(f"trees: the {side} rows of tree {i} hold a negative, NaN or infinite entry, or sum to 0")

        def missing(prefix: tuple[int, ...], side: str = side) -> np.ndarray:
            raise KeyError(f"prefix {prefix}: not a node of the stored {side} rows of tree {i}")

        model = Model(missing, side)
        model.n, model.exact = keep.size, False
        cached = model.cached()
        for key, row in zip(keys, rows, strict=True):
            total = float(row.sum())
            if total != 1.0:  # as optaccept's distribution check does
                row = row / total
            row.setflags(write=False)
            cached.memo[key] = row
        out.append(cached)
    return out[0], out[1], new


def _node_rows(f: Any) -> batched.NodeRows:
    """Every node's stored entries as padded rows, p and q renormalised as :func:`_tree_laws`
    does (by the row sum, then again where that sum is not 1) and checked likewise."""
    rows = f._rows
    counts = np.diff(rows.indptr)
    width = max(int(counts.max(initial=0)), 1)
    flat = np.repeat(np.arange(rows.n_rows) * width - rows.indptr[:-1], counts)
    flat += np.arange(rows.nnz)  # entry e of row i goes to i * width + (e − indptr[i])
    cols = np.full((rows.n_rows, width), -1, dtype=np.int32)
    cols.ravel()[flat] = rows.indices
    laws, bad = [], []
    for values in (rows.target_values, rows.draft_values):
        a = np.zeros((rows.n_rows, width))
        a.ravel()[flat] = values
        with np.errstate(divide="ignore", invalid="ignore"):
            a /= a.sum(axis=1, keepdims=True)
            bad.append(~np.isfinite(a).all(axis=1) | (a < 0).any(axis=1))
            total = a.sum(axis=1)
            again = np.flatnonzero(total != 1.0)
            a[again] /= total[again, None]
        laws.append(a)
    if bad[0].any() or bad[1].any():
        tree = np.asarray(f.tree)
        i = int(tree[bad[0] | bad[1]].min())
        side = "target" if bad[0][tree == i].any() else "draft"
        raise InputError(f"trees: the {side} rows of tree {i} hold a negative, NaN or infinite entry, or sum to 0")
    return batched.NodeRows(cols, laws[0], laws[1])


def _per_tree_values(f: Any, cells: list, trees: dict[tuple[int, int], np.ndarray], verifier: str, out: dict) -> None:
    """``verifier``'s value of the given trees of each cell through the per-tree function
    (:data:`optaccept.tree.PER_TREE`) on the laws of :func:`_tree_laws`, into ``out``."""
    for i in sorted({int(i) for idx in trees.values() for i in idx}):
        P, Q, new = _tree_laws(f, i)
        chains = [tuple(new[t] for t in c) for c in f.chains(i)]
        for k, L in cells:
            if i in trees[(k, L)]:
                tree = DraftTree(tuple(c[:L] for c in chains[:k]), L, f.drafts)
                out[(k, L)][verifier][i] = float(PER_TREE[verifier](tree, P, Q))


def _sampled_values(f: Any, cells: list[tuple[int, int]], bar: Any) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Per-tree values (:data:`optaccept.tree.PER_TREE`, the functions behind
    :func:`optaccept.tree.rao_blackwell`) of every (k, L) cell, every tree at once: the
    batched forms of :mod:`optaccept.tree._batched_verifiers` on the nodes' stored entries,
    the laws read and checked once."""
    out: dict[tuple[int, int], dict[str, np.ndarray]] = {(k, L): {} for k, L in cells}
    if not cells:
        return out
    rows = _node_rows(f)
    token = np.asarray(f.token)
    roots = np.flatnonzero(np.asarray(f.parent) < 0)
    chains = np.asarray(f.chains_nodes)
    token_v = batched.token_values(rows, token, roots, chains, f.drafts, cells)
    ones = sorted({L for k, L in cells if k == 1})
    block_v = batched.block_values(rows, token, chains, roots, ones) if ones else {}
    walk = [(k, L) for k, L in cells if "traversal" in _cell_verifiers(f.drafts, k)]
    walk_v, left = batched.traversal_values(rows, token, roots, chains, walk)
    del rows
    for k, L in cells:
        got = {"token": token_v[(k, L)], "block": block_v.get(L), "traversal": walk_v.get((k, L))}
        out[(k, L)] = {v: got[v] for v in _cell_verifiers(f.drafts, k)}
    if walk:  # trees whose draft law is used up at a node with children left: tree by tree
        _per_tree_values(f, walk, {c: np.flatnonzero(m) for c, m in left.items()}, "traversal", out)
    bar.update(f.n_trees)
    return out
