r"""The bias-rejection trade-off of one token (Yin et al., Theorems 4-5).

A (possibly biased) decoder accepts draft token :math:`x \sim q` with probability
b(x) in [0, 1] and otherwise draws from a rejection law :math:`\mathcal P`; its output law
is :math:`b q + \mathcal P \sum_x (1 - b(x)) q(x)` and its rejection probability is
:math:`R = \sum_x (1 - b(x)) q(x)`.  Yin et al. (NeurIPS 2024; their target is q, draft p)
measure the bias by the total variation to the target p.

Theorem 4.  With :math:`A = (p - b q)/R`, a rejection law minimises the bias iff it is
0 where A < 0, at most A elsewhere and sums to 1; the minimum bias is

.. math::  \mathrm{loss}(b) = \tfrac12 \sum_x |p(x) - b(x) q(x)| - \tfrac12 \sum_x (1 - b(x)) q(x).

Theorem 5 (Pareto front).  For every b, :math:`R + \mathrm{loss}(b) \ge \mathrm{TV}(p, q)`,
with equality exactly when :math:`\min(1, p/q) \le b \le 1` where q > 0: the front is the
segment from (0, TV) to (TV, 0).  Over-acceptance :math:`b_\varepsilon = \min(1, (p +
\varepsilon)/q)` sweeps it with the residual :math:`(p - q)_+ / \mathrm{TV}(p, q)` as its
optimal rejection law ("Decoding-OPT"); "Decoding-UNO" draws rejections from p itself.

Proofs: docs/theory.md §6.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Tabular, html_table
from .._lib.validation import as_distribution, as_distribution_pair
from ._markov import _as_stochastic

__all__ = [
    "optimal_rejection_distribution",
    "over_acceptance",
    "rejection_probability",
    "output_loss",
    "pareto_front",
    "decoder_losses",
    "DecoderLosses",
]


def _pq(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    p, q = as_distribution_pair(p, q)
    return p, q


def _as_rule(b: Any, n: int) -> np.ndarray:
    try:
        arr = np.array(b, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise InputError("b: entries must be real numbers") from None
    if arr.shape != (n,):
        raise InputError(f"b: must have shape ({n},) like p and q, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        raise InputError("b: acceptance probabilities must lie in [0, 1]")
    return arr


def _as_eps(eps: Any) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.array(eps, dtype=np.float64))
    except (TypeError, ValueError):
        raise InputError("eps: must be real numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"eps: must be a number or a 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0:
        raise InputError("eps: over-acceptance thresholds must be finite and >= 0")
    return arr


def rejection_probability(q: Any, b: Any) -> float:
    r""":math:`R = \sum_x (1 - b(x)) q(x)`, the probability that the draft token is rejected.

    Parameters
    ----------
    q : array_like, shape (n,)
        Draft law.
    b : array_like, shape (n,)
        Acceptance probabilities in [0, 1].

    Returns
    -------
    float
        R.

    Raises
    ------
    InputError
        If q is not a distribution or b is not n probabilities in [0, 1].
    """
    q = as_distribution(q, "q")
    return float(((1 - _as_rule(b, q.size)) * q).sum())


def optimal_rejection_distribution(p: Any, q: Any, b: Any) -> tuple[np.ndarray, float]:
    r"""A rejection law minimising the bias for acceptance rule b, and that minimum (Theorem 4).

    .. math::  \mathcal P^* = \frac{(p - b q)_+}{\sum_x (p - b q)_+}, \qquad
               \mathrm{loss} = \tfrac12 \sum_x |p - b q| - \tfrac12 \sum_x (1 - b) q

    (Yin et al., Theorem 4, letters swapped: their target is q): the member of Theorem 4's
    optimal set proportional to :math:`A_+`.  Proof: docs/theory.md §6.5.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    b : array_like, shape (n,)
        Acceptance probabilities in [0, 1].

    Returns
    -------
    law : ndarray, shape (n,)
        Optimal rejection law (p itself when b never rejects and p = b q leaves nothing).
    loss : float
        :math:`\mathrm{TV}(\text{output law}, p)` at the optimum.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import sequence
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> b = np.minimum(1, p / q)  # speculative decoding's rule
    >>> law, loss = sequence.optimal_rejection_distribution(p, q, b)
    >>> law.round(4), round(loss, 12)  # the residual (p - q)+ / TV, and no bias
    (array([0.3125, 0.4688, 0.    , 0.2187, 0.    ]), 0.0)
    """
    p, q = _pq(p, q)
    b = _as_rule(b, p.size)
    d = p - b * q
    pos = np.clip(d, 0.0, None)
    mass = pos.sum()
    law = pos / mass if mass > 0 else p.copy()
    law.setflags(write=False)
    loss = 0.5 * np.abs(d).sum() - 0.5 * ((1 - b) * q).sum()
    return law, float(max(loss, 0.0))


def output_loss(p: Any, q: Any, b: Any, law: Any) -> float:
    r"""Bias :math:`\mathrm{TV}(b q + R\,\mathcal P, p)` of any decoder (rule b, rejection law).

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    b : array_like, shape (n,)
        Acceptance probabilities in [0, 1].
    law : array_like, shape (n,)
        The rejection law :math:`\mathcal P`.

    Returns
    -------
    float
        The total-variation distance of the decoder's output law from p.

    Raises
    ------
    InputError
        If p, q or ``law`` is not a distribution of length n, or b is not n
        probabilities in [0, 1].
    """
    p, q = _pq(p, q)
    b = _as_rule(b, p.size)
    law = as_distribution(law, "law", n=p.size)
    r = ((1 - b) * q).sum()
    return float(0.5 * np.abs(p - b * q - r * law).sum())


def _over(p: np.ndarray, q: np.ndarray, eps: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, np.minimum(1.0, (p + eps) / np.where(q > 0, q, 1.0)), 1.0)


def over_acceptance(p: Any, q: Any, eps: float) -> np.ndarray:
    r"""Over-acceptance rule :math:`b_\varepsilon = \min(1, (p + \varepsilon)/q)` (1 where q = 0).

    :math:`\varepsilon = 0` is speculative decoding; :math:`\varepsilon \ge \max(q - p)`
    accepts every draft.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft laws.
    eps : float
        The threshold ε ≥ 0.

    Returns
    -------
    ndarray of float64, shape (n,)
        :math:`b_\varepsilon` (read-only).

    Raises
    ------
    InputError
        If p or q is not a distribution, or ``eps`` is not one finite number ≥ 0.
    """
    p, q = _pq(p, q)
    e = _as_eps(eps)
    if e.size != 1:
        raise InputError("eps: must be a single number here")
    b = _over(p, q, float(e[0]))
    b.setflags(write=False)
    return b


def pareto_front(p: Any, q: Any, eps: Any = None) -> list[tuple[float, float]]:
    r"""Points (rejection probability, minimum bias) of over-acceptance decoders (Theorems 4-5).

    For each threshold ε the rule :math:`b_\varepsilon = \min(1, (p + \varepsilon)/q)` is
    paired with its optimal rejection law (Theorem 4); the points lie on the Pareto front
    :math:`R + \mathrm{loss} = \mathrm{TV}(p, q)` (Theorem 5).

    Parameters
    ----------
    p, q : array_like, shape (n,)
    eps : array_like, optional
        Thresholds ε >= 0.  Default: 0 and every positive value of q - p (the
        breakpoints of the piecewise-linear map ε -> R), running from (TV, 0) to (0, TV).

    Returns
    -------
    list of (float, float)
        (rejection probability, loss) pairs in the order of ε.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import sequence
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> [(round(r, 4), round(loss, 4)) for r, loss in sequence.pareto_front(p, q)]  # r + loss = TV = 0.32
    [(0.32, 0.0), (0.08, 0.24), (0.0, 0.32)]
    """
    p, q = _pq(p, q)
    if eps is None:
        gaps = np.unique((q - p)[q - p > 0])
        grid = np.concatenate([[0.0], gaps])
    else:
        grid = _as_eps(eps)
    out: list[tuple[float, float]] = []
    for e in grid:
        b = _over(p, q, float(e))
        _, loss = optimal_rejection_distribution(p, q, b)
        out.append((float(((1 - b) * q).sum()), loss))
    return out


@dataclass(frozen=True)
class DecoderLosses(Tabular):
    """Rejection probability and bias of Decoding-OPT and Decoding-UNO over ε.

    In the results' vocabulary ``value`` is ``loss_opt`` (one entry per ε, per row of
    :meth:`to_pandas`), ``std_err`` None (exact), ``method`` ``"exact"``, ``ok`` whether
    Decoding-OPT's bias is nowhere above Decoding-UNO's (within 1e-12).

    Attributes
    ----------
    eps : ndarray, shape (E,)
    rejection : ndarray, shape (E,)
        P(reject) of :math:`b_\\varepsilon` (mean over positions for 2-D input).
    loss_opt : ndarray, shape (E,)
        Bias with Theorem 4's optimal rejection law.
    loss_uno : ndarray, shape (E,)
        Bias when rejections are drawn from p.
    tv : float
        TV(p, q) (mean over positions).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import sequence
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> dl = sequence.decoder_losses(p, q, eps=[0.0, 0.05])
    >>> round(dl.tv, 4), dl.rejection.round(4), dl.ok
    (0.32, array([0.32, 0.22]), True)
    >>> dl.loss_opt.round(4), dl.loss_uno.round(4)  # Decoding-OPT's bias is never above Decoding-UNO's
    (array([0. , 0.1]), array([0.1016, 0.1506]))
    """

    eps: np.ndarray
    rejection: np.ndarray
    loss_opt: np.ndarray
    loss_uno: np.ndarray
    tv: float

    #: the biases are computed in closed form
    method = "exact"
    #: exact values carry no standard error
    std_err = None
    _caption = "Rejection probability and bias of Decoding-OPT and Decoding-UNO over the threshold ε."

    @property
    def value(self) -> np.ndarray:
        """``loss_opt``, the bias of Decoding-OPT, one entry per ε."""
        return self.loss_opt

    @property
    def ok(self) -> bool:
        """Whether Decoding-OPT's bias is at most Decoding-UNO's at every ε (within 1e-12)."""
        return bool((np.asarray(self.loss_opt) <= np.asarray(self.loss_uno) + 1e-12).all())

    def _records(self) -> list[dict[str, Any]]:
        cols = (self.eps, self.rejection, self.loss_opt, self.loss_uno)
        return [
            {"eps": float(e), "rejection": float(r), "loss_opt": float(o), "loss_uno": float(u)}
            for e, r, o, u in zip(*cols, strict=True)
        ]

    def __repr__(self) -> str:
        return f"DecoderLosses({self.eps.size} thresholds ε ∈ [{self.eps.min():g}, {self.eps.max():g}], TV = {self.tv:.4g})"

    def _repr_html_(self) -> str:
        rows = [
            [f"{e:g}", f"{r:.4f}", f"{lo:.4f}", f"{lu:.4f}"]
            for e, r, lo, lu in zip(self.eps, self.rejection, self.loss_opt, self.loss_uno, strict=True)
        ]
        return html_table(
            ["ε", "P(reject)", "bias, Decoding-OPT", "bias, Decoding-UNO"],
            rows,
            title=f"Decoding-OPT and Decoding-UNO (TV(p, q) = {self.tv:.4f})",
        )


def decoder_losses(p: Any, q: Any, eps: Any) -> DecoderLosses:
    r"""Compare Decoding-OPT and Decoding-UNO over over-acceptance thresholds ε.

    Both accept with :math:`b_\varepsilon = \min(1, (p+\varepsilon)/q)`.  Decoding-OPT
    draws rejections from Theorem 4's law, with bias
    :math:`\tfrac12\sum|p - b q| - \tfrac12 R`; Decoding-UNO draws them from p, with bias
    :math:`\tfrac12 \sum |(1 - R) p - b q|`.

    Parameters
    ----------
    p, q : array_like, shape (n,) or (positions, n)
        Target and draft laws; rows of 2-D input are positions (e.g. a
        :class:`PositionPair`'s ``target`` and ``draft``) and results are averaged over them.
    eps : array_like
        Thresholds ε >= 0.

    Returns
    -------
    DecoderLosses
        Rejection probability and both biases per threshold, and TV(p, q).

    Raises
    ------
    InputError
        If p or q is not made of distributions, their shapes differ, or a threshold is
        negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import sequence
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> dl = sequence.decoder_losses(p, q, eps=[0.0, 0.05])
    >>> dl.rejection.round(4), dl.loss_opt.round(4)  # eps = 0 is speculative decoding: rejection TV, no bias
    (array([0.32, 0.22]), array([0. , 0.1]))
    """
    P = _as_stochastic(p, "p")
    Q = _as_stochastic(q, "q")
    if P.ndim not in (1, 2):
        raise InputError(f"p: must have shape (n,) or (positions, n), got {P.shape}")
    if Q.shape != P.shape:
        raise InputError(f"q: shape {Q.shape} does not match p's shape {P.shape}")
    P2, Q2 = np.atleast_2d(P), np.atleast_2d(Q)
    grid = _as_eps(eps)
    rej = np.empty(grid.size)
    opt = np.empty(grid.size)
    uno = np.empty(grid.size)
    for i, e in enumerate(grid):
        b = _over(P2, Q2, float(e))
        bq = b * Q2
        r = (Q2 - bq).sum(axis=1)
        rej[i] = r.mean()
        opt[i] = np.clip(0.5 * np.abs(P2 - bq).sum(axis=1) - 0.5 * r, 0.0, None).mean()
        uno[i] = (0.5 * np.abs((1 - r)[:, None] * P2 - bq).sum(axis=1)).mean()
    tv = float(np.clip(P2 - Q2, 0.0, None).sum(axis=1).mean())
    for a in (grid, rej, opt, uno):
        a.setflags(write=False)
    return DecoderLosses(grid, rej, opt, uno, tv)
