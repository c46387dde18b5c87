"""Shared input cleaning: one place that turns user input into clean arrays.

Float inputs become fresh ``float64`` arrays (the caller's array is never
mutated); inputs made of :class:`fractions.Fraction` (or ints) are kept exact
as tuples of Fractions.  Every failure raises :class:`~optaccept.InputError`
naming the argument.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from ._errors import InputError

__all__ = [
    "SUM_TOL",
    "as_distribution",
    "as_exact_distribution",
    "is_exact_input",
    "check_k",
    "check_rng",
    "check_size",
]

#: Largest tolerated deviation of a float distribution's sum from 1.
SUM_TOL = 1e-9


def is_exact_input(x: Any) -> bool:
    """True when every entry of ``x`` is a :class:`~fractions.Fraction` or an int
    (and at least one is a Fraction): such input takes the exact code path."""
    if isinstance(x, np.ndarray) and x.dtype != object:
        return False
    try:
        items = list(x)
    except TypeError:
        return False
    if not items:
        return False
    has_fraction = False
    for v in items:
        if isinstance(v, Fraction):
            has_fraction = True
        elif isinstance(v, bool) or not isinstance(v, numbers.Integral):
            return False
    return has_fraction


def as_exact_distribution(x: Any, name: str, *, normalize: bool = False) -> tuple[Fraction, ...]:
    """Validate an exact probability vector (Fractions/ints) and return a tuple of Fractions.

    The sum must be exactly 1 unless ``normalize=True``.
    """
    try:
        items = [Fraction(v) for v in x]
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: entries must be Fractions or integers ({exc})") from None
    if not items:
        raise InputError(f"{name}: must have at least one entry")
    neg = [i for i, v in enumerate(items) if v < 0]
    if neg:
        raise InputError(f"{name}: negative entry at index {neg[0]} ({items[neg[0]]})")
    total = sum(items, Fraction(0))
    if total == 0:
        raise InputError(f"{name}: all entries are zero")
    if total != 1:
        if not normalize:
            raise InputError(f"{name}: entries sum to {total}, not exactly 1 (pass normalize=True to rescale)")
        items = [v / total for v in items]
    return tuple(items)


def as_distribution(
    x: Any,
    name: str,
    *,
    normalize: bool = False,
    tol: float = SUM_TOL,
    n: int | None = None,
) -> np.ndarray:
    """Validate a probability vector and return it as a new float64 array.

    Parameters
    ----------
    x : array_like, shape (n,)
        Non-negative finite entries summing to 1 within ``tol``.
    name : str
        The argument's name, used in error messages.
    normalize : bool
        Rescale to sum 1 instead of refusing a sum that is off by more than ``tol``.
    tol : float
        Tolerance on ``|sum(x) - 1|`` (for float32/float16 input at least n times that
        type's machine epsilon).  Any accepted vector is rescaled to sum exactly 1.
    n : int, optional
        Required length.

    Raises
    ------
    InputError
        Wrong shape or length, non-numeric, NaN, infinite or negative entries,
        a zero vector, or a sum off by more than ``tol`` (without ``normalize``).
    """
    if isinstance(x, np.ndarray) and x.dtype == object or (not isinstance(x, np.ndarray) and is_exact_input(x)):
        try:
            arr = np.array([float(v) for v in np.ravel(np.asarray(x, dtype=object))])
            arr = arr.reshape(np.shape(x))
        except (TypeError, ValueError):
            raise InputError(f"{name}: entries must be real numbers") from None
    else:
        src_dtype = getattr(x, "dtype", None)
        try:
            arr = np.array(x, dtype=np.float64, copy=True)
        except (TypeError, ValueError):
            raise InputError(f"{name}: entries must be real numbers") from None
        if (
            src_dtype is not None
            and np.issubdtype(src_dtype, np.floating)
            and np.finfo(src_dtype).eps > np.finfo(np.float64).eps
        ):
            # float32/float16 input: its own rounding of the entries is tolerated
            tol = max(tol, arr.size * float(np.finfo(src_dtype).eps))
    if arr.ndim != 1:
        raise InputError(f"{name}: must be a 1-D vector, got shape {arr.shape}")
    if arr.size == 0:
        raise InputError(f"{name}: must have at least one entry")
    if n is not None and arr.size != n:
        raise InputError(f"{name}: length {arr.size} does not match the vocabulary size {n}")
    # One pass for the sum (NaN and inf propagate into it), one for the minimum.
    total = float(arr.sum())
    if not np.isfinite(total):
        bad = np.flatnonzero(~np.isfinite(arr))
        kind = "NaN" if np.isnan(arr[bad[0]]) else "infinite"
        raise InputError(f"{name}: {kind} entry at index {bad[0]}")
    lo = float(arr.min())
    if lo < 0:
        i = int(np.argmin(arr))
        raise InputError(f"{name}: negative entry at index {i} ({arr[i]!r})")
    if total <= 0:
        raise InputError(f"{name}: all entries are zero")
    if abs(total - 1.0) > tol:
        if not normalize:
            raise InputError(
                f"{name}: entries sum to {total!r}, off from 1 by more than {tol:g} (pass normalize=True to rescale)"
            )
    if normalize or total != 1.0:
        arr /= total
    arr.setflags(write=False)
    return arr


def check_k(k: Any, name: str = "k") -> int:
    """Validate a number of drafts: an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InputError(f"{name}: must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise InputError(f"{name}: must be at least 1, got {k}")
    return k


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Validate that randomness is passed in as a numpy Generator."""
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"{name}: must be a numpy.random.Generator (e.g. np.random.default_rng(0))")
    return rng


def check_size(size: Any, name: str = "size") -> int:
    """Validate a sample size: a non-negative integer."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise InputError(f"{name}: must be a non-negative integer, got {size!r}")
    return int(size)
