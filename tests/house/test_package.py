"""The package itself: light import, lazy sub-packages, doctests."""

from __future__ import annotations

import doctest
import pathlib
import shutil
import subprocess
import sys

import pytest

import optaccept


def test_import_needs_only_numpy_and_scipy() -> None:
    code = (
        "import sys, optaccept; "
        "heavy = [m for m in ('cvxpy', 'torch', 'transformers', 'cdd', 'sympy', 'matplotlib') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_lazy_entry_points() -> None:
    import numpy as np

    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    table = optaccept.verifiers.gap_table(p, q, ks=(2,))
    assert table is not None
    assert callable(optaccept.verifiers.canonical_decomposition)
    assert optaccept.verifiers.ALL


def test_doctests() -> None:
    import optaccept.optimal

    for mod in (optaccept, optaccept.optimal._solve, optaccept.optimal._verify):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0


def test_ruff_clean():
    """The tree passes the project's ruff configuration (pyproject.toml), as CI sees it."""
    root = pathlib.Path(__file__).resolve().parents[2]
    exe = shutil.which("ruff", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (the dev extra)")
    out = subprocess.run([exe, "check", "--no-cache", str(root)], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stdout[-3000:]
    out = subprocess.run([exe, "format", "--check", "--no-cache", str(root)], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, "not formatted (run `ruff format .`):\n" + out.stdout[-3000:]


def test_readme_is_a_front_page_whose_tour_runs() -> None:
    """The README is a front page (what optaccept is in its first lines, the two set-up
    commands, at most about 150 lines), and its tour runs as written and says what it returns."""
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150, len(lines)
    assert "optimal acceptance" in "\n".join(lines[:10])
    assert "./run.sh main" in text and "./run.sh test" in text
    (tour,) = re.findall(r"```python\n(.*?)```", text, re.S)
    scope: dict = {}
    exec(compile(tour, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    res = scope["res"]
    assert round(float(res.value), 4) == 0.9075 and tuple(res.subset) == (0, 2, 4)
    assert scope["oa"].verify(scope["p"], scope["oa"].IID(scope["q"], k=2), res).ok
