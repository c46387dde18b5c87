"""The public surface of the package: every public name listed once, no helper leaking from a
face, no import by name outside the one lazy-loading helper, and every import of another
package's private module listed here (so that a new one is a decision, not an accident)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import optaccept

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "optaccept"

#: The public namespaces: the package and the sub-packages its ``__all__`` lists (the one list of
#: them; the folders are checked against it in ``tests/house/test_docs_site.py``).  ``cli`` and
#: ``jobs`` are applications (the ``optaccept`` command, ``python -m optaccept``, ``python -m
#: optaccept.jobs``) and export nothing.
PUBLIC = ("optaccept",) + tuple(
    f"optaccept.{name}" for name in optaccept.__all__ if inspect.ismodule(getattr(optaccept, name))
)
APPLICATIONS = ("optaccept.cli", "optaccept.jobs")

#: The most distinct public objects the first release may export (CHANGELOG.md, 0.2.0).
MAX_PUBLIC_OBJECTS = 150

#: (importing package, private module of another package) pairs allowed, each a decision.
#: The applications (cli, jobs) read the internals of the figures and analyses they drive;
#: the rest are the places where one package still builds on another's internals.
PRIVATE_IMPORTS = {
    ("__main__", "optaccept.cli._main"),
    ("cli", "optaccept.audit._core"),
    ("cli", "optaccept.jobs._main"),
    ("cli", "optaccept.llm._models"),
    ("cli", "optaccept.llm._prompts"),
    ("cli", "optaccept.plots._style"),
    ("cli", "optaccept.polyhedra._cone"),
    ("cli", "optaccept.sequence._batch"),
    ("cli", "optaccept.tree._best"),
    ("cli", "optaccept.tree._profile"),
    ("cli", "optaccept.tree._shape"),
    ("jobs", "optaccept.llm._extract"),
    ("jobs", "optaccept.plots._llm"),
    ("jobs", "optaccept.plots._sequence"),
    ("jobs", "optaccept.plots._style"),
    ("jobs", "optaccept.polyhedra._claims"),
    ("jobs", "optaccept.real._tables"),
    ("jobs", "optaccept.sequence._batch"),
    ("jobs", "optaccept.tree._budget"),
    ("jobs", "optaccept.tree._draft"),
    ("jobs", "optaccept.tree._models"),
    ("jobs", "optaccept.tree._verifiers"),
    # the figures read the tables' and curves' own style tables
    ("plots", "optaccept.real._tables"),
    ("plots", "optaccept.sequence._batch"),
    ("plots", "optaccept.tree._budget"),
    # per-tree values and the tree's model protocol, shared by the audits and the stored trees
    ("audit", "optaccept.tree._draft"),
    ("audit", "optaccept.tree._models"),
    ("audit", "optaccept.tree._sampling"),
    ("audit", "optaccept.tree._shaped_tree"),
    ("audit", "optaccept.verifiers._target_only"),
    ("llm", "optaccept.real._storage"),
    ("llm", "optaccept.tree._draft"),
    ("llm", "optaccept.tree._models"),  # Warp runs with_sampling's filters on torch logits
    ("llm", "optaccept.verifiers._batched"),
    ("real", "optaccept.sequence._batch"),
    ("real", "optaccept.tree._batched_verifiers"),
    ("real", "optaccept.tree._checks"),
    ("real", "optaccept.tree._draft"),
    ("real", "optaccept.tree._models"),
    ("testing", "optaccept.audit._core"),
    # the solvers integrate the without-replacement law's own mathematics
    ("optimal", "optaccept.drafts._swor"),
    ("verifiers", "optaccept.optimal._batched"),
    ("verifiers", "optaccept.optimal._flow"),
}


def _modules():
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = parts[:-1] if is_package else parts
        yield path, module, (module if is_package else module[:-1])


def _private_imports() -> set[tuple[str, str]]:
    """(importing top-level package, private module of another package) for every import."""
    found = set()
    for path, module, package in _modules():
        top = module[1] if len(module) > 1 else module[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                full = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            else:
                full = (node.module or "").split(".")
            if full[0] != "optaccept" or len(full) < 2 or full[1] == top or full[1].startswith("_"):
                continue
            folder = ROOT.joinpath(*full)
            submodules = [
                a.name for a in node.names if (folder / a.name).is_dir() or (folder / f"{a.name}.py").is_file()
            ]
            targets = [full] + [full + [name] for name in submodules]
            for target in targets:
                if any(part.startswith("_") for part in target[2:]):
                    found.add((top, ".".join(target)))
    return found


def test_no_import_by_name_outside_the_lazy_helper():
    """A string import is invisible to the import contracts: only ``optaccept._lib.lazy`` (the
    faces' lazy names) may import by name."""
    bad = []
    for path, _, _ in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            called = None
            if isinstance(node, ast.Call):
                f = node.func
                called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if called in ("import_module", "__import__") and path != PACKAGE / "_lib" / "lazy.py":
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, f"import by name outside optaccept._lib.lazy: {bad}"


def test_lazy_names_are_modules_of_their_own_package():
    """Each face's table of lazy names points into the face's own package, so the lazy loading
    adds no edge the layers contract does not already allow."""
    for name in PUBLIC:
        face = PACKAGE.joinpath(*name.split(".")[1:], "__init__.py")
        for node in ast.parse(face.read_text()).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_LAZY":
                for target in ast.literal_eval(node.value).values():
                    assert target.startswith("."), (name, target)


def test_private_imports_across_packages_are_the_listed_ones():
    found = _private_imports()
    assert found - PRIVATE_IMPORTS == set(), (
        f"new imports of another package's private module: {found - PRIVATE_IMPORTS}"
    )
    assert PRIVATE_IMPORTS - found == set(), f"listed but gone (remove from the list): {PRIVATE_IMPORTS - found}"


def test_the_package_root_holds_faces_errors_version_and_sub_packages():
    files = {p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py"}
    assert files == {"__init__.py", "__main__.py", "_errors.py", "_version.py"}


def _public_objects() -> dict[int, list[str]]:
    objects: dict[int, list[str]] = {}
    for name in PUBLIC:
        mod = importlib.import_module(name)
        for attr in mod.__all__:
            obj = getattr(mod, attr)
            if inspect.ismodule(obj) or attr == "__version__":
                continue
            objects.setdefault(id(obj), []).append(f"{name}.{attr}")
    return objects


def test_public_surface_is_small_and_each_name_names_one_thing():
    objects = _public_objects()
    assert len(objects) <= MAX_PUBLIC_OBJECTS, len(objects)
    # one name per thing: an object exported twice is re-exported under the same name
    for names in objects.values():
        assert len({n.rsplit(".", 1)[1] for n in names}) == 1, names
    # and one thing per name: a name means the same object in every namespace that exports it
    by_name: dict[str, set[int]] = {}
    for key, names in objects.items():
        for n in names:
            by_name.setdefault(n.rsplit(".", 1)[1], set()).add(key)
    assert {n: k for n, k in by_name.items() if len(k) > 1} == {}


@pytest.mark.parametrize("name", PUBLIC + APPLICATIONS)
def test_faces_export_exactly_their_all(name):
    """A face shows its ``__all__`` and nothing else: no helper, constant or ``annotations``
    imported for its own use (sub-modules aside)."""
    mod = importlib.import_module(name)
    listed = set(mod.__all__)
    assert all(hasattr(mod, n) for n in listed)
    face = PACKAGE.joinpath(*name.split(".")[1:], "__init__.py")
    bound = set()
    for node in ast.parse(face.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    leaked = {n for n in bound if not n.startswith("_") and not inspect.ismodule(getattr(mod, n, None))} - listed
    assert leaked == set(), f"{name} binds names it does not list in __all__: {sorted(leaked)}"
