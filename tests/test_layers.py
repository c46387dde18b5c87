"""The import contract: optaccept's layers (pyproject.toml, [tool.importlinter]) hold, counting
function-level imports, so that no import cycle can hide inside a function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    script = Path(sys.executable).with_name("lint-imports")
    assert script.is_file(), "import-linter is part of the dev extra: ./run.sh setup installs it"
    r = subprocess.run([str(script), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_library_never_imports_the_applications():
    """Applications (cli, jobs) sit above everything: importing the library loads neither."""
    code = (
        "import sys, optaccept, optaccept.optimal, optaccept.verifiers, optaccept.tree; "
        "print(sorted(m for m in sys.modules if m.startswith(('optaccept.cli', 'optaccept.jobs'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
