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
    counter : torch.nn.Module, optional
        The :func:`optaccept.audit.torch_lm` module the loop runs as its target: the loop then
        returns its tokens only, and each text's accepted counts are read from the module's
        forwards (``calls``): one forward per verifier call, its text ending with the chain's
        ``length`` drafts; a call emits the tokens up to the next call's start, the last one
        up to the end of the text returned (a loop that cuts its text cuts that count).

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
    counter: Any = None


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
    batch : int
        Rows per run, at least 1.  Above 1, ``generate(prompts, rng)`` receives a list of up to
        ``batch`` prompts (one per row; the runs of all prompts are dealt out in order) and
        returns one row per prompt: a list of token sequences (each row's new tokens), or a
        2-D array or tensor holding each row's prompt and its new tokens, padded with ``pad``
        on either side (left padding: right-aligned rows, as Hugging Face's ``generate``
        returns them).  With counts, ``(rows, counts)``, ``counts[b]`` the counts of row b.
    pad : int, optional
        The padding id of a batch's rows (removed wherever it occurs: an id the loop never
        generates, e.g. −1).

    Examples
    --------
    >>> from optaccept import audit
    >>> opts = audit.GenerationOptions(bins=4, max_lag=4)
    >>> opts.bins, opts.max_lag, opts.seed_torch, opts.batch
    (4, 4, True, 1)
    >>> audit.GenerationOptions(batch=8, pad=-1).batch  # a loop that decodes 8 rows per call
    8
    """

    bins: int = 4
    max_lag: int = 8
    seed_torch: bool = True
    batch: int = 1
    pad: int | None = None
