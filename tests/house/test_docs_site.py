"""The documentation site (``./run.sh docs``), checked without building it: the API pages that
``docs/_api.py`` generates from ``__all__`` list every public name of every public namespace,
each object is documented once, every page under docs/ is reachable from the root toctree, and
the gallery shows every figure the main job draws."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
APPLICATIONS = {"cli", "jobs", "data"}  # no public names (``data`` holds the shipped files)


@pytest.fixture(scope="module")
def api():
    spec = importlib.util.spec_from_file_location("_docs_api", DOCS / "_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(api):
    return api.pages()


def test_namespaces_are_the_public_packages(api):
    packages = sorted(
        f"optaccept.{d.name}"
        for d in (ROOT / "optaccept").iterdir()
        if (d / "__init__.py").exists() and not d.name.startswith("_") and d.name not in APPLICATIONS
    )
    assert sorted(api.NAMESPACES) == sorted(["optaccept", *packages])
    assert set(api.BLURBS) == set(api.NAMESPACES)


def test_every_public_name_is_listed_on_its_page(api, pages):
    for ns in api.NAMESPACES:
        text = pages[api.page_name(ns)]
        missing = set(importlib.import_module(ns).__all__) - api.listed(text)
        assert not missing, f"{ns}: not on docs/{api.page_name(ns)}.rst: {sorted(missing)}"


def test_every_page_is_in_the_api_index(api, pages):
    index = pages["api/index"]
    for ns in api.NAMESPACES:
        assert f"<{ns}>" in index
    assert set(pages) == {"api/index", *(api.page_name(ns) for ns in api.NAMESPACES)}


def _documented(text: str) -> list[str]:
    """Qualified entries of the page's autosummary blocks that have stub pages (``:toctree:``)."""
    out, current, in_block, with_stubs = [], None, False, False
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith(".. currentmodule::"):
            current = line.split("::")[1].strip()
        if line.startswith(".. autosummary::"):
            in_block, with_stubs = True, False
        elif in_block and line.startswith("   ") and stripped:
            if stripped.startswith(":toctree:"):
                with_stubs = True
            elif not stripped.startswith(":") and with_stubs:
                out.append(f"{current}.{stripped}")
        elif in_block and stripped:
            in_block = False
    return out


def test_every_object_is_documented_once(api, pages):
    seen: dict[int, str] = {}
    keep = []
    for ns in api.NAMESPACES:
        for qualified in _documented(pages[api.page_name(ns)]):
            module, name = qualified.rsplit(".", 1)
            obj = getattr(importlib.import_module(module), name)
            if isinstance(obj, str | int | float | tuple | dict | list) or inspect.ismodule(obj):
                continue
            assert id(obj) not in seen, f"{qualified} documented twice (also as {seen[id(obj)]})"
            seen[id(obj)] = qualified
            keep.append(obj)
    # re-exports point to a documented home
    for ns in api.NAMESPACES:
        for target in re.findall(r":obj:`[^<`]+<([^>]+)>`", pages[api.page_name(ns)]):
            assert target in seen.values(), f"{ns}: cross-reference to {target}, documented nowhere"


def _toctree_entries(path: Path) -> list[str]:
    text = path.read_text()
    if path.suffix == ".md":
        blocks = re.findall(r"```\{toctree\}\n(.*?)```", text, re.S)
    else:
        blocks = re.findall(r"\.\. toctree::\n((?:[ \t]+.*\n|\n)+)", text)
    entries = []
    for block in blocks:
        for line in block.splitlines():
            line = line.strip()
            if not line or line.startswith(":"):
                continue
            m = re.search(r"<([^>]+)>$", line)
            entries.append(m.group(1) if m else line)
    return entries


def _resolve(source: str, entry: str) -> str:
    doc = (Path(source).parent / entry).as_posix()
    return re.sub(r"\.(md|rst)$", "", doc).removeprefix("./")


def test_every_page_is_in_a_toctree(api, pages, tmp_path):
    written = {f"{name}.rst": text for name, text in pages.items()}
    sources = {
        p.relative_to(DOCS).as_posix(): p
        for p in DOCS.rglob("*")
        if p.suffix in (".md", ".rst") and not p.relative_to(DOCS).parts[0].startswith(("_", "api"))
    }
    for name, text in written.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        sources[name] = path
    docs = {re.sub(r"\.(md|rst)$", "", name): path for name, path in sources.items()}
    reached, todo = {"index"}, ["index"]
    while todo:
        doc = todo.pop()
        for entry in _toctree_entries(docs[doc]):
            target = _resolve(doc, entry)
            assert target in docs, f"docs/{doc}: toctree entry {entry!r} is no page"
            if target not in reached:
                reached.add(target)
                todo.append(target)
    assert not set(docs) - reached, f"pages in no toctree: {sorted(set(docs) - reached)}"


def test_gallery_shows_every_figure():
    gallery = (DOCS / "gallery.md").read_text()
    shown = set(re.findall(r"\]\(\.\./figures/([\w.-]+\.png)\)", gallery))
    assert shown == {p.name for p in (ROOT / "figures").glob("*.png")}


def test_docs_extra_and_run_sh():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {re.split(r"[<>=]", r)[0] for r in extras["docs"]} >= {"sphinx", "myst-parser", "numpydoc"}
    assert all(">=" in r for r in extras["docs"])
    run_sh = (ROOT / "run.sh").read_text()
    assert "sphinx -W --keep-going" in run_sh and "docs/_build/html" in run_sh
