"""Expected accepted length of one drafted tree under each verifier, its randomness summed out.

Every function takes a drafted tree — a :class:`~optaccept.tree._draft.DraftTree` of
chains or a :class:`~optaccept.tree._shape.ShapedTree` of a shape, both read through
one node interface — and the target and draft laws ``P(u)``, ``Q(u)`` at its internal
nodes, and returns the verifier's expected number of accepted draft tokens *given the tree* (docs/trees.md §2).  The
same code runs on float64 arrays and on object arrays of Fractions (exact).

* :func:`token_value` — recursive rejection sampling down the tree: Leviathan et al.
  (arXiv 2211.17192) for one chain, SpecInfer's multi-step speculative sampling
  (Miao et al., arXiv 2305.09781) for iid trees, and its without-replacement
  variant (Jeon et al., arXiv 2402.14160) for swor trees.
* :func:`target_only_value` — the target-only rule of engines that keep no draft
  probabilities: Y ~ p(·|u), move to the child carrying Y if any.
* :func:`block_value` — block verification of one chain (Sun et al., ICLR 2025,
  arXiv 2403.10444, Algorithm 2).
* :func:`traversal_value` — traversal verification (Weng et al., NeurIPS 2025,
  arXiv 2505.12398): leaf-to-root, with sequence-level acceptance rates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import MethodError

__all__ = ["token_value", "target_only_value", "block_value", "traversal_value", "block_rates", "pos"]

Prefix = tuple[int, ...]
Law = Callable[[Prefix], np.ndarray]
_TOPK_REFUSED = (
    "verifier {verifier!r} compares p with the law q the drafts were drawn from, so it is lossless only "
    "for children drawn from q: top-k children are deterministic; use verifier='target_only' "
    "(optimal for a deterministic tree) or children='swor'/'iid'"
)


def pos(v: np.ndarray) -> np.ndarray:
    """Positive part, for float and Fraction (object) arrays alike."""
    if v.dtype == object:
        return np.where(v > 0, v, 0 * v)
    return np.maximum(v, 0.0)


def _renorm_without(q: np.ndarray, x: int) -> np.ndarray | None:
    """q with token x removed, renormalised (None when nothing is left)."""
    q = q.copy()
    q[x] = 0 * q[x]
    s = q.sum()
    if s == 0:
        return None
    return q / s


def token_value(tree: Any, P: Law, Q: Law) -> Any:
    """Recursive rejection sampling down the tree (with replacement for iid trees,
    without replacement for swor trees): the expected number of accepted tokens.

    ``tree`` is a :class:`DraftTree` or a shaped tree (any object with the node
    interface: ``candidate_nodes``, ``prefix``, ``token``, ``drafts``)."""
    if tree.drafts == "topk":
        raise MethodError(_TOPK_REFUSED.format(verifier="token"))
    swor = tree.drafts == "swor"
    memo: dict[Prefix, Any] = {}

    def V(u: Prefix) -> Any:
        if u in memo:
            return memo[u]
        nodes = tree.candidate_nodes(u)
        total = 0
        if nodes:
            w = tree.prefix(u)
            p, q = P(w), Q(w)
            stay = 1  # probability that every earlier draw was rejected
            for c in nodes:
                x = tree.token(c)
                qx = q[x]
                acc = 1 if p[x] >= qx else p[x] / qx
                if acc != 0:
                    total = total + stay * acc * (1 + V(c))
                stay = stay * (1 - acc)
                if stay == 0:
                    break
                r = pos(p - q)
                s = r.sum()
                if s == 0:
                    break
                p = r / s
                if swor:
                    q = _renorm_without(q, x)
                    if q is None:
                        break
        memo[u] = total
        return total

    return V(())


def target_only_value(tree: Any, P: Law, Q: Law | None = None) -> Any:
    """Target-only verification: at each reached node the next token Y is drawn from
    p(·|u); if a child carries Y the step moves there (the first such child in index
    order when equal iid siblings carry it), else Y is emitted.  Lossless for any tree;
    given the tree, E[accepted] = Σ p(w) (the probability that the target's text starts
    with w) over the strings w of the nodes reached through the first child carrying
    each token — every distinct non-root string of the tree when siblings carry distinct
    tokens (top-k, without replacement, merged chains), fewer on i.i.d. shapes where a
    later equal sibling carries a subtree of its own (docs/trees.md §1b)."""
    memo: dict[Prefix, Any] = {}

    def V(u: Prefix) -> Any:
        if u in memo:
            return memo[u]
        nodes = tree.child_nodes(u)
        total = 0
        if nodes:
            p = P(tree.prefix(u))
            seen: set[int] = set()
            for c in nodes:
                x = tree.token(c)
                if x in seen:
                    continue  # an equal sibling after the first is never reached
                seen.add(x)
                if p[x] != 0:
                    total = total + p[x] * (1 + V(c))
        memo[u] = total
        return total

    return V(())


def block_rates(chain: Prefix, P: Law, Q: Law) -> list[Any]:
    """Sun et al.'s stopping weights h_1..h_γ of block verification for one chain.

    p_0 = 1; p_i = min(1, p_{i-1} P(X_i|X^{i-1}) / Q(X_i|X^{i-1}));
    h_i = S_i / (S_i + 1 - p_i) with S_i = Σ_x (p_i P(x|X^i) - Q(x|X^i))_+ for i < γ, h_γ = p_γ.
    The number of accepted tokens is τ = max{i : η_i = 1}, η_i ~ Bernoulli(h_i)
    independent, η_0 = 1.
    """
    gamma = len(chain)
    p_i = 1
    hs = []
    for i in range(1, gamma + 1):
        u, x = chain[: i - 1], chain[i - 1]
        pu, qu = P(u), Q(u)
        ratio = p_i * pu[x] / qu[x]
        p_i = 1 if ratio >= 1 else ratio
        if i < gamma:
            v = chain[:i]
            s = pos(p_i * P(v) - Q(v)).sum()
            den = s + 1 - p_i
            hs.append(1 if den == 0 else s / den)
        else:
            hs.append(p_i)
    return hs


def block_value(tree: Any, P: Law, Q: Law) -> Any:
    """Block verification (one chain): E[τ] = Σ_i i·h_i·Π_{j>i}(1 - h_j)."""
    if tree.drafts == "topk":
        raise MethodError(_TOPK_REFUSED.format(verifier="block"))
    if tree.k != 1:
        raise MethodError(f"verifier 'block' verifies one chain (k = 1), got k = {tree.k}; use 'traversal' or 'token'")
    hs = block_rates(tree.chains[0], P, Q)
    total, tail = 0, 1
    for i in range(len(hs), 0, -1):
        total = total + i * hs[i - 1] * tail
        tail = tail * (1 - hs[i - 1])
    return total


class _TraversalState:
    """The mutable state of traversal verification on one tree (shared by the exact
    computation and the simulator): live children, sequence-level rates, residuals.
    Nodes are those of the tree's node interface (token prefixes for a
    :class:`DraftTree`, index paths for a shaped tree); the parent of c is ``c[:-1]``."""

    def __init__(self, tree: Any, P: Law, Q: Law) -> None:
        check_traversal(tree)
        self.tree = tree
        self.kids: dict[Prefix, list[Prefix]] = {u: tree.child_nodes(u) for u in tree.internal_nodes()}
        self.Mb: dict[Prefix, np.ndarray] = {u: P(tree.prefix(u)) for u in self.kids}
        self.Ms: dict[Prefix, np.ndarray] = {u: Q(tree.prefix(u)) for u in self.kids}
        self.a: dict[Prefix, Any] = {(): 1}
        self._rates(())

    def _rates(self, u: Prefix) -> None:
        """Recompute the sequence-level rate of every live descendant of u."""
        stack = [u]
        while stack:
            v = stack.pop()
            for c in self.kids.get(v, ()):
                x = self.tree.token(c)
                with np.errstate(
                    divide="ignore", invalid="ignore"
                ):  # Ms = 0: the law ran out; ratio ≥ 1 or NaN, as before
                    ratio = self.a[v] * self.Mb[v][x] / self.Ms[v][x]
                self.a[c] = 1 if ratio >= 1 else ratio
                stack.append(c)

    def candidate(self) -> Prefix:
        """First leaf of the live tree in post-order (leftmost deepest path)."""
        u: Prefix = ()
        while self.kids.get(u):
            u = self.kids[u][0]
        return u

    def reject(self, c: Prefix) -> None:
        """Delete leaf c; update its parent's residual, rate and draft law (Weng et al.)."""
        u, x = c[:-1], self.tree.token(c)
        self.kids[u].remove(c)
        a = self.a[u]
        r = pos(a * self.Mb[u] - self.Ms[u])
        s = r.sum()
        if s != 0:
            self.Mb[u] = r / s
        den = s + 1 - a
        self.a[u] = 1 if den == 0 else s / den
        if self.tree.distinct_siblings:  # no live sibling can carry x: the draft law loses it
            rest = _renorm_without(self.Ms[u], x)
            if rest is None:
                self.kids[u] = []
            else:
                self.Ms[u] = rest
        self._rates(u)

    def residual(self, u: Prefix, P: Law) -> np.ndarray:
        """Law of the token emitted after accepting node u."""
        return self.Mb[u] if u in self.Mb else P(self.tree.prefix(u))


def check_traversal(tree: Any) -> None:
    """Traversal verification needs children drawn from q (not top-k)."""
    if tree.drafts == "topk":
        raise MethodError(_TOPK_REFUSED.format(verifier="traversal"))


def traversal_value(tree: Any, P: Law, Q: Law) -> Any:
    """Traversal verification: the candidates and their rates are a deterministic
    function of the tree and of the earlier rejections, so
    E[accepted] = Σ_j depth(c_j)·a_j·Π_{i<j}(1 - a_i)."""
    st = _TraversalState(tree, P, Q)
    total, stay = 0, 1
    while True:
        c = st.candidate()
        if c == ():
            return total  # the root is accepted with probability 1
        a = st.a[c]
        total = total + stay * a * len(c)
        stay = stay * (1 - a)
        if stay == 0:
            return total
        st.reject(c)
