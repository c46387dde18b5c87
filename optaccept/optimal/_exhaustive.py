"""The exhaustive dual: α* = min over all 2^n subsets S of p(S) + 1 − D(set ⊆ S)  (★).

(★) is the max-flow/min-cut dual of the compressed LP (Hu et al. §3, by total
unimodularity).  Every S gives an upper bound; the minimum is α*.
"""

from __future__ import annotations

import numpy as np

from .._errors import MethodError
from .._subsets import mask_to_tuple, subset_sums, subset_sums_exact
from ._result import AcceptanceResult

__all__ = ["MAX_N_FLOAT", "MAX_N_EXACT", "exhaustive"]

#: Largest vocabulary for the exhaustive dual in floats (2^n subsets).
MAX_N_FLOAT = 20
#: Largest vocabulary for the exhaustive dual in exact arithmetic.
MAX_N_EXACT = 14


def exhaustive(p, law, exact: bool) -> AcceptanceResult:
    n = law.n
    limit = MAX_N_EXACT if exact else MAX_N_FLOAT
    if n > limit:
        raise MethodError(
            f"method 'subsets': n = {n} exceeds the limit {limit} for {'exact' if exact else 'float'} "
            "enumeration of all 2^n subsets; use a smaller vocabulary"
        )
    D = law.all_subset_probs()
    if exact:
        Ps = subset_sums_exact(p)
        vals = [ps + 1 - d for ps, d in zip(Ps, D)]
        best = min(vals)
        m = vals.index(best)
        return AcceptanceResult(best, "subsets", law, subset=mask_to_tuple(m, n))
    vals = subset_sums(np.asarray(p)) + 1.0 - D
    m = int(np.argmin(vals))
    return AcceptanceResult(float(vals[m]), "subsets", law, subset=mask_to_tuple(m, n))
