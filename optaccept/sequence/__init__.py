"""Sequence-level theory of speculative decoding (Yin et al., NeurIPS 2024).

Letters follow optaccept: p is the target, q the draft (Yin et al. write q for the
target and p for the draft).

* Sequence models: :class:`MarkovPair` (Markov chains), :class:`PositionPair`
  (per-position laws, e.g. from language models).
* Theorem 1: :func:`expected_rejections` (exact, forward recursion),
  :func:`simulate_rejections` (Monte Carlo), :func:`acceleration`.
* Theorem 2: :func:`unbiased_rejections` for any unbiased acceptance rule.
* Theorem 3 / Proposition 1: :func:`batch_improvement`,
  :func:`batch_expected_rejections` (exact), :func:`simulate_batch_rejections`,
  :func:`batch_rejection_limit`, :func:`round_start_measure`.
* Theorems 4-5: :func:`optimal_rejection_distribution`, :func:`pareto_front`,
  :func:`decoder_losses`.

Statements and proofs: docs/theory.md §6.
"""

from ._batch import (
    batch_expected_rejections,
    batch_improvement,
    batch_rejection_limit,
    bernoulli_batch_improvement,
    simulate_batch_rejections,
    uniform_batch_improvement,
)
from ._markov import MarkovPair, PositionPair
from ._pareto import DecoderLosses, decoder_losses, optimal_rejection_distribution, pareto_front
from ._rejections import acceleration, expected_rejections, scaled_rule, simulate_rejections, unbiased_rejections
from ._sampling import RejectionEstimate

__all__ = [
    "scaled_rule",
    "simulate_batch_rejections",
    "batch_rejection_limit",
    "bernoulli_batch_improvement",
    "uniform_batch_improvement",
    "DecoderLosses",
    "MarkovPair",
    "PositionPair",
    "RejectionEstimate",
    "acceleration",
    "batch_expected_rejections",
    "batch_improvement",
    "decoder_losses",
    "expected_rejections",
    "optimal_rejection_distribution",
    "pareto_front",
    "simulate_rejections",
    "unbiased_rejections",
]
