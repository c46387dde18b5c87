"""1 − D(first k draws ⊆ S_j) for every prefix S_j of a token order, draws without replacement.

k = 1 and k = 2 by closed forms, k ≥ 3 by the quadrature of :mod:`optaccept.drafts._swor.quadrature`
(the method is described in :mod:`optaccept.drafts._swor`).
"""

from __future__ import annotations

import numpy as np

from ..._lib import stable as _stable
from .kernels import sized
from .quadrature import _integral_complements

__all__ = ["prefix_complements", "prefix_subset_probs", "subset_prob_k2"]


def subset_prob_k2(q: np.ndarray, mask: np.ndarray) -> float:
    """D(set ⊆ S) for two draws without replacement: Σ_{i∈S} q_i (q(S) − q_i)/(1 − q_i)."""
    order = np.concatenate([np.flatnonzero(mask), np.flatnonzero(~mask)])
    comp = _stable.swor2_prefix_complement(np.asarray(q, dtype=np.float64)[order])[int(mask.sum())]
    return float(min(1.0, max(0.0, 1.0 - comp)))


def prefix_subset_probs(q_ordered: np.ndarray, k: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """D(first k draws ⊆ S_j) for every prefix S_j of the given token order.

    Parameters
    ----------
    q_ordered : ndarray, shape (n,)
        The draft law q, permuted into the order whose prefixes are wanted
        (sums to 1; at least k positive entries; any positive mass, subnormals included).
    k : int
        Number of draws without replacement (1 ≤ k ≤ the support size).
    tail_tol : float
        Integration stops once the rigorous tail bound is below this.

    Returns
    -------
    f : ndarray, shape (n + 1,)
        f[j] = P(the first k draws all lie in the first j tokens); f[0] = 0, f[n] = 1.
        Accurate to about 1e-13 absolute; O(n · k · G) time (see the module docstring).
    """
    return 1.0 - prefix_complements(q_ordered, k, tail_tol=tail_tol)


@sized
def prefix_complements(q_ordered: np.ndarray, k: int, *, tail_tol: float = 1e-15) -> np.ndarray:
    """1 − D(first k draws ⊆ S_j) for every prefix, computed directly (no 1 − f cancellation)."""
    q = np.asarray(q_ordered, dtype=np.float64)
    # Rates need not sum to 1 (the integral is scale-free): an exact power-of-two rescaling
    # keeps every positive mass normal, so no product below underflows or loses bits.
    q, _ = _stable.rescale_tiny(q)
    n = q.size
    # λ_j = q(Ω∖S_j) as suffix sums: accurate even when it is tiny.
    lam = _stable.suffix_sums(q, accurate=True).astype(np.float64)
    supp_count = np.concatenate([[0], np.cumsum(q > 0)])
    # Fewer than k support tokens in S: D = 0 exactly.  All the mass in S: D = 1.
    exact_zero = supp_count < k
    full = supp_count == supp_count[-1]
    if k == 1:
        comp = lam / lam[0]
    elif k == 2:
        comp = _stable.swor2_prefix_complement(q)
    else:
        comp = np.ones(n + 1)
        live = ~(exact_zero | full)
        if live.any():
            with np.errstate(over="ignore", under="ignore"):  # e^{-λt} with λt beyond 1e308: 0
                comp = _integral_complements(q, lam, k, live, tail_tol)
    comp[exact_zero] = 1.0
    comp[full] = 0.0
    return np.clip(comp, 0.0, 1.0)
