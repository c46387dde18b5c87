"""Practical verification algorithms of (multi-draft) speculative decoding (docs/theory.md §5):
exact acceptance, vectorised samplers, and their gap to the optimum α*.

>>> import numpy as np, optaccept as oa
>>> from optaccept import verifiers
>>> p = np.array([.5, .3, .2]); q = np.array([.2, .3, .5])
>>> round(verifiers.RRS().acceptance(p, q, k=2), 6)
0.76
>>> [v.name for v in verifiers.ALL][:3]
['sd', 'nss', 'naive_tree']

Every verifier has ``name``, ``drafts(q, k)`` (its draft law), ``acceptance(p, q, k,
notion="output" | "rule")`` and ``sample(p, q, k, rng, size) -> (y, accepted)``.
"""

from ._all import ALL
from ._base import Verifier
from ._batched import batched_acceptance
from ._canonical import CanonicalDecomposition, canonical_decomposition
from ._gap import GapTable, gap_table
from ._greedy import HuGreedy
from ._khisti import KhistiIS
from ._kseq import KSeq
from ._optimal import Optimal
from ._realised import RealisedAcceptance, realised_acceptance
from ._rrs import RRS, RRSWithoutReplacement
from ._sd import NSS, SD, NaiveTree
from ._spechub import SpecHubVerifier
from ._target_only import TargetOnly

__all__ = [
    "ALL",
    "batched_acceptance",
    "Verifier",
    "SD",
    "NSS",
    "NaiveTree",
    "RRS",
    "RRSWithoutReplacement",
    "KSeq",
    "SpecHubVerifier",
    "KhistiIS",
    "HuGreedy",
    "Optimal",
    "TargetOnly",
    "gap_table",
    "GapTable",
    "canonical_decomposition",
    "realised_acceptance",
    "RealisedAcceptance",
    "CanonicalDecomposition",
]
