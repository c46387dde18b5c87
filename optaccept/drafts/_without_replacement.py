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
            qx = [self._exact[i] for i in supp.tolist()]
            g: dict[tuple[int, ...], Fraction] = {(): Fraction(1)}
            for m in range(1, k + 1):
                for A in itertools.combinations(range(s), m):
                    tot = Fraction(0)
                    for pos in range(m):
                        B = A[:pos] + A[pos + 1 :]
                        tot += g[B] * qx[A[pos]] / (1 - sum((qx[i] for i in B), Fraction(0)))
                    g[A] = tot
            sets = [tuple(supp[list(A)].tolist()) for A in itertools.combinations(range(s), k)]
            return SetLaw(tuple(sets), tuple(g[A] for A in itertools.combinations(range(s), k)))
        # exact power-of-two rescaling: subnormal masses would lose their few bits in g · q_i
        qv, _ = _stable.rescale_tiny(self.q[supp])
        g_prev = np.ones(1)  # layer 0: the empty set
        for m in range(1, k + 1):
            combos = np.array(list(itertools.combinations(range(s), m)), dtype=np.int64).reshape(-1, m)
            tot = np.zeros(combos.shape[0])
            member = np.zeros((combos.shape[0], s), dtype=bool)
            member[np.repeat(np.arange(combos.shape[0]), m), combos.ravel()] = True
            outside = np.where(member, 0.0, qv).sum(axis=1)  # q(Ω∖A), summed directly
            for pos in range(m):
                B = np.delete(combos, pos, axis=1)
                gB = g_prev[colex_rank(B)] if m > 1 else np.ones(combos.shape[0])
                # 1 − q(B) = q(Ω∖A) + q(A∖B): both summed without cancellation
                tot += gB * (qv[combos[:, pos]] / (outside + qv[combos[:, pos]]))
            # order g by colex rank so the next layer can index it
            g_layer = np.empty(combos.shape[0])
            g_layer[colex_rank(combos)] = tot
            g_prev = g_layer
            last = combos
        sets = tuple(tuple(supp[row].tolist()) for row in last.tolist())
        return SetLaw(sets, g_prev[colex_rank(last)])

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
    """Exact P(first k draws without replacement ⊆ S) by the subset recursion over S."""
    if len(S) > 22:
        raise MethodError("exact without-replacement probability: |S| above 22 is too large")
    g: dict[tuple[int, ...], Fraction] = {(): Fraction(1)}
    for m in range(1, k + 1):
        for A in itertools.combinations(S, m):
            tot = Fraction(0)
            for pos in range(m):
                B = A[:pos] + A[pos + 1 :]
                tot += g[B] * q[A[pos]] / (1 - sum((q[i] for i in B), Fraction(0)))
            g[A] = tot
    return sum((g[A] for A in itertools.combinations(S, k)), Fraction(0))
