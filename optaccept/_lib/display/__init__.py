"""Rich display of result objects: one compact HTML table for notebooks, short text for terminals.

Result types call :func:`html_table` from their ``_repr_html_`` and :func:`short` from their
``__repr__``; nothing here imports IPython, and pandas only inside :meth:`Tabular.to_pandas`.
Every result speaks one vocabulary (``value``, ``std_err``, ``method``, ``ok``; docs/reference.md,
"Results"): :class:`Tabular` gives it ``to_pandas`` and ``to_latex``.
"""

from __future__ import annotations

import csv
import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import fields, is_dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import MissingDependencyError
from .cells import Estimate, LatexRaw, Shown, cell_text, fmt
from .latex import LATEX_PREAMBLE, latex_escape, latex_table

__all__ = [
    "fmt",
    "short",
    "html_table",
    "html_fields",
    "latex_table",
    "latex_escape",
    "LATEX_PREAMBLE",
    "CSV_DIGITS",
    "CSV_FLOOR",
    "csv_number",
    "markdown_table",
    "write_table",
    "Estimate",
    "Shown",
    "cell_text",
    "LatexRaw",
    "Tabular",
    "Report",
    "VOCABULARY",
]


#: The four names every result answers to (docs/reference.md, "Results"): the headline number, its standard
#: error (None for an exact value), how it was obtained, and whether its own checks passed.
VOCABULARY = ("value", "std_err", "method", "ok")


class Tabular:
    """``to_pandas()`` and ``to_latex()`` of a result, written once.

    A result class gives :meth:`_records` (one dict per row, numbers as numbers) and, where
    its page form differs from that long form, :meth:`_latex_rows`; ``_caption`` is the
    default caption.  A result of one record prints as a two-column (quantity, value) table,
    which fits one column of a page; longer ones as their records, one row each.
    """

    __slots__ = ()
    _caption = ""

    def _records(self) -> list[dict[str, Any]]:
        """One record: the vocabulary, then the dataclass fields that hold one number or word."""
        rec = {name: getattr(self, name) for name in VOCABULARY}
        for f in fields(self) if is_dataclass(self) else ():
            v = getattr(self, f.name)
            if f.name not in rec and (v is None or isinstance(v, str | int | float | Fraction | np.number | np.bool_)):
                rec[f.name] = v
        return [rec]

    def _latex_rows(self) -> tuple[list[str], list[list[Any]]]:
        recs = self._records()
        if len(recs) == 1:
            return ["quantity", "value"], [[k, v] for k, v in recs[0].items()]
        cols = list(recs[0]) if recs else ["value"]
        return cols, [[r.get(c) for c in cols] for r in recs]

    def to_pandas(self) -> Any:
        """The result as a pandas DataFrame: one row per record (exact values as floats).

        Returns
        -------
        pandas.DataFrame
            The records of the result, one row each.

        Raises
        ------
        MissingDependencyError
            If pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingDependencyError(f"{type(self).__name__}.to_pandas needs pandas: pip install pandas") from None
        recs = [{k: float(v) if isinstance(v, Fraction) else v for k, v in r.items()} for r in self._records()]
        return pd.DataFrame(recs)

    def to_latex(self, caption: str | None = None, label: str = "") -> str:
        """The result as a booktabs LaTeX ``table`` that compiles and fits a page
        (:func:`latex_table`; needs :data:`LATEX_PREAMBLE`).

        Parameters
        ----------
        caption : str, optional
            The table's caption (default: the class's own).
        label : str
            The ``\\label``.

        Returns
        -------
        str
            The ``table`` (or ``table*``) environment.
        """
        header, rows = self._latex_rows()
        return latex_table(header, rows, self._caption if caption is None else caption, label)


class Report(Tabular):
    """A result shown as labelled lines (text and Jupyter HTML): a subclass names its
    ``_title`` and lists its ``_rows()`` as (label, text) pairs."""

    _title = "Report"

    def _rows(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    def __str__(self) -> str:
        rows = self._rows()
        w = max(len(k) for k, _ in rows)
        return self._title + "\n" + "\n".join(f"  {k:<{w}}  {v}" for k, v in rows)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td style='padding:2px 8px'><b>{html.escape(k)}</b></td>"
            f"<td style='padding:2px 8px'>{html.escape(v)}</td></tr>"
            for k, v in self._rows()
        )
        return f"<div><b>{html.escape(self._title)}</b><table>{body}</table></div>"


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
                vals = [c.value, c.std_err]
            elif isinstance(c, Shown):
                vals = [c.value] + ([""] if sp else [])
            elif c is None:
                vals = [""] * (2 if sp else 1)
            else:
                vals = [c] + ([""] if sp else [])
            line += [v.replace("`", "") if isinstance(v, str) else (v if isinstance(v, str) else _num(v)) for v in vals]
        out.append(line)
    return head, out


#: The one precision policy of the tables the project writes.  Its float results are accurate to
#: about 1e-12; a CSV holds each float with :data:`CSV_DIGITS` = 10 significant digits (what that
#: accuracy supports, with two digits to spare) and values below :data:`CSV_FLOOR` = 1e-12 in
#: magnitude as 0 (rounding noise), so that a re-run on another CPU, whose summation order
#: changes the last bits, writes the same bytes.  Tables read by people (Markdown, LaTeX) show
#: a mean ± standard error to the standard error's precision (:class:`Estimate`, at most 4
#: decimals) and exact values to 6 decimals.
CSV_DIGITS = 10
CSV_FLOOR = 1e-12


def csv_number(v: Any) -> str:
    """A float as a CSV writes it (:data:`CSV_DIGITS`, :data:`CSV_FLOOR`): shortest form
    (``0.9``, ``0.0``, ``23.31686312``), never ``-0.0``."""
    x = float(v)
    if math.isfinite(x) and abs(x) < CSV_FLOOR:
        return "0.0"
    return repr(float(f"{x:.{CSV_DIGITS}g}") + 0.0)


def _num(v: Any) -> Any:
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating | Fraction):
        return csv_number(v)
    return v


_STYLE = "border-collapse:collapse;font-size:0.9em"
_CELL = "padding:2px 8px;border-bottom:1px solid #ddd"


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


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table (cells as :func:`cell_text` reads them)."""
    rows = [[cell_text(c) for c in r] for r in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _is_form(latex: Any) -> bool:
    """``(header, rows)`` rather than a header (a sequence of str)."""
    return isinstance(latex, tuple) and len(latex) == 2 and not isinstance(latex[0], str)


def write_table(
    stem: Any,
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str = "",
    notes: str = "",
    caption: str = "",
    data: tuple[Sequence[str], Sequence[Sequence[Any]]] | None = None,
    latex_transpose: int = 0,
    latex: Sequence[str] | tuple[Sequence[str], Sequence[Sequence[Any]]] | None = None,
    wide: bool | None = None,
) -> list[Any]:
    """Write one table as ``stem.md`` (title, notes, table, for reading), ``stem.csv`` (data:
    one number per cell, see :func:`_csv_columns`) and ``stem.tex`` (booktabs).
    ``data=(header, rows)`` gives the CSV its own (long) form when the table read by people is
    not one (several numbers per cell).  ``latex_transpose=m`` writes the LaTeX table with rows
    and columns exchanged (a wide table that would not fit a page): the first m columns are the
    keys that label the new columns.  ``latex`` gives the LaTeX table its own header (a list of
    str, which may hold math) or its own form, ``(header, rows)`` (e.g. one number per cell
    where the Markdown packs several); ``latex_header=`` is its former name for the header.
    ``wide`` is passed to :func:`latex_table` (``table*`` or one column).
    Returns the three paths."""

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
    if latex is not None and _is_form(latex):
        lh, rows = list(latex[0]), latex[1]
    else:
        lh = list(latex or header)
    if latex_transpose:
        m = latex_transpose
        body = [[LatexRaw(latex_escape(lh[j]))] + [r[j] for r in rows] for j in range(m, len(lh))]
        lh = [""] + [", ".join(f"{lh[j]} = {latex_escape(cell_text(r[j]))}" for j in range(m)) for r in rows]
        paths[2].write_text(latex_table(lh, body, caption or title, wide=wide), encoding="utf-8")
    else:
        paths[2].write_text(latex_table(lh, rows, caption or title, wide=wide), encoding="utf-8")
    return paths
