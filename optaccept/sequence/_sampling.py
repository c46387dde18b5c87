"""Small shared pieces: total variation of rows, residual laws, and the Monte Carlo estimate
type (the batched inverse-CDF sampler, :class:`RowSampler`, lives in :mod:`optaccept._lib.sampling`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._lib.display import Tabular, html_fields
from .._lib.stable import residual
from .._lib.statistics import std_err as sample_std_err

__all__ = ["RejectionEstimate", "tv_rows", "residual_rows"]


def tv_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    r"""Row-wise total variation :math:`\mathrm{TV}(p, q) = \sum_x (p(x) - q(x))_+`."""
    return np.clip(p - q, 0.0, None).sum(axis=-1)


def residual_rows(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Residual law :math:`(p - q)_+ / \mathrm{TV}(p, q)` row by row, and the TV.

    Rows with TV = 0 (where the residual is never used) get ``p`` itself
    (:func:`optaccept._lib.stable.residual`, the library's one convention).
    """
    return residual(p, q)


class RejectionEstimate(float, Tabular):
    """Monte Carlo estimate of an expected number of rejections.

    It is a ``float`` (the sample mean) carrying the simulated data.  In the results'
    vocabulary ``value`` is the mean, ``std_err`` its standard error (old name ``stderr``),
    ``method`` ``"sampled"``, ``ok`` whether a standard error exists (at least two runs);
    ``to_pandas()`` and ``to_latex()`` give them as one row.

    Attributes
    ----------
    counts : ndarray of int, shape (runs,)
        Rejections of each simulated run.
    tokens : ndarray of int, shape (runs, T)
        The generated sequences (for checks that the output law is the target's).
    mean, std, std_err : float
        Sample mean, sample standard deviation, and standard error of the mean.
    runs : int

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> est = sequence.simulate_rejections(chain, samples=400, rng=0)
    >>> isinstance(est, float), est.runs, est.counts.shape, est.tokens.shape
    (True, 400, (400,), (400, 3))
    >>> abs(est.mean - 0.9) < 5 * est.std_err  # the exact value is 3 * 0.3
    True
    """

    counts: np.ndarray
    tokens: np.ndarray

    def __new__(cls, counts: np.ndarray, tokens: np.ndarray) -> RejectionEstimate:
        counts = np.asarray(counts)
        obj = super().__new__(cls, float(counts.mean()))
        counts.setflags(write=False)
        tokens.setflags(write=False)
        obj.counts = counts
        obj.tokens = tokens
        return obj

    @property
    def mean(self) -> float:
        return float(self)

    @property
    def runs(self) -> int:
        return int(self.counts.size)

    @property
    def std(self) -> float:
        return float(self.counts.std(ddof=1)) if self.counts.size > 1 else 0.0

    @property
    def std_err(self) -> float:
        """Standard error of the mean (0 for one run)."""
        return sample_std_err(self.counts)

    #: the estimate is a Monte Carlo mean
    method = "sampled"
    _caption = "Monte Carlo estimate of the expected rejections."

    @property
    def value(self) -> float:
        """The mean, as a plain float."""
        return float(self)

    @property
    def ok(self) -> bool:
        """Whether the estimate has a standard error (at least two runs)."""
        return self.runs >= 2

    def _records(self) -> list[dict[str, Any]]:
        rec = {"value": self.value, "std_err": self.std_err, "method": self.method, "ok": self.ok}
        return [{**rec, "std": self.std, "runs": self.runs}]

    def __repr__(self) -> str:
        return f"RejectionEstimate(mean={float(self):.6g}, std_err={self.std_err:.3g}, runs={self.runs})"

    def _repr_html_(self) -> str:
        return html_fields(
            "Monte Carlo estimate of the rejections",
            [("mean", float(self)), ("standard error", self.std_err), ("runs", self.runs)],
        )

    def __reduce__(self):  # keep pickling working for the float subclass
        return (RejectionEstimate, (np.array(self.counts), np.array(self.tokens)))
