"""LaTeX tables that compile with pdflatex and fit their width: escaping of text and
math (:func:`latex_escape`), the booktabs/siunitx/tabularx table (:func:`latex_table`) and
the preamble it needs (:data:`LATEX_PREAMBLE`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .cells import LatexRaw, cell_text, fmt

__all__ = ["latex_escape", "latex_table", "LATEX_PREAMBLE"]


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
    "★": r"$\star$",
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
