"""Draft laws: the joint law D of the ordered draft tuple x̄ = (x₁, …, x_k) (docs/theory.md §1).

Only the law of the draft *set* set(x̄) matters for the optimal acceptance α*,
and only through D(set(x̄) ⊆ S) in the dual (★) of docs/theory.md §2.  Every law here is
immutable and validated once, and offers

* ``subset_prob(S)`` — D(set(x̄) ⊆ S), by formula where one exists;
* ``set_law()`` — the law of set(x̄) as explicit (set, probability) pairs (small n);
* ``tuple_law()`` — the law of the ordered tuple (for the transport LP, small n);
* ``sample(rng, size)`` — draft tuples, randomness passed in as a Generator.

Input given as :class:`fractions.Fraction` keeps the law exact (``law.exact``).

Letters: Hu et al. call the number of drafts n and the draft law p_draft;
Khisti et al. call the draft law p (pᵢ for draft i) and the number of drafts K.

Modules, one per family: ``_base`` (:class:`DraftLaw`, :class:`SetLaw`, the enumeration
limits), ``_iid``, ``_without_replacement``, ``_greedy`` (Greedy, SpecHub and TopK), ``_explicit``
(Independent and Joint) and ``_registry`` (:data:`LAWS`, its capability flags, and
:func:`law_from_name`).
"""

from ._base import DraftLaw, SetLaw
from ._explicit import Independent, Joint
from ._greedy import Greedy, SpecHub, TopK
from ._iid import IID
from ._registry import LAWS, law_from_name, law_names
from ._without_replacement import WithoutReplacement

__all__ = [
    "LAWS",
    "law_from_name",
    "law_names",
    "DraftLaw",
    "SetLaw",
    "IID",
    "WithoutReplacement",
    "Greedy",
    "Independent",
    "SpecHub",
    "TopK",
    "Joint",
]
