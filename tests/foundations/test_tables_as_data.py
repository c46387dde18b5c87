"""Tables are data: every committed CSV holds one number per cell (value and standard
error apart; no '±', no '< 1e-12', no Markdown; floats with the one precision policy of
``optaccept._lib.display.csv_number``), and every LaTeX table is a booktabs table with no Markdown
in captions or cells and never '± 0.0000' (tests/foundations/test_latex_tables.py compiles them)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from optaccept._lib.display import Estimate, Shown, _csv_columns, latex_table

ROOT = Path(__file__).resolve().parents[2]
CSVS = sorted((ROOT / "figures").glob("*.csv"))
TEXS = sorted((ROOT / "figures").glob("*.tex"))


def _is_number(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


@pytest.mark.parametrize("path", CSVS, ids=lambda p: p.name)
def test_csv_columns_are_numbers_or_labels(path):
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    assert body
    for j, name in enumerate(head):
        cells = [r[j] for r in body if r[j] != ""]
        numeric = [_is_number(c) for c in cells]
        # a column is numbers, or labels — never numbers printed as text among them
        assert all(numeric) or not any(numeric) or name in {"status"}, (path.name, name, cells[:4])
        for c in cells:
            assert "±" not in c and not c.startswith("<") and "`" not in c, (path.name, name, c)
    assert all("`" not in h for h in head)


@pytest.mark.parametrize("path", TEXS, ids=lambda p: p.name)
def test_latex_tables_fit(path):
    """Cheap checks without TeX (tests/foundations/test_latex_tables.py compiles every table)."""
    tex = path.read_text(encoding="utf-8")
    assert re.search(r"\\begin\{tabularx?\}", tex), path.name
    assert "`" not in tex
    assert not re.search(r"(±|\\pm\$?) ?0\.0+(?![0-9])", tex), path.name


def test_estimate_never_prints_plus_minus_zero():
    assert str(Estimate(0.5, 0.0)) == "0.5000"  # exact: no ±
    assert str(Estimate(0.5, 0.00001234)) == "0.5000 ± 1e-05"
    assert str(Estimate(0.93921, 0.00113)) == "0.9392 ± 0.0011"


def test_csv_expansion_of_cells():
    head, rows = _csv_columns(
        ["k", "alpha", "gap", "note"], [[2, Estimate(0.9, 0.01), Shown(0.0, "< 1e-12"), "`a`"], [3, None, 1e-3, "b"]]
    )
    assert head == ["k", "alpha", "alpha SE", "gap", "note"]
    assert rows == [[2, "0.9", "0.01", "0.0", "a"], [3, "", "", "0.001", "b"]]
    tex = latex_table(["k", "alpha", "gap", "note"], [[2, Estimate(0.9, 0.0), Shown(0.0, "< 1e-12"), "`a`"]])
    assert "0.9000 &" in tex and r"$<$ \num{1e-12}" in tex and "`" not in tex  # '<' is ¡ in LaTeX text mode


@pytest.mark.parametrize("path", CSVS, ids=lambda p: p.name)
def test_csv_floats_follow_the_precision_policy(path):
    """At most 10 significant digits, nothing below 1e-12 but 0: the bytes a re-run on another
    CPU writes too."""
    from optaccept._lib.display import CSV_DIGITS, CSV_FLOOR

    with path.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    for r in rows[1:]:
        for c in r:
            if _is_number(c) and re.search(r"[.e]", c):
                digits = re.sub(r"e.*$", "", c).replace("-", "").replace(".", "").lstrip("0")
                assert len(digits) <= CSV_DIGITS, (path.name, c)
                assert float(c) == 0 or abs(float(c)) >= CSV_FLOOR, (path.name, c)


def test_csv_number_policy():
    from optaccept._lib.display import csv_number

    assert csv_number(0.9392082354563712) == "0.9392082355"
    assert csv_number(4.2e-18) == "0.0" and csv_number(-0.0) == "0.0"
    assert csv_number(23.316863123456) == "23.31686312"
    assert csv_number(2.5e-9) == "2.5e-09"
