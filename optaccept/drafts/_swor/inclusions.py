"""P(x is among k draws without replacement from q) for every token x of many rows at once,
by a recursion on the first draw (sums of positive terms only): the batched form behind
:meth:`optaccept.WithoutReplacement.inclusion`."""

from __future__ import annotations

import numpy as np

from ..._lib import stable as _stable

__all__ = ["EXPANDED", "inclusion_rows"]

#: Largest s^(k−1) (s support tokens, the first k − 2 draws expanded) for which
#: :meth:`optaccept.WithoutReplacement.inclusion` runs :func:`inclusion_rows`; above it, one
#: quadrature per token asked.
EXPANDED = 4_000_000


def inclusion_rows(Q: np.ndarray, k: int) -> np.ndarray:
    """P(x is among k draws without replacement from the row) for every token x of every row
    of ``Q`` (rows of non-negative masses, any positive total R); inf or NaN where a float
    overflows (near-one-hot rows: the caller integrates then).

    By the first draw, F_k(q)_x = q_x/R + Σ_i (q_i/R)·F_{k−1}(q without i)_x,
    down to F_2(q)_x = (q_x/R)·(1 + Σ_{i≠x} q_i/(R − q_i)) and F_m = 1 on the support once
    m ≥ its size: sums of positive terms only, with R − q_i as the sum of the others
    (``_stable.others_sum``).  O(n^(k−1)) per row (the first k − 2 draws are expanded)."""
    R = Q.sum(axis=1)
    supp = np.count_nonzero(Q > 0, axis=1)
    if k == 1:
        out = Q / R[:, None]
    elif k == 2:
        odds = np.where(Q > 0, Q / _stable.others_sum(Q, axis=1), 0.0)
        out = Q / R[:, None] * (1.0 + _stable.others_sum(odds, axis=1))
    else:
        row, col = np.nonzero(Q > 0)  # the first draw: each token of each row
        sub = Q[row]
        sub[np.arange(row.size), col] = 0.0
        after = inclusion_rows(sub, k - 1) * (Q[row, col] / R[row])[:, None]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]]) if row.size else np.zeros(0, dtype=np.int64)
        out = Q / R[:, None]
        out[row[starts]] += np.add.reduceat(after, starts, axis=0) if row.size else 0.0
    full = supp <= k
    out[full] = (Q[full] > 0).astype(np.float64)
    return out
