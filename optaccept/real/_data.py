"""The files shipped with optaccept (extracted by the project): the SmolLM2 distributions and
the draft trees of the built-in pair."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .._lib.validation import check_choice

__all__ = ["sample_path", "SAMPLE_FILE", "trees_path", "TREES_FILES", "EXTENDED_TREES_FILES"]

SAMPLE_FILE = "smollm2_t0.7_topk50.npz"


def sample_path() -> Path:
    """Path of the shipped SmolLM2-135M-Instruct distributions: target at
    temperature 1.0, draft at 0.7 (sharper than the target), both truncated to their top 50 tokens
    (so stored exactly in sparse form); provenance in ``Distributions.load(...).meta``
    and in ``optaccept/data/README.md``.

    Returns
    -------
    pathlib.Path
        The ``.npz`` file inside the installed package, for :meth:`Distributions.load`.
    """
    return Path(str(resources.files("optaccept.data").joinpath(SAMPLE_FILE)))


#: Draft-tree files shipped in ``optaccept/data`` (see its README for provenance), by draft law:
#: 2 trees after each built-in prompt.
TREES_FILES = {"iid": "smollm2_layerskip_trees_iid.npz", "swor": "smollm2_layerskip_trees_swor.npz"}
#: The larger shipped sets: 12 trees after each of the 296 extended prompts (3,552 trees per law).
EXTENDED_TREES_FILES = {
    "iid": "smollm2_layerskip_trees_iid_extended.npz",
    "swor": "smollm2_layerskip_trees_swor_extended.npz",
}


def trees_path(drafts: str = "iid", prompts: str = "builtin") -> Path:
    """Path of the shipped draft trees of the built-in pair (:func:`smollm2_layerskip`,
    both sides truncated to their top 50 tokens), drawn i.i.d. or without replacement;
    provenance in ``DraftTrees.load(path).meta`` and ``optaccept/data/README.md``.

    ``prompts="builtin"``: 2 trees after each of the 36 built-in prompts (72 trees);
    ``"extended"``: 12 trees after each of the 296 prompts of
    :func:`optaccept.llm.extended_prompts` (3,552 trees), the set behind the decided
    table of accepted tokens (standard errors of the verifier differences ≤ 0.02).

    Parameters
    ----------
    drafts : {"iid", "swor"}
        How the chains were drawn.
    prompts : {"builtin", "extended"}
        Which shipped set.

    Returns
    -------
    pathlib.Path
        The ``.npz`` file inside the installed package, for :meth:`DraftTrees.load`.

    Raises
    ------
    InputError
        If ``drafts`` or ``prompts`` is not one of its values.
    """

    files = {"builtin": TREES_FILES, "extended": EXTENDED_TREES_FILES}
    check_choice("prompts", prompts, files)
    check_choice("drafts", drafts, TREES_FILES)
    return Path(str(resources.files("optaccept.data").joinpath(files[prompts][drafts])))
