"""Small combinatorial helpers on subsets of the vocabulary Ω = {0, …, n−1}.

A subset S is encoded as the integer mask Σ_{i∈S} 2^i when all 2^n subsets
are enumerated; functions here build, for every mask at once, additive set
functions (q(S)) and the zeta transform F(S) = Σ_{A⊆S} f(A).

Those arrays have 2ⁿ entries: the functions refuse, before allocating anything, a
vocabulary above :data:`MAX_SUBSET_TOKENS` (floats: 2²⁴ entries, 134 MB per array, built
in about 0.3 s) or :data:`MAX_SUBSET_TOKENS_EXACT` (Fractions: 2²⁰ Python objects,
about 100 MB) with one :class:`~optaccept.MethodError` line.  The solvers that use them
have smaller limits of their own (``method="subsets"``: n ≤ 20, exact n ≤ 14).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from .limits import count, refuse, subsets_bytes

__all__ = [
    "MAX_SUBSET_TOKENS",
    "MAX_SUBSET_TOKENS_EXACT",
    "check_subset_count",
    "as_mask",
    "subset_sums",
    "subset_sums_exact",
    "zeta_transform",
    "mask_to_tuple",
    "colex_rank",
]


#: Largest vocabulary whose 2ⁿ subsets are enumerated in float64 arrays.
MAX_SUBSET_TOKENS = 24
#: Largest vocabulary whose 2ⁿ subsets are enumerated as lists of Fractions.
MAX_SUBSET_TOKENS_EXACT = 20


def check_subset_count(n: int, *, exact: bool = False, name: str = "n") -> None:
    """Refuse (:class:`~optaccept.MethodError`) to enumerate all 2ⁿ subsets of ``n`` tokens
    above :data:`MAX_SUBSET_TOKENS` (:data:`MAX_SUBSET_TOKENS_EXACT` in Fractions)."""
    limit = MAX_SUBSET_TOKENS_EXACT if exact else MAX_SUBSET_TOKENS
    if n > limit:
        kind = "Fractions" if exact else "float64"
        raise refuse(
            f"{name} = {n}",
            f"enumerating all 2^{n} = {count(1 << n)} subsets needs about {count(subsets_bytes(n, 100 if exact else 8))} bytes of {kind} "
            "per array",
            f"2^{limit} subsets (n <= {limit})",
            "use method='sorted' (prefixes of the tokens sorted by p/q) or a smaller vocabulary",
        )


def as_mask(S: Any, n: int, name: str = "S") -> np.ndarray:
    """Turn a subset given as a boolean mask of length n or an iterable of token ids
    into a boolean mask (a new array)."""
    if isinstance(S, np.ndarray) and S.dtype == bool:
        if S.shape != (n,):
            raise InputError(f"{name}: boolean mask must have shape ({n},), got {S.shape}")
        return S.copy()
    try:
        ids = np.asarray(list(S) if not isinstance(S, np.ndarray) else S)
    except TypeError:
        raise InputError(f"{name}: must be an iterable of token ids or a boolean mask") from None
    if ids.size == 0:
        return np.zeros(n, dtype=bool)
    if ids.dtype == bool:
        raise InputError(f"{name}: boolean mask must be a numpy array of shape ({n},)")
    if not np.issubdtype(ids.dtype, np.integer):
        raise InputError(f"{name}: token ids must be integers")
    if ids.ndim != 1:
        raise InputError(f"{name}: token ids must form a flat list")
    if ids.min() < 0 or ids.max() >= n:
        raise InputError(f"{name}: token ids must lie in 0..{n - 1}")
    mask = np.zeros(n, dtype=bool)
    mask[ids] = True
    return mask


def subset_sums(v: np.ndarray) -> np.ndarray:
    """Return s with s[mask] = Σ_{i ∈ mask} v[i] for all 2^n masks (float64)."""
    check_subset_count(len(v))
    out = np.zeros(1)
    for x in v:
        out = np.concatenate([out, out + x])
    return out


def subset_sums_exact(v: Sequence[Fraction]) -> list[Fraction]:
    """Exact version of :func:`subset_sums` on Fractions."""
    check_subset_count(len(v), exact=True)
    out = [Fraction(0)]
    for x in v:
        out = out + [s + x for s in out]
    return out


def zeta_transform(f: np.ndarray, n: int) -> np.ndarray:
    """Return F with F[S] = Σ_{A ⊆ S} f[A] over all 2^n masks (sum over subsets)."""
    check_subset_count(n)
    F = np.array(f, dtype=np.float64, copy=True)
    for i in range(n):
        view = F.reshape(-1, 2, 1 << i)
        view[:, 1, :] += view[:, 0, :]
    return F


def mask_to_tuple(mask: int, n: int) -> tuple[int, ...]:
    """The sorted token ids of an integer mask."""
    return tuple(i for i in range(n) if mask >> i & 1)


def colex_rank(combos: np.ndarray) -> np.ndarray:
    """Co-lexicographic rank of each row of sorted combinations (rows c_0 < c_1 < …).

    rank = Σ_j C(c_j, j + 1); rows of one length m get the ranks 0 … C(N, m) − 1 in
    co-lexicographic order, so they index a dense array.
    """
    combos = np.asarray(combos, dtype=np.int64)
    m = combos.shape[1]
    rank = np.zeros(combos.shape[0], dtype=np.int64)
    for j in range(m):
        rank += _binom_vec(combos[:, j], j + 1)
    return rank


def _binom_vec(a: np.ndarray, r: int) -> np.ndarray:
    out = np.ones_like(a)
    for t in range(r):
        out = out * (a - t)
    fact = 1
    for t in range(2, r + 1):
        fact *= t
    return np.where(a >= r, out // fact, 0)
