"""Table cells as the house writes them: numbers (:func:`fmt`), estimates with their
standard error (:class:`Estimate`), values shown as text (:class:`Shown`) and LaTeX written as
it is (:class:`LatexRaw`); :func:`cell_text` is how any cell reads in Markdown, LaTeX and HTML."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["fmt", "LatexRaw", "Estimate", "Shown", "cell_text"]


def fmt(x: Any, digits: int = 6) -> str:
    """A number, array or sequence as a short string (long vectors elided)."""
    if x is None:
        return "—"
    if isinstance(x, Fraction):
        s = str(x)
        return s if len(s) <= 24 else f"{float(x):.{digits}g} (exact)"
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        return f"{float(x):.{digits}g}"
    if isinstance(x, np.ndarray) or (isinstance(x, Sequence) and not isinstance(x, str)):
        a = list(np.asarray(x, dtype=object).ravel()) if isinstance(x, np.ndarray) else list(x)
        head = ", ".join(fmt(v, 4) for v in a[:6])
        shape = f"shape {x.shape}, " if isinstance(x, np.ndarray) and x.ndim > 1 else ""
        return f"[{head}{', …' if len(a) > 6 else ''}] ({shape}{len(a)} entries)" if len(a) > 6 else f"[{head}]"
    s = str(x)
    return s if len(s) <= 80 else s[:77] + "..."


class LatexRaw(str):
    """A LaTeX table cell written as it is (it may hold math), not escaped."""


@dataclass(frozen=True)
class Estimate:
    """A table cell holding a value and its standard error: ``0.9392 ± 0.0011`` when read
    (Markdown, LaTeX), two numeric columns in CSV.  A standard error of exactly 0 (an exact
    value) prints no ``±``; one that rounds to 0 at ``digits`` decimals prints with one
    significant digit, never as ``± 0.0000``.  (``se`` is the old name of ``std_err``.)"""

    value: float
    std_err: float
    digits: int = 4

    def __str__(self) -> str:
        v = f"{self.value:.{self.digits}f}"
        if not math.isfinite(self.std_err) or self.std_err == 0:
            return v
        se = f"{self.std_err:.{self.digits}f}"
        return f"{v} ± {se}" if float(se) != 0 else f"{v} ± {self.std_err:.1g}"


@dataclass(frozen=True)
class Shown:
    """A numeric cell displayed as ``text`` (e.g. ``< 1e-12``) but written as ``value`` to CSV."""

    value: float
    text: str

    def __str__(self) -> str:
        return self.text


def cell_text(c: Any) -> str:
    """How a table cell reads in Markdown, LaTeX and HTML: strings as they are, ``None`` as
    "–" (not defined), :class:`Estimate` and :class:`Shown` by their ``str``, numbers by
    :func:`fmt`."""
    if c is None:
        return "–"
    if isinstance(c, str | Estimate | Shown):
        return str(c)
    return fmt(c)
