"""Size estimates of every method, and which method to name when one refuses.

Each method's size is estimated *before* any allocation or loop (sets, tuples, digits),
with capped sums so that no huge integer is built, and a refusal names a method that
accepts the law, its size and its arithmetic (floats or Fractions) — never itself, and
never one that would refuse in turn.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._lib.limits import MAX_ENUMERATION, capped_sum
from ..drafts import IID, DraftLaw, Greedy, Independent, Joint, WithoutReplacement

__all__ = [
    "MAX_N_FLOAT",
    "MAX_N_EXACT",
    "MAX_EXACT_ZETA_WORK",
    "exact_zeta_work",
    "MAX_LP_VARIABLES",
    "lp_variables",
    "transport_variables",
    "working_method",
    "refusal_advice",
]

#: Largest number of flow variables Σ_A |A| the compressed LP accepts (HiGHS takes ~10 s there).
MAX_LP_VARIABLES = 400_000
#: Largest number of variables (tuples × tokens) the transport LP accepts: sizes it solves
#: within about a minute on a 2-core machine (measured: 78,125 variables, n = 5, k = 6, in
#: 15 s; 262,144 variables, n = 8, k = 5, in 52 s; n = 5, k = 8 — 1.95 M variables — ran for
#: over ten minutes).  Larger laws are refused with the way out (method "lp" or "sorted").
MAX_TRANSPORT_VARIABLES = 300_000


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


def _supp(law: DraftLaw) -> int:
    q = getattr(law, "q", None)
    return int(np.count_nonzero(q)) if q is not None else law.n


def lp_variables(law: DraftLaw, cap: int = MAX_LP_VARIABLES) -> int:
    """Flow variables of the compressed LP (Σ over draft sets A of |A|), capped at cap + 1."""
    k = law.k
    if isinstance(law, Greedy):
        return min(cap + 1, (law.n - k + 1) * k)
    if isinstance(law, WithoutReplacement):
        s = _supp(law)
        return capped_sum((math.comb(s, m) * m for m in range(1, k + 1)), cap)
    if isinstance(law, IID):
        s = _supp(law)
        return capped_sum((math.comb(s, m) * m for m in range(1, min(k, s) + 1)), cap)
    if isinstance(law, Independent):
        logs = sum(math.log(max(int(np.count_nonzero(r)), 1)) for r in law.qs)
        return cap + 1 if logs + math.log(k) > math.log(cap) + 1 else min(cap + 1, math.exp(logs) * k)
    if isinstance(law, Joint):
        return min(cap + 1, law.tuples.size)
    return 0


def transport_variables(law: DraftLaw, cap: int = MAX_TRANSPORT_VARIABLES) -> int:
    """Variables of the transport LP (ordered tuples × tokens), capped at cap + 1."""
    n, k = law.n, law.k
    if isinstance(law, (IID, WithoutReplacement)):
        s = _supp(law)
        if k * math.log(max(s, 1)) + math.log(n) > math.log(cap) + 1:
            return cap + 1
        count = s**k if isinstance(law, IID) else math.perm(s, k)
        return min(cap + 1, count * n)
    if isinstance(law, Greedy):
        return min(cap + 1, 2 * (n - k + 1) * n)
    if isinstance(law, Independent):
        logs = sum(math.log(max(int(np.count_nonzero(r)), 1)) for r in law.qs)
        return cap + 1 if logs + math.log(n) > math.log(cap) + 1 else min(cap + 1, int(math.exp(logs) * n) + 1)
    if isinstance(law, Joint):
        return min(cap + 1, law.tuples.shape[0] * n)
    return 0


def working_method(law: DraftLaw, exact: bool, exclude: tuple[str, ...] = ()) -> str | None:
    """The first method, in order of speed, that accepts this law at this size in this
    arithmetic (``None`` if there is none)."""

    cands = []
    if isinstance(law, (IID, Greedy)) or (isinstance(law, WithoutReplacement) and not exact):
        cands.append("sorted")
    if law.n <= (MAX_N_EXACT if exact else MAX_N_FLOAT) and _zeta_ok(law, exact):
        cands.append("subsets")
    if not exact:
        if lp_variables(law) <= MAX_LP_VARIABLES:
            cands.append("lp")
        if transport_variables(law) <= MAX_TRANSPORT_VARIABLES:
            cands.append("transport")
    for c in cands:
        if c not in exclude:
            return c
    return None


def _zeta_ok(law: DraftLaw, exact: bool) -> bool:
    """The exhaustive dual needs D(set ⊆ S) for all 2^n S: by formula, or from the set law."""
    if isinstance(law, (IID, Greedy, Independent)):
        return True
    if isinstance(law, WithoutReplacement) and lp_variables(law, MAX_ENUMERATION) > MAX_ENUMERATION:
        return False
    return not exact or exact_zeta_work(law) <= MAX_EXACT_ZETA_WORK


def refusal_advice(law: DraftLaw, exact: bool, method: str) -> str:
    """ "use method='X'" naming a method that works, or why none does."""
    other = working_method(law, exact, exclude=(method,))
    if other is not None:
        return f"use method={other!r}"
    if exact:
        alt = working_method(law, False)
        tail = f" (float input works with method={alt!r})" if alt else ""
        return f"no exact method handles {law!r} at this size{tail}"
    return f"no method of optaccept handles {law!r} at this size: use a smaller vocabulary or fewer drafts"
