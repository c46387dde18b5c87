"""Every LaTeX table the project writes compiles with pdflatex (booktabs, siunitx, tabularx)
and fits its width with no overfull box: a ``table`` one column of a two-column page
(3.3 in), a ``table*`` the text width (7 in).  Each table is compiled twice: in a
two-column page (7 in text, 3.3 in columns) as it declares itself, and in a one-column page
of 3.3 in (a ``table``) or 7 in (a ``table*``).  Math is in math mode, captions are above.

Needs pdflatex and the TeX packages booktabs, siunitx and tabularx (Debian/Ubuntu:
``texlive-latex-base texlive-latex-recommended texlive-science``); skipped without them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from optaccept._lib.display import LATEX_PREAMBLE, Estimate, Shown, latex_escape, latex_table

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "figures").glob("*.tex"))


def _tex_ready() -> str | None:
    """Why the TeX checks cannot run here, or None."""
    if shutil.which("pdflatex") is None:
        return "pdflatex is not installed (apt: texlive-latex-base texlive-latex-recommended texlive-science)"
    if shutil.which("kpsewhich") is None:
        return "kpsewhich is not installed (a TeX distribution is incomplete)"
    missing = [
        s
        for s in ("booktabs.sty", "siunitx.sty", "tabularx.sty")
        if not subprocess.run(["kpsewhich", s], capture_output=True, text=True).stdout.strip()
    ]
    return (
        f"TeX packages missing: {', '.join(missing)} (apt: texlive-latex-recommended texlive-science)"
        if missing
        else None
    )


_WHY = _tex_ready()
needs_tex = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")

#: two-column page: text 7 in, columns 3.3 in (0.4 in apart); one-column pages of 3.3 and 7 in
_PAGES = {
    "two-column": r"\documentclass[10pt,twocolumn]{article}"
    "\n"
    r"\setlength{\textwidth}{7in}\setlength{\columnsep}{0.4in}",
    "3.3in": r"\documentclass[10pt]{article}" "\n" r"\setlength{\textwidth}{3.3in}",
    "7in": r"\documentclass[10pt]{article}" "\n" r"\setlength{\textwidth}{7in}",
}


def _compile(table: str, page: str, folder: Path) -> str:
    """The pdflatex log of ``table`` on ``page``; fails on an error."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = (
        _PAGES[page]
        + "\n\\setlength{\\oddsidemargin}{-0.5in}\\setlength{\\textheight}{9.5in}\\setlength{\\topmargin}{-0.7in}\n"
        + LATEX_PREAMBLE
        + "\n\\begin{document}\n"
        + table
        + "\n\\end{document}\n"
    )
    (folder / "doc.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "doc.log").read_text(encoding="utf-8", errors="replace")
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert run.returncode == 0 and not errors, f"pdflatex failed on {page}: {errors[:3]}"
    return log


def _check_fits(table: str, name: str, tmp_path: Path) -> None:
    wide = r"\begin{table*}" in table
    for page in ("two-column", "7in" if wide else "3.3in"):
        log = _compile(table, page, tmp_path / page)
        over = re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)
        assert not over, f"{name}: {len(over)} overfull boxes on the {page} page, widest {max(map(float, over))} pt"


def _check_form(table: str, name: str) -> None:
    assert table.count(r"\begin{table") == 1, name
    body = table[table.index(r"\begin{tabular") :]
    if r"\caption" in table:
        assert table.index(r"\caption") < table.index(r"\begin{tabular"), f"{name}: caption below the table"
    text = re.sub(r"\$[^$]*\$", "", table)  # outside math
    assert not re.search(r"[α-ωΑ-Ω±≤≥−×→∞∅]", table), f"{name}: raw Unicode math"
    assert not re.search(r"\$[^$]*\$\s?\*", table), f"{name}: a star outside math ($\\alpha$*)"
    assert not re.search(r"\$<\$=|\$>\$=", table), f"{name}: <= spelt in text"
    assert "`" not in text, name
    assert not re.search(r"(±|\\pm\$?) ?0\.0+(?![0-9])", body), f"{name}: ± 0.0000"


@needs_tex
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_tables_compile_and_fit(path, tmp_path):
    table = path.read_text(encoding="utf-8")
    _check_form(table, path.name)
    _check_fits(table, path.name, tmp_path)


def _budget_latex(curve) -> str:
    from optaccept.jobs.trees import budget_rows

    header, rows, _, _ = budget_rows(curve)
    return latex_table(["$N$"] + header[1:], rows, caption="Budget curve.")


def _writer_tables() -> dict[str, str]:
    """Tables from each writer, on small inputs (fast) and nasty cells."""
    from optaccept import tree, verifiers
    from optaccept.real import DraftTrees, trees_path

    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    trees = {d: DraftTrees.load(trees_path(d)).select(np.arange(4)) for d in ("iid", "swor")}
    pairs = [tree.synthetic_pair(40, rng=s, scale=2.0) for s in range(3)]
    nasty = latex_table(
        ["law", "α*", "gap", "n", "note"],
        [
            ["IID(n=5, k=3)", Shown(1.0, "1.000000"), Shown(0.0, "< 1e-12"), 5, "n <= 5; α* = 1 for k ≥ 2"],
            ["WithoutReplacement(n=5, k=3)", Estimate(0.5, 2e-5), -0.0133, 12, "50% & #1 in E[N_rej] ~ x^2"],
            ["M → ∞", None, "n/a", 1234567, "–"],
        ],
        caption="Captions with α*, (n, k) and ± stay in math: 1e-12 × 2.",
    )
    from optaccept import llm, real
    from optaccept.jobs.llm import gap_rows

    data = real.Distributions.load(real.sample_path()).subset(np.arange(4))
    gaps = llm.position_gap_table(data, ks=(2, 3), progress=False, slow_verifiers=False, cross_check=0)
    header, rows, _, _, _ = gap_rows(gaps)
    realised = real.realised_optimal(
        data, ks=(2,), positions=2, rng=np.random.default_rng(0), samples=50, progress=False
    )
    return {
        "nasty cells": nasty,
        "llm gap table (job)": latex_table(["$k$" if h == "k" else h for h in header], rows, caption="Gaps."),
        "PositionGapTable.to_latex": gaps.to_latex(),
        "RealisedTable.to_latex": realised.to_latex(),
        "verifiers.gap_table": verifiers.gap_table(p, q, ks=(1, 2, 3)).to_latex(),
        "AlphaTable.to_latex": __import__("optaccept").optimal.alpha_table(p, q, ks=range(1, 9)).to_latex(),
        "verifiers.gap_table k=2..8": verifiers.gap_table(p, q, ks=range(2, 9), progress=False).to_latex(),
        "tree_table": real.tree_table(trees, ks=(1, 2), lengths=(1, 2)).to_latex(),
        "budget curve": _budget_latex(tree.budget_curve(pairs, (2, 4, 8), progress=False)),
        "one wide row": latex_table(["a"] + [f"$k = {k}$" for k in range(1, 7)], [["x"] + [Estimate(0.9, 0.01)] * 6]),
    }


@needs_tex
def test_writers_tables_compile_and_fit(tmp_path):
    for name, table in _writer_tables().items():
        _check_form(table, name)
        _check_fits(table, name, tmp_path / re.sub(r"\W", "_", name))


def test_math_goes_to_math_mode():
    assert latex_escape("α* (i.i.d.)") == r"$\alpha^*$ (i.i.d.)"
    assert latex_escape("n <= 5") == r"$n \le 5$"
    assert latex_escape("k ≥ 2") == r"$k \ge 2$"
    assert latex_escape("limit as M → ∞") == r"limit as $M \to \infty$"
    assert latex_escape("range of (n, k)") == r"range of $(n, k)$"
    assert latex_escape("gap -0.0133") == r"gap $-$0.0133"
    assert latex_escape("< 1e-12") == r"$<$ \num{1e-12}"
    assert latex_escape("top-50, E[N_rej] & 50%") == r"top-50, E[N\_\allowbreak{}rej] \& 50\%"
    # the caller's math and commands are kept
    assert latex_escape(r"$T_{\mathrm{draft}}$ = 0.7 \_") == r"$T_{\mathrm{draft}}$ = 0.7 \_"


def test_columns_and_widths():
    t = latex_table(["verifier", "k", "α"], [["a long verifier name here", 2, 0.5], ["", 3, 0.25]])
    assert r"\begin{table}" in t and r"\raggedright\arraybackslash}X" in t  # long text wraps, left
    assert "S[table-format=1]" in t and "S[table-format=1.2]" in t  # numbers on the decimal point
    assert "{$k$}" in t and r"{$\alpha$}" in t  # S column headers in braces, math in math mode
    assert t.index(r"\caption") if r"\caption" in t else True
    wide = latex_table(["x"] + [f"$k = {k}$" for k in range(8)], [["y"] + [Estimate(0.91, 0.01)] * 8])
    assert r"\begin{table*}" in wide
    assert r"\begin{table}" in latex_table(["x", "y"], [[1, 2]], wide=False)
