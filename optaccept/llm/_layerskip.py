"""Self-speculative drafts: the target model with some of its decoder layers skipped.

A layer-skip draft runs the embedding, a subset of the target's decoder layers,
then the target's final norm and language-model head: a genuinely different
next-token distribution with the target's tokenizer and no extra weights.  Early
exit (the first L layers) is the draft of LayerSkip (Elhoushi et al. 2024,
arXiv 2404.16710); skipping intermediate layers is the draft of Draft & Verify
(Zhang et al. 2023, arXiv 2309.08168).  Both papers fine-tune or search the
skipped set; here it is a plain choice, and the resulting draft is measured
(:func:`draft_quality`).

The draft is an ordinary ``transformers`` causal LM whose modules *are* the
target's (no copy, no extra memory): everything that accepts a model, including
:class:`ModelPair`, :func:`extract` and :func:`extract_trees`, accepts it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._errors import InputError
from ._models import ModelPair

__all__ = [
    "layer_skip",
    "skipped_layers",
    "smollm2_layerskip",
    "draft_quality",
    "DEFAULT_SMOLLM2_LAYERS",
]

#: The default SmolLM2-135M-Instruct draft: every decoder layer except layers 14-17 of 30
#: (4 intermediate layers skipped, 26 kept).  Chosen by measuring :func:`draft_quality` on
#: the built-in prompts at temperature 1 among early exits (first 20-29 layers: one-draft
#: acceptance 0.17-0.48) and skipped blocks (0.01-0.64): a usable draft (acceptance about
#: 0.6, mean TV about 0.4) that clearly differs from the target.
DEFAULT_SMOLLM2_LAYERS: tuple[int, ...] = tuple(i for i in range(30) if not 14 <= i <= 17)


def _decoder(model: Any) -> Any:
    inner = getattr(model, "model", None)
    if inner is None or not hasattr(inner, "layers") or not hasattr(inner, "norm"):
        raise InputError(
            "model: layer skipping needs a decoder-only transformers model with "
            "model.model.layers and model.model.norm (Llama, Mistral, Qwen2, SmolLM2, ...)"
        )
    return inner


def _reindexed(layer: Any, index: int) -> Any:
    """A shallow copy of a decoder layer whose attention writes cache slot ``index``.

    Parameters are shared; only the module objects (and their child dicts) are new,
    so the target itself is untouched.
    """
    if getattr(getattr(layer, "self_attn", None), "layer_idx", index) == index:
        return layer
    new = copy.copy(layer)
    new._modules = dict(layer._modules)
    attn = copy.copy(layer.self_attn)
    attn._modules = dict(layer.self_attn._modules)
    attn._parameters = dict(layer.self_attn._parameters)
    attn._buffers = dict(layer.self_attn._buffers)
    attn.layer_idx = index
    new._modules["self_attn"] = attn
    if hasattr(new, "layer_idx"):
        new.layer_idx = index
    return new


def layer_skip(model: Any, layers: Sequence[int]) -> Any:
    """A draft model that runs only the decoder ``layers`` of ``model`` (in that order).

    Parameters
    ----------
    model : transformers causal LM
        A decoder-only model (``model.model.layers``, ``model.model.norm``,
        ``model.lm_head``), e.g. a ``LlamaForCausalLM``.
    layers : sequence of int
        Indices of the decoder layers to keep, strictly increasing, at least one.
        ``range(L)`` is early exit after L layers (LayerSkip); leaving out a middle
        block skips intermediate layers (Draft & Verify).

    Returns
    -------
    transformers causal LM
        Of the same class, sharing every weight with ``model``; its config has
        ``num_hidden_layers = len(layers)`` and records ``layer_skip = layers``.
        With all layers it computes exactly what ``model`` computes.
    """
    dec = _decoder(model)
    n = len(dec.layers)
    keep = [int(i) for i in layers]
    if not keep:
        raise InputError("layers: keep at least one decoder layer")
    if any(not 0 <= i < n for i in keep) or any(b <= a for a, b in zip(keep, keep[1:])):
        raise InputError(f"layers: must be strictly increasing indices in [0, {n}), got {keep}")
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = len(keep)
    for attr in ("layer_types", "sliding_window_pattern_list"):
        value = getattr(config, attr, None)
        if isinstance(value, (list, tuple)) and len(value) == n:
            setattr(config, attr, [value[i] for i in keep])
    config.layer_skip = keep
    with torch.device("meta"):
        draft = type(model)(config)
    ddec = _decoder(draft)
    for name, child in dec.named_children():
        if name != "layers":
            setattr(ddec, name, child)
    ddec.layers = torch.nn.ModuleList([_reindexed(dec.layers[i], j) for j, i in enumerate(keep)])
    for name, child in model.named_children():
        if name != "model":
            setattr(draft, name, child)
    if getattr(model, "generation_config", None) is not None:
        draft.generation_config = copy.deepcopy(model.generation_config)
    draft.eval()
    return draft


def skipped_layers(draft: Any) -> list[int] | None:
    """The decoder layers a :func:`layer_skip` draft keeps (``None`` for an ordinary model)."""
    keep = getattr(getattr(draft, "config", None), "layer_skip", None)
    return list(keep) if keep is not None else None


def smollm2_layerskip(
    layers: Sequence[int] | None = None,
    *,
    target_temperature: float = 1.0,
    draft_temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Any:
    """The built-in real pair: SmolLM2-135M-Instruct as target, a layer-skip copy as draft.

    Parameters
    ----------
    layers : sequence of int, optional
        Decoder layers (of 30) the draft keeps; default :data:`DEFAULT_SMOLLM2_LAYERS`
        (layers 14-17 skipped).
    target_temperature, draft_temperature : float
        Temperatures of each side (default 1 and 1: the draft differs by its layers only).
    top_k, top_p : optional
        Truncation of both sides.

    Returns
    -------
    ModelPair
        Loaded offline (see :meth:`ModelPair.smollm2`); ``draft_id`` names the kept layers.

    Examples
    --------
    >>> from optaccept import llm
    >>> pair = llm.smollm2_layerskip(draft_temperature=1.0)  # doctest: +SKIP
    >>> pair.vocab_size, pair.shared  # doctest: +SKIP
    (49152, False)
    >>> pair.draft_id.endswith("[layer skip: keeps 0-13,18-29 of 30]")  # doctest: +SKIP
    True
    """

    keep = list(DEFAULT_SMOLLM2_LAYERS if layers is None else layers)
    base = ModelPair.smollm2(
        draft_temperature=draft_temperature,
        target_temperature=target_temperature,
        top_k=top_k,
        top_p=top_p,
    )
    draft = layer_skip(base.target, keep)
    return ModelPair(
        base.target,
        base.tokenizer,
        draft,
        target_warp=base.target_warp,
        draft_warp=base.draft_warp,
        target_id=base.target_id,
        draft_id=f"{base.target_id} [layer skip: keeps {_ranges(keep)} of {len(_decoder(base.target).layers)}]",
    )


def _ranges(keep: Sequence[int]) -> str:
    """[0, 1, 2, 5, 6] -> '0-2,5-6'."""
    out: list[str] = []
    start = prev = keep[0]
    for i in list(keep[1:]) + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}-{prev}" if prev > start else f"{start}")
        if i is not None:
            start = prev = i
    return ",".join(out)


def draft_quality(data: Any) -> dict[str, float]:
    """Mean total-variation distance and single-draft acceptance of a pair's rows.

    ``data`` is a :class:`Distributions` (or an object with ``rows()``).  The
    single-draft acceptance of speculative decoding is Σ min(p, q) = 1 − TV(p, q).

    Parameters
    ----------
    data : Distributions
        The pair's rows (or any object with ``rows() -> (p, q)``).

    Returns
    -------
    dict of str to float
        ``positions``, ``mean_tv``, ``std_tv``, ``acceptance`` (1 − mean TV) and
        ``argmax_agreement`` (fraction of rows where p and q have the same argmax).

    Examples
    --------
    >>> from optaccept import llm, real
    >>> data = real.Distributions.load(real.sample_path()).subset(range(100))
    >>> {name: round(value, 4) for name, value in llm.draft_quality(data).items()}
    {'positions': 100, 'mean_tv': 0.1371, 'std_tv': 0.0702, 'acceptance': 0.8629, 'argmax_agreement': 1.0}
    """
    p, q = data.rows()
    tv = 0.5 * np.abs(p - q).sum(axis=1)
    return {
        "positions": int(len(tv)),
        "mean_tv": float(tv.mean()),
        "std_tv": float(tv.std(ddof=1)) if len(tv) > 1 else 0.0,
        "acceptance": float(1 - tv.mean()),
        "argmax_agreement": float(np.mean(p.argmax(1) == q.argmax(1))),
    }
