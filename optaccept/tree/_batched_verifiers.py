"""The per-tree verifier values of :mod:`optaccept.tree._verifiers`, for a batch of stored trees at once.

The trees are given as node arrays — ``roots`` (trees,), ``chains`` (trees, k, length): the
node reached by each chain after each of its tokens, ``token`` (nodes,): the token leading to
each node — and the laws at the nodes as :class:`NodeRows`: each node's stored entries
(sorted token ids, padded with −1) and p, q on them.  Nodes are shared as in a
:class:`~optaccept.tree._draft.DraftTree`: chains through the same token prefix pass the same
node.  A tree cut to its first k' chains of L' tokens keeps, at every node, a prefix of
its candidates, so one pass gives every cut.

* :func:`token_values` — :func:`~optaccept.tree._verifiers.token_value`: each node's
  acceptance weights P(candidate j accepted) are computed once, slot by slot, for every node
  of every tree (one array pass per slot); the values of every cut then follow level by
  level from the leaves.
* :func:`block_values` — :func:`~optaccept.tree._verifiers.block_value` on the first chain.
* :func:`traversal_values` — :func:`~optaccept.tree._verifiers.traversal_value`: the trees of
  one shape (the same pattern of shared nodes) follow the same sequence of candidates, so
  the algorithm runs once per shape with arrays across its trees.  A tree whose draft law
  is used up at a node (every token of q(·|u) drafted and rejected) changes the sequence:
  it is flagged for the per-tree function.

Each value equals the per-tree function's fed from the same rows up to the order of the
row sums (``tests/tree/test_tree_batched_verifiers.py``: random and degenerate trees, to 1e-12).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["NodeRows", "token_values", "block_values", "traversal_values"]


class NodeRows(NamedTuple):
    """The laws at every node: ``cols`` (nodes, width) token ids sorted per row and padded
    with −1; ``p``, ``q`` (nodes, width) float64, each row a distribution (0 on padding)."""

    cols: np.ndarray
    p: np.ndarray
    q: np.ndarray


def _find(cols: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column of token x[i] in row cols[i] and whether it is stored there."""
    hit = cols == np.asarray(x)[:, None]
    at = hit.argmax(axis=1)
    return at, hit[np.arange(at.size), at]


def _take(a: np.ndarray, at: np.ndarray, found: np.ndarray) -> np.ndarray:
    return np.where(found, a[np.arange(at.size), at], 0.0)


def _parents(roots: np.ndarray, chains: np.ndarray) -> np.ndarray:
    """(trees, k, length): the node each chain's token at each depth is drawn at."""
    par = np.empty_like(chains)
    par[:, :, 0] = roots[:, None]
    par[:, :, 1:] = chains[:, :, :-1]
    return par


def token_values(
    rows: NodeRows, token: np.ndarray, roots: np.ndarray, chains: np.ndarray, drafts: str, cells: list
) -> dict[tuple[int, int], np.ndarray]:
    """Recursive rejection sampling's expected accepted tokens of every tree, per cut.

    Parameters
    ----------
    rows : NodeRows
        The laws at the nodes.
    token : ndarray of int, shape (nodes,)
        The token leading to each node.
    roots : ndarray of int, shape (trees,)
        Each tree's root node.
    chains : ndarray of int, shape (trees, k, length)
        The node reached by each chain after each of its tokens.
    drafts : {"iid", "swor"}
        With replacement (every draw is a candidate) or without (the distinct children).
    cells : list of (int, int)
        The cuts (k', L'), 1 ≤ k' ≤ k, 1 ≤ L' ≤ length.

    Returns
    -------
    dict
        (k', L') → ndarray (trees,) of :func:`~optaccept.tree._verifiers.token_value`.
    """
    n_trees, k, length = chains.shape
    swor = drafts == "swor"
    par = _parents(roots, chains)
    cand = np.ones(chains.shape, dtype=bool)
    slot = np.zeros(chains.shape, dtype=np.int64)
    for c in range(k):
        for c2 in range(c):
            same = par[:, c2] == par[:, c]
            if swor:  # a child reached by an earlier chain is not tried again
                cand[:, c] &= ~(same & (chains[:, c2] == chains[:, c]))
                slot[:, c] += same & cand[:, c2]
            else:
                slot[:, c] += same
    # the state of every internal node: residual target, draft law, P(all rejected so far)
    inner, where = np.unique(par, return_inverse=True)
    where = where.reshape(par.shape)
    P, Q = rows.p[inner].copy(), rows.q[inner].copy()
    cols = rows.cols[inner]
    stay = np.ones(inner.size)
    alive = np.ones(inner.size, dtype=bool)
    w = np.zeros(chains.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(k):
            e = cand & (slot == j)
            if not e.any():
                break
            u = where[e]  # one candidate per node and slot
            at, found = _find(cols[u], token[chains[e]])
            px, qx = _take(P[u], at, found), _take(Q[u], at, found)
            acc = np.where(px >= qx, 1.0, px / qx)
            live = alive[u]
            w[e] = np.where(live, stay[u] * acc, 0.0)
            st = stay[u] * (1 - acc)
            stay[u] = np.where(live, st, stay[u])
            live &= st != 0
            r = P[u]
            r -= Q[u]
            np.maximum(r, 0.0, out=r)
            s = r.sum(axis=1)
            live &= s != 0
            go = np.flatnonzero(live)
            P[u[go]] = r[go] / s[go, None]
            del r
            if swor:
                qu = Q[u]
                hit = np.flatnonzero(found)
                qu[hit, at[hit]] = 0.0
                s = qu.sum(axis=1)
                live &= s != 0
                go = np.flatnonzero(live)
                Q[u[go]] = qu[go] / s[go, None]
                del qu
            alive[u] = live
    out = {}
    for kk, L in cells:
        V = np.zeros(rows.p.shape[0])
        for d in range(L - 1, -1, -1):
            for c in range(kk):
                t = np.flatnonzero(cand[:, c, d])
                u, child = par[t, c, d], chains[t, c, d]
                V[u] = V[u] + w[t, c, d] * (1 + V[child])
        out[(kk, L)] = V[roots]
    return out


def block_values(rows: NodeRows, token: np.ndarray, chains: np.ndarray, roots: np.ndarray, lengths: list) -> dict:
    """Block verification's expected accepted tokens on each tree's first chain, per length.

    Parameters
    ----------
    rows, token, chains, roots
        As in :func:`token_values`.
    lengths : list of int
        The cuts L' (1 ≤ L' ≤ length).

    Returns
    -------
    dict
        L' → ndarray (trees,) of :func:`~optaccept.tree._verifiers.block_value` on the
        first chain cut to L' tokens.
    """
    chain = chains[:, 0, :]
    nodes = np.concatenate([roots[:, None], chain], axis=1)
    n_trees, length = chain.shape
    p_i = np.ones(n_trees)
    ps, hs = [], []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(1, length + 1):
            u, v = nodes[:, i - 1], nodes[:, i]
            at, found = _find(rows.cols[u], token[v])
            ratio = p_i * _take(rows.p[u], at, found) / _take(rows.q[u], at, found)
            p_i = np.where(ratio >= 1, 1.0, ratio)
            ps.append(p_i)
            s = np.maximum(p_i[:, None] * rows.p[v] - rows.q[v], 0.0).sum(axis=1)
            den = s + 1 - p_i
            hs.append(np.where(den == 0, 1.0, s / den))
    out = {}
    for L in lengths:
        h = hs[: L - 1] + [ps[L - 1]]
        total, tail = np.zeros(n_trees), np.ones(n_trees)
        for i in range(L, 0, -1):
            total = total + i * h[i - 1] * tail
            tail = tail * (1 - h[i - 1])
        out[L] = total
    return out


def _shapes(chains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tree, the first chain through each (chain, depth) node; the distinct patterns."""
    n_trees, k, length = chains.shape
    first = np.broadcast_to(np.arange(k)[None, :, None], chains.shape).copy()
    for c in range(k - 1, -1, -1):
        for c2 in range(c - 1, -1, -1):
            first[:, c] = np.where(chains[:, c2] == chains[:, c], c2, first[:, c])
    patterns, group = np.unique(first.reshape(n_trees, -1), axis=0, return_inverse=True)
    return patterns.reshape(-1, k, length), group.reshape(-1)


def traversal_values(
    rows: NodeRows, token: np.ndarray, roots: np.ndarray, chains: np.ndarray, cells: list
) -> tuple[dict, dict]:
    """Traversal verification's expected accepted tokens of every tree, per cut.

    Parameters
    ----------
    rows, token, roots, chains, cells
        As in :func:`token_values` (siblings are distinct tokens, as in a ``DraftTree``).

    Returns
    -------
    values, left : dict, dict
        (k', L') → ndarray (trees,) of :func:`~optaccept.tree._verifiers.traversal_value`,
        and (k', L') → boolean ndarray (trees,) of the trees left to the per-tree function
        (their value is NaN in ``values``).
    """
    values, left = {}, {}
    for kk, L in cells:
        cut = chains[:, :kk, :L]
        patterns, group = _shapes(cut)
        val = np.full(cut.shape[0], np.nan)
        bad = np.zeros(cut.shape[0], dtype=bool)
        for g, first in enumerate(patterns):
            t = np.flatnonzero(group == g)
            v, b = _traverse(rows, token, roots[t], cut[t], first)
            val[t], bad[t] = v, b
        val[bad] = np.nan
        values[(kk, L)], left[(kk, L)] = val, bad
    return values, left


def _traverse(rows: NodeRows, token: np.ndarray, roots: np.ndarray, chains: np.ndarray, first: np.ndarray):
    """:class:`~optaccept.tree._verifiers._TraversalState` run on trees of one shape at once."""
    n, k, length = chains.shape
    # shape nodes: the root () and (c, d) where chain c first reaches its depth-d node
    node = {(): roots}
    parent: dict = {}
    kids: dict = {(): []}
    depth = {(): 0}
    for c in range(k):
        for d in range(length):
            if first[c, d] != c:
                continue
            key = (c, d)
            up = () if d == 0 else (int(first[c, d - 1]), d - 1)
            node[key], parent[key], depth[key] = chains[:, c, d], up, d + 1
            kids.setdefault(up, []).append(key)
            if d + 1 < length:
                kids.setdefault(key, [])
    Mb = {u: rows.p[node[u]].copy() for u in kids}
    Ms = {u: rows.q[node[u]].copy() for u in kids}
    at = {}
    for c in parent:
        at[c] = _find(rows.cols[node[parent[c]]], token[node[c]])
    a = {(): np.ones(n)}
    total, stay = np.zeros(n), np.ones(n)
    done = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)

    def rates(u):
        stack = [u]
        while stack:
            v = stack.pop()
            for c in kids.get(v, ()):
                ratio = a[v] * _take(Mb[v], *at[c]) / _take(Ms[v], *at[c])
                a[c] = np.where(ratio >= 1, 1.0, ratio)
                stack.append(c)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rates(())
        while True:
            c = ()
            while kids.get(c):
                c = kids[c][0]
            if c == ():
                break
            live = ~done
            total = np.where(live, total + stay * a[c] * depth[c], total)
            stay = np.where(live, stay * (1 - a[c]), stay)
            done |= stay == 0
            if done.all():
                break
            u = parent[c]
            kids[u].remove(c)
            au = a[u]
            r = np.maximum(au[:, None] * Mb[u] - Ms[u], 0.0)
            s = r.sum(axis=1)
            Mb[u] = np.where((s != 0)[:, None], r / s[:, None], Mb[u])
            den = s + 1 - au
            a[u] = np.where(den == 0, 1.0, s / den)
            q = Ms[u].copy()
            pos, found = at[c]
            hit = np.flatnonzero(found)
            q[hit, pos[hit]] = 0.0
            s = q.sum(axis=1)
            if kids[u]:  # the draft law is used up with children left: the candidates change
                bad |= (s == 0) & ~done
            Ms[u] = np.where((s != 0)[:, None], q / s[:, None], Ms[u])
            rates(u)
    return total, bad
