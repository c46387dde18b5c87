"""Hypothesis strategies for (p, q) pairs, the nasty cases included (docs/engines.md §3).

>>> from hypothesis import given
>>> from optaccept.testing import strategies as st_oa
>>> @given(st_oa.pairs())                                   # doctest: +SKIP
... def test_my_verifier(pq):
...     p, q = pq
...     ...

Every vector is float64, non-negative and sums to 1 within float64 rounding (the library's
sum rule accepts it unchanged).  The kinds, each drawn by :func:`pairs` (``kinds=`` picks some):

``"generic"``     both laws with positive entries of any size;
``"zeros"``       zeros in p, in q, or in both at the same tokens;
``"ties"``        equal entries within p, within q, and equal ratios p/q;
``"equal"``       p = q exactly;
``"disjoint"``    supports of p and q disjoint (every lossless verifier accepts nothing);
``"one_hot"``     one entry 1 − 1e-12, the rest sharing 1e-12;
``"subnormal"``   some entries subnormal (below 2.2e-308), as float32/bf16 softmax underflow
                  leaves behind after a cast.

Needs hypothesis (``pip install hypothesis``); ``import optaccept`` does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError, MissingDependencyError

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - hypothesis is in the dev extra
    raise MissingDependencyError(
        "optaccept.testing.strategies needs hypothesis (pip install hypothesis, or 'optaccept[dev]')"
    ) from exc

__all__ = ["KINDS", "distributions", "pairs", "pairs_and_k"]

#: The kinds of (p, q) pairs :func:`pairs` draws.
KINDS = ("generic", "zeros", "ties", "equal", "disjoint", "one_hot", "subnormal")
_SUBNORMAL = 5e-324 * 2**20  # about 5.2e-318: subnormal, and still so after a few operations


def _normalised(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    return w / w.sum()


def _weights(n: int) -> Any:
    return st.lists(st.floats(1e-3, 1.0, allow_nan=False, allow_infinity=False), min_size=n, max_size=n)


@st.composite
def distributions(draw: Any, n: int | None = None, *, min_n: int = 2, max_n: int = 8) -> np.ndarray:
    """One probability vector of ``n`` (or ``min_n`` … ``max_n``) entries with positive weights."""
    if n is None:
        n = draw(st.integers(min_n, max_n))
    return _normalised(draw(_weights(n)))


def _check_sizes(min_n: Any, max_n: Any) -> tuple[int, int]:
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (min_n, max_n))
    if not ok or not 2 <= min_n <= max_n:
        raise InputError(f"min_n, max_n: must be integers with 2 <= min_n <= max_n, got {min_n!r}, {max_n!r}")
    return min_n, max_n


def pairs(*, min_n: int = 2, max_n: int = 8, kinds: tuple[str, ...] = KINDS) -> Any:
    """Strategy for a (p, q) pair over n tokens, ``min_n`` ≤ n ≤ ``max_n``, of one of ``kinds``
    (module docstring); the arguments are checked when the strategy is built."""
    min_n, max_n = _check_sizes(min_n, max_n)
    if isinstance(kinds, str) or not kinds or any(k not in KINDS for k in kinds):
        raise InputError(f"kinds: must be a non-empty tuple of {KINDS}, got {kinds!r}")
    return _pairs(min_n, max_n, tuple(kinds))


@st.composite
def _pairs(draw: Any, min_n: int, max_n: int, kinds: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    kind = draw(st.sampled_from(kinds))
    n = draw(st.integers(min_n, max_n))
    p = np.asarray(draw(_weights(n)), dtype=np.float64)
    q = np.asarray(draw(_weights(n)), dtype=np.float64)
    if kind == "zeros":
        where = draw(st.sampled_from(("p", "q", "both")))
        zp = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        zq = zp if where == "both" else np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        keep_p, keep_q = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        zp[keep_p] = False
        zq[keep_q] = False
        if where in ("p", "both"):
            p[zp] = 0.0
        if where in ("q", "both"):
            q[zq] = 0.0
    elif kind == "ties":
        levels = draw(st.integers(1, max(1, n // 2)))
        p = np.asarray(draw(st.lists(st.sampled_from([1.0, 2.0, 4.0][:levels] or [1.0]), min_size=n, max_size=n)))
        q = p * draw(st.sampled_from((1.0, 0.5, 2.0)))  # equal ratios p/q everywhere
        if n >= 3 and draw(st.booleans()):
            q[0], q[1] = q[1], q[0]  # ties broken differently in q
    elif kind == "equal":
        q = p.copy()
    elif kind == "disjoint":
        cut = draw(st.integers(1, n - 1))
        p[cut:] = 0.0
        q[:cut] = 0.0
    elif kind == "one_hot":
        for v in (p, q):
            hot = draw(st.integers(0, n - 1))
            v[:] = 1e-12 / (n - 1)
            v[hot] = 1.0 - 1e-12
        return p, q
    elif kind == "subnormal":
        tiny = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        tiny[draw(st.integers(0, n - 1))] = False
        target = draw(st.sampled_from(("p", "q", "both")))
        if target in ("p", "both"):
            p[tiny] = _SUBNORMAL
        if target in ("q", "both"):
            q[tiny] = _SUBNORMAL
    return _normalised(p), _normalised(q)


def pairs_and_k(*, min_n: int = 2, max_n: int = 8, max_k: int | None = None, kinds: tuple[str, ...] = KINDS) -> Any:
    """Strategy for (p, q, k) with k from 1 to above the support of q (``max_k``: default n + 2)."""
    base = pairs(min_n=min_n, max_n=max_n, kinds=kinds)
    if max_k is not None and (isinstance(max_k, bool) or not isinstance(max_k, int) or max_k < 1):
        raise InputError(f"max_k: must be an integer >= 1, got {max_k!r}")

    @st.composite
    def draw_k(draw: Any) -> tuple[np.ndarray, np.ndarray, int]:
        p, q = draw(base)
        return p, q, draw(st.integers(1, max_k if max_k is not None else p.size + 2))

    return draw_k()
