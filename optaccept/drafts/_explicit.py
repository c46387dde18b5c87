"""Draft laws given row by row: :class:`Independent` drafts and any explicit :class:`Joint` law."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.limits import MAX_ENUMERATION
from .._lib.subsets import subset_sums, subset_sums_exact
from .._lib.validation import check_rng, check_size
from ._base import DraftLaw, _check_enum, _clean_q

__all__ = ["Independent", "Joint"]


class Independent(DraftLaw):
    """Independent, non-identical drafts xᵢ ~ qᵢ (Khisti et al.'s setting):
    D(x̄) = ∏ᵢ qᵢ(xᵢ), D(set ⊆ S) = ∏ᵢ qᵢ(S).

    Parameters
    ----------
    qs : array_like, shape (k, n)
        One draft distribution per row.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.Independent([q, p])  # draft 1 ~ q, draft 2 ~ p
    >>> law.k, round(float(law.subset_prob([0, 1])), 4)  # q({0, 1}) * p({0, 1})
    (2, 0.26)
    >>> oa.optimal_acceptance(p, law).value  # a draft from p itself accepts always
    1.0
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

    def _inclusion(self, ids: np.ndarray) -> Any:
        if self._exact is not None:
            return tuple(1 - math.prod((1 - r[y] for r in self._exact), start=Fraction(1)) for y in ids.tolist())
        return 1.0 - np.prod(1.0 - self.qs[:, ids], axis=0)

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

    Examples
    --------
    >>> import optaccept as oa
    >>> from fractions import Fraction as F
    >>> law = oa.Joint([(0, 1), (1, 0), (2, 2)], [F(1, 4), F(1, 4), F(1, 2)])
    >>> law.n, law.k, law.subset_prob([0, 1])
    (3, 2, Fraction(1, 2))
    >>> oa.optimal_acceptance([F(1, 3), F(1, 3), F(1, 3)], law).value
    Fraction(5, 6)
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
