"""Rich display of result objects: one compact HTML table for notebooks, short text for terminals.

Result types call :func:`html_table` from their ``_repr_html_`` and :func:`short` from their
``__repr__``; nothing here imports IPython or pandas.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "fmt",
    "short",
    "html_table",
    "html_fields",
    "latex_table",
    "latex_escape",
    "markdown_table",
    "write_table",
    "Estimate",
    "Shown",
    "cell_text",
    "LatexRaw",
]


class LatexRaw(str):
    """A LaTeX table cell written as it is (it may hold math), not escaped."""


@dataclass(frozen=True)
class Estimate:
    """A table cell holding a value and its standard error: ``0.9392 ± 0.0011`` when read
    (Markdown, LaTeX), two numeric columns in CSV.  A standard error of exactly 0 (an exact
    value) prints no ``±``; one that rounds to 0 at ``digits`` decimals prints with one
    significant digit, never as ``± 0.0000``."""

    value: float
    se: float
    digits: int = 4

    def __str__(self) -> str:
        v = f"{self.value:.{self.digits}f}"
        if not math.isfinite(self.se) or self.se == 0:
            return v
        se = f"{self.se:.{self.digits}f}"
        return f"{v} ± {se}" if float(se) != 0 else f"{v} ± {self.se:.1g}"


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


def _csv_columns(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[list[str], list[list[Any]]]:
    """One number per CSV cell: a column holding an :class:`Estimate` becomes two columns
    (``name`` and ``name SE``); :class:`Shown` cells give their value; ``None`` an empty cell;
    Markdown backticks are dropped."""
    split = [any(isinstance(r[j], Estimate) for r in rows) for j in range(len(header))]
    head: list[str] = []
    for h, sp in zip(header, split):
        head += [h.replace("`", ""), f"{h.replace('`', '')} SE"] if sp else [h.replace("`", "")]
    out = []
    for r in rows:
        line: list[Any] = []
        for c, sp in zip(r, split):
            if isinstance(c, Estimate):
                vals = [c.value, c.se]
            elif isinstance(c, Shown):
                vals = [c.value] + ([""] if sp else [])
            elif c is None:
                vals = [""] * (2 if sp else 1)
            else:
                vals = [c] + ([""] if sp else [])
            line += [v.replace("`", "") if isinstance(v, str) else (v if isinstance(v, str) else _num(v)) for v in vals]
        out.append(line)
    return head, out


def _num(v: Any) -> Any:
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating | Fraction):
        return repr(float(v))
    return v


_STYLE = "border-collapse:collapse;font-size:0.9em"
_CELL = "padding:2px 8px;border-bottom:1px solid #ddd"


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


def short(name: str, fields: Iterable[tuple[str, Any]]) -> str:
    """``Name(a=1, b=[0.1, 0.2, …] (50 entries))`` — a one-line repr."""
    return f"{name}(" + ", ".join(f"{k}={fmt(v)}" for k, v in fields) + ")"


def html_fields(title: str, fields: Iterable[tuple[str, Any]]) -> str:
    """A two-column HTML table (field, value) under a bold title."""
    rows = "".join(
        f"<tr><td style='{_CELL};text-align:left'><code>{html.escape(k)}</code></td>"
        f"<td style='{_CELL};text-align:left'>{html.escape(fmt(v))}</td></tr>"
        for k, v in fields
    )
    return f"<div><b>{html.escape(title)}</b><table style='{_STYLE}'>{rows}</table></div>"


def html_table(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str = "", caption: str = "", max_rows: int = 60
) -> str:
    """An HTML table with a header row; cells are formatted with :func:`fmt` (strings as is)."""
    rows = list(rows)
    head = "".join(f"<th style='{_CELL};text-align:left'>{html.escape(str(h))}</th>" for h in header)
    body = []
    for r in rows[:max_rows]:
        cells = "".join(f"<td style='{_CELL};text-align:left'>{html.escape(cell_text(c))}</td>" for c in r)
        body.append(f"<tr>{cells}</tr>")
    if len(rows) > max_rows:
        body.append(f"<tr><td colspan='{len(header)}' style='{_CELL}'>… {len(rows) - max_rows} more rows</td></tr>")
    top = f"<b>{html.escape(title)}</b>" if title else ""
    cap = f"<div style='font-size:0.85em;color:#555'>{html.escape(caption)}</div>" if caption else ""
    return f"<div>{top}<table style='{_STYLE}'><tr>{head}</tr>{''.join(body)}</table>{cap}</div>"


_LATEX_ESCAPES = {
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "α": r"$\alpha$",
    "ε": r"$\varepsilon$",
    "σ": r"$\sigma$",
    "ρ": r"$\rho$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "±": r"$\pm$",
    "−": "-",
    "×": r"$\times$",
    "→": r"$\to$",
    "∞": r"$\infty$",
    "∅": r"$\emptyset$",
    "⊆": r"$\subseteq$",
    "Σ": r"$\Sigma$",
    "…": r"\dots{}",
    "—": "--",
    "–": "--",
    "√": r"$\surd$",
    "ᵏ": r"$^k$",
    "²": r"$^2$",
    "<": r"$<$",
    ">": r"$>$",
}


def latex_escape(s: str) -> str:
    """Escape the characters LaTeX treats specially in text and spell common Unicode math
    (α, ≥, ±, …) as LaTeX math, so the output compiles with plain pdflatex.  ``$`` and
    backslashes are kept (for math the caller writes)."""
    return "".join(_LATEX_ESCAPES.get(c, c) for c in s)


def latex_table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "", label: str = "") -> str:
    """A booktabs LaTeX ``table``; header cells are used as given (they may hold math), body
    cells are escaped (Markdown backticks dropped).  Needs ``\\usepackage{booktabs}``."""
    rows = [[c if isinstance(c, LatexRaw) else latex_escape(cell_text(c).replace("`", "")) for c in r] for r in rows]
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption.replace("`", "")) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table (cells as :func:`cell_text` reads them)."""
    rows = [[cell_text(c) for c in r] for r in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_table(
    stem: Any,
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str = "",
    notes: str = "",
    latex_header: Sequence[str] | None = None,
    caption: str = "",
    data: tuple[Sequence[str], Sequence[Sequence[Any]]] | None = None,
    latex_transpose: int = 0,
) -> list[Any]:
    """Write one table as ``stem.md`` (title, notes, table, for reading), ``stem.csv`` (data:
    one number per cell, see :func:`_csv_columns`) and ``stem.tex`` (booktabs; ``latex_header``
    may hold math).  ``data=(header, rows)`` gives the CSV its own (long) form when the table
    read by people is not one (several numbers per cell).  ``latex_transpose=m`` writes the
    LaTeX table with rows and columns exchanged (a wide table that would not fit a page): the
    first m columns are the keys that label the new columns.
    Returns the three paths."""
    import csv
    from pathlib import Path

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    md = (f"# {title}\n\n" if title else "") + (notes.strip() + "\n\n" if notes else "") + markdown_table(header, rows)
    paths = [stem.with_suffix(".md"), stem.with_suffix(".csv"), stem.with_suffix(".tex")]
    paths[0].write_text(md, encoding="utf-8")
    csv_head, csv_rows = _csv_columns(*(data if data is not None else (header, rows)))
    with paths[1].open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(csv_head)
        w.writerows(csv_rows)
    lh = list(latex_header or header)
    if latex_transpose:
        m = latex_transpose
        body = [[LatexRaw(lh[j])] + [r[j] for r in rows] for j in range(m, len(lh))]
        lh = [""] + [", ".join(f"{lh[j]} = {latex_escape(cell_text(r[j]))}" for j in range(m)) for r in rows]
        paths[2].write_text(latex_table(lh, body, caption or title), encoding="utf-8")
    else:
        paths[2].write_text(latex_table(lh, rows, caption or title), encoding="utf-8")
    return paths
