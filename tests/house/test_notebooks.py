"""Every notebook in notebooks/ executes without error (top to bottom, fresh kernel), uses only
public API, warns nothing on stderr, opens with what it shows and ends with a computed conclusion."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PRIVATE = re.compile(
    r"(from|import)\s+optaccept(\.\w+)*\._\w+|optaccept(\.\w+)*\._\w+\s+import|from\s+\.\w*\s+import\s+_"
)


def _read(path: Path):
    nbformat = pytest.importorskip("nbformat")
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_uses_public_api_and_has_a_shape(path: Path) -> None:
    nb = _read(path)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not PRIVATE.search(code), f"{path.name} imports a private module"
    if path.name[:2] not in {"01", "02", "03", "04", "05", "06", "07"}:
        return
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("#")
    assert "shows" in nb.cells[0].source.lower() or "show" in nb.cells[0].source.lower()
    # the last code cell computes the conclusion (not hard-written prose)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert "Markdown(" in last.source or "display(" in last.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    nb = _read(path)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    stderr = [o.get("text", "") for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert not [s for s in stderr if "IProgress" in s or "Warning" in s], stderr
    # the conclusion renders as Markdown
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert any("text/markdown" in o.get("data", {}) for o in last.get("outputs", []))
