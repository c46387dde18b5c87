"""Names that moved keep working from their old homes for one release, each use warning with
a DeprecationWarning that names the new home; names loaded on first use stay silent; and the
project itself (its modules and its main job) uses only the new homes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import optaccept
from optaccept import MissingDependencyError, llm, real, tree, verifiers
from optaccept._lib.lazy import listed_names, moved_names

# (old home, old name, new home, new name), written here from the documented moves
# (README, Layout), not read from the tables under test.
MOVES = [
    ("optaccept.llm", "Distributions", "optaccept.real", "Distributions"),
    ("optaccept.llm", "sample_path", "optaccept.real", "sample_path"),
    ("optaccept.llm", "DraftTrees", "optaccept.real", "DraftTrees"),
    ("optaccept.llm", "StoredModel", "optaccept.real", "StoredModel"),
    ("optaccept.llm", "trees_path", "optaccept.real", "trees_path"),
    ("optaccept.llm", "realised_optimal", "optaccept.real", "realised_optimal"),
    ("optaccept.llm", "RealisedTable", "optaccept.real", "RealisedTable"),
    ("optaccept.llm", "batched_optimal_acceptance", "optaccept", "batched_optimal_acceptance"),
    ("optaccept.llm", "batched_verifier_acceptance", "optaccept.verifiers", "batched_acceptance"),
    ("optaccept.tree", "tree_table", "optaccept.real", "tree_table"),
    ("optaccept.tree", "TreeTable", "optaccept.real", "TreeTable"),
]
HOMES = {"optaccept": optaccept, "optaccept.llm": llm, "optaccept.tree": tree, "optaccept.real": real}
HOMES["optaccept.verifiers"] = verifiers


@pytest.mark.parametrize(("old", "name", "new", "new_name"), MOVES, ids=[f"{m[0]}.{m[1]}" for m in MOVES])
def test_each_moved_name_warns_with_its_new_home_and_is_the_new_object(old, name, new, new_name):
    expected = f"{old}.{name} moved to {new}.{new_name}; the old name will be removed in the next release"
    with pytest.warns(DeprecationWarning) as record:
        value = getattr(HOMES[old], name)
    assert [str(w.message) for w in record] == [expected]
    assert record[0].filename == __file__  # the caller's line, not the package's
    assert value is getattr(HOMES[new], new_name)


def test_a_moved_name_warns_at_every_use_and_from_imports_warn_too():
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="optaccept.real.DraftTrees"):
            llm.DraftTrees  # noqa: B018
    with pytest.warns(DeprecationWarning, match="optaccept.real.tree_table"):
        from optaccept.tree import tree_table  # noqa: F401
    assert "DraftTrees" not in vars(llm) and "tree_table" not in vars(tree)


def test_moved_names_are_out_of_all_and_dir():
    moved_from = {"optaccept.llm": llm, "optaccept.tree": tree}
    for old, name, _, _ in MOVES:
        module = moved_from[old]
        assert name not in module.__all__
        assert name not in dir(module)


def test_lazy_names_are_silent_listed_and_unknown_names_raise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callable(llm.gap_table) and callable(optaccept.canonical_decomposition)
        assert optaccept.real is real
    assert {"gap_table", "ModelPair", "extract"} <= set(dir(llm))
    assert {"verifiers", "real", "tree", "llm", "gap_table"} <= set(dir(optaccept))
    for module in (optaccept, llm, tree):
        with pytest.raises(AttributeError, match=rf"module '{module.__name__}' has no attribute 'no_such_name'"):
            module.no_such_name  # noqa: B018


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throwaway package ``movedpkg`` with a module that imports fine and two that fail."""
    root = tmp_path / "movedpkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "_here.py").write_text("VALUE = object()\n")
    (root / "_heavy.py").write_text("import torch_that_is_not_installed_anywhere\n")
    (root / "_broken.py").write_text("import movedpkg._no_such_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import movedpkg

    yield movedpkg
    for name in [m for m in sys.modules if m == "movedpkg" or m.startswith("movedpkg.")]:
        del sys.modules[name]


def test_the_helper_on_a_package_of_its_own(package, monkeypatch):
    from movedpkg import _here

    getattr_ = moved_names(
        "movedpkg",
        {"Old": "._here:VALUE", "old_module": "movedpkg._here"},
        lazy={"value": "._here:VALUE", "here": "._here", "heavy": "._heavy:X", "broken": "._broken:X"},
        install="movedpkg[extra]",
    )
    with pytest.warns(DeprecationWarning, match=r"^movedpkg\.Old moved to movedpkg\._here\.VALUE; "):
        assert getattr_("Old") is _here.VALUE
    with pytest.warns(DeprecationWarning, match=r"^movedpkg\.old_module moved to movedpkg\._here; "):
        assert getattr_("old_module") is _here
    assert "Old" not in vars(package)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr_("value") is _here.VALUE and getattr_("here") is _here
    assert vars(package)["value"] is _here.VALUE  # cached: the next lookup never reaches __getattr__
    # a missing optional dependency is named, with the install step; the helper's list of
    # optional dependencies is what decides, so make this one count as optional
    monkeypatch.setattr("optaccept._lib.lazy._OPTIONAL", ("torch_that_is_not_installed_anywhere",))
    with pytest.raises(MissingDependencyError, match=r"movedpkg\.heavy needs torch_that_is_not_installed_anywhere: "):
        getattr_("heavy")
    # any other import failure is the package's own bug: it propagates unchanged
    with pytest.raises(ModuleNotFoundError, match="_no_such_module") as info:
        getattr_("broken")
    assert not isinstance(info.value, MissingDependencyError)
    with pytest.raises(AttributeError, match="'movedpkg' has no attribute 'nothing'"):
        getattr_("nothing")
    dir_ = listed_names("movedpkg", ["lazy_one"], ("lazy_two",))
    assert dir_() == sorted(dir_()) and {"lazy_one", "lazy_two", "value"} <= set(dir_())


def test_without_an_install_step_a_missing_dependency_is_the_plain_import_error(package, monkeypatch):
    monkeypatch.setattr("optaccept._lib.lazy._OPTIONAL", ("torch_that_is_not_installed_anywhere",))
    getattr_ = moved_names("movedpkg", lazy={"heavy": "._heavy:X"})
    with pytest.raises(ModuleNotFoundError) as info:
        getattr_("heavy")
    assert not isinstance(info.value, MissingDependencyError)


def test_llm_names_that_need_torch_say_how_to_install_it():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        from optaccept import MissingDependencyError, llm
        try:
            llm.ModelPair
        except MissingDependencyError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "optaccept.llm.ModelPair needs torch: pip install 'optaccept[llm]'"


def test_the_project_uses_only_the_new_homes(tmp_path):
    """Every module of the package imports, and a small run of the main job's tree part (stored
    trees, their table and figure, the stored budget laws, the shipped distributions) goes
    through, without a moved name's DeprecationWarning."""
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys, warnings
        from pathlib import Path
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            import optaccept
            failed = []
            for info in pkgutil.walk_packages(optaccept.__path__, "optaccept."):
                if info.name.endswith("__main__"):  # runs the command
                    continue
                try:
                    importlib.import_module(info.name)
                except ImportError as exc:  # an optional dependency absent here (pycddlib, torch, ...)
                    failed.append(f"{info.name}: {exc}")
            from optaccept import real
            from optaccept.jobs import sequence, trees
            files = {d: real.DraftTrees.load(real.trees_path(d)).select(slice(0, 4)) for d in ("iid", "swor")}
            trees.accepted_tokens_report(files, Path(sys.argv[1]) / "t", "four trees", progress=False)
            trees.stored_budget_models()
            assert sequence._llm_pair() is not None
        moved = [f"{w.filename}:{w.lineno}: {w.message}" for w in seen
                 if issubclass(w.category, DeprecationWarning) and " moved to optaccept" in str(w.message)]
        print("\\n".join(moved) or "none")
        print("\\n".join(failed), file=sys.stderr)
        """
    )
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "none", run.stdout
    assert (tmp_path / "t.md").stat().st_size > 0
