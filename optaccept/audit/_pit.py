"""Randomised probability integral transforms of a verifier's outputs: the losslessness test's
statistics (the test itself is described in :mod:`optaccept.audit._core`).  For a step with target
p and output Y, and an order σ of the tokens, U = F_σ(Y⁻) + V·p(Y) with V ~ Uniform(0, 1) is
exactly Uniform(0, 1) when Y ~ p; tests/audit/test_audit.py checks the transforms of correct verifiers
pass and those of wrong ones fail.
"""

from __future__ import annotations

import numpy as np

from .._lib.stable import ratio_key
from .._lib.validation import check_choice

__all__ = ["FALSE_ALARM", "ORDERS", "pit_values"]

#: Default false-alarm rate of ``lossless`` per call (the union over the orders).
FALSE_ALARM = 1e-6
#: Token orders along which the transforms are taken.
ORDERS = ("p", "q", "p/q", "id")


def pit_values(P: np.ndarray, Q: np.ndarray, Y: np.ndarray, order: str, rng: np.random.Generator) -> np.ndarray:
    """Randomised probability integral transforms of the outputs Y (one per row of P) along a
    token order ("p", "q", "p/q" or "id"); exactly Uniform(0, 1) when Y_t ~ P_t.

    Parameters
    ----------
    P, Q : ndarray of float, shape (B, n)
        Target and draft rows, one per output.
    Y : ndarray of int, shape (B,)
        The outputs.
    order : {"p", "q", "p/q", "id"}
        The order of the tokens along which the CDF is read.
    rng : numpy.random.Generator
        Source of the tie-breaking uniforms.

    Returns
    -------
    ndarray of float64, shape (B,)
        The transforms, in [0, 1].

    Raises
    ------
    InputError
        If ``order`` is not one of the four.
    """
    B, n = P.shape
    if order == "id":
        keys = np.broadcast_to(np.arange(n), (B, n))
    elif order == "p":
        keys = -P
    elif order == "q":
        keys = -Q
    elif order == "p/q":
        keys = ratio_key(P, Q)
    else:
        check_choice("order", order, ORDERS)
    idx = np.argsort(keys, axis=1, kind="stable")
    rank = np.empty_like(idx)
    np.put_along_axis(rank, idx, np.arange(n)[None, :].repeat(B, axis=0), axis=1)
    sorted_p = np.take_along_axis(P, idx, axis=1)
    cum = np.cumsum(sorted_p, axis=1) - sorted_p  # mass before each position
    r = rank[np.arange(B), Y]
    below = cum[np.arange(B), r]
    py = P[np.arange(B), Y]
    return np.clip(below + rng.random(B) * py, 0.0, 1.0)


def _pit_one(p: np.ndarray, q: np.ndarray, Y: np.ndarray, order: str, rng: np.random.Generator) -> np.ndarray:
    """:func:`pit_values` when every step has the same (p, q): the order is computed once."""
    keys = {"id": np.arange(p.size), "p": -p, "q": -q, "p/q": ratio_key(p, q)}[order]
    idx = np.argsort(keys, kind="stable")
    before = np.empty(p.size)
    before[idx] = np.cumsum(p[idx]) - p[idx]
    return np.clip(before[Y] + rng.random(Y.size) * p[Y], 0.0, 1.0)
