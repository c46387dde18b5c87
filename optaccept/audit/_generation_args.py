"""The grouped arguments of :func:`optaccept.audit.audit_generation`: how a loop that reports its
accepted counts drafts (:class:`ChainDrafting`) and the settings of the dependence tests and
runs (:class:`GenerationOptions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ChainDrafting", "GenerationOptions"]


@dataclass(frozen=True)
class ChainDrafting:
    """How a loop that reports its accepted counts drafts: chains of ``length`` tokens from
    ``draft``, verified by the rule it ``declared`` (the ``drafting`` of
    :func:`optaccept.audit.audit_generation`).

    Parameters
    ----------
    draft : sequence model
        ``prefix -> next-token probabilities``, the prefix being the whole text.
    length : int
        Tokens drafted per verifier call, at least 1.
    declared : {"sd", "token", "block", "exact_match", "target_only"}, optional
        The rule the loop claims; its expected tokens per call are then estimated.

    Examples
    --------
    >>> from optaccept import audit, tree
    >>> draft = tree.synthetic_pair(6, rng=0)[1]
    >>> drafting = audit.ChainDrafting(draft, length=3, declared="sd")
    >>> drafting.length, drafting.declared
    (3, 'sd')
    """

    draft: Any
    length: int
    declared: str | None = None


@dataclass(frozen=True)
class GenerationOptions:
    """The settings of :func:`optaccept.audit.audit_generation`'s dependence tests and runs (its
    ``options``).

    Parameters
    ----------
    bins : int
        Bins of U_i in the dependence tests, at least 2.
    max_lag : int
        Dependence is tested between tokens up to this far apart (lag 1: both families of
        disjoint pairs; lag ℓ ≥ 2: the pairs (i, i + ℓ) with ⌊i/ℓ⌋ even).  A loop that reuses
        its random numbers at every verifier call repeats them at the lag of a call's length.
    seed_torch : bool
        When torch is imported, seed its global generator from ``rng`` before each run, so
        that loops drawing from it are reproducible and runs independent.

    Examples
    --------
    >>> from optaccept import audit
    >>> opts = audit.GenerationOptions(bins=4, max_lag=4)
    >>> opts.bins, opts.max_lag, opts.seed_torch
    (4, 4, True)
    """

    bins: int = 4
    max_lag: int = 8
    seed_torch: bool = True
