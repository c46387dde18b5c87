"""Draft laws: the joint law D of the ordered draft tuple x̄ = (x₁, …, x_k) (docs/theory.md §1).

Only the law of the draft *set* set(x̄) matters for the optimal acceptance α*,
and only through D(set(x̄) ⊆ S) in the dual (★) of docs/theory.md §2.  Every law here is
immutable and validated once, and offers

* ``subset_prob(S)`` — D(set(x̄) ⊆ S), by formula where one exists;
* ``set_law()`` — the law of set(x̄) as explicit (set, probability) pairs (small n);
* ``tuple_law()`` — the law of the ordered tuple (for the transport LP, small n);
* ``sample(rng, size)`` — draft tuples, randomness passed in as a Generator.

Input given as :class:`fractions.Fraction` keeps the law exact (``law.exact``).

Letters: Hu et al. call the number of drafts n and the draft law p_draft;
Khisti et al. call the draft law p (pᵢ for draft i) and the number of drafts K.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from . import _stable, _swor
from ._errors import InputError, MethodError
from ._subsets import as_mask, colex_rank, subset_sums, subset_sums_exact, zeta_transform
from ._validation import as_distribution, as_exact_distribution, check_k, check_rng, check_size, is_exact_input

__all__ = [
    "LAWS",
    "law_from_name",
    "DraftLaw",
    "SetLaw",
    "IID",
    "WithoutReplacement",
    "Greedy",
    "Independent",
    "SpecHub",
    "Joint",
    "MAX_ENUMERATION",
]

#: Largest number of draft sets or ordered tuples enumerated explicitly.
MAX_ENUMERATION = 2_000_000


@dataclass(frozen=True)
class SetLaw:
    """The law of the draft set: ``sets[i]`` (sorted token ids) has probability ``probs[i]``.

    Attributes
    ----------
    sets : tuple of tuple of int
        The draft sets of positive probability, each as sorted token ids.
    probs : ndarray of float64 or tuple of Fraction
        ``probs[i]`` = P(set(x̄) = ``sets[i]``); Fractions for an exact law.
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
    """Base class of draft laws. Subclasses are immutable after ``__init__``."""

    #: Short name used by the command line and tables.
    name: ClassVar[str] = "law"
    n: int
    k: int

    def __setattr__(self, key: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable")
        object.__setattr__(self, key, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

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
        rng : numpy.random.Generator or int
            Source of randomness (a non-negative integer is a seed).
        size : int
            Number of tuples drawn, ≥ 0.

        Returns
        -------
        ndarray of int, shape (size, k)
            One ordered draft tuple per row.

        Raises
        ------
        InputError
            If ``rng`` is neither a Generator nor a seed, or ``size`` is not a non-negative integer.
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


def capped_pow(base: int, k: int, cap: int) -> int:
    """base**k, or cap + 1 once it exceeds cap (no huge integers are built)."""
    if base <= 1:
        return base
    if k * math.log(base) > math.log(cap) + 1.0:
        return cap + 1
    return min(base**k, cap + 1)


def capped_sum(terms: Any, cap: int) -> int:
    """Σ terms, stopping (and returning cap + 1) as soon as the partial sum exceeds cap."""
    tot = 0
    for t in terms:
        tot += t
        if tot > cap:
            return cap + 1
    return tot


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
        explains (n·2⁻²³; the rule of ``optaccept._validation``).
    """

    name = "iid"

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self.q, self._exact = _clean_q(q, "q", normalize)
        self.k = check_k(k)
        self.n = self.q.size
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


class WithoutReplacement(DraftLaw):
    """k draws without replacement from q (successive sampling, = Gumbel-top-k).

    D(x̄) = ∏ᵢ q(xᵢ) / (1 − Σ_{j<i} q(x_j)) for distinct tokens; needs k ≤ |supp q|.
    D(set ⊆ S) = P(first k draws land in S): for k = 2,
    Σ_{i∈S} qᵢ (q(S) − qᵢ)/(1 − qᵢ); for any k by the exponential-clock integral
    of docs/theory.md §2.2 (evaluated by :mod:`optaccept._swor`: O(n·k·G) for G ≈ 21 × a few
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
    """

    name = "swor"

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self.q, self._exact = _clean_q(q, "q", normalize)
        self.k = check_k(k)
        self.n = self.q.size
        supp = int(np.count_nonzero(self.q))
        if self.k > supp:
            raise InputError(
                f"k: {self.k} draws without replacement need at least {self.k} tokens with q > 0, but q has {supp}"
            )
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


class Greedy(DraftLaw):
    """Hu et al.'s greedy drafts (§5): T = the k−1 most likely tokens of q (ties by lower
    index), fixed; the last draft ~ q̃ = q restricted to Ω∖T, renormalised.

    D(set ⊆ S) = [T ⊆ S] · q̃(S∖T).  Needs k ≤ |supp q|.

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
    """

    name = "greedy"

    def __init__(self, q: Any, k: int, *, normalize: bool = False) -> None:
        self.q, self._exact = _clean_q(q, "q", normalize)
        self.k = check_k(k)
        self.n = self.q.size
        supp = int(np.count_nonzero(self.q))
        if self.k > supp:
            raise InputError(
                f"k: greedy drafts with k = {self.k} need at least {self.k} tokens with q > 0, but q has {supp}"
            )
        if self._exact is not None:
            order = sorted(range(self.n), key=lambda i: (-self._exact[i], i))
        else:
            order = np.lexsort((np.arange(self.n), -self.q)).tolist()
        self.top: tuple[int, ...] = tuple(order[: self.k - 1])
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
    """

    name = "spechub"

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


class Independent(DraftLaw):
    """Independent, non-identical drafts xᵢ ~ qᵢ (Khisti et al.'s setting):
    D(x̄) = ∏ᵢ qᵢ(xᵢ), D(set ⊆ S) = ∏ᵢ qᵢ(S).

    Parameters
    ----------
    qs : array_like, shape (k, n)
        One draft distribution per row.
    """

    name = "independent"

    def __init__(self, qs: Any, *, normalize: bool = False) -> None:
        try:
            rows = list(qs)
        except TypeError:
            raise InputError("qs: must be a sequence of k draft distributions (shape (k, n))") from None
        if not rows:
            raise InputError("qs: needs at least one draft distribution")
        cleaned = [_clean_q(r, f"qs[{i}]", normalize) for i, r in enumerate(rows)]
        lengths = {c[0].size for c in cleaned}
        if len(lengths) != 1:
            raise InputError(f"qs: all rows must have the same length, got lengths {sorted(lengths)}")
        exacts = [c[1] for c in cleaned]
        if any(e is not None for e in exacts) and not all(e is not None for e in exacts):
            raise InputError("qs: mix of exact (Fraction) and float rows; give all rows one way")
        qs_arr = np.stack([c[0] for c in cleaned])
        qs_arr.setflags(write=False)
        self.qs = qs_arr
        self._exact = tuple(exacts) if exacts[0] is not None else None
        self.k = len(rows)
        self.n = qs_arr.shape[1]
        self._freeze()

    def _subset_prob_mask(self, mask: np.ndarray) -> Any:
        if self._exact is not None:
            return math.prod(
                (sum((v for v, m in zip(r, mask) if m), Fraction(0)) for r in self._exact), start=Fraction(1)
            )
        return float(np.prod(np.minimum(self.qs[:, mask].sum(axis=1), 1.0)))

    def all_subset_probs(self) -> Any:
        if self._exact is not None:
            out = [Fraction(1)] * (1 << self.n)
            for r in self._exact:
                out = [a * b for a, b in zip(out, subset_sums_exact(r))]
            return out
        out = np.ones(1 << self.n)
        for r in self.qs:
            out *= np.minimum(subset_sums(r), 1.0)
        return out

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        supps = [np.flatnonzero(r > 0) for r in self.qs]
        _check_enum(
            max_tuples + 1
            if sum(math.log(max(s.size, 1)) for s in supps) > math.log(max_tuples) + 1
            else math.prod(s.size for s in supps),
            max_tuples,
            "independent tuple law",
            "no enumeration-free method exists for independent drafts: use method='subsets' (n <= 20) "
            "or a smaller vocabulary or k",
        )
        grids = np.stack(np.meshgrid(*supps, indexing="ij"), axis=-1)
        tuples = grids.reshape(-1, self.k)
        if self._exact is not None:
            probs = tuple(
                math.prod((self._exact[i][x] for i, x in enumerate(row)), start=Fraction(1)) for row in tuples.tolist()
            )
            return tuples, probs
        probs = np.prod(self.qs[np.arange(self.k), tuples], axis=1)
        return tuples, probs

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        rng, size = check_rng(rng), check_size(size)
        return np.column_stack([rng.choice(self.n, size=size, p=r) for r in self.qs]).astype(np.int64)


class Joint(DraftLaw):
    """Any explicit law over ordered draft tuples.

    Parameters
    ----------
    tuples : array_like of int, shape (m, k)
        The ordered tuples (token ids); repeated rows add up.
    probs : array_like, shape (m,)
        Their probabilities (sum 1; Fractions for the exact path).
    n : int, optional
        Vocabulary size (default: largest token id + 1).
    """

    name = "joint"

    def __init__(self, tuples: Any, probs: Any, *, n: int | None = None, normalize: bool = False) -> None:
        try:
            t = np.asarray(tuples)
        except (TypeError, ValueError):
            raise InputError("tuples: must be a 2-D array of token ids") from None
        if t.ndim == 1 and t.size and t.dtype != object:
            t = t[:, None]
        if t.ndim != 2 or t.shape[0] == 0:
            raise InputError(f"tuples: must be a non-empty 2-D array (m, k), got shape {t.shape}")
        if not np.issubdtype(t.dtype, np.integer):
            raise InputError("tuples: token ids must be integers")
        if t.min() < 0:
            raise InputError("tuples: token ids must be non-negative")
        if n is None:
            n = int(t.max()) + 1
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InputError(f"n: must be a positive integer, got {n!r}")
        if t.max() >= n:
            raise InputError(f"tuples: token id {int(t.max())} is outside the vocabulary 0..{n - 1}")
        pf, px = _clean_q(probs, "probs", normalize)
        if pf.size != t.shape[0]:
            raise InputError(f"probs: length {pf.size} does not match the {t.shape[0]} tuples")
        keep = pf > 0
        self.tuples = t[keep].astype(np.int64)
        self.tuples.setflags(write=False)
        self.probs = pf[keep]
        self.probs.setflags(write=False)
        self._exact = tuple(v for v, kp in zip(px, keep) if kp) if px is not None else None
        self.n = int(n)
        self.k = t.shape[1]
        self._freeze()

    def tuple_law(self, *, max_tuples: int = MAX_ENUMERATION) -> tuple[np.ndarray, Any]:
        return self.tuples.copy(), (self._exact if self._exact is not None else self.probs.copy())

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        rng, size = check_rng(rng), check_size(size)
        idx = rng.choice(self.tuples.shape[0], size=size, p=self.probs / self.probs.sum())
        return self.tuples[idx].copy()


#: The draft laws by name: the one registry.  A feature that supports only some of them
#: passes its names as ``allowed`` to :func:`law_from_name`.
LAWS: dict[str, type[DraftLaw]] = {"iid": IID, "swor": WithoutReplacement, "greedy": Greedy, "spechub": SpecHub}


def law_from_name(
    name: Any, q: Any, k: int = 2, *, allowed: tuple[str, ...] | None = None, arg: str = "drafts", **kw: Any
) -> DraftLaw:
    """The draft law called ``name`` on q with k drafts (``"spechub"``: its fixed pair, k
    ignored); ``allowed`` restricts the names (default: all of :data:`LAWS`), and a name
    outside it is refused with an :class:`InputError` naming ``arg``.

    Parameters
    ----------
    name : str
        A key of :data:`LAWS`: ``"iid"``, ``"swor"``, ``"greedy"`` or ``"spechub"``.
    q : array_like, shape (n,)
        Draft distribution.
    k : int
        Number of drafts (ignored by ``"spechub"``).
    allowed : tuple of str or None
        The names accepted here; None: every name of :data:`LAWS`.
    arg : str
        The argument name an error message names.
    **kw
        Passed on to the law's constructor (``normalize``).

    Returns
    -------
    DraftLaw
        The law, validated by its own constructor.

    Raises
    ------
    InputError
        If ``name`` is not one of the allowed names, or the law refuses q or k.
    """
    names = tuple(LAWS) if allowed is None else tuple(allowed)
    if not isinstance(name, str) or name not in names:
        raise InputError(f"{arg}: must be one of {names}, got {name!r}")
    cls = LAWS[name]
    return cls(q, **kw) if name == "spechub" else cls(q, k, **kw)
