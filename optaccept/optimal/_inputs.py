"""The target's input cleaning shared by every entry point of the solvers: one sum rule, one
check of the length against the draft law, and the exact path for Fractions."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import as_distribution, as_exact_distribution, is_exact_input
from ..drafts import DraftLaw

__all__ = ["_clean_p"]


def _clean_p(p: Any, law: DraftLaw, normalize: bool) -> tuple[np.ndarray, tuple[Fraction, ...] | None]:
    exact = None
    if is_exact_input(p):
        exact = as_exact_distribution(p, "p", normalize=normalize, n=law.n)
        if len(exact) != law.n:
            raise InputError(f"p: length {len(exact)} does not match the draft law's vocabulary size {law.n}")
        pf = np.array([float(v) for v in exact])
    else:
        pf = as_distribution(p, "p", normalize=normalize, n=law.n)
        if pf.size != law.n:
            raise InputError(f"p: length {pf.size} does not match the draft law's vocabulary size {law.n}")
    return pf, exact
