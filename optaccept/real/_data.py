"""The distribution file shipped with optaccept (extracted by the project)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["sample_path", "SAMPLE_FILE"]

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
