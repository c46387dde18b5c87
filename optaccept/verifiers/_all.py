"""The list of every practical verifier, in the order of docs/theory.md §5."""

from __future__ import annotations

from ._base import Verifier
from ._greedy import HuGreedy
from ._khisti import KhistiIS
from ._kseq import KSeq
from ._optimal import Optimal
from ._rrs import RRS, RRSWithoutReplacement
from ._sd import NSS, SD, NaiveTree
from ._spechub import SpecHubVerifier

__all__ = ["ALL"]

#: Every verifier, in the order of docs/theory.md §5.
ALL: list[Verifier] = [
    SD(),
    NSS(),
    NaiveTree(),
    RRS(),
    RRSWithoutReplacement(),
    KSeq(),
    SpecHubVerifier(),
    KhistiIS(),
    HuGreedy(),
    Optimal(),
]
