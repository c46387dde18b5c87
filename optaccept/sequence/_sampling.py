"""Small shared pieces: total variation of rows, residual laws, batched inverse-CDF sampling,
and the Monte Carlo estimate type."""

from __future__ import annotations

import numpy as np

from .._stable import residual

__all__ = ["RejectionEstimate", "tv_rows", "residual_rows", "RowSampler"]


def tv_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    r"""Row-wise total variation :math:`\mathrm{TV}(p, q) = \sum_x (p(x) - q(x))_+`."""
    return np.clip(p - q, 0.0, None).sum(axis=-1)


def residual_rows(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Residual law :math:`(p - q)_+ / \mathrm{TV}(p, q)` row by row, and the TV.

    Rows with TV = 0 (where the residual is never used) get ``p`` itself
    (:func:`optaccept._stable.residual`, the library's one convention).
    """
    return residual(p, q)


class RowSampler:
    """Inverse-CDF sampling from many rows at once: ``sample(rows, u)`` draws token
    ``searchsorted(cdf[row], u, side='right')`` for each (row, u) pair, in one
    ``searchsorted`` over the rows laid end to end (row k shifted by k)."""

    def __init__(self, laws: np.ndarray) -> None:
        laws = np.asarray(laws, dtype=np.float64)
        self.shape = laws.shape
        flat = laws.reshape(-1, laws.shape[-1])
        cdf = np.cumsum(flat, axis=1)
        cdf /= cdf[:, -1:]
        self.n = flat.shape[1]
        self._flat = (cdf + np.arange(flat.shape[0])[:, None]).ravel()

    def sample(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Tokens drawn from flattened rows ``rows`` (ints) with uniforms ``u`` in [0, 1)."""
        rows = np.asarray(rows, dtype=np.int64)
        idx = np.searchsorted(self._flat, rows + u, side="right") - rows * self.n
        return np.minimum(idx, self.n - 1)


class RejectionEstimate(float):
    """Monte Carlo estimate of an expected number of rejections.

    It is a ``float`` (the sample mean) carrying the simulated data:

    Attributes
    ----------
    counts : ndarray of int, shape (runs,)
        Rejections of each simulated run.
    tokens : ndarray of int, shape (runs, T)
        The generated sequences (for checks that the output law is the target's).
    mean, std, stderr : float
        Sample mean, sample standard deviation, and standard error of the mean.
    runs : int
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
    def stderr(self) -> float:
        return self.std / np.sqrt(self.counts.size)

    def __repr__(self) -> str:
        return f"RejectionEstimate(mean={float(self):.6g}, stderr={self.stderr:.3g}, runs={self.runs})"

    def _repr_html_(self) -> str:
        from .._display import html_fields

        return html_fields(
            "Monte Carlo estimate of the rejections",
            [("mean", float(self)), ("standard error", self.stderr), ("runs", self.runs)],
        )

    def __reduce__(self):  # keep pickling working for the float subclass
        return (RejectionEstimate, (np.array(self.counts), np.array(self.tokens)))
