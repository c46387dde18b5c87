"""A log's probability rows cleaned chunk by chunk under the library's one sum rule
(:mod:`optaccept._lib.validation`), for the audits that read logs of many steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import SUM_TOL, _low_precision, _sum_message, _warn, plain, sum_tolerance


class _Rows:
    """The library's one sum rule (:mod:`optaccept._lib.validation`) applied to a log read chunk by
    chunk: errors name the argument as the caller wrote it and the row as the caller numbers
    it, and report the row's sum before any rescale; rows rescaled beyond float64 rounding
    (float64 input only, as the rule says) raise one :class:`~optaccept.RenormalizedWarning`
    per call, from :meth:`finish`, however many rows and chunks."""

    def __init__(self, name: str, n: int, dtype: Any) -> None:
        self.name, self.n = name, n
        if type(dtype).__module__ == "torch":
            self.src = dtype if dtype.is_floating_point else None
        else:
            try:
                self.src = np.dtype(dtype) if dtype is not None and np.dtype(dtype).kind == "f" else None
            except TypeError:
                self.src = None
        self.tol = sum_tolerance(n, self.src)
        self.quiet = _low_precision(self.src)
        self.rescaled = self.rows = 0
        self.worst = 0.0

    def clean(self, raw: Any, lo: int) -> np.ndarray:
        """Rows ``lo, lo + 1, …`` of the argument as float64 rows summing to 1."""
        if hasattr(raw, "detach"):  # a torch tensor
            raw = raw.detach().cpu().numpy()
        a = np.asarray(raw)
        if a.dtype.kind not in "fiu":
            raise InputError(f"{self.name}: entries must be real numbers, got dtype {a.dtype}")
        a = a.astype(np.float64)  # a copy: the caller's data is never modified
        if a.ndim != 2 or a.shape[1] != self.n:
            raise InputError(f"{self.name}: rows must have {self.n} entries, got shape {a.shape} at row {lo}")
        sums = a.sum(axis=1)
        if not np.all(np.isfinite(sums)):
            r, i = np.argwhere(~np.isfinite(a))[0]
            raise InputError(
                f"{self.name}: {'NaN' if np.isnan(a[r, i]) else 'infinite'} entry at row {lo + r}, index {i}"
            )
        if a.size and a.min() < 0:
            r, i = np.argwhere(a < 0)[0]
            raise InputError(f"{self.name}: negative entry at row {lo + r}, index {i} ({plain(a[r, i])})")
        off = np.abs(sums - 1.0)
        if off.size:
            w = int(np.argmax(off))
            if sums[w] <= 0:
                raise InputError(f"{self.name}: row {lo + w} is all zeros")
            if off[w] > self.tol:
                raise InputError(_sum_message(self.name, f"row {lo + w}", float(sums[w]), self.tol, self.n, True))
            self.rescaled += int(np.count_nonzero(off > SUM_TOL))
            self.worst = max(self.worst, float(off[w]))
        self.rows += a.shape[0]
        a /= sums[:, None]
        return a

    def finish(self) -> None:
        if self.rescaled and not self.quiet:
            _warn(
                f"{self.name}: {self.rescaled} of {self.rows} rows sum to 1 only within {self.worst:.2g} "
                f"(within the {self.tol:.2g} allowed for {self.n} entries); rescaled"
            )


def _dtype_of(x: Any) -> Any:
    """The float dtype a log's rows came in (that of the array, or of its first row)."""
    dt = getattr(x, "dtype", None)
    if dt is None and len(x):
        dt = getattr(x[0], "dtype", None)
    return dt
