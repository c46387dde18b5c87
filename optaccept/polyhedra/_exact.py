r"""Exact (Fraction) evaluation of the draft laws and of α* by subset enumeration.

Independent of :mod:`optaccept.optimal`: used to cross-check the cone's inequalities.
docs/theory.md §2 (★): :math:`\alpha^* = \min_{S \subseteq \Omega} p(S) + 1 - D(\mathrm{set} \subseteq S)`
(Hu et al., ICLR 2025, §3; max-flow/min-cut).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from math import prod

from .._errors import InputError
from .._lib.limits import count, refuse

__all__ = ["ExactLaw", "alpha_star_subsets", "cell_probs", "MAX_TUPLES", "MAX_N"]

#: Largest number of ordered tuples :meth:`ExactLaw.set_law` enumerates; above it the set law
#: comes from the law's subset formula by inclusion–exclusion.
MAX_TUPLES = 1_000_000
#: Largest vocabulary of :func:`alpha_star_subsets` (2ⁿ subsets in Fractions, about 1 s at n = 16).
MAX_N = 16


class ExactLaw:
    """A draft law with exact Fraction parameters.

    ``name`` is ``"iid"`` or ``"swor"`` (``q`` a sequence of Fractions) or
    ``"independent"`` (``q`` a sequence of ``k`` such sequences).
    """

    def __init__(self, name: str, q: Sequence[Fraction] | Sequence[Sequence[Fraction]], k: int) -> None:
        self.name, self.k = name, k
        if name == "independent":
            self.qs = [tuple(Fraction(x) for x in qi) for qi in q]  # type: ignore[union-attr]
            if len(self.qs) != k:
                raise InputError(f"q: independent drafts need {k} distributions, got {len(self.qs)}")
            self.n = len(self.qs[0])
        elif name in ("iid", "swor"):
            self.q = tuple(Fraction(x) for x in q)  # type: ignore[arg-type]
            self.n = len(self.q)
        else:
            raise InputError(f"drafts: unknown law {name!r}")
        if name == "swor" and sum(1 for x in self.q if x > 0) < k:
            raise InputError(f"q: drafting {k} tokens without replacement needs k tokens of positive mass")

    def tuple_prob(self, x: Sequence[int]) -> Fraction:
        """D(x̄)."""
        if self.name == "iid":
            return prod((self.q[y] for y in x), start=Fraction(1))
        if self.name == "independent":
            return prod((self.qs[i][y] for i, y in enumerate(x)), start=Fraction(1))
        if len(set(x)) < len(x):
            return Fraction(0)
        out, used = Fraction(1), Fraction(0)
        for y in x:
            if used == 1:
                return Fraction(0)
            out *= self.q[y] / (1 - used)
            used += self.q[y]
        return out

    def set_law(self) -> dict[frozenset[int], Fraction]:
        """Law of set(x̄), by enumerating all ordered tuples (n**k of them) when there are
        at most :data:`MAX_TUPLES`; otherwise D(set = A) = Σ_{B ⊆ A} (−1)^{|A∖B|} D(set ⊆ B)
        over the sets A of at most k tokens (i.i.d. and independent drafts, whose
        D(set ⊆ B) is a product formula), or Σ of D(x̄) over the orderings of A (|A| = k,
        without replacement)."""
        if self.n**self.k > MAX_TUPLES:
            return self._set_law_by_sets()
        out: dict[frozenset[int], Fraction] = {}
        for x in itertools.product(range(self.n), repeat=self.k):
            w = self.tuple_prob(x)
            if w:
                A = frozenset(x)
                out[A] = out.get(A, Fraction(0)) + w
        return out

    def _set_law_by_sets(self) -> dict[frozenset[int], Fraction]:
        out: dict[frozenset[int], Fraction] = {}
        sizes = [self.k] if self.name == "swor" else range(1, min(self.n, self.k) + 1)
        for r in sizes:
            for A in itertools.combinations(range(self.n), r):
                if self.name == "swor":
                    w = sum((self.tuple_prob(x) for x in itertools.permutations(A)), Fraction(0))
                else:
                    w = sum(
                        (
                            (-1) ** (r - m) * self.subset_prob(B)
                            for m in range(r + 1)
                            for B in itertools.combinations(A, m)
                        ),
                        Fraction(0),
                    )
                if w:
                    out[frozenset(A)] = w
        return out

    def subset_prob(self, S: Sequence[int]) -> Fraction:
        """D(set ⊆ S) by the law's own formula (not by the set law)."""
        if self.name == "iid":
            return sum((self.q[y] for y in S), Fraction(0)) ** self.k
        if self.name == "independent":
            return prod((sum((qi[y] for y in S), Fraction(0)) for qi in self.qs), start=Fraction(1))
        return sum((self.tuple_prob(x) for x in itertools.permutations(S, self.k)), Fraction(0))

    def first_marginal(self) -> tuple[Fraction, ...]:
        """Law of the first draft (a target with α* = 1: D(set ⊆ S) ≤ P(x₁ ∈ S))."""
        return self.qs[0] if self.name == "independent" else self.q


def alpha_star_subsets(p: Sequence[Fraction], law: ExactLaw) -> tuple[Fraction, tuple[int, ...]]:
    """α* = min over all 2ⁿ subsets S of p(S) + 1 − D(set ⊆ S), exactly; with a minimiser
    (n ≤ :data:`MAX_N`, else a :class:`~optaccept.MethodError` before any work)."""
    n = len(p)
    if n > MAX_N:
        raise refuse(
            f"p: n = {n}",
            f"all 2^{n} = {count(2**n)} subsets in Fractions",
            f"n <= {MAX_N}",
            "use a smaller vocabulary",
        )
    best, arg = Fraction(1), ()
    for r in range(1, n):
        for S in itertools.combinations(range(n), r):
            val = sum((p[y] for y in S), Fraction(0)) + 1 - law.subset_prob(S)
            if val < best:
                best, arg = val, S
    return best, arg


def cell_probs(cells: Sequence[tuple[int, ...] | frozenset[int]], law: ExactLaw) -> list[Fraction]:
    """D(cell) for each cone cell: D(x̄) for a tuple, D(set = A) for a set."""
    if any(isinstance(c, frozenset) for c in cells):
        sl = law.set_law()
        return [sl.get(c, Fraction(0)) if isinstance(c, frozenset) else law.tuple_prob(c) for c in cells]
    return [law.tuple_prob(c) for c in cells]
