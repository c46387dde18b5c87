"""k draws without replacement (successive sampling, Gumbel-top-k): :class:`WithoutReplacement`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import MethodError
from .._lib import stable as _stable
from .._lib.limits import MAX_ENUMERATION, capped_sum
from .._lib.subsets import colex_rank
from .._lib.validation import check_rng, check_size
from . import _swor
from ._base import DraftLaw, SetLaw, _check_enum
from ._swor import inclusions as _inclusions

__all__ = ["WithoutReplacement"]


class WithoutReplacement(DraftLaw):
    """k draws without replacement from q (successive sampling, = Gumbel-top-k).

    D(x̄) = ∏ᵢ q(xᵢ) / (1 − Σ_{j<i} q(x_j)) for distinct tokens; needs k ≤ |supp q|.
    D(set ⊆ S) = P(first k draws land in S): for k = 2,
    Σ_{i∈S} qᵢ (q(S) − qᵢ)/(1 − qᵢ); for any k by the exponential-clock integral
    of docs/theory.md §2.2 (evaluated by :mod:`optaccept.drafts._swor`: O(n·k·G) for G ≈ 21 × a few
    dozen quadrature nodes, accurate to ~1e-14 for k up to the support size and for masses
    down to subnormals) or, exactly, by a dynamic programme over subsets of S.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft distribution (Fractions for the exact path).
    k : int
        Number of drafts, 1 ≤ k ≤ |supp q|.
    normalize : bool
        Rescale q to sum 1 instead of refusing a sum off by more than float32 rounding explains.

    Raises
    ------
    InputError
        If q is not a distribution, k is not a positive integer, or k exceeds |supp q|.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.WithoutReplacement(q, k=2)
    >>> round(float(law.subset_prob([0, 2])), 4)  # .3 * .35/.7 + .35 * .3/.65
    0.3115
    >>> round(oa.optimal_acceptance(p, law).value, 4)
    0.9626
    """

    name = "swor"
    distinct_drafts = True
    sequential = True
    batched = True

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self._set_q_and_k(q, k, normalize, distinct="{k} draws without replacement")
        self._freeze()

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        ins = np.flatnonzero(mask & (self.q > 0))
        if ins.size < self.k:
            return Fraction(0) if self._exact is not None else 0.0
        if self._exact is not None:
            return _swor_exact_subset(self._exact, ins.tolist(), self.k)
        if self.k == 1:
            return float(self.q[mask].sum())
        if self.k == 2:
            return _swor.subset_prob_k2(self.q, mask)
        order = np.concatenate([np.flatnonzero(mask), np.flatnonzero(~mask)])
        return float(_swor.prefix_subset_probs(self.q[order], self.k)[int(mask.sum())])

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        supp = np.flatnonzero(self.q > 0)
        _check_enum(
            capped_sum((math.perm(supp.size, m) for m in range(self.k, self.k + 1)), max_tuples)
            if self.k * math.log(max(supp.size, 1)) <= math.log(max_tuples) + 50
            else max_tuples + 1,
            max_tuples,
            "without-replacement tuple law",
        )
        tuples = np.array(list(itertools.permutations(supp.tolist(), self.k)), dtype=np.int64)
        tuples = tuples.reshape(-1, self.k)
        if self._exact is not None:
            probs = []
            for row in tuples.tolist():
                pr, used = Fraction(1), Fraction(0)
                for x in row:
                    pr *= self._exact[x] / (1 - used)
                    used += self._exact[x]
                probs.append(pr)
            return tuples, tuple(probs)
        # Remaining mass as an explicit sum over unused tokens: no cancellation in 1 - used.
        m = tuples.shape[0]
        used = np.zeros((m, self.n), dtype=bool)
        probs = np.ones(m)
        rows = np.arange(m)
        qs, _ = _stable.rescale_tiny(self.q)  # (ratios are scale-free; keeps subnormals exact)
        for i in range(self.k):
            remaining = np.where(used, 0.0, qs).sum(axis=1)
            probs *= qs[tuples[:, i]] / remaining
            used[rows, tuples[:, i]] = True
        return tuples, probs

    def set_law(self, *, max_sets: int = MAX_ENUMERATION) -> SetLaw:
        """Sets of size k; P(set = A) by the layered subset recursion
        g(B) = Σ_{i∈B} g(B∖i) qᵢ / (1 − q(B∖i)) (probability that the first |B| draws are B).

        Parameters
        ----------
        max_sets : int
            Largest number of draft sets listed.

        Returns
        -------
        SetLaw
            The k-token subsets of the support with their probabilities.

        Raises
        ------
        MethodError
            If the enumeration would exceed ``max_sets`` items.
        """
        supp = np.flatnonzero(self.q > 0)
        s, k = supp.size, self.k
        if k == s:  # every token of the support is drafted: one set, whatever the order
            return SetLaw((tuple(supp.tolist()),), (Fraction(1),) if self._exact is not None else np.ones(1))
        _check_enum(
            capped_sum((math.comb(s, m) for m in range(k + 1)), max_sets), max_sets, "without-replacement set law"
        )
        if self._exact is not None:
            last, w = _first_draws(np.array([self._exact[i] for i in supp.tolist()], dtype=object), k)
            return SetLaw(tuple(tuple(supp[row].tolist()) for row in last.tolist()), tuple(w.tolist()))
        # exact power-of-two rescaling: subnormal masses would lose their few bits in W · q_i
        last, w = _first_draws(_stable.rescale_tiny(self.q[supp])[0], k)
        return SetLaw(tuple(tuple(supp[row].tolist()) for row in last.tolist()), w)

    def _inclusion(self, ids: np.ndarray) -> Any:
        if self._exact is not None:
            return super()._inclusion(ids)  # Σ_{A ∋ y} W(A): the set law's sum, exactly
        q, k = self.q, self.k
        if k == 1:
            return q[ids].copy()
        if k >= int(np.count_nonzero(q)):  # every token of the support is drafted
            return (q[ids] > 0).astype(np.float64)
        every = self._every_inclusion()
        if every is not None:
            return every[ids]
        out = np.zeros(ids.size)
        for j, y in enumerate(ids.tolist()):  # one quadrature per token asked
            if q[y] > 0:
                others = np.ones(self.n, dtype=bool)
                others[y] = False
                out[j] = 1.0 - float(self._subset_prob_mask(others))
        return out

    def _every_inclusion(self) -> np.ndarray | None:
        """Every token's inclusion by the recursion on the first draw
        (:func:`optaccept.drafts._swor.inclusions.inclusion_rows`), computed once per law; None
        where the support is too wide to expand (s^(k−1) above ``EXPANDED`` there) or a float
        overflows (near-one-hot laws)."""
        if not hasattr(self, "_every"):
            supp = np.flatnonzero(self.q > 0)
            every = None
            if supp.size ** (self.k - 1) <= _inclusions.EXPANDED:
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    rows = _inclusions.inclusion_rows(self.q[supp][None, :], self.k)[0]
                if np.isfinite(rows).all():
                    every = np.zeros(self.n)
                    every[supp] = rows
            object.__setattr__(self, "_every", every)  # a cache: the law itself stays as it was
        return self._every

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        rng, size = check_rng(rng), check_size(size)
        out = np.empty((size, self.k), dtype=np.int64)
        supp = np.flatnonzero(self.q > 0)  # tokens with q = 0 never ring: clocks for the support only
        rows = max(1, 4_000_000 // max(supp.size, 1))
        # log ring times log(E/q_i): E/q_i itself overflows to a tie at inf for subnormal q_i
        log_q = np.log(self.q[supp])
        for lo in range(0, size, rows):
            hi = min(size, lo + rows)
            with np.errstate(divide="ignore"):
                clocks = np.log(rng.standard_exponential((hi - lo, supp.size))) - log_q  # log Exp(q_i) ring times
            part = np.argpartition(clocks, self.k - 1, axis=1)[:, : self.k]
            order = np.argsort(np.take_along_axis(clocks, part, axis=1), axis=1)
            out[lo:hi] = supp[np.take_along_axis(part, order, axis=1)]
        return out


def _swor_exact_subset(q: Sequence[Fraction], S: list[int], k: int) -> Fraction:
    """Exact P(first k draws without replacement ⊆ S) = Σ_{A ⊆ S, |A| = k} W(A) (S: tokens of
    positive mass)."""
    if len(S) > 22:
        raise MethodError("exact without-replacement probability: |S| above 22 is too large")
    inside = np.array([q[i] for i in S], dtype=object)
    return sum(_first_draws(inside, k, rest=1 - sum(inside.tolist(), Fraction(0)))[1].tolist(), Fraction(0))


def _first_draws(q: np.ndarray, k: int, rest: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """W(A) = P(the first k draws without replacement are the set A) for every k-subset A of
    the tokens of ``q`` (positive masses; float64, or Fractions in an object array), by the
    recursion on the last draw

        W(A) = Σ_{x ∈ A} W(A∖x) · q_x / (1 − q(A∖x)),   W(∅) = 1,

    where 1 − q(A∖x) = q(tokens∖A) + ``rest`` + q_x is summed directly (no cancellation;
    ``rest``: the mass of the tokens left out of ``q``).  The one W(B) recursion: the set law
    of :class:`WithoutReplacement` and its exact D(set ⊆ S) (docs/theory.md §2.2).

    Returns
    -------
    sets : ndarray of int, shape (C(s, k), k)
        The k-subsets, as sorted positions in ``q``, in lexicographic order.
    w : ndarray, shape (C(s, k),)
        W of each (float64, or Fractions).
    """
    s = q.size
    zero = Fraction(0) if q.dtype == object else 0.0
    w = np.array([zero + 1], dtype=q.dtype)  # layer 0: the empty set
    combos = np.zeros((1, 0), dtype=np.int64)
    for m in range(1, k + 1):
        combos = np.array(list(itertools.combinations(range(s), m)), dtype=np.int64).reshape(-1, m)
        member = np.zeros((combos.shape[0], s), dtype=bool)
        member[np.repeat(np.arange(combos.shape[0]), m), combos.ravel()] = True
        outside = np.where(member, zero, q).sum(axis=1) + rest  # 1 − q(A), summed directly
        tot = np.full(combos.shape[0], zero, dtype=q.dtype)
        for pos in range(m):
            x = q[combos[:, pos]]
            tot = tot + w[colex_rank(np.delete(combos, pos, axis=1))] * (x / (outside + x))
        w = np.empty(combos.shape[0], dtype=q.dtype)  # by colex rank, so the next layer can index it
        w[colex_rank(combos)] = tot
    return combos, w[colex_rank(combos)]
