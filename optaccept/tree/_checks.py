"""The tree functions' shared argument checks: the verifier names, the per-tree values,
model resolution and the plain value type of a result."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .._errors import InputError, MethodError
from .._lib.validation import check_choice
from ._models import as_model, model_pair
from ._verifiers import block_value, target_only_value, token_value, traversal_value

VERIFIERS = ("token", "block", "traversal", "optimal", "token_optimal", "target_only")
#: verifiers whose expected accepted length given one drafted tree is computed exactly
PER_TREE = {"token": token_value, "block": block_value, "traversal": traversal_value, "target_only": target_only_value}


def _is_pair(obj: Any) -> bool:
    """A MarkovPair / PositionPair (checked without importing optaccept.sequence)."""
    if not type(obj).__module__.startswith("optaccept.sequence"):
        return False
    from ..sequence import MarkovPair, PositionPair  # (tqdm): optaccept.tree loads without it

    return isinstance(obj, (MarkovPair, PositionPair))


def _is_markov(obj: Any) -> bool:
    """A MarkovPair (whose initial state is a prompt to give)."""
    if not _is_pair(obj):
        return False
    from ..sequence import MarkovPair  # (tqdm)

    return isinstance(obj, MarkovPair)


def check_verifier(verifier: Any, k: int, drafts: str) -> str:
    check_choice("verifier", verifier, VERIFIERS)
    if verifier == "block" and k != 1:
        raise MethodError(f"verifier 'block' verifies one chain (k = 1), got k = {k}; use 'traversal' or 'token'")
    return verifier


def check_shaped(verifier: Any, shape: Any, children: str) -> str:
    """Which verifiers apply to a tree shape and a way of filling its children."""
    check_choice("verifier", verifier, VERIFIERS)
    if children == "topk" and verifier in ("token", "traversal", "block"):
        raise MethodError(
            f"verifier {verifier!r} compares p with the law q the drafts were drawn from, so it is lossless only "
            "for children drawn from q: top-k children are deterministic; use verifier='target_only' "
            "(optimal for a deterministic tree) or children='swor'/'iid'"
        )
    if verifier == "block" and not shape.is_chain:
        raise MethodError(f"verifier 'block' verifies one chain; shape {shape!r} branches: use 'traversal' or 'token'")
    return verifier


def resolve_models(target: Any, draft: Any, prompt: Any = None, temperature: float | None = None):
    """(target Model, draft Model) from two sequence models or one Markov/position pair."""
    if _is_pair(target):
        if draft is not None:
            raise InputError("draft: leave it out when target is a MarkovPair or PositionPair (it holds both)")
        target, draft = model_pair(target, prompt=prompt)
    elif draft is None:
        raise InputError("draft: a draft sequence model is required")
    return as_model(target, "target", temperature=temperature), as_model(draft, "draft", temperature=temperature)


def _plain(v: Any) -> Any:
    if isinstance(v, Fraction):
        return v
    if isinstance(v, int):
        return Fraction(v)
    return float(v)
