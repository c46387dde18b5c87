"""The API reference pages, generated from each public namespace's ``__all__`` when the site
is built (``docs/conf.py`` calls :func:`write_pages`; ``tests/house/test_docs_site.py`` checks
:func:`pages`).

One page per public namespace.  A name is *documented* (an autosummary entry with a stub page)
in exactly one namespace, its *home*: the public namespace whose package holds the module that
defines it (``optaccept.IID`` lives in ``optaccept.drafts._iid``, so its home is
``optaccept.drafts``).  Every other namespace that re-exports it lists it in a table of
cross-references to that home.  A sub-package listed in ``optaccept.__all__`` links to its page.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import optaccept

#: The public namespaces, in the order of the reference: the package and the sub-packages its
#: ``__all__`` lists (the one list of them; ``tests/house/test_surface.py`` reads it too).
NAMESPACES = ("optaccept",) + tuple(
    f"optaccept.{name}" for name in optaccept.__all__ if inspect.ismodule(getattr(optaccept, name))
)

#: One line under each page's title.
BLURBS = {
    "optaccept": "The package's front door: the solver, its certificate, the draft laws and the errors.",
    "optaccept.drafts": "Draft laws: the joint law of the k drafted tokens.",
    "optaccept.optimal": "The optimal acceptance α*, its certificate, and the optimal verifier.",
    "optaccept.verifiers": "Practical verifiers, their exact acceptance and their gap to α*.",
    "optaccept.polyhedra": "The exact polyhedral check of the K-draft condition (when α* = 1).",
    "optaccept.sequence": "Sequence-level theory: rejections, batches, decoder losses, Pareto fronts.",
    "optaccept.tree": "Chains and trees of drafts: accepted tokens per step, best trees, budget curves.",
    "optaccept.real": "Distributions of real models: the built-in sample, draft trees and tables.",
    "optaccept.audit": "Audits of an engine's verifier, chain, tree or whole decoding loop.",
    "optaccept.testing": "Assertions for an engine's own test suite.",
    "optaccept.llm": "Distributions from language models (torch and transformers).",
    "optaccept.plots": "Figures and LaTeX tables for papers.",
}


def page_name(namespace: str) -> str:
    """The document name of a namespace's page, relative to ``docs/``."""
    return "api/" + namespace


def home(obj: object, found_in: list[str]) -> str:
    """The namespace that documents ``obj``: the deepest of ``found_in`` whose package holds the
    module that defines it, else the deepest of them."""
    module = getattr(obj, "__module__", None) or ""
    holders = [ns for ns in found_in if module == ns or module.startswith(ns + ".")]
    return max(holders or found_in, key=lambda ns: ns.count("."))


class _Missing:
    """A name whose object needs a missing optional dependency: listed where it is exported."""

    def __init__(self, name: str):
        self.name = name
        self.__module__ = ""

    def __call__(self):  # listed as a function (or as a class when capitalised)
        raise NotImplementedError


def surface() -> dict[str, list[tuple[str, object]]]:
    """``{namespace: [(name, object), ...]}`` in ``__all__`` order."""
    out = {}
    for ns in NAMESPACES:
        module = importlib.import_module(ns)
        entries = []
        for name in module.__all__:
            try:
                entries.append((name, getattr(module, name)))
            except ImportError:  # MissingDependencyError: optaccept.llm without torch (the build mocks it)
                entries.append((name, _Missing(name)))
        out[ns] = entries
    return out


def homes(names: dict[str, list[tuple[str, object]]]) -> dict[int, str]:
    """``{id(object): its home namespace}`` for every public object that is not a module."""
    found: dict[int, list[str]] = {}
    keep = []  # hold the objects, so that the ids stay theirs
    for ns, entries in names.items():
        for _, obj in entries:
            if inspect.ismodule(obj) or isinstance(obj, str | int | float | tuple | dict | list):
                continue  # data: documented where it is listed
            found.setdefault(id(obj), []).append(ns)
            keep.append(obj)
    return {key: home(next(o for o in keep if id(o) == key), nss) for key, nss in found.items()}


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def _section(text: str) -> str:
    return f"{text}\n{'-' * len(text)}\n"


def _kind(obj: object) -> str:
    if isinstance(obj, _Missing):
        return "classes" if obj.name[:1].isupper() else "functions"
    if inspect.isclass(obj):
        return "classes" if not issubclass(obj, BaseException) else "exceptions"
    if callable(obj):
        return "functions"
    return "data"


KINDS = (
    ("functions", "Functions"),
    ("classes", "Classes"),
    ("exceptions", "Exceptions and warnings"),
    ("data", "Constants"),
)


def pages() -> dict[str, str]:
    """``{document name: reStructuredText}`` for ``api/index`` and one page per namespace."""
    names = surface()
    owner = homes(names)
    docs = {}
    for ns, entries in names.items():
        documented: dict[str, list[str]] = {}
        elsewhere: list[tuple[str, str]] = []
        modules: list[str] = []
        for name, obj in entries:
            if inspect.ismodule(obj):
                modules.append(obj.__name__)
            elif id(obj) in owner and owner[id(obj)] != ns:
                elsewhere.append((name, owner[id(obj)]))
            else:
                documented.setdefault(_kind(obj), []).append(name)
        lines = [f".. _api-{ns}:\n", _title(f"``{ns}``"), BLURBS[ns] + "\n"]
        lines.append(f".. automodule:: {ns}\n   :no-members:\n")
        lines.append(f".. currentmodule:: {ns}\n")
        for kind, heading in KINDS:
            if kind not in documented:
                continue
            lines.append(_section(heading))
            lines.append(".. autosummary::\n   :toctree: generated\n   :nosignatures:\n")
            lines.extend(f"   {name}" for name in documented[kind])
            lines.append("")
        if elsewhere:
            lines.append(_section("Re-exported here"))
            lines.append(f"The same objects as in their own namespace, documented there (``{ns}.NAME``).\n")
            lines.extend(f"- :obj:`{ns}.{name} <{where}.{name}>` — see :mod:`{where}`" for name, where in elsewhere)
            lines.append("")
        if modules:
            lines.append(_section("Sub-packages"))
            lines.extend(f"- :mod:`{m}` — {BLURBS[m]}" for m in modules)
            lines.append("")
        docs[page_name(ns)] = "\n".join(lines) + "\n"
    index = [_title("API reference"), "One page per public namespace; each lists every name of its ``__all__``.\n"]
    index.append(".. toctree::\n   :maxdepth: 1\n")
    index.extend(f"   {ns} <{ns}>" for ns in NAMESPACES)
    docs["api/index"] = "\n".join(index) + "\n"
    return docs


def listed(text: str) -> set[str]:
    """The names a generated page lists, unqualified: its autosummary entries (documented here
    or cross-referenced to their home) and its sub-package links."""
    out = set()
    in_summary = False
    for line in text.splitlines():
        if line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and line.startswith("   ") and not line.strip().startswith(":"):
            out.add(line.strip().lstrip("~").rsplit(".", 1)[-1])
        elif in_summary and line.strip() and not line.startswith("   "):
            in_summary = False
        if line.startswith(("- :mod:`", "- :obj:`")):
            out.add(line.split("`")[1].split(" <")[0].rsplit(".", 1)[-1])
    return out


def write_pages(docs_dir: Path) -> list[Path]:
    """Write :func:`pages` under ``docs_dir`` (only files whose text changed, so that an
    incremental build stays incremental); returns the paths written."""
    written = []
    for name, text in pages().items():
        path = docs_dir / f"{name}.rst"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written
