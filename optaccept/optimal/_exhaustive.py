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

import math
from fractions import Fraction

import numpy as np

from .._errors import MethodError
from .._limits import count
from .._subsets import mask_to_tuple, subset_sums, subset_sums_exact
from ..drafts import DraftLaw, WithoutReplacement
from ._result import AcceptanceResult

__all__ = ["MAX_N_FLOAT", "MAX_N_EXACT", "MAX_EXACT_ZETA_WORK", "exact_zeta_work", "check_size", "exhaustive"]

#: Largest vocabulary for the exhaustive dual in floats (2^n subsets).
MAX_N_FLOAT = 20
#: Largest vocabulary for the exhaustive dual in exact arithmetic.
MAX_N_EXACT = 14
#: Largest estimated work (Fraction additions × denominator bits) of the exact zeta transform:
#: about 3 s at the measured 1.1–1.4 ns per unit.
MAX_EXACT_ZETA_WORK = 2_500_000_000


def _bits_of_distinct_denominators(values, cap: int) -> int:
    """Σ of the bit lengths of the distinct denominators (a bound on the bits of their lcm),
    stopped once it exceeds ``cap``."""
    seen: set[int] = set()
    total = 0
    for v in values:
        d = Fraction(v).denominator
        if d not in seen:
            seen.add(d)
            total += d.bit_length()
            if total > cap:
                break
    return total


def exact_zeta_work(law: DraftLaw) -> int:
    """Estimated work of D(set ⊆ S) for all 2ⁿ S in Fractions: 0 for laws with a product
    formula (IID, Independent, Greedy, SpecHub); otherwise n·2ⁿ⁻¹ additions times a bound on
    the bits of the set law's denominators.

    Without replacement, P(set = A) is a sum of products of qᵢ / (1 − q(B)) over the B ⊂ A,
    so its denominator divides a product of the numerators of 1 − q(B) over Σ_{m<k} C(s, m)
    sets B (s tokens of positive mass), each with at most the bits of the common denominator
    L of q: the bound is that count × bits(L).  For a Joint law it is the sum of the bits of
    the distinct denominators of its probabilities.
    """
    if type(law).all_subset_probs is not DraftLaw.all_subset_probs or not law.exact:
        return 0
    n = law.n
    adds = n * (1 << max(n - 1, 0))
    cap = MAX_EXACT_ZETA_WORK // max(adds, 1) + 1
    if isinstance(law, WithoutReplacement):
        q = law.q_exact
        s = sum(1 for v in q if v)
        common = math.lcm(*(Fraction(v).denominator for v in q)).bit_length()
        bits = sum(math.comb(s, m) for m in range(law.k)) * common
    else:
        _, probs = law.tuple_law()
        bits = _bits_of_distinct_denominators(probs, cap)
    return adds * bits


def check_size(law: DraftLaw, exact: bool) -> None:
    """Refuse, before any work, what the exhaustive dual cannot do at this size
    (:class:`MethodError` naming the limit and a method that works)."""
    from ._advice import _zeta_ok, refusal_advice

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
