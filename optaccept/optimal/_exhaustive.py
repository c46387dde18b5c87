"""The exhaustive dual: α* = min over all 2^n subsets S of p(S) + 1 − D(set ⊆ S)  (★).

(★) is the max-flow/min-cut dual of the compressed LP (Hu et al. §3, by total
unimodularity).  Every S gives an upper bound; the minimum is α*.

Size limits, checked by :func:`check_size` before anything is allocated:

* floats: n ≤ :data:`MAX_N_FLOAT` = 20 (2²⁰ subsets; measured on a 2-core machine: 0.1 s for
  IID, Independent and Greedy laws, 0.6 s for WithoutReplacement with k = 8, 1.2 s for a
  Joint law of 10⁶ tuples);
* Fractions: n ≤ :data:`MAX_N_EXACT` = 14 (0.1–0.2 s for IID and Independent laws).  Laws
  whose D(set ⊆ S) comes from the zeta transform of their set law (WithoutReplacement,
  Joint) add n·2ⁿ⁻¹ Fraction additions whose denominators grow with the set law's: the
  estimate :func:`exact_zeta_work` (additions × bits of the denominators) is refused above
  :data:`MAX_EXACT_ZETA_WORK` (measured 1.1–1.4 ns per unit, CPU time: without replacement
  from float-valued q, n = 12, k = 6 — 2.3·10⁹ — takes 2.7 s; n = 14, k = 4 — 3.3·10⁹, 3.9 s —
  and n = 14, k = 7 — 4.5·10¹⁰, over a minute — are refused).
"""

from __future__ import annotations

import numpy as np

from .._errors import MethodError
from .._lib.limits import count
from .._lib.subsets import mask_to_tuple, subset_sums, subset_sums_exact
from ..drafts import DraftLaw
from ._advice import MAX_EXACT_ZETA_WORK, MAX_N_EXACT, MAX_N_FLOAT, _zeta_ok, exact_zeta_work, refusal_advice
from ._result import AcceptanceResult

__all__ = ["MAX_N_FLOAT", "MAX_N_EXACT", "MAX_EXACT_ZETA_WORK", "exact_zeta_work", "check_size", "exhaustive"]


def check_size(law: DraftLaw, exact: bool) -> None:
    """Refuse, before any work, what the exhaustive dual cannot do at this size
    (:class:`MethodError` naming the limit and a method that works)."""

    n = law.n
    limit = MAX_N_EXACT if exact else MAX_N_FLOAT
    if n > limit:
        raise MethodError(
            f"method 'subsets': n = {n} tokens means 2^{n} = {count(1 << n)} subsets, over the limit of "
            f"n <= {limit} for {'exact' if exact else 'float'} enumeration; {refusal_advice(law, exact, 'subsets')}"
        )
    if not _zeta_ok(law, False):  # the set law can be listed (the exact work is checked next)
        raise MethodError(
            f"method 'subsets': {law!r} has too many draft sets to list (its D(set ⊆ S) comes from its set "
            f"law); {refusal_advice(law, exact, 'subsets')}"
        )
    if exact:
        work = exact_zeta_work(law)
        if work > MAX_EXACT_ZETA_WORK:
            raise MethodError(
                f"method 'subsets': the exact zeta transform for {law!r} is estimated at {count(work)} "
                f"bit-operations (n·2^(n-1) Fraction additions × denominator bits), over the limit of "
                f"{count(MAX_EXACT_ZETA_WORK)}; {refusal_advice(law, exact, 'subsets')}"
            )


def exhaustive(p, law, exact: bool) -> AcceptanceResult:
    """(★) minimised over all 2ⁿ subsets (limits: see the module docstring)."""
    check_size(law, exact)
    n = law.n
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
