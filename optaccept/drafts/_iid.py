"""k i.i.d. drafts ("with replacement"): :class:`IID`."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._lib import stable as _stable
from .._lib.limits import MAX_ENUMERATION, capped_pow, capped_sum
from .._lib.subsets import subset_sums, subset_sums_exact
from .._lib.validation import check_rng, check_size
from ._base import DraftLaw, SetLaw, _check_enum

__all__ = ["IID"]


class IID(DraftLaw):
    """k i.i.d. drafts from q ("with replacement"): D(x̄) = ∏ᵢ q(xᵢ), D(set ⊆ S) = q(S)ᵏ.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft distribution (Fractions for the exact path).
    k : int
        Number of drafts, k ≥ 1.
    normalize : bool
        Rescale q to sum 1 instead of refusing a sum off by more than float32 rounding
        explains (n·2⁻²³; the rule of ``optaccept._lib.validation``).

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.IID(q, k=2)
    >>> round(float(law.subset_prob([0, 2, 4])), 4)  # q(S)**2 = 0.85**2
    0.7225
    >>> round(oa.optimal_acceptance(p, oa.IID(q, k=1)).value, 4)  # one draft: sum of min(p, q)
    0.68
    """

    name = "iid"
    sequential = True
    batched = True

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self._set_q_and_k(q, k, normalize)
        self.q_has_zero = bool(self.q.min() == 0.0)
        self._freeze()

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        if self._exact is not None:
            return sum((v for v, m in zip(self._exact, mask) if m), Fraction(0)) ** self.k
        return float(min(1.0, self.q[mask].sum())) ** self.k

    def all_subset_probs(self) -> Any:
        if self._exact is not None:
            return [s**self.k for s in subset_sums_exact(self._exact)]
        return np.minimum(subset_sums(self.q), 1.0) ** self.k

    def _inclusion(self, ids: np.ndarray) -> Any:
        if self._exact is not None:  # 1 − q(Ω∖{y})ᵏ
            return tuple(1 - (1 - self._exact[y]) ** self.k for y in ids.tolist())
        if self.k == 1:
            return self.q[ids].copy()
        return _stable.one_minus_pow1m(np.minimum(self.q[ids], 1.0), self.k)

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        supp = np.flatnonzero(self.q > 0)
        _check_enum(capped_pow(supp.size, self.k, max_tuples), max_tuples, "IID tuple law")
        grids = np.stack(np.meshgrid(*([supp] * self.k), indexing="ij"), axis=-1)
        tuples = grids.reshape(-1, self.k)
        if self._exact is not None:
            probs = tuple(math.prod((self._exact[i] for i in row), start=Fraction(1)) for row in tuples.tolist())
        else:
            probs = self.q[tuples].prod(axis=1)
        return tuples, probs

    def set_law(self, *, max_sets: int = MAX_ENUMERATION) -> SetLaw:
        """Möbius inversion of q(S)ᵏ: P(set = A) = Σ_{B⊆A} (−1)^{|A∖B|} q(B)ᵏ, |A| ≤ k.

        Parameters
        ----------
        max_sets : int
            Largest number of draft sets listed.

        Returns
        -------
        SetLaw
            The draft sets (at most k tokens of the support) with their probabilities.

        Raises
        ------
        MethodError
            If the support has more than ``max_sets`` subsets of size 1 to k.
        """
        supp = np.flatnonzero(self.q > 0).tolist()
        sizes = range(1, min(self.k, len(supp)) + 1)
        _check_enum(capped_sum((math.comb(len(supp), m) for m in sizes), max_sets), max_sets, "IID set law")
        sets: list[tuple[int, ...]] = []
        probs: list[Any] = []
        for m in sizes:
            combos = list(itertools.combinations(supp, m))
            if not combos:
                continue
            if self._exact is not None:
                for A in combos:
                    tot = Fraction(0)
                    for r in range(m + 1):
                        for B in itertools.combinations(A, r):
                            tot += (-1) ** (m - r) * sum((self._exact[i] for i in B), Fraction(0)) ** self.k
                    sets.append(A)
                    probs.append(tot)
                continue
            C = np.array(combos)
            qa = self.q[C]  # (c, m)
            tot = np.zeros(len(combos))
            for pattern in range(1 << m):
                cols = [b for b in range(m) if pattern >> b & 1]
                sign = -1.0 if (m - len(cols)) % 2 else 1.0
                tot += sign * qa[:, cols].sum(axis=1) ** self.k
            sets.extend(combos)
            probs.extend(np.maximum(tot, 0.0).tolist())
        if self._exact is not None:
            return SetLaw(tuple(sets), tuple(probs))
        return SetLaw(tuple(sets), np.array(probs))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return check_rng(rng).choice(self.n, size=(check_size(size), self.k), p=self.q)
