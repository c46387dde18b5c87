"""Drafts with deterministic top tokens: Hu et al.'s :class:`Greedy` and :class:`SpecHub`,
and :class:`TopK`, the fixed k most likely tokens engines draft."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from .._lib.limits import MAX_ENUMERATION
from .._lib.subsets import check_subset_count, subset_sums, subset_sums_exact
from .._lib.validation import check_rng, check_size
from ._base import DraftLaw, SetLaw

__all__ = ["Greedy", "SpecHub", "TopK", "top_tokens"]


def top_tokens(q: np.ndarray, exact: Any, m: int) -> list[int]:
    """The m most likely tokens of q, most likely first, ties by lower index (``exact``:
    q's Fractions, which then decide the order)."""
    if exact is not None:
        return sorted(range(len(exact)), key=lambda i: (-exact[i], i))[:m]
    return np.lexsort((np.arange(q.size), -q))[:m].tolist()


class Greedy(DraftLaw):
    """Hu et al.'s greedy drafts (§5): T = the k−1 most likely tokens of q (ties by lower
    index), fixed; the last draft ~ q̃ = q restricted to Ω∖T, renormalised.

    D(set ⊆ S) = [T ⊆ S] · q̃(S∖T).  Needs k ≤ |supp q|.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft distribution (Fractions for the exact path).
    k : int
        Number of drafts, 1 ≤ k ≤ |supp q|: k − 1 fixed top tokens and one draw from q̃.
    normalize : bool
        Rescale q to sum 1 instead of refusing a sum off by more than float32 rounding explains.

    Raises
    ------
    InputError
        If q is not a distribution, k is not a positive integer, or q has fewer than k
        tokens with q > 0 (the top tokens and the last draw are distinct).

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.Greedy(q, k=3)
    >>> law.top  # the k - 1 = 2 most likely draft tokens, always drafted
    (2, 0)
    >>> round(oa.optimal_acceptance(p, law).value, 4)
    1.0
    """

    name = "greedy"
    distinct_drafts = True
    batched = True
    #: the drafts, as a refusal of too small a support names them (formatted with k)
    _distinct: ClassVar[str] = "greedy drafts with k = {k}"

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self._set_q_and_k(q, k, normalize, distinct=self._distinct)
        self.top: tuple[int, ...] = tuple(top_tokens(self.q, self._exact, self.k - 1))
        in_top = np.zeros(self.n, dtype=bool)
        in_top[list(self.top)] = True
        in_top.setflags(write=False)
        self._in_top = in_top
        if self._exact is not None:
            rest = 1 - sum((self._exact[i] for i in self.top), Fraction(0))
            self._q_rest_exact = tuple(Fraction(0) if in_top[i] else v / rest for i, v in enumerate(self._exact))
            q_rest = np.array([float(v) for v in self._q_rest_exact])
        else:
            q_rest = np.where(in_top, 0.0, self.q)
            q_rest = q_rest / q_rest.sum()
            self._q_rest_exact = None
        q_rest.setflags(write=False)
        self.q_rest = q_rest
        self._freeze()

    @property
    def q_rest_exact(self) -> tuple[Fraction, ...] | None:
        """q̃ (q off the top tokens, renormalised) in Fractions, or None for a float law."""
        return self._q_rest_exact

    @property
    def in_top(self) -> np.ndarray:
        """Boolean mask of the deterministic top tokens T (read-only)."""
        return self._in_top

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        if not mask[list(self.top)].all():
            return Fraction(0) if self._exact is not None else 0.0
        if self._exact is not None:
            return sum((v for v, m in zip(self._q_rest_exact, mask) if m), Fraction(0))
        return float(min(1.0, self.q_rest[mask].sum()))

    def _inclusion(self, ids: np.ndarray) -> Any:
        # the top tokens are always drafted; the last draft ~ q̃ (SpecHub: the same set law)
        if self._exact is not None:
            return tuple(Fraction(1) if self._in_top[y] else self._q_rest_exact[y] for y in ids.tolist())
        return np.where(self._in_top[ids], 1.0, self.q_rest[ids])

    def all_subset_probs(self) -> Any:
        top_mask = sum(1 << i for i in self.top)
        masks = np.arange(1 << self.n)
        ok = (masks & top_mask) == top_mask
        if self._exact is not None:
            sums = subset_sums_exact(self._q_rest_exact)
            return [s if o else Fraction(0) for s, o in zip(sums, ok.tolist())]
        return np.where(ok, np.minimum(subset_sums(self.q_rest), 1.0), 0.0)

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        last = np.flatnonzero(self.q_rest > 0)
        tuples = np.column_stack([np.tile(np.array(self.top, dtype=np.int64), (last.size, 1)), last])
        if self._exact is not None:
            return tuples, tuple(self._q_rest_exact[i] for i in last.tolist())
        return tuples, self.q_rest[last].copy()

    def set_law(self, *, max_sets: int = MAX_ENUMERATION) -> SetLaw:
        """Sets T ∪ {y} for y ∉ T with q̃(y) > 0, with probability q̃(y).

        Parameters
        ----------
        max_sets : int
            Accepted for the common signature; the list has at most n − k + 1 sets.

        Returns
        -------
        SetLaw
            The sets T ∪ {y} with their probabilities q̃(y).
        """
        last = np.flatnonzero(self.q_rest > 0)
        sets = tuple(tuple(sorted(self.top + (int(y),))) for y in last.tolist())
        if self._exact is not None:
            return SetLaw(sets, tuple(self._q_rest_exact[i] for i in last.tolist()))
        return SetLaw(sets, self.q_rest[last].copy())

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        rng, size = check_rng(rng), check_size(size)
        out = np.empty((size, self.k), dtype=np.int64)
        out[:, : self.k - 1] = self.top
        out[:, self.k - 1] = rng.choice(self.n, size=size, p=self.q_rest)
        return out


class SpecHub(Greedy):
    """SpecHub's two drafts (Sun et al. 2024): a = argmax q (ties by lower index);
    x₁ ~ q; if x₁ ≠ a the pair is (x₁, a), else x₂ ~ q restricted to Ω∖{a}.

    The draft set is always {a, X} with X ~ q̃ = q on Ω∖{a} renormalised, because
    P(set = {a, i}) = qᵢ + q_a qᵢ/(1 − q_a) = qᵢ/(1 − q_a): the same set law as
    ``Greedy(q, 2)``; only the order of the tuple differs.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft distribution, with at least two tokens of positive mass (Fractions for the
        exact path).
    normalize : bool
        Rescale q to sum 1 instead of refusing a sum off by more than float32 rounding explains.

    Raises
    ------
    InputError
        If q is not a distribution or has fewer than two tokens with q > 0.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.SpecHub(q)
    >>> law.anchor, law.k  # the argmax of q is in every draft set
    (2, 2)
    >>> round(oa.optimal_acceptance(p, law).value, 4) == round(oa.optimal_acceptance(p, oa.Greedy(q, 2)).value, 4)
    True
    """

    name = "spechub"
    takes_k = False
    batched = False
    _distinct = "SpecHub's two distinct drafts"

    def __init__(self, q: Any, *, normalize: bool = False) -> None:
        super().__init__(q, 2, normalize=normalize)

    @property
    def anchor(self) -> int:
        """The token a = argmax q that every draft set contains."""
        return self.top[0]

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        a = self.anchor
        others = [i for i in np.flatnonzero(self.q > 0).tolist() if i != a]
        tuples = np.array([(i, a) for i in others] + [(a, j) for j in others], dtype=np.int64)
        if self._exact is not None:
            qa = self._exact[a]
            probs = tuple([self._exact[i] for i in others] + [qa * self._exact[j] / (1 - qa) for j in others])
            return tuples, probs
        # q_a · q̃(j): q̃ is normalised by an explicit sum, avoiding 1 − q_a
        probs = np.concatenate([self.q[others], self.q[a] * self.q_rest[others]])
        return tuples, probs

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        rng, size = check_rng(rng), check_size(size)
        a = self.anchor
        x1 = rng.choice(self.n, size=size, p=self.q)
        x2 = rng.choice(self.n, size=size, p=self.q_rest)
        first = np.where(x1 == a, a, x1)
        second = np.where(x1 == a, x2, a)
        return np.column_stack([first, second]).astype(np.int64)

    def __repr__(self) -> str:
        return f"SpecHub(n={self.n}{', exact' if self.exact else ''})"


class TopK(DraftLaw):
    """The deterministic top-k drafts engines use (EAGLE and Medusa-style top-k trees, a
    top-k draft step): the k most likely tokens of q, most likely first, ties by lower
    index, with probability 1.

    D(set ⊆ S) = [T ⊆ S] for T the k top tokens, so α* = p(T) by (★) with S = T, and
    target-only verification attains it (docs/theory.md §5, after Proposition 5.1).
    Needs k ≤ |supp q|.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft distribution (Fractions for the exact path; they then decide the order).
    k : int
        Number of drafts, 1 ≤ k ≤ |supp q|.
    normalize : bool
        Rescale q to sum 1 instead of refusing a sum off by more than float32 rounding explains.

    Raises
    ------
    InputError
        If q is not a distribution, k is not a positive integer, or q has fewer than k
        tokens with q > 0.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.TopK(q, k=2)
    >>> law.top  # the two most likely draft tokens, always drafted
    (2, 0)
    >>> round(oa.optimal_acceptance(p, law).value, 4)  # p(2) + p(0)
    0.55
    """

    name = "topk"
    distinct_drafts = True
    batched = True

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self._set_q_and_k(q, k, normalize, distinct="top-k drafts with k = {k}")
        self.top: tuple[int, ...] = tuple(top_tokens(self.q, self._exact, self.k))
        in_top = np.zeros(self.n, dtype=bool)
        in_top[list(self.top)] = True
        in_top.setflags(write=False)
        self._in_top = in_top
        self._freeze()

    @property
    def in_top(self) -> np.ndarray:
        """Boolean mask of the drafted tokens T (read-only)."""
        return self._in_top

    def _one(self) -> Any:
        return Fraction(1) if self._exact is not None else 1.0

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        return self._one() if mask[list(self.top)].all() else self._one() * 0

    def all_subset_probs(self) -> Any:
        check_subset_count(self.n)
        top_mask = sum(1 << i for i in self.top)
        ok = (np.arange(1 << self.n) & top_mask) == top_mask
        if self._exact is not None:
            return [Fraction(int(o)) for o in ok.tolist()]
        return ok.astype(np.float64)

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        return np.array([self.top], dtype=np.int64), ((Fraction(1),) if self._exact is not None else np.ones(1))

    def set_law(self, *, max_sets: int = MAX_ENUMERATION) -> SetLaw:
        """The one draft set T, with probability 1.

        Parameters
        ----------
        max_sets : int
            Accepted for the common signature; the list has one set.

        Returns
        -------
        SetLaw
            The set T (sorted token ids) with probability 1.
        """
        return SetLaw((tuple(sorted(self.top)),), (Fraction(1),) if self._exact is not None else np.ones(1))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        return np.tile(np.array(self.top, dtype=np.int64), (size, 1))
