"""The base of the draft laws: :class:`DraftLaw`, :class:`SetLaw` and the enumeration limits."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from .._errors import InputError, MethodError
from .._lib.limits import MAX_ENUMERATION
from .._lib.subsets import as_mask, zeta_transform
from .._lib.validation import as_distribution, as_exact_distribution, check_k, is_exact_input

__all__ = ["SetLaw", "DraftLaw"]


@dataclass(frozen=True)
class SetLaw:
    """The law of the draft set: ``sets[i]`` (sorted token ids) has probability ``probs[i]``.

    Attributes
    ----------
    sets : tuple of tuple of int
        The draft sets of positive probability, each as sorted token ids.
    probs : ndarray of float64 or tuple of Fraction
        ``probs[i]`` = P(set(x̄) = ``sets[i]``); Fractions for an exact law.

    Examples
    --------
    >>> import optaccept as oa
    >>> from fractions import Fraction as F
    >>> sets = oa.IID([F(1, 2), F(1, 4), F(1, 4)], k=2).set_law()
    >>> len(sets), sets.sets[:3], sets.probs[:3]  # P(set = {0}) = (1/2)**2, P(set = {1}) = (1/4)**2
    (6, ((0,), (1,), (2,)), (Fraction(1, 4), Fraction(1, 16), Fraction(1, 16)))
    """

    sets: tuple[tuple[int, ...], ...]
    probs: Any  # float64 ndarray, or tuple of Fractions for exact laws

    def __len__(self) -> int:
        return len(self.sets)


def _clean_q(q: Any, name: str, normalize: bool) -> tuple[np.ndarray, tuple[Fraction, ...] | None]:
    """Float view (read-only float64) and, for exact input, the exact Fractions."""
    if is_exact_input(q):
        qx = as_exact_distribution(q, name, normalize=normalize)
        qf = np.array([float(v) for v in qx])
        qf.setflags(write=False)
        return qf, qx
    return as_distribution(q, name, normalize=normalize), None


class DraftLaw:
    """Base class of draft laws. Subclasses are immutable after ``__init__``.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.IID(q, k=2)
    >>> isinstance(law, oa.DraftLaw), law.n, law.k
    (True, 5, 2)
    >>> round(float(law.subset_prob([0, 2, 4])), 4)  # P(set of drafts inside {0, 2, 4}) = 0.85**2
    0.7225
    >>> len(law.set_law())  # the 15 possible draft sets {x1, x2}
    15
    >>> law.sample(np.random.default_rng(0), 3).shape
    (3, 2)
    """

    #: Short name used by the command line and tables.
    name: ClassVar[str] = "law"
    #: Capability flags, asked through :func:`optaccept.drafts.law_names` by every feature
    #: that supports only some of the named laws.  ``takes_k``: the constructor takes the
    #: number of drafts k (False: the law fixes it).
    takes_k: ClassVar[bool] = True
    #: The drafts are distinct tokens, so k ≤ |supp q| is needed.
    distinct_drafts: ClassVar[bool] = False
    #: The k drafts are successive draws from q, with or without replacement: the first is
    #: ~q and no token is fixed in advance (how a draft tree draws a node's children).
    sequential: ClassVar[bool] = False
    #: ``optimal.batched_optimal_acceptance`` has a row kernel for the law.
    batched: ClassVar[bool] = False
    n: int
    k: int

    def __setattr__(self, key: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable")
        object.__setattr__(self, key, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def _set_q_and_k(self, q: Any, k: Any, normalize: bool, distinct: str = "") -> None:
        """Set ``q`` (read-only float64, and its exact Fractions when given so), ``k`` and ``n``.
        ``distinct`` names the k drafts (``"{k} draws without replacement"``, formatted with k)
        when they must be distinct tokens: then k > |supp q| is refused with that name, blaming
        ``k`` — or ``q`` for a law that fixes k itself (``takes_k`` False)."""
        self.q, self._exact = _clean_q(q, "q", normalize)
        self.k = check_k(k)
        self.n = self.q.size
        supp = int(np.count_nonzero(self.q))
        if distinct and self.k > supp:
            what = distinct.format(k=self.k)
            arg = "k" if self.takes_k else "q"
            raise InputError(f"{arg}: {what} need at least {self.k} tokens with q > 0, but q has {supp}")

    @property
    def exact(self) -> bool:
        """True when the law was given in exact arithmetic (Fractions)."""
        return getattr(self, "_exact", None) is not None

    @property
    def q_exact(self) -> tuple[Fraction, ...] | None:
        """q as the exact Fractions it was given as, or None for a float law."""
        return getattr(self, "_exact", None)

    # -- the dual's ingredient -------------------------------------------------
    def subset_prob(self, S: Any) -> Any:
        """D(set(x̄) ⊆ S) for a subset S (token ids or a boolean mask of length n).

        Parameters
        ----------
        S : iterable of int or ndarray of bool, shape (n,)
            The subset, as token ids or as a boolean mask.

        Returns
        -------
        float or Fraction
            The probability that every draft lands in S (a Fraction for an exact law).

        Raises
        ------
        InputError
            If S is neither an iterable of token ids nor a boolean mask of shape (n,).
        """
        mask = as_mask(S, self.n)
        return self._subset_prob_mask(mask)

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        sl = self.set_law()
        if self.exact:
            return sum((pr for s, pr in zip(sl.sets, sl.probs) if all(mask[i] for i in s)), Fraction(0))
        inside = np.array([bool(mask[list(s)].all()) for s in sl.sets])
        return float(np.asarray(sl.probs)[inside].sum())

    def all_subset_probs(self) -> Any:
        """D(set ⊆ S) for all 2^n masks S (bit i = token i): float64 array, or a list of
        Fractions for exact laws.  Default: zeta transform of the set law.

        Returns
        -------
        ndarray of float64, shape (2**n,), or list of Fraction
            Entry m is D(set ⊆ S) for the subset S whose bit i is set iff token i ∈ S.
        """
        sl = self.set_law()
        masks = [sum(1 << i for i in s) for s in sl.sets]
        if self.exact:
            F = [Fraction(0)] * (1 << self.n)
            for m, pr in zip(masks, sl.probs):
                F[m] += pr
            for i in range(self.n):
                bit = 1 << i
                for m in range(1 << self.n):
                    if m & bit:
                        F[m] += F[m ^ bit]
            return F
        f = np.zeros(1 << self.n)
        np.add.at(f, np.array(masks, dtype=np.int64), np.asarray(sl.probs, dtype=np.float64))
        return zeta_transform(f, self.n)

    # -- inclusion probabilities -----------------------------------------------
    def inclusion(self, tokens: Any = None) -> Any:
        """P(y ∈ set(x̄)) for each token y: the law's inclusion probabilities.

        Every law answers in closed form where it has one (i.i.d.: 1 − (1 − q_y)ᵏ; greedy and
        SpecHub: 1 on the top tokens, q̃_y elsewhere; independent: 1 − ∏ᵢ (1 − qᵢ(y)); without
        replacement: the recursion on the first draw of docs/theory.md §2.2, one quadrature
        per token asked only where that recursion is too wide or overflows); any other law
        sums its set law, Σ_{A ∋ y} P(set(x̄) = A).  Tested against enumeration of the ordered
        draws (tests/drafts/test_inclusion.py).

        Parameters
        ----------
        tokens : array_like of int, optional
            The tokens asked, ids in [0, n) (default: every token).

        Returns
        -------
        ndarray of float64, shape (m,), or tuple of Fraction
            P(y is drafted) for each token asked (Fractions for an exact law).

        Raises
        ------
        InputError
            If ``tokens`` holds anything but token ids in [0, n).

        Examples
        --------
        >>> import optaccept as oa
        >>> from fractions import Fraction as F
        >>> oa.IID([F(1, 2), F(1, 4), F(1, 4)], k=2).inclusion()  # 1 - (1 - q)**2
        (Fraction(3, 4), Fraction(7, 16), Fraction(7, 16))
        >>> law = oa.WithoutReplacement([.5, .3, .2], k=2)
        >>> [round(float(v), 4) for v in law.inclusion()]  # sums to k = 2
        [0.8393, 0.675, 0.4857]
        >>> [round(float(v), 4) for v in law.inclusion([2])]
        [0.4857]
        """
        if tokens is None:
            ids = np.arange(self.n)
        else:
            ids = np.asarray(tokens)
            if ids.dtype == object or ids.ndim != 1 or not (ids.size == 0 or np.issubdtype(ids.dtype, np.integer)):
                raise InputError(f"tokens: must be a 1-D array of token ids in [0, {self.n})")
            if ids.size and (ids.min() < 0 or ids.max() >= self.n):
                raise InputError(f"tokens: token ids must lie in [0, {self.n})")
            ids = ids.astype(np.int64)
        return self._inclusion(ids)

    def _inclusion(self, ids: np.ndarray) -> Any:
        """Σ_{A ∋ y} P(set = A) from the set law, for the tokens ``ids``."""
        sl = self.set_law()
        if self.exact:
            acc = [Fraction(0)] * self.n
            for s, pr in zip(sl.sets, sl.probs):
                for y in s:
                    acc[y] += pr
            return tuple(acc[y] for y in ids.tolist())
        out = np.zeros(self.n)
        for s, pr in zip(sl.sets, np.asarray(sl.probs, dtype=np.float64).tolist()):
            out[list(s)] += pr
        return np.minimum(out[ids], 1.0)

    # -- explicit laws ---------------------------------------------------------
    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        """The law of the ordered draft tuple: (int array of shape (m, k), probabilities).

        Tuples of probability zero are left out.

        Parameters
        ----------
        max_tuples : int
            Largest number of ordered tuples listed.

        Returns
        -------
        tuples : ndarray of int, shape (m, k)
            The ordered draft tuples of positive probability.
        probs : ndarray of float64, shape (m,), or tuple of Fraction
            Their probabilities (Fractions for an exact law).

        Raises
        ------
        MethodError
            If the law has more than ``max_tuples`` ordered tuples.
        """
        raise NotImplementedError

    def set_law(self, *, max_sets: int = MAX_ENUMERATION) -> SetLaw:
        """The law of the draft set, aggregated from :meth:`tuple_law` by default.

        Parameters
        ----------
        max_sets : int
            Largest number of draft sets (or, when aggregated, ordered tuples) listed.

        Returns
        -------
        SetLaw
            The draft sets of positive probability, by size then token ids, with their
            probabilities.

        Raises
        ------
        MethodError
            If the enumeration would exceed ``max_sets`` items.
        """
        tuples, probs = self.tuple_law(max_tuples=max_sets)
        return _aggregate_sets(tuples, probs, self.exact)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Draw ``size`` ordered draft tuples: int array of shape (size, k).

        Parameters
        ----------
        rng : numpy.random.Generator, int or None
            Source of randomness (a non-negative integer is a seed; None: fresh entropy).
        size : int
            Number of tuples drawn, ≥ 0.

        Returns
        -------
        ndarray of int, shape (size, k)
            One ordered draft tuple per row.

        Raises
        ------
        InputError
            If ``rng`` is neither a Generator, a seed nor None, or ``size`` is not a non-negative integer.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, k={self.k}{', exact' if self.exact else ''})"


def _aggregate_sets(tuples: np.ndarray, probs: Any, exact: bool) -> SetLaw:
    acc: dict[tuple[int, ...], Any] = {}
    zero: Any = Fraction(0) if exact else 0.0
    for row, pr in zip(tuples.tolist(), probs if exact else np.asarray(probs).tolist()):
        key = tuple(sorted(set(row)))
        acc[key] = acc.get(key, zero) + pr
    sets = tuple(sorted(acc, key=lambda s: (len(s), s)))
    vals = [acc[s] for s in sets]
    return SetLaw(sets, tuple(vals) if exact else np.array(vals, dtype=np.float64))


def _check_enum(count: int, limit: int, what: str, advice: str | None = None) -> None:
    """Refuse an enumeration of ``count`` items above ``limit`` (``count`` may be capped at
    limit + 1 by :func:`capped_sum` — it is never formatted in full)."""
    if count > limit:
        raise MethodError(
            f"{what}: more than {limit} items to enumerate; "
            + (advice or "use method='sorted' (IID, WithoutReplacement, Greedy, SpecHub) or a smaller vocabulary")
        )
