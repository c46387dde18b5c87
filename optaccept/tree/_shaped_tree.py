"""Drafted trees of a shape: :class:`ShapedTree`, their enumeration with probabilities and their
sampling (docs/trees.md §1b).

A shape (:class:`~optaccept.tree.Shape`, :mod:`optaccept.tree._shape`) fixes which nodes a
draft tree has; the draft model fills in their tokens, ``children`` saying how ("topk",
"swor" or "iid", described there).  A drafted tree is a :class:`ShapedTree`; its nodes are the
shape's index paths, and ``prefix(node)`` is the token string along the path.
:func:`enumerate_shaped` lists every drafted tree with its probability (exact with Fraction
laws), :func:`count_shaped` counts them first, :func:`sample_shaped` draws one and
:func:`topk_tree` builds the deterministic top-k tree.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from math import perm
from typing import Any

import numpy as np

from .._errors import MethodError
from .._lib.sampling import draws, without_replacement
from ._draft import _swor_orders
from ._shape import Path, Prefix, Shape, topk_indices

__all__ = ["ShapedTree", "enumerate_shaped", "count_shaped", "sample_shaped", "topk_tree"]


class ShapedTree:
    """One drafted tree of a shape: ``tokens[path]`` is the token of node ``path``.

    Implements the node interface the verifiers read (nodes are index paths, the
    root is ``()``, the parent of a node is ``node[:-1]``):
    * ``prefix(u)`` — the token string along the path to u (where P and Q are read);
    * ``token(c)`` — the token of node c;
    * ``child_nodes(u)`` — u's children present in this tree, in index order;
    * ``candidate_nodes(u)`` — the same list (every child is tried: siblings are
      distinct for ``"topk"`` and ``"swor"``; equal ``"iid"`` siblings are separate draws).

    Parameters
    ----------
    shape : Shape
        The tree's shape.
    children : {"topk", "swor", "iid"}
        How the children were drafted.
    tokens : dict of tuple of int to int
        The token of each node present, by index path (nodes may be absent for ``"swor"``
        and ``"topk"`` on a small support).
    """

    __slots__ = ("shape", "children", "tokens", "_prefix", "_kids")

    def __init__(self, shape: Shape, children: str, tokens: dict[Path, int]) -> None:
        self.shape = shape
        self.children = children
        self.tokens = tokens
        pre: dict[Path, Prefix] = {(): ()}
        kids: dict[Path, list[Path]] = {}
        for t in shape.paths:
            if t in tokens:
                pre[t] = pre[t[:-1]] + (tokens[t],)
                kids.setdefault(t[:-1], []).append(t)
        self._prefix = pre
        self._kids = kids

    # the node interface ---------------------------------------------------
    @property
    def drafts(self) -> str:
        return self.children

    @property
    def length(self) -> int:
        return self.shape.depth

    @property
    def k(self) -> int:
        """Number of leaves (root-to-leaf paths)."""
        return sum(1 for u in self._prefix if u not in self._kids and u != ()) or 1

    @property
    def distinct_siblings(self) -> bool:
        """False for ``"iid"`` children: equal siblings are separate nodes."""
        return self.children != "iid"

    def prefix(self, u: Path) -> Prefix:
        """The token string along the path to node u.

        Parameters
        ----------
        u : tuple of int
            A node present in the tree (``()``: the root).

        Returns
        -------
        tuple of int
            The tokens of u's ancestors below the root, then u's own.
        """
        return self._prefix[u]

    def token(self, c: Path) -> int:
        """The token of node c.

        Parameters
        ----------
        c : tuple of int
            A node below the root present in the tree.

        Returns
        -------
        int
            Its token.
        """
        return self.tokens[c]

    def child_nodes(self, u: Path) -> list[Path]:
        """u's children present in this tree, in index order.

        Parameters
        ----------
        u : tuple of int
            A node (``()``: the root).

        Returns
        -------
        list of tuple of int
            The children's index paths (empty for a leaf).
        """
        return list(self._kids.get(u, ()))

    candidate_nodes = child_nodes

    def internal_nodes(self) -> list[Path]:
        """Nodes with children present.

        Returns
        -------
        list of tuple of int
            Their index paths, root first.
        """
        return list(self._kids)

    def internal_prefixes(self) -> list[Prefix]:
        """The token strings of the nodes with children.

        Returns
        -------
        list of tuple of int
            One prefix per node of :meth:`internal_nodes`, in the same order.
        """
        return [self._prefix[u] for u in self._kids]

    def nodes(self) -> frozenset[Prefix]:
        """The token strings of all nodes, the root ``()`` included (the node set).

        Returns
        -------
        frozenset of tuple of int
            The prefixes of every node present.
        """
        return frozenset(self._prefix.values())

    @property
    def chains(self) -> tuple[Prefix, ...]:
        """Root-to-leaf token strings, leaves in index order."""
        return tuple(self._prefix[u] for u in self._prefix if u != () and u not in self._kids)

    def __repr__(self) -> str:
        return f"ShapedTree({self.shape!r}, children={self.children!r}, chains={self.chains})"


def _node_outcomes(law: np.ndarray, b: int, children: str) -> list[tuple[tuple[int, ...], Any]]:
    """The ordered child tokens of one node with their probabilities."""
    law = np.asarray(law)
    if children == "topk":
        return [(tuple(topk_indices(law, b)), law[0] * 0 + 1)]
    support = [int(x) for x in np.flatnonzero(law != 0)]
    if children == "iid":
        out = []
        for combo in itertools.product(support, repeat=b):
            pr = law[combo[0]]
            for x in combo[1:]:
                pr = pr * law[x]
            out.append((combo, pr))
        return out

    return list(_swor_orders(law, b))


def enumerate_shaped(
    q: Callable[[Prefix], np.ndarray], shape: Shape, children: str, *, max_trees: int = 200_000
) -> list[tuple[ShapedTree, Any]]:
    """Every drafted tree of ``shape`` with positive probability, with its probability
    (exact with Fraction laws).

    Parameters
    ----------
    q : callable
        The draft model, ``prefix -> next-token probabilities``.
    shape : Shape
        The tree's shape.
    children : {"topk", "swor", "iid"}
        How each node's children are drafted.
    max_trees : int
        Largest number of trees listed.

    Returns
    -------
    list of (ShapedTree, probability)
        The trees with their probabilities (Fractions for Fraction laws).

    Raises
    ------
    MethodError
        More than ``max_trees`` trees (use sampling, or ``children="topk"``).
    """
    est = count_shaped(q, shape, children, limit=max_trees)
    if est > max_trees:
        size = f"more than {max_trees:,}" if est == max_trees + 1 else f"about {est:,}"
        raise MethodError(
            f"exact enumeration: {size} draft trees of shape {shape!r} (the limit is max_trees={max_trees:,}); "
            "pass samples= (Rao-Blackwellised sampling) or use children='topk'"
        )
    out: list[tuple[ShapedTree, Any]] = []
    internal = shape.internal()

    def expand(i: int, tokens: dict[Path, int], prefixes: dict[Path, Prefix], pr: Any) -> None:
        while i < len(internal) and internal[i] not in prefixes:
            i += 1  # a node absent from this tree (swor with a small support)
        if i == len(internal):
            out.append((ShapedTree(shape, children, dict(tokens)), pr))
            if len(out) > max_trees:
                raise MethodError(
                    f"exact enumeration: more than max_trees={max_trees} draft trees of shape {shape!r}; "
                    "pass samples= (Rao-Blackwellised sampling) or use children='topk'"
                )
            return
        u = internal[i]
        for combo, pc in _node_outcomes(q(prefixes[u]), shape.branches(u), children):
            added = []
            for j, x in enumerate(combo):
                c = u + (j,)
                tokens[c] = x
                prefixes[c] = prefixes[u] + (x,)
                added.append(c)
            expand(i + 1, tokens, prefixes, pr * pc)
            for c in added:
                del tokens[c]
                del prefixes[c]

    root = q(())
    expand(0, {}, {(): ()}, root[0] * 0 + 1)
    return out


def count_shaped(q: Callable[[Prefix], np.ndarray], shape: Shape, children: str, *, limit: int) -> int:
    """The number of drafted trees of ``shape`` (exact for ``"iid"`` and ``"topk"``; for
    ``"swor"`` exact when the subtrees below a node are alike, an estimate otherwise),
    or ``limit + 1`` as soon as it exceeds ``limit`` — read from the draft law at no
    more nodes than the enumeration would visit."""

    over = limit + 1

    def cnt(v: Path, w: Prefix) -> int:
        b = shape.branches(v)
        if b == 0:
            return 1
        law = np.asarray(q(w))
        if children == "topk":
            total = 1
            for j, x in enumerate(topk_indices(law, b)):
                total *= cnt(v + (j,), w + (x,))
                if total > limit:
                    return over
            return total
        support = [int(x) for x in np.flatnonzero(law != 0)]
        m = min(b, len(support)) if children == "swor" else b
        if not support:
            return 1
        # swor: ordered distinct tokens are s!/(s-m)! of the s^m tuples
        num, den = (perm(len(support), m), len(support) ** m) if children == "swor" else (1, 1)
        total = 1
        for j in range(m):
            sj = 0
            for x in support:
                sj += cnt(v + (j,), w + (x,))
                if sj * num > limit * den:
                    return over
            total *= sj
            if total * num > limit * den:  # the count only grows with the next children
                return over
        return total * num // den

    return cnt((), ())


def topk_tree(q: Callable[[Prefix], np.ndarray], shape: Shape) -> ShapedTree:
    """The deterministic tree of the b most probable draft tokens at every node.

    A node with more children than the vocabulary has tokens gets one child per token;
    the missing children and their subtrees are absent (as for ``"swor"``)."""
    tokens: dict[Path, int] = {}
    prefixes: dict[Path, Prefix] = {(): ()}
    for u in shape.internal():
        if u not in prefixes:
            continue  # an absent node (its parent had fewer tokens than children)
        for j, x in enumerate(topk_indices(q(prefixes[u]), shape.branches(u))):
            tokens[u + (j,)] = x
            prefixes[u + (j,)] = prefixes[u] + (x,)
    return ShapedTree(shape, "topk", tokens)


def sample_shaped(
    q: Callable[[Prefix], np.ndarray], shape: Shape, children: str, rng: np.random.Generator
) -> ShapedTree:
    """Draw one tree of ``shape`` from the draft model (node by node, root first).

    Parameters
    ----------
    q : callable
        The draft model, ``prefix -> next-token probabilities``.
    shape : Shape
        The tree's shape.
    children : {"topk", "swor", "iid"}
        How each node's children are drafted (``"topk"``: the deterministic tree).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ShapedTree
        The drafted tree.
    """
    if children == "topk":
        return topk_tree(q, shape)
    tokens: dict[Path, int] = {}
    prefixes: dict[Path, Prefix] = {(): ()}
    for u in shape.internal():
        if u not in prefixes:
            continue
        law = np.asarray(q(prefixes[u]), dtype=np.float64)
        b = shape.branches(u)
        if children == "iid":
            xs = [int(i) for i in draws(law, rng, b)]
        else:
            xs = [int(x) for x in without_replacement(law, b, rng)]
        for j, x in enumerate(xs):
            tokens[u + (j,)] = x
            prefixes[u + (j,)] = prefixes[u] + (x,)
    return ShapedTree(shape, children, tokens)
