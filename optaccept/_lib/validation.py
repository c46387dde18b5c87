"""Shared input cleaning: the one place that turns user input into clean arrays.

Every public entry point (the core solvers, the draft laws, the verifiers, the
batched torch solvers, the sequence-level functions and the command line) cleans
its probability vectors here, so that one contract holds everywhere:

* **Accepted input.**  numpy arrays of any real dtype, lists and tuples,
  :class:`fractions.Fraction` (and other real number objects), and torch tensors
  (on any device; the numpy core copies them to the CPU).  Booleans, complex
  numbers and strings are refused.  The caller's data is never modified.
* **Shapes first.**  Shape and length are checked before any sum is looked at, so
  a truncated vector is reported as a length mismatch, not as a bad sum.
* **Exact input** (Fractions and ints, at least one Fraction) keeps the exact path:
  it must sum to exactly 1 unless ``normalize=True``.

The sum rule
------------
A float vector of n entries is accepted when its sum s satisfies

    |s − 1| ≤ tol(n) = n · ε₃₂,          ε₃₂ = 2⁻²³ ≈ 1.19e-7,

and is then rescaled to sum exactly 1.  Why this bound: a softmax computed in
float32 normalises by a float32 sum of n terms, whose relative error is at most
γ₍ₙ₋₁₎ ≈ (n − 1)·u with u = ε₃₂/2 (Higham, *Accuracy and Stability of Numerical
Algorithms*, §4.2), and rounds each quotient once more (another u); so its output
sums to 1 within n·u = n·ε₃₂/2.  The bound allows twice that, for a temperature
division or a top-k renormalisation done in the same precision.  A cast to float64
(``np.load``, pandas, any float64 pipeline) hides where a vector came from, so the
same bound is applied to float64 input.  For the 49,152-token SmolLM2 vocabulary
tol ≈ 5.9e-3, while its real float32 softmax rows sum to 1 within about 1e-5;
dropping a tenth of the mass, or passing logits or counts, is far outside it.  Input in a coarser type (float16, bfloat16) also
gets that type's own rounding: tol(n) + ε + n·η, with ε its machine epsilon and η
its smallest subnormal.

* |s − 1| ≤ 1e-9 (float64 rounding): rescaled silently.
* 1e-9 < |s − 1| ≤ tol(n): rescaled.  Input that is float64 (or lists, Fractions,
  ints) gets a :class:`~optaccept.RenormalizedWarning` saying so, because the cast
  hid its origin and a slip of that size is possible; filter it with the
  :mod:`warnings` module.  Input still in float32 or a coarser type is rescaled
  without a warning: its precision is in plain sight.
* |s − 1| > tol(n): :class:`~optaccept.InputError` saying by how much the sum is
  off and advising ``normalize=True`` (``--normalize`` on the command line).
* ``normalize=True``: any positive sum is rescaled, silently.

The same rule applies row by row to batches (:func:`as_distribution_rows`),
whose warning counts the rows it rescaled.
"""

from __future__ import annotations

import contextvars
import functools
import numbers
import sys
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import NORMALIZE_ADVICE, InputError, RenormalizedWarning

__all__ = [
    "seed_of",
    "one_renormalization_warning",
    "SUM_TOL",
    "EPS32",
    "sum_tolerance",
    "as_distribution",
    "as_distribution_pair",
    "as_distribution_rows",
    "as_distribution_row_pair",
    "as_exact_distribution",
    "is_exact_input",
    "plain",
    "check_choice",
    "check_k",
    "check_rng",
    "check_size",
]

#: Deviation of a sum from 1 that is float64 rounding: rescaled without a warning.
SUM_TOL = 1e-9
#: float32 machine epsilon, 2**-23.
EPS32 = 2.0**-23


# ---------------------------------------------------------------------------
# helpers


def plain(v: Any) -> str:
    """A number as plain text (``-0.1``, ``3``), never ``np.float64(-0.1)``."""
    if isinstance(v, bool) or isinstance(v, np.bool_):
        return str(bool(v))
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    return repr(v)


def _where(idx: Any) -> str:
    idx = [int(i) for i in np.atleast_1d(np.asarray(idx))]
    if len(idx) == 1:
        return f"index {idx[0]}"
    return f"row {', '.join(map(str, idx[:-1]))}, index {idx[-1]}"


def _is_torch(x: Any) -> bool:
    mod = type(x).__module__
    return mod.startswith("torch") and hasattr(x, "detach") and hasattr(x, "dtype")


def _finfo(dtype: Any) -> tuple[float, float] | None:
    """(machine epsilon, smallest normal) of a float dtype, numpy or torch; else None."""
    if dtype is None:
        return None
    if type(dtype).__module__ == "torch":
        import torch

        if not dtype.is_floating_point:
            return None
        fi = torch.finfo(dtype)
        return float(fi.eps), float(fi.tiny)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return None
    if not np.issubdtype(dt, np.floating):
        return None
    fi = np.finfo(dt)
    return float(fi.eps), float(fi.tiny)


def _low_precision(dtype: Any) -> bool:
    """True for float32 and coarser float dtypes (numpy or torch)."""
    info = _finfo(dtype)
    return info is not None and info[0] >= EPS32


def sum_tolerance(n: int, dtype: Any = None) -> float:
    """Largest accepted ``|sum − 1|`` for a float vector of ``n`` entries (the rule in the
    module docstring): ``n·ε₃₂``, plus ``ε + n·η`` for an input ``dtype``
    coarser than float32 (numpy or torch dtype; η its smallest subnormal)."""
    tol = max(SUM_TOL, n * EPS32)
    info = _finfo(dtype)
    if info is not None and info[0] > EPS32:
        eps, tiny = info
        tol += eps + n * tiny * eps
    return tol


#: While a call wrapped by :func:`one_renormalization_warning` runs, the rescaling messages of
#: every distribution it validates (a tree's laws: one per prefix) are collected here.
_RESCALED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("optaccept_rescaled", default=None)


def one_renormalization_warning(func: Callable) -> Callable:
    """Decorator: a call that validates many distributions (every prefix of a tree, every
    position of a log) warns once, with a count, instead of once per distribution.

    Parameters
    ----------
    func : callable
        A public function.

    Returns
    -------
    callable
        The function, with its rescaling messages gathered into one
        :class:`~optaccept.RenormalizedWarning` at the caller's line.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _RESCALED.get() is not None:  # an outer call gathers them
            return func(*args, **kwargs)
        gathered: list[str] = []
        token = _RESCALED.set(gathered)
        try:
            out = func(*args, **kwargs)
        finally:
            _RESCALED.reset(token)
        if gathered:
            first = gathered[0].splitlines()[0]
            more = "" if len(gathered) == 1 else f" ({len(gathered)} distributions in this call; the first shown)"
            _warn(first + more)
        return out

    return wrapper


def _warn(message: str) -> None:
    """Warn at the first stack frame outside optaccept (the user's line); inside a call wrapped
    by :func:`one_renormalization_warning`, the message is gathered for that call's one warning."""
    gathered = _RESCALED.get()
    if gathered is not None:
        gathered.append(message)
        return
    frame = sys._getframe(0)
    level = 1
    while frame is not None:
        mod = frame.f_globals.get("__name__", "")
        if mod != "optaccept" and not mod.startswith("optaccept."):
            break
        frame = frame.f_back
        level += 1
    warnings.warn(message, RenormalizedWarning, stacklevel=level)


def _refuse_kind(kind: str, name: str) -> None:
    what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes", "M": "dates", "m": "time spans"}
    if kind in what:
        raise InputError(f"{name}: entries must be real numbers, got {what[kind]}")
    if kind not in "fiu":
        raise InputError(f"{name}: entries must be real numbers")


def _object_to_float(raw: np.ndarray, name: str) -> np.ndarray:
    out = np.empty(raw.shape, dtype=np.float64)
    flat = out.reshape(-1)
    for i, v in enumerate(raw.reshape(-1)):
        if isinstance(v, (bool, np.bool_)):
            raise InputError(f"{name}: entries must be real numbers, got booleans")
        if isinstance(v, (str, bytes)):
            raise InputError(f"{name}: entries must be real numbers, got strings")
        if isinstance(v, complex) or (isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real)):
            raise InputError(f"{name}: entries must be real numbers, got complex numbers")
        try:
            flat[i] = float(v)
        except (TypeError, ValueError):
            raise InputError(f"{name}: entries must be real numbers, got {type(v).__name__}") from None
    return out


def _real_tensor(x: Any, name: str) -> tuple[Any, Any]:
    """``x`` detached and its source float dtype (None for ints); complex or bool refused."""
    import torch

    t = x.detach()
    if t.is_complex():
        raise InputError(f"{name}: entries must be real numbers, got complex numbers")
    if t.dtype == torch.bool:
        raise InputError(f"{name}: entries must be real numbers, got booleans")
    return t, (t.dtype if t.dtype.is_floating_point else None)


def _to_numpy(x: Any, name: str) -> tuple[np.ndarray, Any]:
    """A fresh float64 copy of ``x`` and its source float dtype (None for ints/objects)."""
    if _is_torch(x):
        import torch

        t, src = _real_tensor(x, name)
        return t.to(device="cpu", dtype=torch.float64).numpy().copy(), src
    if isinstance(x, (str, bytes)):
        raise InputError(f"{name}: entries must be real numbers, got a string")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a rectangular array of real numbers") from None
    if raw.dtype == object:
        return _object_to_float(raw, name), None
    _refuse_kind(raw.dtype.kind, name)
    src = raw.dtype if raw.dtype.kind == "f" else None
    return raw.astype(np.float64, copy=True), src


def _sum_message(name: str, what: str, total: float, tol: float, n: int, rule: bool) -> str:
    off = abs(total - 1.0)
    why = f"float32 rounding explains for {n} entries ({tol:.2g})" if rule else f"the tolerance {tol:.2g}"
    verb = "sum" if what == "entries" else "sums"
    return f"{name}: {what} {verb} to {plain(total)}, off from 1 by {off:.3g}, more than {why}; {NORMALIZE_ADVICE}"


def _check_finite_nonneg(arr: np.ndarray, name: str, total: Any) -> None:
    """NaN/inf show up in the sum(s) ``total``; negatives in the minimum."""
    if not np.all(np.isfinite(total)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        kind = "NaN" if np.isnan(arr[tuple(bad)]) else "infinite"
        raise InputError(f"{name}: {kind} entry at {_where(bad)}")
    if arr.size and float(arr.min()) < 0:
        bad = np.argwhere(arr < 0)[0]
        raise InputError(f"{name}: negative entry at {_where(bad)} ({plain(arr[tuple(bad)])})")


# ---------------------------------------------------------------------------
# vectors


def is_exact_input(x: Any) -> bool:
    """True when every entry of ``x`` is a :class:`~fractions.Fraction` or an int
    (and at least one is a Fraction): such input takes the exact code path."""
    if isinstance(x, np.ndarray) and x.dtype != object or _is_torch(x) or isinstance(x, (str, bytes)):
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


def as_exact_distribution(x: Any, name: str, *, normalize: bool = False, n: int | None = None) -> tuple[Fraction, ...]:
    """Validate an exact probability vector (Fractions/ints) and return a tuple of Fractions.

    The length must be ``n`` (when given) and the sum exactly 1 unless ``normalize=True``.
    """
    try:
        items = [Fraction(v) for v in x]
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: entries must be Fractions or integers ({exc})") from None
    if not items:
        raise InputError(f"{name}: must have at least one entry")
    if n is not None and len(items) != n:
        raise InputError(f"{name}: length {len(items)} does not match the vocabulary size {n}")
    neg = [i for i, v in enumerate(items) if v < 0]
    if neg:
        raise InputError(f"{name}: negative entry at index {neg[0]} ({items[neg[0]]})")
    total = sum(items, Fraction(0))
    if total == 0:
        raise InputError(f"{name}: all entries are zero")
    if total != 1:
        if not normalize:
            raise InputError(f"{name}: entries sum to {total}, not exactly 1; {NORMALIZE_ADVICE}")
        items = [v / total for v in items]
    return tuple(items)


def _vector(x: Any, name: str, n: int | None) -> tuple[np.ndarray, Any]:
    if is_exact_input(x):
        arr, src = np.array([float(v) for v in x], dtype=np.float64), None
    else:
        arr, src = _to_numpy(x, name)
    if arr.ndim != 1:
        got = "a single number" if arr.ndim == 0 else f"shape {arr.shape}"
        raise InputError(f"{name}: must be a 1-D vector, got {got}")
    if arr.size == 0:
        raise InputError(f"{name}: must have at least one entry")
    if n is not None and arr.size != n:
        raise InputError(f"{name}: length {arr.size} does not match the vocabulary size {n}")
    return arr, src


def _finish_vector(arr: np.ndarray, src: Any, name: str, normalize: bool, tol: float | None) -> np.ndarray:
    total = float(arr.sum())  # NaN and inf propagate into the sum
    _check_finite_nonneg(arr, name, total)
    if total <= 0:
        raise InputError(f"{name}: all entries are zero")
    rule = tol is None
    if rule:
        tol = sum_tolerance(arr.size, src)
    off = abs(total - 1.0)
    if not normalize and off > SUM_TOL:
        if off > tol:
            raise InputError(_sum_message(name, "entries", total, tol, arr.size, rule))
        if not _low_precision(src):
            _warn(
                f"{name}: entries sum to {plain(total)} (off from 1 by {off:.2g}, within the {tol:.2g} allowed); rescaled"
            )
    if total != 1.0:
        arr /= total
    arr.setflags(write=False)
    return arr


def as_distribution(
    x: Any,
    name: str,
    *,
    normalize: bool = False,
    n: int | None = None,
    tol: float | None = None,
) -> np.ndarray:
    """Validate a probability vector and return it as a new read-only float64 array.

    Parameters
    ----------
    x : array_like, shape (n,)
        Non-negative finite reals (array, list, Fractions, torch tensor) whose sum obeys
        the sum rule of this module.
    name : str
        The argument's name, used in error messages.
    normalize : bool
        Rescale any positive sum to 1 instead of refusing it.
    n : int, optional
        Required length (checked before the sum).
    tol : float, optional
        Replace the rule's tolerance ``sum_tolerance(n, dtype)`` by this one.

    Raises
    ------
    InputError
        Wrong shape or length, non-real entries, NaN, infinite or negative entries,
        a zero vector, or a sum off by more than the rule allows (without ``normalize``).
    """
    if (
        type(x) is np.ndarray
        and x.dtype == np.float64
        and x.ndim == 1
        and x.flags.c_contiguous
        and x.size
        and (n is None or x.size == n)
    ):
        # a C-contiguous float64 vector that obeys the rule without a word (finite,
        # non-negative, its sum within float64 rounding of 1, or any positive sum with
        # normalize): its sum (the copy's pairwise sum, bit for bit) and its minimum on the
        # caller's array, then one pass that copies it or divides it by the sum; anything
        # else takes the general path below, which finds the same sum and says what is wrong
        total = float(x.sum())
        if 0.0 < total < np.inf and (normalize or abs(total - 1.0) <= SUM_TOL) and float(x.min()) >= 0.0:
            arr = x / total if total != 1.0 else x.copy()
            arr.setflags(write=False)
            return arr
    arr, src = _vector(x, name, n)
    return _finish_vector(arr, src, name, normalize, tol)


def as_distribution_pair(
    p: Any, q: Any, *, normalize: bool = False, names: tuple[str, str] = ("p", "q")
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a target/draft pair: both shapes and the equal length are checked before
    either sum.  Returns two read-only float64 vectors."""
    a, sa = _vector(p, names[0], None)
    b, sb = _vector(q, names[1], None)
    if a.size != b.size:
        raise InputError(f"{names[0]} and {names[1]}: lengths differ ({a.size} vs {b.size})")
    return _finish_vector(a, sa, names[0], normalize, None), _finish_vector(b, sb, names[1], normalize, None)


# ---------------------------------------------------------------------------
# batches of rows (numpy or torch)


def _rows_convert(x: Any, name: str, n: int | None, keep_float32: bool, ndim: int | None) -> tuple[Any, Any, bool]:
    """(array or tensor, source dtype, is_torch) with the shape checked, nothing summed."""
    if _is_torch(x):
        import torch

        t, src = _real_tensor(x, name)
        low = src in (torch.float16, torch.bfloat16, torch.float32)
        out = t.to(torch.float32 if keep_float32 and low else torch.float64)
        is_t = True
    else:
        if isinstance(x, np.ndarray) and x.dtype != object:
            _refuse_kind(x.dtype.kind, name)
            src = x.dtype if x.dtype.kind == "f" else None
            low = src is not None and np.finfo(src).eps >= EPS32
            out = x.astype(np.float32 if keep_float32 and low else np.float64, copy=True)
        else:
            out, src = _to_numpy(x, name)
        is_t = False
    if ndim == 2 and out.ndim == 1:
        out = out[None, :]
    if out.ndim == 0:
        raise InputError(f"{name}: must be an array of probability vectors, got a single number")
    if ndim is not None and out.ndim != ndim:
        raise InputError(f"{name}: must have shape (rows, n), got shape {tuple(out.shape)}")
    if out.shape[-1] == 0:
        raise InputError(f"{name}: the vocabulary must have at least one token")
    if n is not None and out.shape[-1] != n:
        raise InputError(f"{name}: length {out.shape[-1]} does not match the vocabulary size {n}")
    return out, src, is_t


def _rows_finish(out: Any, src: Any, name: str, normalize: bool, tol: float | None, is_t: bool) -> Any:
    n = int(out.shape[-1])
    if out.shape[:-1] and int(np.prod(out.shape[:-1])) == 0:
        return out
    if is_t:
        import torch

        sums_t = out.sum(dim=-1, dtype=torch.float64)
        sums = sums_t.cpu().numpy()
        if not np.all(np.isfinite(sums)) or float(out.min()) < 0:
            _check_finite_nonneg(out.cpu().to(torch.float64).numpy(), name, sums)
    else:
        sums = out.sum(axis=-1, dtype=np.float64)
        _check_finite_nonneg(out, name, sums)
    sums = np.atleast_1d(sums)
    if np.any(sums <= 0):
        idx = np.argwhere(sums <= 0)[0]
        raise InputError(f"{name}: row {', '.join(map(str, idx))} is all zeros")
    rule = tol is None
    if rule:
        tol = sum_tolerance(n, src)
    off = np.abs(sums - 1.0)
    if not normalize:
        worst = np.unravel_index(int(np.argmax(off)), off.shape)
        top = float(off[worst])
        if top > tol:
            where = "row " + ", ".join(str(int(i)) for i in worst)
            raise InputError(_sum_message(name, where, float(sums[worst]), tol, n, rule))
        if top > SUM_TOL and not _low_precision(src):
            count = int(np.count_nonzero(off > SUM_TOL))
            _warn(
                f"{name}: {count} of {off.size} rows sum to 1 only within {top:.2g} (within the {tol:.2g} "
                f"allowed for {n} entries); rescaled"
            )
    if is_t:
        return out / sums_t.to(out.dtype).unsqueeze(-1)
    if np.any(sums != 1.0):
        out /= sums.reshape(out.shape[:-1] + (1,)).astype(out.dtype)
    return out


def as_distribution_rows(
    x: Any,
    name: str,
    *,
    normalize: bool = False,
    n: int | None = None,
    keep_float32: bool = False,
    ndim: int | None = 2,
    tol: float | None = None,
) -> Any:
    """Validate a batch of probability vectors (the last axis) under the module's sum rule.

    Parameters
    ----------
    x : array_like or torch.Tensor, shape (B, n)
        Rows of probabilities.  A 1-D vector is one row when ``ndim=2``.
    name : str
        The argument's name, used in error messages.
    normalize : bool
        Rescale every row with a positive sum, silently.
    n : int, optional
        Required row length (checked before any sum).
    keep_float32 : bool
        Keep float32 (and float16/bfloat16, as float32) input in float32; else float64.
    ndim : int or None
        Required number of dimensions (2: a 1-D vector becomes one row); ``None``: any
        array whose last axis holds the vectors.
    tol : float, optional
        Replace the rule's tolerance.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        A new array with every row rescaled to sum 1: a writable numpy array for numpy or
        list input, a tensor on the input's device for tensor input.

    Raises
    ------
    InputError
        As :func:`as_distribution`; messages name the row and index (``row 3, index 17``).
    """
    out, src, is_t = _rows_convert(x, name, n, keep_float32, ndim)
    return _rows_finish(out, src, name, normalize, tol, is_t)


def as_distribution_row_pair(
    p: Any,
    q: Any,
    *,
    normalize: bool = False,
    keep_float32: bool = False,
    names: tuple[str, str] = ("p", "q"),
) -> tuple[Any, Any]:
    """Validate target and draft rows together: shapes (B, n) compared before any sum.

    Returns ``(P, Q)`` as :func:`as_distribution_rows` would (same kind as each input),
    both float64 unless both inputs are float32 and ``keep_float32``.
    """
    a, sa, ta = _rows_convert(p, names[0], None, keep_float32, 2)
    b, sb, tb = _rows_convert(q, names[1], None, keep_float32, 2)
    if tuple(a.shape) != tuple(b.shape):
        raise InputError(f"{names[0]} and {names[1]}: shapes differ ({tuple(a.shape)} vs {tuple(b.shape)})")
    if str(a.dtype).endswith("float64") != str(b.dtype).endswith("float64"):
        if ta:
            a = a.double()
        else:
            a = a.astype(np.float64)
        if tb:
            b = b.double()
        else:
            b = b.astype(np.float64)
    return (
        _rows_finish(a, sa, names[0], normalize, None, ta),
        _rows_finish(b, sb, names[1], normalize, None, tb),
    )


# ---------------------------------------------------------------------------
# other arguments


def check_k(k: Any, name: str = "k") -> int:
    """Validate a number of drafts: an integer >= 1."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise InputError(f"{name}: must be an integer, got {plain(k)}")
    k = int(k)
    if k < 1:
        raise InputError(f"{name}: must be at least 1, got {k}")
    return k


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """The library's one rule for randomness (docs/reference.md, "Randomness"), applied by every function
    that takes ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        A Generator, used as it is (its stream advances); a non-negative integer seed,
        turned into ``np.random.default_rng(seed)``; or None: fresh entropy,
        ``np.random.default_rng()``.  A function whose result should be reproducible
        without being asked says so with a seed as its default (``rng=0``).
    name : str
        The argument as the caller wrote it, for the message.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InputError
        If ``rng`` is none of these (a negative seed, a float, a legacy ``RandomState``, ...).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng))
    if rng is None:
        return np.random.default_rng()
    raise InputError(
        f"{name}: must be a numpy.random.Generator or a non-negative integer seed (e.g. "
        f"np.random.default_rng(0); None: fresh entropy), got {plain(rng)}"
    )


def seed_of(rng: Any, name: str = "rng") -> int:
    """An integer seed from ``rng`` under the library's rule (:func:`check_rng`), for work that
    derives its own streams from one seed (workers, resumable shards): a Generator gives one
    draw (its stream advances), a non-negative integer is the seed itself, None draws fresh
    entropy.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        The randomness.
    name : str
        The argument as the caller wrote it, for the message.

    Returns
    -------
    int

    Raises
    ------
    InputError
        If ``rng`` is none of these.
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return int(rng)
    return int(check_rng(rng, name).integers(2**63 - 1))


def check_size(size: Any, name: str = "size") -> int:
    """Validate a sample size: a non-negative integer."""
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral) or size < 0:
        raise InputError(f"{name}: must be a non-negative integer, got {plain(size)}")
    return int(size)


def check_choice(name: str, value: Any, choices: Any, *, allow_none: bool = False, also: str | None = None) -> Any:
    """Validate a string option: ``value`` must be one of ``choices`` (or None with
    ``allow_none``); returns it unchanged.

    Parameters
    ----------
    name : str
        The argument as the caller wrote it; the message starts with it.
    value : object
        The value passed.
    choices : iterable of str
        The accepted values, in the order the message lists them.
    allow_none : bool
        Whether None is accepted too (and listed in the message).
    also : str, optional
        Other accepted kinds the caller checks itself (e.g. ``"a draft-law object"``),
        listed at the end of the message.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    InputError
        ``"{name}: must be one of 'a', 'b' or 'c'; got 'x'"``.
    """
    options = tuple(choices)
    if allow_none and value is None:
        return value
    if isinstance(value, str) and value in options:
        return value
    listed = [repr(c) for c in options] + (["None"] if allow_none else []) + ([also] if also else [])
    text = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]
    raise InputError(f"{name}: must be one of {text}; got {plain(value)}")
