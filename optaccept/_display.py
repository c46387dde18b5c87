"""Rich display of result objects: one compact HTML table for notebooks, short text for terminals.

Result types call :func:`html_table` from their ``_repr_html_`` and :func:`short` from their
``__repr__``; nothing here imports IPython, and pandas only inside :meth:`Tabular.to_pandas`.
Every result speaks one vocabulary (``value``, ``std_err``, ``method``, ``ok``; README,
"Results"): :class:`Tabular` gives it ``to_pandas`` and ``to_latex``, :func:`renamed` keeps its
old attribute names working for one release.
"""

from __future__ import annotations

import csv
import functools
import html
import math
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, is_dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ._deprecated import renamed as _renamed_keywords
from ._errors import MissingDependencyError

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
    "renamed",
    "VOCABULARY",
]


#: The four names every result answers to (README, "Results"): the headline number, its standard
#: error (None for an exact value), how it was obtained, and whether its own checks passed.
VOCABULARY = ("value", "std_err", "method", "ok")


def _alias(cls_name: str, old: str, new: str) -> property:
    def get(self: Any) -> Any:
        warnings.warn(
            f"{cls_name}.{old} is renamed {cls_name}.{new}; the old name will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(get, doc=f"Old name of ``{new}`` (warns; removed in the next release).")


def renamed(**old_to_new: str) -> Callable[[type], type]:
    """A class decorator that keeps old names working for one release.

    ``@renamed(se="std_err")`` makes ``obj.se`` return ``obj.std_err`` with a
    :class:`DeprecationWarning` naming the new name; on a dataclass whose field is the new
    name, the old constructor keyword is accepted with the same warning.  Put it above
    ``@dataclass``.

    Parameters
    ----------
    **old_to_new : str
        Old attribute name -> new attribute name.

    Returns
    -------
    callable
        The decorator (it returns the class, changed in place).
    """

    def decorate(cls: type) -> type:
        for old, new in old_to_new.items():
            setattr(cls, old, _alias(cls.__name__, old, new))
        names = {f.name for f in fields(cls)} if is_dataclass(cls) else set()
        keywords = {old: new for old, new in old_to_new.items() if new in names}
        if keywords:
            init = cls.__init__

            @functools.wraps(init)
            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                for old, new in keywords.items():
                    if old in kwargs:
                        warnings.warn(
                            f"{cls.__name__}({old}=...) is renamed {new}=...; the old keyword will be removed "
                            "in the next release",
                            DeprecationWarning,
                            stacklevel=2,
                        )
                        kwargs[new] = kwargs.pop(old)
                init(self, *args, **kwargs)

            cls.__init__ = __init__
        return cls

    return decorate


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


class LatexRaw(str):
    """A LaTeX table cell written as it is (it may hold math), not escaped."""


@renamed(se="std_err")
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
    "_": r"\_\allowbreak{}",
    "α": r"$\alpha$",
    "ε": r"$\varepsilon$",
    "σ": r"$\sigma$",
    "ρ": r"$\rho$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "±": r"$\pm$",
    "−": r"$-$",
    "×": r"$\times$",
    "→": r"$\to$",
    "∞": r"$\infty$",
    "∅": r"$\emptyset$",
    "⊆": r"$\subseteq$",
    "∈": r"$\in$",
    "Σ": r"$\Sigma$",
    "…": r"\dots{}",
    "—": "---",
    "–": "--",
    "√": r"$\surd$",
    "ᵏ": r"$^k$",
    "²": r"$^2$",
    "<": r"$<$",
    ">": r"$>$",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}

# Unicode and ASCII spellings of math, written as LaTeX math (outside the caller's own $…$).
_MATH_SYMBOLS = {"α*": r"\alpha^*", "α": r"\alpha", "ε": r"\varepsilon", "σ": r"\sigma", "ρ": r"\rho"}
_RELATIONS = {"=": "=", "<=": r"\le", ">=": r"\ge", "≤": r"\le", "≥": r"\ge", "<": "<", ">": ">", "→": r"\to"}
# "n = 30", "k ≤ 5", "α* = 1", "M → ∞": a one-letter variable (or α*), a relation, a number
_RELATION_RE = re.compile(
    r"(?<![\w\\.$])(α\*|[a-zA-Zαεσρ])\s*(<=|>=|≤|≥|=|<|>|→)\s*([-+−]?(?:\d+(?:[.,/]\d+)*|∞)(?:e[-+]?\d+)?)(?![\w.]*[a-zA-Z])"
)
_SYMBOL_RE = re.compile(r"α\*|[αεσρ]")
# "(n, k)": a pair of one-letter variables
_PAIR_RE = re.compile(r"\(([a-zA-Z]), ?([a-zA-Z])\)")
# a number with an exponent (1e-12, 2.5e+03): siunitx's \num writes it as 1 × 10⁻¹²
_EXP_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?e[-+]?\d+)(?![\w.])")
# a sign in front of a number: a minus sign (not a hyphen) in math
_SIGN_RE = re.compile(r"(?<![\w.)\]])([-+−])(?=\d)")
_PLAIN_NUMBER_RE = re.compile(r"^[-+]?\d+(?:\.\d+)?$")


def _escape_text(s: str) -> str:
    """Escape one run of text (outside math): keep ``\\command``s and escaped characters."""
    s = _RELATION_RE.sub(
        lambda m: (
            "\x00"
            + " ".join(
                (
                    _MATH_SYMBOLS.get(m.group(1), m.group(1)),
                    _RELATIONS[m.group(2)],
                    m.group(3).replace("∞", r"\infty").replace("−", "-"),
                )
            )
            + "\x00"
        ),
        s,
    )
    s = _SYMBOL_RE.sub(lambda m: "\x00" + _MATH_SYMBOLS[m.group(0)] + "\x00", s)
    s = _PAIR_RE.sub(lambda m: f"\x00({m.group(1)}, {m.group(2)})\x00", s)
    s = _EXP_RE.sub(lambda m: "\x01" + m.group(1) + "\x01", s)
    s = _SIGN_RE.sub(lambda m: "\x02" + ("-" if m.group(1) in "-−" else "+") + "\x02", s)
    out: list[str] = []
    mode = ""  # "" text; "\x00" math; "\x01" \num; "\x02" sign
    i = 0
    while i < len(s):
        c = s[i]
        if c in "\x00\x01\x02":
            if mode == c:
                out.append("$" if c != "\x01" else "}")
                mode = ""
            else:
                out.append({"\x00": "$", "\x01": r"\num{", "\x02": "$"}[c])
                mode = c
            i += 1
            continue
        if mode:
            out.append(c)
        elif c == "\\" and i + 1 < len(s):
            m = re.match(r"\\[a-zA-Z]+|\\.", s[i:])
            out.append(m.group(0))
            i += len(m.group(0))
            continue
        else:
            out.append(_LATEX_ESCAPES.get(c, c))
        i += 1
    return "".join(out).replace("$$", "")


def latex_escape(s: str) -> str:
    """Text as LaTeX that plain pdflatex compiles: special characters escaped, math in math
    mode (``α*`` as ``$\\alpha^*$``, ``n <= 5`` as ``$n \\le 5$``, signs as minus signs,
    ``1e-12`` as siunitx's ``\\num{1e-12}``).  The caller's own ``$…$`` math and
    ``\\command``s are kept as they are."""
    parts = str(s).split("$")
    if len(parts) % 2 == 0:  # an unpaired $: treat it as a dollar sign
        return _escape_text(str(s).replace("$", r"\$"))
    return "".join(_escape_text(p) if i % 2 == 0 else f"${p}$" for i, p in enumerate(parts))


#: What a document needs to compile the tables of :func:`latex_table`.
LATEX_PREAMBLE = r"\usepackage{booktabs,siunitx,tabularx}"

#: Characters of text that fit one column (3.3 in) and the text width (7 in) at ``\small``,
#: less the space between columns (estimates: the tests compile every committed table).
_CAPACITY = {False: 56, True: 118}


def _visible(s: str) -> str:
    """Roughly what a LaTeX cell prints (for width estimates)."""
    s = s.replace(r"\begin{tabular}[b]{@{}c@{}}", "").replace(r"\end{tabular}", "")
    s = re.sub(r"\\(alpha|pm|le|ge|leq|geq|times|to|infty|varepsilon|sigma|rho|emptyset|in)\b", "x", s)
    s = re.sub(r"\\num\{([^}]*)\}", lambda m: m.group(1).replace("e-", "x10-"), s)
    s = re.sub(r"\\mathrm\{([^}]*)\}", r"\1", s)
    s = re.sub(r"\\[a-zA-Z]+|[{}$^_\\]", "", s)
    return s


def _cell_kind(c: Any) -> str:
    """'num' (a plain number: an siunitx S column aligns it), 'text' or 'value' (numbers
    with ±, brackets, marks)."""
    if c is None:
        return "empty"
    if isinstance(c, bool | np.bool_):
        return "text"
    if isinstance(c, int | np.integer | float | np.floating):
        return "num" if _PLAIN_NUMBER_RE.match(fmt(c)) else "value"
    text = cell_text(c).replace("`", "").strip()
    if text in ("", "–", "—", "--", "-", "n/a"):
        return "empty"
    if _PLAIN_NUMBER_RE.match(text):
        return "num"
    letters = re.sub(r"\\[a-zA-Z]+|\d+(?:\.\d+)?e[-+]?\d+|n/a|[α-ω]", "", text)
    return "text" if re.search(r"[A-Za-z]{2,}", letters) else "value"


def _wrap_header(h: str, width: int) -> str:
    """A header cell over a narrow column, broken at spaces outside math into lines of
    about ``width`` characters (a nested tabular: no extra package)."""
    if len(_visible(h)) <= width:
        return h
    words, depth, cur = [], 0, ""
    for ch in h:  # split at spaces outside $…$
        if ch == "$":
            depth ^= 1
        if ch == " " and not depth:
            words.append(cur)
            cur = ""
        else:
            cur += ch
    words.append(cur)
    lines, line = [], ""
    for w in words:
        if line and len(_visible(line + " " + w)) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    if len(lines) == 1:
        return lines[0]
    return r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"


def latex_table(
    header: Sequence[str],
    rows: Iterable[Sequence[Any]],
    caption: str = "",
    label: str = "",
    *,
    wide: bool | None = None,
) -> str:
    """A booktabs LaTeX table that compiles with pdflatex and fits its width.

    Needs :data:`LATEX_PREAMBLE` (booktabs, siunitx, tabularx).  The caption is above the
    table; text columns are left-aligned (long ones wrap, in a ``tabularx`` X column), plain
    numbers are aligned on the decimal point (siunitx ``S`` columns), other numeric cells
    are right-aligned; math is in math mode (:func:`latex_escape`).

    Parameters
    ----------
    header : sequence of str
        Column titles; LaTeX math in ``$…$`` is kept, other text is escaped.
    rows : iterable of sequences
        Cells: numbers, strings, ``None`` ("--"), :class:`Estimate`, :class:`Shown`, or
        :class:`LatexRaw` (written as it is).
    caption, label : str
        ``\\caption`` (escaped) and ``\\label``.
    wide : bool, optional
        ``True``: a ``table*`` across a two-column page (7 in); ``False``: one column
        (3.3 in); ``None``: one column when the estimated width fits, else ``table*``.
    """
    rows = [list(r) for r in rows]
    ncols = len(header)
    kinds = []
    for j in range(ncols):
        ks = {_cell_kind(r[j]) for r in rows if j < len(r)} - {"empty"}
        kinds.append("text" if "text" in ks or (j == 0 and not ks) else ("num" if ks == {"num"} else "value"))

    def render(c: Any, kind: str) -> str:
        if isinstance(c, LatexRaw):
            return str(c)
        if isinstance(c, str) and not c.strip():
            return ""
        if _cell_kind(c) == "empty":
            return "{--}" if kind == "num" else "--"
        text = cell_text(c).replace("`", "")
        if kind == "num":
            return text.strip().lstrip("+")
        return latex_escape(text)

    body = [[render(r[j] if j < len(r) else None, kinds[j]) for j in range(ncols)] for r in rows]
    head = [
        h
        if isinstance(h, LatexRaw)
        else f"${h}$"
        if re.fullmatch(r"[a-zA-Z]", str(h))  # a variable: k, z, L
        else latex_escape(str(h).replace("`", ""))
        for h in header
    ]
    widths = [max([len(_visible(b[j])) for b in body] + [1]) for j in range(ncols)]
    long_text = [kinds[j] == "text" and widths[j] > 16 for j in range(ncols)]
    head_w = [max(widths[j], 8) if not long_text[j] else 10**6 for j in range(ncols)]
    head = [_wrap_header(h, head_w[j]) for j, h in enumerate(head)]
    est = (
        sum(
            min(widths[j], 14) if long_text[j] else max(widths[j], max(len(_visible(x)) for x in head[j].split(r"\\")))
            for j in range(ncols)
        )
        + 1.5 * ncols
    )
    if wide is None:
        wide = est > _CAPACITY[False]
    specs = []
    for j, kind in enumerate(kinds):
        if long_text[j]:
            specs.append(r">{\raggedright\arraybackslash}X")
        elif kind == "text":
            specs.append("l")
        elif kind == "num":
            cells = [b[j] for b in body if b[j] != "{--}"]
            ints = max((len(c.split(".")[0].lstrip("-")) for c in cells), default=1)
            decs = max((len(c.split(".")[1]) if "." in c else 0 for c in cells), default=0)
            sign = "-" if any(c.startswith("-") for c in cells) else ""
            specs.append(f"S[table-format={sign}{ints}.{decs}]" if decs else f"S[table-format={sign}{ints}]")
        else:
            specs.append("r")
    head = ["{" + h + "}" if kinds[j] == "num" else h for j, h in enumerate(head)]
    env = "table*" if wide else "table"
    tab = "tabularx" if any(long_text) else "tabular"
    lines = [
        r"% compiles with " + LATEX_PREAMBLE + ("; spans both columns (7 in)" if wide else "; one column (3.3 in)"),
        r"\begin{" + env + "}[tbp]",
        r"\centering",
        r"\small",
    ]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption.replace("`", "")) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines += [
        r"\setlength{\tabcolsep}{4pt}",
        r"\begin{" + tab + "}" + (r"{\linewidth}" if tab == "tabularx" else "") + "{" + "".join(specs) + "}",
        r"\toprule",
        " & ".join(head) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(r) + r" \\" for r in body]
    lines += [r"\bottomrule", r"\end{" + tab + "}", r"\end{" + env + "}"]
    return "\n".join(lines) + "\n"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table (cells as :func:`cell_text` reads them)."""
    rows = [[cell_text(c) for c in r] for r in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _is_form(latex: Any) -> bool:
    """``(header, rows)`` rather than a header (a sequence of str)."""
    return isinstance(latex, tuple) and len(latex) == 2 and not isinstance(latex[0], str)


@_renamed_keywords("write_table", latex_header="latex")
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
