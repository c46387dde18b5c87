"""The import contract: optaccept's layers (pyproject.toml, [tool.importlinter]) hold, counting
function-level imports, so that no import cycle can hide inside a function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


#: Optional or costly dependencies that the package imports inside functions, so that
#: ``import optaccept`` and the command line start without them.
HEAVY = {
    "torch", "transformers", "cvxpy", "cdd", "sympy", "matplotlib", "tqdm", "scipy", "pandas",
    "numba", "highspy", "joblib", "huggingface_hub", "dask", "ray", "IPython",
}  # fmt: skip


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _home(package: str, name: str) -> str:
    """The module that defines ``package.name`` (a package may load a name lazily from a
    module with heavy dependencies: the name's home, not the package, is what is loaded)."""
    import importlib

    try:
        obj = getattr(importlib.import_module(package), name)
    except Exception:  # an optional dependency is missing: the name is heavy
        return "torch"
    home = getattr(obj, "__module__", None) or getattr(obj, "__name__", None) or package
    return home if home.startswith("optaccept") else package


def _function_level_imports():
    """Every import statement of the package, with whether it sits inside a function and
    inside a ``try`` (an optional dependency), and the modules it loads."""
    import ast

    files = {_module_name(f): f for f in (ROOT / "optaccept").rglob("*.py")}
    rows = []

    def loads(mod: str, node) -> tuple[set[str], set[str]]:
        internal, external = set(), set()
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif node.level:
            base = mod.split(".") if files[mod].name == "__init__.py" else mod.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            full = ".".join(base + ([node.module] if node.module else []))
            names = [full] + [f"{full}.{a.name}" for a in node.names]
        else:
            full = node.module
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        if isinstance(node, ast.ImportFrom) and full.startswith("optaccept"):
            names += [_home(full, a.name) for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] != "optaccept":
                external.add(parts[0])
                continue
            internal |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & files.keys()
        return internal, external

    for mod, path in files.items():
        tree = ast.parse(path.read_text())

        def walk(node, in_fn: bool, in_try: bool, mod=mod) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    rows.append((mod, child.lineno, in_fn, in_try, *loads(mod, child)))
                fn = in_fn or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                walk(child, fn, in_try or (fn and isinstance(child, ast.Try)), mod)

        walk(tree, False, False)
    return rows


def test_imports_inside_functions_only_defer_heavy_dependencies():
    """Imports of optaccept's own modules sit at module level; an import inside a function
    defers a heavy dependency — one of :data:`HEAVY`, or a module of the package that loads
    one at its top level that the importing module does not already load — or is an
    optional import inside ``try``.  The command line (``optaccept.cli``) also loads each
    analysis package only when one of its sub-commands runs, so that ``optaccept --help`` and
    every other command start fast."""
    rows = _function_level_imports()
    top_internal: dict[str, set[str]] = {}
    top_heavy: dict[str, set[str]] = {}
    for mod, _, in_fn, _, internal, external in rows:
        top_internal.setdefault(mod, set())
        top_heavy.setdefault(mod, set())
        if not in_fn:
            top_internal[mod] |= internal - {mod}
            top_heavy[mod] |= external & HEAVY

    def heavy(mod: str) -> set[str]:
        """The heavy modules that importing ``mod`` loads: those of every module it reaches
        through top-level imports (its parent packages included)."""
        reach, todo = set(), [mod]
        while todo:
            m = todo.pop()
            if m in reach:
                continue
            reach.add(m)
            parents = {".".join(m.split(".")[:i]) for i in range(1, m.count(".") + 1)}
            todo += list((top_internal.get(m, set()) | parents) - reach)
        return set().union(*(top_heavy.get(m, set()) for m in reach))

    bad = []
    for mod, line, in_fn, in_try, internal, external in rows:
        if not in_fn or in_try or external & HEAVY:
            continue
        if mod.startswith("optaccept.cli") and any(
            m.count(".") >= 1 and not m.split(".")[1].startswith("_") for m in internal
        ):
            continue  # the command line loads an analysis package only when its sub-command runs
        if internal and set().union(*(heavy(m) for m in internal)) - heavy(mod):
            continue
        bad.append(f"{mod}:{line}")
    assert not bad, "imports inside functions that defer nothing heavy (move them to the top): " + ", ".join(bad)


def test_command_line_and_jobs_start_without_torch():
    """torch is the llm extra's: the command line (help included) and the jobs' modules load
    without it, whatever the import style of the modules above the models."""
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import optaccept.cli._main as m, optaccept.jobs.core, optaccept.jobs.trees, optaccept.jobs.engines\n"
        "import optaccept.jobs.verifiers, optaccept.jobs.sequence, optaccept.cli.audit, optaccept.cli.tree\n"
        "try:\n"
        "    m.main(['--help'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print('torch' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "False"


def test_every_module_of_the_package_sits_on_a_floor():
    """Each sub-package and each foundation module is named in the layers contract, so that a
    new module cannot sit outside the floors."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in config if c["type"] == "layers")["layers"]
    named = {m.strip() for line in layers for m in line.split("|")}
    top = {
        f"optaccept.{p.stem if p.is_file() else p.name}"
        for p in (ROOT / "optaccept").iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p / "__init__.py").is_file()
    }
    assert top - named == set(), f"not on any floor of pyproject.toml's layers: {sorted(top - named)}"


def test_package_faces_only_re_export():
    """Every ``__init__.py`` is a face: imports, ``__all__``, and the tables of lazily loaded
    and moved names that ``optaccept._lib.lazy`` turns into ``__getattr__`` — no function, class or
    computation."""
    import ast

    bad = []
    for path in (ROOT / "optaccept").rglob("__init__.py"):
        if any(part.startswith("_") for part in path.relative_to(ROOT).parts[:-1]):
            continue  # a private package (optaccept._lib, drafts._swor) is an implementation
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name == "__all__" or (name in ("_LAZY", "_MOVED") and isinstance(node.value, ast.Dict)):
                    continue
                if name in ("__getattr__", "__dir__") and isinstance(node.value, (ast.Call, ast.Subscript, ast.Name)):
                    continue
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, f"logic in a package face: {bad}"
