"""The grouped arguments of :func:`optaccept.audit.audit_generation`: how a loop that reports its
accepted counts drafts (:class:`ChainDrafting`) and the settings of the dependence tests and
runs (:class:`GenerationOptions`), with the rewriting of the previous keywords."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._deprecated import warn_deprecated
from .._errors import InputError

__all__ = ["ChainDrafting", "GenerationOptions"]


@dataclass(frozen=True)
class ChainDrafting:
    """How a loop that reports its accepted counts drafts: chains of ``gamma`` tokens from
    ``draft``, verified by the rule it ``declared`` (the ``drafting`` of
    :func:`optaccept.audit.audit_generation`).

    Parameters
    ----------
    draft : sequence model
        ``prefix -> next-token probabilities``, the prefix being the whole text.
    gamma : int
        Tokens drafted per verifier call, at least 1.
    declared : {"sd", "token", "block", "exact_match", "target_only"}, optional
        The rule the loop claims; its expected tokens per call are then estimated.
    """

    draft: Any
    gamma: int
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
    """

    bins: int = 4
    max_lag: int = 8
    seed_torch: bool = True


def _old_keywords(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``draft=, gamma=, declared=`` and ``bins=, max_lag=, seed_torch=`` of the previous
    release: a :class:`ChainDrafting` and :class:`GenerationOptions`."""
    for group, names, new in (
        ("drafting", ("draft", "gamma", "declared"), "drafting=audit.ChainDrafting(draft, gamma, declared)"),
        ("options", ("bins", "max_lag", "seed_torch"), "options=audit.GenerationOptions(bins, max_lag, seed_torch)"),
    ):
        old = {n: kwargs.pop(n) for n in names if n in kwargs}
        if not old:
            continue
        if group in kwargs:
            raise InputError(f"{group}: give it once (not also {', '.join(old)}=)")
        warn_deprecated("audit.audit_generation", ", ".join(f"{n}=" for n in old), new)
        if group == "options":
            kwargs[group] = GenerationOptions(**old)
        elif old.get("draft") is not None:
            kwargs[group] = ChainDrafting(old["draft"], old.get("gamma"), old.get("declared"))
        elif old.get("gamma") is not None or old.get("declared") is not None:
            raise InputError("draft: gamma and declared need the draft model (draft=...)")
    return args, kwargs
