"""Draws from discrete laws: the package's one inverse-CDF sampler, for numpy and torch.

Every sampled token in the package is drawn here, so that one rule holds everywhere and a
fixed seed gives the same tokens in every module:

* **Inverse CDF of an unnormalised law.**  With c the running sums of the law's masses (in
  index order, ``np.cumsum``) and a uniform u in [0, 1), the draw is the first index whose
  running sum exceeds u·c[-1] (``searchsorted(c, u·c[-1], side="right")``), clamped to the last
  index.  A token of zero mass is never drawn (its running sum equals its predecessor's, and
  the comparison is strict), and the law need not sum to 1: rescaling it leaves every draw
  unchanged except for the rounding of u·c[-1].  One uniform is read per draw, in order,
  from the generator passed in (:func:`draw`, :func:`draws`), or the uniforms are given
  (:func:`inverse_cdf`, :func:`first_above`) when a caller reads its stream itself.
* **Many rows at once.**  :class:`RowSampler` normalises each row's running sums and lays
  the rows end to end (row r shifted by r), so one ``searchsorted`` serves any mix of rows.
* **Without replacement.**  :func:`without_replacement` draws m distinct indices by the Gumbel
  top-m trick.
* **Torch.**  :func:`torch_categorical` draws with ``torch.multinomial`` and the
  ``torch.Generator`` passed in, for one row (an int) or a batch of rows (a tensor).

That the draws follow the law is tested against exact probabilities by chi-square and
binomial tests at fixed seeds (tests/foundations/test_sampling_helpers.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["draw", "draws", "inverse_cdf", "first_above", "without_replacement", "RowSampler", "torch_categorical"]


def first_above(cdf: np.ndarray, x: Any) -> Any:
    """The first index whose running sum exceeds ``x``, clamped to the last index.

    Parameters
    ----------
    cdf : ndarray, shape (n,)
        Non-decreasing running sums (``np.cumsum`` of non-negative masses), n ≥ 1.
    x : float or ndarray
        Points to locate (any scale; not rescaled).

    Returns
    -------
    int or ndarray of int
        ``min(searchsorted(cdf, x, side="right"), n − 1)``: an int for a scalar ``x``, an
        int64 array of the shape of ``x`` otherwise.
    """
    idx = np.searchsorted(cdf, x, side="right")
    if np.ndim(idx) == 0:
        return min(int(idx), cdf.size - 1)
    return np.minimum(idx, cdf.size - 1)


def inverse_cdf(law: Any, u: Any, *, total: Any = None) -> Any:
    """Indices drawn from the unnormalised ``law`` at the given uniforms.

    Parameters
    ----------
    law : array_like, shape (n,)
        Non-negative masses with a positive sum (need not be 1), n ≥ 1.  Its dtype is kept:
        a float32 law is summed in float32.
    u : float or ndarray
        Uniforms in [0, 1).
    total : float, optional
        The mass that ``u`` is scaled by; the last running sum by default.  (A caller that
        scales by ``law.sum()`` passes it: pairwise and running sums can differ in the last bit.)

    Returns
    -------
    int or ndarray of int
        ``min(searchsorted(cumsum(law), u·total, side="right"), n − 1)``.
    """
    c = np.cumsum(law)
    return first_above(c, u * (c[-1] if total is None else total))


def draw(law: Any, rng: np.random.Generator, *, total: Any = None) -> int:
    """One index drawn from the unnormalised ``law`` with one uniform of ``rng``.

    Parameters
    ----------
    law : array_like, shape (n,)
        Non-negative masses with a positive sum (need not be 1).
    rng : numpy.random.Generator
        Read once (``rng.random()``).
    total : float, optional
        As in :func:`inverse_cdf`.

    Returns
    -------
    int
        The drawn index, of positive mass.

    Examples
    --------
    >>> import numpy as np
    >>> draw(np.array([0.0, 1.0, 0.0]), np.random.default_rng(0))
    1
    """
    c = np.cumsum(law)
    return first_above(c, rng.random() * (c[-1] if total is None else total))


def draws(law: Any, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent indices from the unnormalised ``law``, from ``rng.random(size)``.

    Parameters
    ----------
    law : array_like, shape (n,)
        Non-negative masses with a positive sum (need not be 1).
    rng : numpy.random.Generator
        Read ``size`` times, in one call.
    size : int
        How many indices.

    Returns
    -------
    ndarray of int64, shape (size,)
    """
    c = np.cumsum(law)
    return first_above(c, rng.random(size) * c[-1])


def without_replacement(law: Any, m: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``m`` distinct indices drawn one after another without replacement from ``law``.

    The Gumbel top-m trick: log-mass plus a standard Gumbel variate for each index of positive
    mass (read from ``rng`` in index order, one ``rng.gumbel`` call), the ``m`` largest in
    decreasing order; this is the law of m sequential draws, each from the law renormalised
    over the indices not yet drawn (Vieira, 2014; Kool, van Hoof and Welling, ICML 2019).

    Parameters
    ----------
    law : array_like, shape (n,)
        Non-negative float64 masses (need not sum to 1).
    m : int
        How many indices; fewer when the law has fewer indices of positive mass.
    rng : numpy.random.Generator
        Read once, for as many Gumbel variates as the law has positive masses.

    Returns
    -------
    ndarray of int64, shape (min(m, support),)
        The indices in the order drawn.
    """
    law = np.asarray(law)
    pos = law > 0
    g = np.full(law.size, -np.inf)
    g[pos] = np.log(law[pos]) + rng.gumbel(size=int(pos.sum()))
    return np.argsort(-g, kind="stable")[: min(m, int(pos.sum()))]


class RowSampler:
    """Inverse-CDF sampling from many rows at once: ``sample(rows, u)`` draws token
    ``searchsorted(cdf[row], u, side='right')`` for each (row, u) pair, in one
    ``searchsorted`` over the rows laid end to end (row k shifted by k).

    Parameters
    ----------
    laws : array_like, shape (..., n)
        Non-negative rows, each with a positive sum; the leading axes are flattened in C
        order (row r of the flattened array is ``sample``'s row r).
    """

    def __init__(self, laws: Any) -> None:
        laws = np.asarray(laws, dtype=np.float64)
        self.shape = laws.shape
        flat = laws.reshape(-1, laws.shape[-1])
        cdf = np.cumsum(flat, axis=1)
        cdf /= cdf[:, -1:]
        self.n = flat.shape[1]
        self._flat = (cdf + np.arange(flat.shape[0])[:, None]).ravel()

    def sample(self, rows: Any, u: Any) -> np.ndarray:
        """Tokens drawn from flattened rows ``rows`` (ints) with uniforms ``u`` in [0, 1).

        Parameters
        ----------
        rows : array_like of int
            Flattened row indices.
        u : array_like of float
            One uniform per row index (broadcast with ``rows``).

        Returns
        -------
        ndarray of int64
            The drawn tokens, clamped to n − 1.
        """
        rows = np.asarray(rows, dtype=np.int64)
        idx = np.searchsorted(self._flat, rows + u, side="right") - rows * self.n
        return np.minimum(idx, self.n - 1)


def torch_categorical(probs: Any, generator: Any = None) -> Any:
    """Draws from a torch law (one row) or a batch of laws (one per row), by ``torch.multinomial``.

    Parameters
    ----------
    probs : torch.Tensor, shape (n,) or (rows, n)
        Non-negative masses with a positive sum per row (need not be 1).
    generator : torch.Generator, optional
        The generator read (on the device of ``probs``); torch's global one if None.

    Returns
    -------
    int or torch.Tensor
        For one row an int; for a batch a long tensor of shape (rows,).
    """
    import torch

    out = torch.multinomial(probs, 1, generator=generator)
    return int(out[0]) if probs.dim() == 1 else out[:, 0]
