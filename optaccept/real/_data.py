"""The files shipped with optaccept (extracted by the project): the SmolLM2 distributions and
the draft trees of the built-in pair.

The small files live in the package (``optaccept/data``, in every wheel).  The extended tree
sets (52 MB, read by the main job's full run, the benchmarks and the tests) are not in the
wheel: they stay in the repository's top-level ``data/`` folder (:data:`REPO_DATA`), found
from a checkout or an editable install, or from the folder named by the environment variable
``OPTACCEPT_DATA``.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .._lib.validation import check_choice

__all__ = ["sample_path", "SAMPLE_FILE", "trees_path", "TREES_FILES", "EXTENDED_TREES_FILES"]

#: The repository's folder of data files that are not in the wheel (the extended tree sets),
#: as seen from a checkout (or an editable install) of the repository.
REPO_DATA = Path(__file__).resolve().parents[2] / "data"
#: Environment variable naming another folder holding those files (an installed wheel's users).
DATA_ENV = "OPTACCEPT_DATA"

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

    Examples
    --------
    >>> from optaccept import real
    >>> real.sample_path().name
    'smollm2_t0.7_topk50.npz'
    """
    return Path(str(resources.files("optaccept.data").joinpath(SAMPLE_FILE)))


#: Draft-tree files shipped in ``optaccept/data`` (see its README for provenance), by draft law:
#: 2 trees after each built-in prompt.
TREES_FILES = {"iid": "smollm2_layerskip_trees_iid.npz", "swor": "smollm2_layerskip_trees_swor.npz"}
#: The larger sets: 12 trees after each of the 296 extended prompts (3,552 trees per law), in the
#: repository's ``data/`` folder (not in the wheel).
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
        The ``.npz`` file, for :meth:`DraftTrees.load`: inside the installed package for
        ``"builtin"``; for ``"extended"`` (not in the wheel) in ``$OPTACCEPT_DATA`` or the
        repository's ``data/`` folder.

    Raises
    ------
    InputError
        If ``drafts`` or ``prompts`` is not one of its values.
    FileNotFoundError
        If the extended set is asked for and neither ``$OPTACCEPT_DATA`` nor a checkout's
        ``data/`` folder holds it (an installed wheel outside the repository).

    Examples
    --------
    >>> from optaccept import real
    >>> real.trees_path("iid").name, real.trees_path("swor").name
    ('smollm2_layerskip_trees_iid.npz', 'smollm2_layerskip_trees_swor.npz')
    """

    files = {"builtin": TREES_FILES, "extended": EXTENDED_TREES_FILES}
    check_choice("prompts", prompts, files)
    check_choice("drafts", drafts, TREES_FILES)
    if prompts == "builtin":
        return Path(str(resources.files("optaccept.data").joinpath(TREES_FILES[drafts])))
    return _repository_file(EXTENDED_TREES_FILES[drafts])


def _repository_file(name: str) -> Path:
    """A data file kept out of the wheel: from ``$OPTACCEPT_DATA`` if set, else from the
    checkout's ``data/`` folder; a clear error naming both when neither holds it."""
    env = os.environ.get(DATA_ENV)
    folders = [Path(env)] if env else []
    folders.append(REPO_DATA)
    for folder in folders:
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(
        f"{name} is not installed with optaccept (52 MB of extended draft trees, kept out of the wheel): "
        f"it lives in the repository's data/ folder; run from a checkout of the repository (looked in "
        f"{REPO_DATA}) or set {DATA_ENV} to a folder holding it" + (f" (looked in {env})" if env else "")
    )
