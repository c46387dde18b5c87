"""Draft trees as stored: every node's token, parent and depth with the target's and the
draft's next-token laws read there (:class:`DraftTrees`, the file format
``optaccept.llm.DraftTrees/1``); the trees' laws answer a tree computation offline as a
:class:`StoredModel` (``_stored_model``), and the shipped files are found by :func:`trees_path`
(``_data``); both stay importable from here.  The trees are grown from language models by
:func:`optaccept.llm.extract_trees`; the tables of :mod:`optaccept.real` and the analyses of
:mod:`optaccept.tree` read them from here, with no model (and no torch) loaded.  The format
name keeps its first home, so that files written before the move still load.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import check_choice, check_k
from ..tree._draft import DraftTree
from ._data import EXTENDED_TREES_FILES, TREES_FILES, trees_path
from ._storage import Distributions, SparseRows, _read_archive, _write_archive
from ._stored_model import StoredModel

__all__ = ["FORMAT", "TREES_FILES", "EXTENDED_TREES_FILES", "DraftTrees", "StoredModel", "trees_path"]

FORMAT = "optaccept.llm.DraftTrees/1"

# ----------------------------------------------------------------------------- storage


class DraftTrees:
    """Draft trees with the target's and the draft's next-token distribution at every node.

    Node arrays (one entry per node, trees one after another, each tree's nodes in
    breadth-first order with its root first):
    ``tree``, ``parent`` (global node index, -1 at a root), ``depth`` (0 at the root),
    ``token`` (the token leading to the node, -1 at a root), and the rows
    :attr:`target` (p) and :attr:`draft` (q): the next-token laws given prompt + the
    node's path.  Tree arrays: ``prompt_index`` and ``chains``, shape
    (trees, k, length): the node reached by each chain after each of its tokens, in
    the order the chains were drafted.  ``meta`` holds the provenance.  Rows are stored
    at every node, the leaves included (the target's row at a leaf is the law of the bonus
    token; accepted-token counts read the internal nodes only).

    Parameters
    ----------
    target, draft : array_like, shape (nodes, vocab)
        The rows p and q (or stored sparse rows as ``target`` with ``draft=None``).
    tree, parent, depth, token : array_like of int, shape (nodes,)
        The node arrays above.
    prompt_index : array_like of int, shape (trees,)
        The prompt each tree follows.
    chains : array_like of int, shape (trees, k, length)
        The node reached by each chain after each of its tokens.
    meta : dict, optional
        Provenance.

    Raises
    ------
    InputError
        If an array has the wrong shape, a tree index is out of range, or the trees do not
        each have one root, in order.

    Examples
    --------
    >>> from optaccept import real
    >>> trees = real.DraftTrees.load(real.trees_path("iid"))
    >>> int((trees.parent == -1).sum())  # one root per tree: 2 trees after each of the 36 built-in prompts
    72
    >>> trees.target.shape[0] == trees.parent.shape[0]  # a target row at every node
    True
    """

    def __init__(
        self,
        target: Any,
        draft: Any,
        *,
        tree: Any,
        parent: Any,
        depth: Any,
        token: Any,
        prompt_index: Any,
        chains: Any,
        meta: dict[str, Any] | None = None,
    ) -> None:
        # Rows are kept on each node's union of supports: dense (nodes, vocab) rows of a
        # data set of thousands of trees over a 49,152-token vocabulary would not fit memory.
        rows = target if isinstance(target, SparseRows) and draft is None else SparseRows.from_dense(target, draft)
        m = rows.n_rows
        self._rows = rows
        self.tree = self._ints(tree, (m,), "tree")
        self.parent = self._ints(parent, (m,), "parent")
        self.depth = self._ints(depth, (m,), "depth")
        self.token = self._ints(token, (m,), "token")
        self.prompt_index = np.array(prompt_index, dtype=np.int64).reshape(-1)
        ch = np.array(chains, dtype=np.int64)
        if ch.ndim != 3 or ch.shape[0] != self.prompt_index.size:
            raise InputError(f"chains: must have shape (trees, k, length), got {ch.shape}")
        self.chains_nodes = ch
        self.meta = dict(meta or {})
        n_trees = self.prompt_index.size
        if m and (self.tree.min() < 0 or self.tree.max() >= n_trees):
            raise InputError("tree: node tree indices out of range")
        roots = np.flatnonzero(self.parent < 0)
        if not np.array_equal(self.tree[roots], np.arange(n_trees)):
            raise InputError("parent: every tree needs exactly one root, trees in order")
        self._roots = roots
        for a in (self.tree, self.parent, self.depth, self.token, self.prompt_index, self.chains_nodes):
            a.setflags(write=False)
        self._prefix_index: list[dict[tuple[int, ...], int]] | None = None
        self._compact: dict[int, tuple[Any, ...]] | None = None

    @staticmethod
    def _ints(x: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
        a = np.array(x, dtype=np.int64).reshape(-1)
        if a.shape != shape:
            raise InputError(f"{name}: must have one entry per node {shape}, got {a.shape}")
        return a

    # ------------------------------------------------------------------ access

    @property
    def target(self) -> np.ndarray:
        """(nodes, vocab) float32 target distributions p: a dense copy of the stored rows
        (nodes × vocab floats; :meth:`rows` reads selected nodes)."""
        return self._rows.dense()[0]

    @property
    def draft(self) -> np.ndarray:
        """(nodes, vocab) float32 draft distributions q: a dense copy (see :attr:`target`)."""
        return self._rows.dense()[1]

    @property
    def n_trees(self) -> int:
        return int(self.prompt_index.size)

    @property
    def n_nodes(self) -> int:
        return int(self.tree.size)

    @property
    def vocab_size(self) -> int:
        return self._rows.vocab_size

    @property
    def k(self) -> int:
        return int(self.chains_nodes.shape[1])

    @property
    def length(self) -> int:
        return int(self.chains_nodes.shape[2])

    @property
    def drafts(self) -> str:
        return str(self.meta.get("drafts", "iid"))

    def __len__(self) -> int:
        return self.n_trees

    def __repr__(self) -> str:
        return (
            f"DraftTrees({self.n_trees} trees, k={self.k}, length={self.length}, drafts={self.drafts!r}, "
            f"{self.n_nodes} nodes, vocab {self.vocab_size})"
        )

    def _repr_html_(self) -> str:
        m = self.meta
        rows = [
            ("trees", self.n_trees),
            ("k chains × length", f"{self.k} × {self.length} ({self.drafts})"),
            ("nodes", self.n_nodes),
            ("vocabulary", self.vocab_size),
            ("target", f"{m.get('target_model', '?')} {m.get('target_warp', '')}"),
            ("draft", f"{m.get('draft_model', '?')} {m.get('draft_warp', '')}"),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(a))}</th>"
            f"<td style='text-align:left'>{html.escape(str(b))}</td></tr>"
            for a, b in rows
        )
        return f"<table><caption>DraftTrees</caption>{body}</table>"

    def nodes(self, i: int) -> np.ndarray:
        """Global indices of tree ``i``'s nodes (root first, breadth-first).

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).

        Returns
        -------
        ndarray of int
            The node indices.

        Raises
        ------
        InputError
            If ``i`` is not a tree index.
        """
        i = self._tree_index(i)
        return np.flatnonzero(self.tree == i)

    def _tree_index(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_trees:
            raise InputError(f"i: must be a tree index in [0, {self.n_trees}), got {i!r}")
        return int(i)

    def path(self, node: int) -> tuple[int, ...]:
        """The tokens from the root to ``node`` (the node's prefix after the prompt).

        Parameters
        ----------
        node : int
            A global node index.

        Returns
        -------
        tuple of int
            The prefix (``()`` at a root).
        """
        out = []
        j = int(node)
        while self.parent[j] >= 0:
            out.append(int(self.token[j]))
            j = int(self.parent[j])
        return tuple(reversed(out))

    def chains(self, i: int) -> list[tuple[int, ...]]:
        """Tree ``i``'s k drafted chains as token tuples, in drafting order.

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).

        Returns
        -------
        list of tuple of int
            The chains.

        Raises
        ------
        InputError
            If ``i`` is not a tree index.
        """
        i = self._tree_index(i)
        return [tuple(int(self.token[j]) for j in row) for row in self.chains_nodes[i]]

    def prefixes(self, i: int) -> dict[tuple[int, ...], int]:
        """Tree ``i``'s node prefixes (token tuples after the prompt) -> global node index.

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).

        Returns
        -------
        dict of tuple of int to int
            Prefix → node index, for every node of the tree.

        Raises
        ------
        InputError
            If ``i`` is not a tree index.
        """
        i = self._tree_index(i)
        if self._prefix_index is None:
            index: list[dict[tuple[int, ...], int]] = [dict() for _ in range(self.n_trees)]
            paths: list[tuple[int, ...]] = [()] * self.n_nodes
            for j in np.argsort(self.depth, kind="stable").tolist():  # parents before children
                par = int(self.parent[j])
                if par >= 0:
                    paths[j] = paths[par] + (int(self.token[j]),)
            for j, (t, w) in enumerate(zip(self.tree.tolist(), paths, strict=True)):
                index[t][w] = j
            self._prefix_index = index
        return self._prefix_index[i]

    def rows(self, nodes: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows of p and q at ``nodes`` (default all) as float64, renormalised.

        Parameters
        ----------
        nodes : array_like of int or bool, optional
            The nodes (a numpy index of the node axis; None: all).

        Returns
        -------
        p, q : ndarray of float64, shape (rows, vocab)
            Target and draft rows, each summing to 1.
        """
        sel = np.arange(self.n_nodes) if nodes is None else np.arange(self.n_nodes)[np.asarray(nodes)]
        p, q = self._rows.dense(sel, np.float64)
        p /= p.sum(axis=1, keepdims=True)
        q /= q.sum(axis=1, keepdims=True)
        return p, q

    def models(self, i: int, *, compact: bool = False) -> tuple[StoredModel, StoredModel]:
        """Tree ``i`` as (target, draft) sequence models replaying the stored rows.

        Each is a callable ``prefix -> float64 distribution`` defined on the tree's
        node prefixes (``()`` is the root); any other prefix raises ``KeyError``.
        ``compact=True`` keeps only the tokens with p > 0 or q > 0 at some node of
        the tree, renumbered 0, 1, ... in vocabulary order (prefixes are then in the
        new numbering, see :meth:`vocabulary`): every verifier's value is unchanged
        and truncated rows get small.

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).
        compact : bool
            Keep only the tree's support, renumbered.

        Returns
        -------
        target, draft : StoredModel
            The two replaying models.

        Raises
        ------
        InputError
            If ``i`` is not a tree index.
        """
        if compact:
            if self._compact is None:
                self._compact = {}
            if i not in self._compact:
                self._compact[i] = self._models(i, True)
            return self._compact[i][:2]
        return self._models(i, False)[:2]

    def _models(self, i: int, compact: bool) -> tuple[StoredModel, StoredModel]:
        index = self.prefixes(i)
        nodes = list(index.values())
        keys = list(index)
        if compact:  # straight from the sparse rows: no (nodes, vocabulary) dense copy
            keep = self.vocabulary(i)
            new = {int(t): j for j, t in enumerate(keep)}
            p, q = self._rows.compact(nodes, keep)
            keys = [tuple(new[t] for t in key) for key in keys]
        else:
            p, q = self.rows(nodes)
        where = f"tree {i}"
        return (
            StoredModel(dict(zip(keys, p, strict=True)), "target", where),
            StoredModel(dict(zip(keys, q, strict=True)), "draft", where),
            new if compact else None,
        )

    def vocabulary(self, i: int) -> np.ndarray:
        """Tokens with p > 0 or q > 0 at some node of tree ``i`` (sorted): the compact
        vocabulary of ``models(i, compact=True)``.

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).

        Returns
        -------
        ndarray of int
            The tokens, sorted.

        Raises
        ------
        InputError
            If ``i`` is not a tree index.
        """
        return self._rows.support(self.nodes(i))

    def draft_tree(self, i: int, *, k: int | None = None, length: int | None = None, compact: bool = False) -> Any:
        """Tree ``i`` as an :class:`optaccept.tree.DraftTree`, optionally cut to its first
        ``k`` chains and their first ``length`` tokens.

        The cut tree is a sample of the draft law with those k and length: i.i.d.
        chains stay i.i.d., and the first k of chains drawn sequentially without
        replacement at the root are drawn without replacement.

        Parameters
        ----------
        i : int
            A tree index in [0, n_trees).
        k : int, optional
            Chains kept (default: all stored).
        length : int, optional
            Tokens kept per chain (default: all stored).
        compact : bool
            Renumber the tokens as :meth:`models` does with ``compact=True``.

        Returns
        -------
        DraftTree
            The (cut) tree.

        Raises
        ------
        InputError
            If ``i`` is not a tree index, or ``k`` or ``length`` exceeds what is stored.
        """

        k = self.k if k is None else check_k(k)
        length = self.length if length is None else check_k(length, "length")
        if k > self.k or length > self.length:
            raise InputError(
                f"k, length: at most the stored k = {self.k} and length = {self.length}, got {k} and {length}"
            )
        chains = [c[:length] for c in self.chains(i)[:k]]
        if compact:
            self.models(i, compact=True)
            new = self._compact[i][2]
            chains = [tuple(new[t] for t in c) for c in chains]
        return DraftTree(tuple(chains), length, self.drafts)

    def items(self, *, k: int | None = None, length: int | None = None, compact: bool = True):
        """``(DraftTree, target, draft)`` for every tree (cut to ``k``, ``length``), the
        input of :func:`optaccept.tree.rao_blackwell`: accepted tokens per step averaged
        over the stored trees, from the file alone (``compact``: see :meth:`models`).

        The returned iterable has ``len`` and ``groups`` (each tree's prompt index), so
        ``rao_blackwell`` clusters its standard error by prompt.

        Parameters
        ----------
        k : int, optional
            Chains kept per tree (default: all stored).
        length : int, optional
            Tokens kept per chain (default: all stored).
        compact : bool
            Replay each tree on its own support (see :meth:`models`).

        Returns
        -------
        iterable of (DraftTree, StoredModel, StoredModel)
            One triple per tree, with ``len`` and ``groups``.
        """
        return _Items(self, k, length, compact)

    def as_distributions(self, *, internal_only: bool = False) -> Distributions:
        """The node rows as :class:`Distributions` (prompt index, depth as step, token),
        e.g. for ``gap_table`` or :func:`draft_quality`; ``internal_only`` drops the leaves.

        Parameters
        ----------
        internal_only : bool
            Keep only the nodes above the last depth.

        Returns
        -------
        Distributions
            One position per node kept.
        """
        sel = self.depth < self.length if internal_only else np.ones(self.n_nodes, bool)
        target, draft = self._rows.dense(np.flatnonzero(sel))
        return Distributions(
            target,
            draft,
            prompt_index=self.prompt_index[self.tree[sel]],
            step=self.depth[sel],
            token=self.token[sel],
            meta=self.meta,
        )

    def select(self, trees: Any) -> DraftTrees:
        """The trees selected by ``trees`` (indices, a slice or a boolean mask), renumbered.

        Parameters
        ----------
        trees : int array, slice or bool array
            A numpy index of the tree axis.

        Returns
        -------
        DraftTrees
            The selected trees, numbered 0, 1, … in the order selected.
        """
        idx = np.arange(self.n_trees)[trees]
        idx = np.atleast_1d(idx)
        keep = np.isin(self.tree, idx)
        old = np.flatnonzero(keep)
        new_of_old = np.full(self.n_nodes, -1, dtype=np.int64)
        new_of_old[old] = np.arange(old.size)
        new_tree = np.full(self.n_trees, -1, dtype=np.int64)
        new_tree[idx] = np.arange(idx.size)
        order = np.argsort(new_tree[self.tree[old]], kind="stable")
        old = old[order]
        new_of_old[old] = np.arange(old.size)
        parent = np.where(self.parent[old] >= 0, new_of_old[np.maximum(self.parent[old], 0)], -1)
        return DraftTrees(
            self._rows.take(old),
            None,
            tree=new_tree[self.tree[old]],
            parent=parent,
            depth=self.depth[old],
            token=self.token[old],
            prompt_index=self.prompt_index[idx],
            chains=new_of_old[self.chains_nodes[idx]],
            meta=self.meta,
        )

    @classmethod
    def concatenate(cls, parts: Sequence[DraftTrees], meta: dict[str, Any] | None = None) -> DraftTrees:
        """The trees of several parts, one after another (same vocabulary, k and length).

        Parameters
        ----------
        parts : sequence of DraftTrees
            The parts, in order.
        meta : dict, optional
            Provenance of the result (default: the first part's).

        Returns
        -------
        DraftTrees
            All trees of the parts.

        Raises
        ------
        InputError
            If ``parts`` is empty or their vocabulary, k or length differ.
        """
        if not parts:
            raise InputError("parts: nothing to concatenate")
        shapes = {(p.vocab_size, p.k, p.length) for p in parts}
        if len(shapes) != 1:
            raise InputError(f"parts: (vocabulary, k, length) differ: {sorted(shapes)}")
        node_off = np.cumsum([0] + [p.n_nodes for p in parts])
        tree_off = np.cumsum([0] + [p.n_trees for p in parts])
        return cls(
            SparseRows.concatenate([p._rows for p in parts]),
            None,
            tree=np.concatenate([p.tree + t for p, t in zip(parts, tree_off, strict=False)]),
            parent=np.concatenate(
                [np.where(p.parent >= 0, p.parent + o, -1) for p, o in zip(parts, node_off, strict=False)]
            ),
            depth=np.concatenate([p.depth for p in parts]),
            token=np.concatenate([p.token for p in parts]),
            prompt_index=np.concatenate([p.prompt_index for p in parts]),
            chains=np.concatenate([p.chains_nodes + o for p, o in zip(parts, node_off, strict=False)]),
            meta=parts[0].meta if meta is None else meta,
        )

    # ----------------------------------------------------------------- storage

    def _arrays(self, sparse: bool, dtype: str) -> dict[str, np.ndarray]:
        if sparse:
            out = self._rows.arrays()
        else:
            target, draft = self._rows.dense()
            out = {"target": target, "draft": draft}
        for name in ("target", "draft", "target_values", "draft_values"):
            if name in out:
                out[name] = out[name].astype(dtype)
        out.update(
            tree=self.tree,
            parent=self.parent,
            depth=self.depth,
            token=self.token,
            prompt_index=self.prompt_index,
            chains=self.chains_nodes,
        )
        return out

    def save(self, path: str | os.PathLike, *, sparse: bool | None = None, dtype: str = "float32") -> Path:
        """Write a compressed ``.npz`` with provenance and a SHA-256 checksum.

        ``sparse=None`` stores each node's union of supports when under half of the
        entries are nonzero (truncated distributions), else dense rows.
        ``dtype="float16"`` halves the size of dense rows at ~1e-3 relative
        precision (rows are renormalised on use); the default keeps float32.

        Parameters
        ----------
        path : str or os.PathLike
            The file written.
        sparse : bool or None
            Store each node's union of supports (True), dense rows (False), or choose (None).
        dtype : {"float32", "float16"}
            Precision of the stored rows.

        Returns
        -------
        pathlib.Path
            The path written.

        Raises
        ------
        InputError
            If ``dtype`` is neither.
        """
        check_choice("dtype", dtype, ("float32", "float16"))
        if sparse is None:
            sparse = self._rows.nnz < 0.5 * self.n_nodes * self.vocab_size
        arrays = self._arrays(bool(sparse), dtype)
        meta_json = json.dumps({"format": FORMAT, **self.meta, "row_dtype": dtype}, sort_keys=True)
        return _write_archive(path, arrays, meta_json)

    @classmethod
    def load(cls, path: str | os.PathLike, *, verify: bool = True) -> DraftTrees:
        """Read a file written by :meth:`save`; checks the checksum unless told not to.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        verify : bool
            Check the checksum.

        Returns
        -------
        DraftTrees
            The trees, their rows and provenance.

        Raises
        ------
        InputError
            If the file is missing, damaged, of another format, or fails its checksum.
        """
        kind = "an optaccept draft-tree archive (.npz written by 'extract_trees')"
        rows, _, data, meta = _read_archive(path, kind, FORMAT, verify, dense=False)
        meta.pop("row_dtype", None)
        return cls(
            rows,
            None,
            tree=data["tree"],
            parent=data["parent"],
            depth=data["depth"],
            token=data["token"],
            prompt_index=data["prompt_index"],
            chains=data["chains"],
            meta=meta,
        )


# ---------------------------------------------------------------------- sampling


class _Items:
    """``(DraftTree, target, draft)`` for every stored tree, with each tree's prompt."""

    def __init__(self, trees: DraftTrees, k: int | None, length: int | None, compact: bool) -> None:
        self._trees, self._k, self._length, self._compact = trees, k, length, compact
        self.groups = np.asarray(trees.prompt_index)

    def __len__(self) -> int:
        return self._trees.n_trees

    def __iter__(self):
        f = self._trees
        for i in range(f.n_trees):
            target, draft = f.models(i, compact=self._compact)
            yield f.draft_tree(i, k=self._k, length=self._length, compact=self._compact), target, draft
