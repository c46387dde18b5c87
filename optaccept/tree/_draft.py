"""Draft trees: k chains of ``length`` tokens and their laws (docs/trees.md §1).

``drafts="iid"``
    k chains drawn independently from the draft model.  Chains sharing a prefix
    share the tree's nodes; the children drawn at a node u, in chain order, are
    i.i.d. from q(·|u) given the number of chains through u.
``drafts="swor"``
    The k first tokens are drawn without replacement from q(·|root) (k distinct
    children of the root, as in recursive rejection sampling without replacement,
    Jeon et al., arXiv 2402.14160); every node below the root carries one chain,
    continued from the draft model.  When q(·|root) has fewer than k tokens, the
    tree has one chain per token of its support.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from math import comb, factorial
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.sampling import draw, without_replacement
from .._lib.validation import check_choice
from ..drafts import law_names

__all__ = ["DraftTree", "DRAFT_LAWS", "enumerate_trees", "sample_tree", "count_trees"]

#: The draft laws a tree's children are drawn from: the registry's sequential laws (successive draws from q).
DRAFT_LAWS = law_names(sequential=True)
Prefix = tuple[int, ...]


class DraftTree:
    """One drafted tree: ``chains[j]`` is the j-th chain (tuple of ``length`` tokens).

    ``draws(u)`` lists the next tokens of the chains through node u in chain order
    (duplicates kept), ``children(u)`` the distinct ones in order of first appearance,
    and ``candidates(u)`` what a token-level verifier tries at u, in order:
    * ``"iid"``: every draw, duplicates included — equal siblings are separate i.i.d.
      draws, and recursive rejection sampling with replacement tries each of them;
    * ``"swor"``: the distinct children — siblings drawn without replacement are
      distinct tokens, so several chains through the same child share that child (one
      node, verified once). Trying such a child twice would be wrong: after its first
      rejection its draft mass is 0, and a second try would accept it with
      probability 1, which is not lossless.

    Parameters
    ----------
    chains : tuple of tuple of int
        The chains, each of ``length`` tokens, in draw order.
    length : int
        Tokens per chain.
    drafts : {"iid", "swor"}
        How the chains were drawn.
    """

    __slots__ = ("chains", "length", "drafts", "_draws")

    def __init__(self, chains: tuple[Prefix, ...], length: int, drafts: str) -> None:
        self.chains = chains
        self.length = length
        self.drafts = drafts
        draws: dict[Prefix, list[int]] = {}
        for c in chains:
            for d in range(length):
                draws.setdefault(c[:d], []).append(c[d])
        self._draws = draws

    @property
    def k(self) -> int:
        return len(self.chains)

    def draws(self, u: Prefix) -> list[int]:
        """The next tokens of the chains through node u, in chain order (duplicates kept).

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        list of int
            One token per chain through u (empty at a leaf).
        """
        return self._draws.get(u, [])

    def children(self, u: Prefix) -> list[int]:
        """The distinct next tokens at node u, in order of first appearance.

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        list of int
            The children's tokens.
        """
        return list(dict.fromkeys(self._draws.get(u, [])))

    def candidates(self, u: Prefix) -> list[int]:
        """The tokens a token-level verifier tries at node u, in order (see the class).

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        list of int
            :meth:`children` for ``"swor"``, :meth:`draws` for ``"iid"``.
        """
        return self.children(u) if self.drafts == "swor" else self.draws(u)

    def internal_nodes(self) -> list[Prefix]:
        """Nodes with children (depth < length), root first.

        Returns
        -------
        list of tuple of int
            Their token prefixes.
        """
        return list(self._draws)

    # the node interface shared with shaped trees (nodes here are token prefixes)
    internal_prefixes = internal_nodes
    #: siblings are distinct tokens (chains through one token share its node)
    distinct_siblings = True

    @staticmethod
    def prefix(u: Prefix) -> Prefix:
        """The token string of node u: the node itself (nodes here are token prefixes).

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        tuple of int
            ``u``.
        """
        return u

    @staticmethod
    def token(c: Prefix) -> int:
        """The token of node c: its last.

        Parameters
        ----------
        c : tuple of int
            A node below the root.

        Returns
        -------
        int
            ``c[-1]``.
        """
        return c[-1]

    def child_nodes(self, u: Prefix) -> list[Prefix]:
        """The distinct children of u, as nodes.

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        list of tuple of int
            ``u + (x,)`` for each child token x.
        """
        return [u + (x,) for x in self.children(u)]

    def candidate_nodes(self, u: Prefix) -> list[Prefix]:
        """The nodes a token-level verifier tries at u, in order (see ``candidates``).

        Parameters
        ----------
        u : tuple of int
            A node, as its token prefix (``()``: the root).

        Returns
        -------
        list of tuple of int
            ``u + (x,)`` for each candidate token x (repeats kept for ``"iid"``).
        """
        return [u + (x,) for x in self.candidates(u)]

    def nodes(self) -> frozenset[Prefix]:
        """All nodes, the root ``()`` included.

        Returns
        -------
        frozenset of tuple of int
            Every prefix of every chain.
        """
        return frozenset(c[:d] for c in self.chains for d in range(self.length + 1))

    def __repr__(self) -> str:
        return f"DraftTree(chains={self.chains}, drafts={self.drafts!r})"


def _check(length: Any, k: Any, drafts: Any) -> tuple[int, int, str]:
    for name, v in (("length", length), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"{name}: must be an integer >= 1, got {v!r}")
    check_choice("drafts", drafts, DRAFT_LAWS)
    return int(length), int(k), drafts


def _chains(q: Callable[[Prefix], np.ndarray], start: Prefix, steps: int) -> Iterator[tuple[Prefix, Any]]:
    """All continuations of ``steps`` tokens after ``start`` with positive draft probability."""
    if steps == 0:
        yield (), 1
        return
    law = q(start)
    for x in np.flatnonzero(law != 0):
        x = int(x)
        for rest, pr in _chains(q, start + (x,), steps - 1):
            yield (x,) + rest, law[x] * pr


def _swor_orders(law: np.ndarray, m: int) -> Iterator[tuple[Prefix, Any]]:
    """Ordered draws of m distinct tokens without replacement, with their probabilities."""
    support = [int(x) for x in np.flatnonzero(law != 0)]
    m = min(m, len(support))
    for order in itertools.permutations(support, m):
        pr = law[support[0]] * 0 + 1  # 1 of the law's number type
        left = set(support)
        for x in order:
            # remaining mass summed afresh (1 - drawn mass would cancel catastrophically)
            pr = pr * law[x] / sum(law[y] for y in left)
            left.discard(x)
        yield order, pr


def count_trees(q: Callable[[Prefix], np.ndarray], length: int, k: int, drafts: str) -> int:
    """Number of ordered trees with positive probability (an upper bound for iid)."""
    support0 = int(np.count_nonzero(q(())))
    n = q(()).size
    if drafts == "iid":
        return n ** (length * k)
    m = min(k, support0)
    return int(np.prod(range(support0 - m + 1, support0 + 1))) * n ** ((length - 1) * m)


def enumerate_trees(
    q: Callable[[Prefix], np.ndarray], length: int, k: int, drafts: str, *, max_trees: int = 200_000
) -> list[tuple[DraftTree, Any]]:
    """Every draft tree of positive probability, as ordered chains, with its probability.

    Parameters
    ----------
    q : callable
        The draft model, ``prefix -> next-token probabilities``.
    length : int
        Tokens per chain.
    k : int
        Number of chains.
    drafts : {"iid", "swor"}
        How the chains are drawn.
    max_trees : int
        Largest number of trees listed.

    Returns
    -------
    list of (DraftTree, probability)
        The trees with their probabilities (Fractions for Fraction laws).

    Raises
    ------
    MethodError
        More than ``max_trees`` trees (use the sampled estimate).
    """
    length, k, drafts = _check(length, k, drafts)
    bound = count_trees(q, length, k, drafts)
    if bound > max_trees:
        raise MethodError(
            f"exact enumeration: up to {bound} draft trees (more than max_trees={max_trees}); "
            "use tree.sample_accepted_tokens (Rao-Blackwellised sampling) instead"
        )
    out: list[tuple[DraftTree, Any]] = []
    if drafts == "iid":
        chains = list(_chains(q, (), length))
        for combo in itertools.product(chains, repeat=k):
            pr = combo[0][1]
            for c in combo[1:]:
                pr = pr * c[1]
            out.append((DraftTree(tuple(c[0] for c in combo), length, drafts), pr))
        return out
    for order, pr0 in _swor_orders(q(()), k):
        tails = [list(_chains(q, (x,), length - 1)) for x in order]
        for combo in itertools.product(*tails):
            pr = pr0
            for _, pt in combo:
                pr = pr * pt
            chains = tuple((x,) + t for x, (t, _) in zip(order, combo))
            out.append((DraftTree(chains, length, drafts), pr))
    return out


def _compositions(k: int, j: int) -> Iterator[tuple[int, ...]]:
    """Ordered ways of writing k as a sum of j positive integers."""
    for cuts in itertools.combinations(range(1, k), j - 1):
        edges = (0,) + cuts + (k,)
        yield tuple(edges[i + 1] - edges[i] for i in range(j))


def iid_node_sets(chains: int, k: int) -> int:
    """The number of node sets of k i.i.d. chains drawn from ``chains`` chains (sets of at
    most k distinct chains)."""

    return sum(comb(chains, j) for j in range(1, min(k, chains) + 1))


def node_set_law(
    q: Callable[[Prefix], np.ndarray], length: int, k: int, drafts: str, *, max_sets: int = 2_000_000
) -> dict[frozenset, Any]:
    """The law of the draft tree's node set, without listing ordered trees.

    A tree of k chains of ``length`` tokens is determined, as a node set, by the set C of
    its distinct chains.  For i.i.d. chains, P(C) = Σ k!/(m₁!⋯m_j!)·Π Q(c)^{m_c} over the
    multiplicities m_c ≥ 1 with Σ m_c = k (positive terms only: no cancellation); for
    chains with distinct roots drawn without replacement, P(C) = P(root set)·Π Q(tail | root),
    P(root set) summed over the orders of the draw.  ``len(result)`` is the number of node
    sets, against k^… ordered trees for :func:`enumerate_trees`: the sequence-level LP
    needs only this law (docs/trees.md §4).

    Raises
    ------
    MethodError
        More than ``max_sets`` node sets.
    """

    length, k, drafts = _check(length, k, drafts)
    if drafts == "iid":
        chains = list(_chains(q, (), length))
        N = len(chains)
        count = iid_node_sets(N, k)
        if count > max_sets:
            raise MethodError(f"exact LP: {count} draft node sets (more than max_sets={max_sets})")
        out: dict[frozenset, Any] = {}
        nodes = [frozenset(c[:d] for d in range(length + 1)) for c, _ in chains]
        for j in range(1, min(k, N) + 1):
            parts = [(m, factorial(k) // int(np.prod([factorial(x) for x in m]))) for m in _compositions(k, j)]
            for idx in itertools.combinations(range(N), j):
                total = 0
                for m, coef in parts:
                    term = coef
                    for i, e in zip(idx, m):
                        term = term * chains[i][1] ** e
                    total = total + term
                out[frozenset().union(*(nodes[i] for i in idx))] = total
        return out
    law0 = q(())
    support = [int(x) for x in np.flatnonzero(law0 != 0)]
    m = min(k, len(support))
    tails = {x: list(_chains(q, (x,), length - 1)) for x in support}
    count = comb(len(support), m) * max(len(t) for t in tails.values()) ** m
    if count > max_sets:
        raise MethodError(f"exact LP: up to {count} draft node sets (more than max_sets={max_sets})")
    root_sets: dict[tuple[int, ...], Any] = {}  # P(root set): the draw's orders summed
    for order, pr in _swor_orders(law0, m):
        R = tuple(sorted(order))
        root_sets[R] = root_sets[R] + pr if R in root_sets else pr
    out = {}
    for R, pr_set in root_sets.items():
        for combo in itertools.product(*(tails[x] for x in R)):
            pr = pr_set
            nodes: set = {()}
            for x, (t, pt) in zip(R, combo):
                pr = pr * pt
                c = (x,) + t
                nodes.update(c[:d] for d in range(1, length + 1))
            out[frozenset(nodes)] = pr
    return out


def sample_tree(
    q: Callable[[Prefix], np.ndarray], length: int, k: int, drafts: str, rng: np.random.Generator
) -> DraftTree:
    """Draw one draft tree from the draft model (autoregressively, chain by chain).

    Parameters
    ----------
    q : callable
        The draft model, ``prefix -> next-token probabilities``.
    length : int
        Tokens per chain.
    k : int
        Number of chains (at most |supp q(·|root)| distinct first tokens for ``"swor"``).
    drafts : {"iid", "swor"}
        How the chains are drawn.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    DraftTree
        The drafted tree.
    """
    if drafts == "iid":
        firsts = [draw(np.asarray(q(()), dtype=np.float64), rng) for _ in range(k)]
    else:
        firsts = [int(x) for x in without_replacement(np.asarray(q(()), dtype=np.float64), k, rng)]
    chains = []
    for x in firsts:
        c = (x,)
        for _ in range(length - 1):
            c = c + (draw(np.asarray(q(c), dtype=np.float64), rng),)
        chains.append(c)
    return DraftTree(tuple(chains), length, drafts)
