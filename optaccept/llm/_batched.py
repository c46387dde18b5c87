"""Batched α* and verifier acceptances: they live beside the numpy solvers and verifiers
(:mod:`optaccept.optimal._batched`, :mod:`optaccept.verifiers._batched`); these names
stay importable from :mod:`optaccept.llm` for existing code."""

from __future__ import annotations

from .._lib.rows import resolve_device, shared_sort
from ..optimal._batched import DRAFT_LAWS, batched_optimal_acceptance
from ..verifiers._batched import VERIFIERS
from ..verifiers._batched import batched_acceptance as batched_verifier_acceptance
from ..verifiers._batched import kseq_both as _kseq_both

__all__ = [
    "DRAFT_LAWS",
    "VERIFIERS",
    "batched_optimal_acceptance",
    "batched_verifier_acceptance",
    "resolve_device",
    "shared_sort",
    "_kseq_both",
]
