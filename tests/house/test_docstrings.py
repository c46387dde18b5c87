"""Numpy-style docstrings on the public API: every public function and public method reachable
from a package's ``__all__`` documents its arguments under a ``Parameters`` section and its
result under a ``Returns`` (or ``Yields``) section, each header with its dashed underline; a
class whose ``__init__`` takes arguments documents them under ``Parameters`` or ``Attributes``.
An overriding method without a docstring of its own is read with its base's, as ``help()`` shows it."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap

import pytest

from optaccept import MissingDependencyError

#: Packages whose whole public API meets the rule.
PACKAGES = (
    "optaccept",
    "optaccept.drafts",
    "optaccept.optimal",
    "optaccept.verifiers",
    "optaccept.testing",
    "optaccept.plots",
    "optaccept.sequence",
    "optaccept.polyhedra",
    "optaccept.audit",
    "optaccept.tree",
    "optaccept.real",
    "optaccept.llm",
)


def has_section(doc: str | None, header: str) -> bool:
    """Whether ``doc`` holds ``header`` on its own line, underlined by as many dashes."""
    pattern = rf"^{header}\n-{{{len(header)}}}\s*$"
    return re.search(pattern, inspect.cleandoc(doc or ""), re.M) is not None


def arguments(func) -> list[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [name for name in sig.parameters if name not in ("self", "cls")]


def returns_something(func) -> bool:
    """From the return annotation, or (without one) from a ``return <value>`` in the source."""
    try:
        annotation = inspect.signature(func).return_annotation
    except (TypeError, ValueError):
        return False
    if annotation is inspect.Signature.empty:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        return any(isinstance(node, ast.Return) and node.value is not None for node in ast.walk(tree))
    return annotation not in (None, "None")


def missing_in_function(func) -> list[str]:
    doc = inspect.getdoc(func)  # a method without a docstring of its own shows its base's, as help() does
    missing = []
    if arguments(func) and not has_section(doc, "Parameters"):
        missing.append("Parameters")
    if returns_something(func) and not (has_section(doc, "Returns") or has_section(doc, "Yields")):
        missing.append("Returns")
    return missing


def public_callables(package: str):
    """(qualified name, object) for every public function, class and method of ``package``."""
    module = importlib.import_module(package)
    for name in module.__all__:
        try:
            obj = getattr(module, name)
        except MissingDependencyError:  # e.g. optaccept.llm without torch: checked where it is installed
            continue
        if inspect.ismodule(obj):
            continue
        if inspect.isclass(obj):
            if not obj.__module__.startswith("optaccept"):
                continue
            yield f"{package}.{name}", obj
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if inspect.isfunction(value):
                    yield f"{package}.{name}.{attr}", value
        elif inspect.isfunction(inspect.unwrap(obj)):
            yield f"{package}.{name}", inspect.unwrap(obj)


def missing_sections(package: str) -> list[str]:
    problems = []
    for qualname, obj in public_callables(package):
        if inspect.isclass(obj):
            init = obj.__init__
            if issubclass(obj, BaseException) or not getattr(init, "__module__", "").startswith("optaccept"):
                continue
            documented = has_section(obj.__doc__, "Parameters") or has_section(obj.__doc__, "Attributes")
            if arguments(init) and not documented:
                problems.append(f"{qualname}: Parameters or Attributes")
            continue
        missing = missing_in_function(obj)
        if missing:
            problems.append(f"{qualname}: {', '.join(missing)}")
    return problems


@pytest.mark.parametrize("package", PACKAGES)
def test_public_docstrings_have_numpy_sections(package):
    problems = missing_sections(package)
    assert not problems, f"{len(problems)} public callables lack sections:\n" + "\n".join(problems)


def test_the_check_finds_what_is_missing():
    def undocumented(x, y=1):
        """One line only."""
        return x + y

    def documented(x, y=1):
        """Add.

        Parameters
        ----------
        x, y : int
            The terms.

        Returns
        -------
        int
            Their sum.
        """
        return x + y

    def underline_too_short(x):
        """Add.

        Parameters
        ---
        x : int
        """

    assert missing_in_function(undocumented) == ["Parameters", "Returns"]
    assert missing_in_function(documented) == []
    assert missing_in_function(underline_too_short) == ["Parameters"]


def test_plot_functions_document_the_axes_they_return():
    import optaccept.plots as plots

    names = [name for name in plots.__all__ if name.startswith("plot_")]
    assert names
    for name in names:
        doc = inspect.getdoc(getattr(plots, name)) or ""
        assert "Returns\n-------" in doc, f"plots.{name}: no Returns section"
        section = doc.split("Returns\n-------", 1)[1].strip().split("\n\n", 1)[0]
        assert "matplotlib.axes.Axes" in section, f"plots.{name}: {section!r}"
