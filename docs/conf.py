"""Sphinx configuration of the optaccept documentation site (``./run.sh docs``)."""

from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# the repository's package, not an installed copy; and docs/_api.py
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import _api  # noqa: E402

import optaccept  # noqa: E402

project = "optaccept"
author = "the optaccept authors"
copyright = "the optaccept authors"  # noqa: A001
release = optaccept.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "experiments", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# The API pages are written from each namespace's __all__ (docs/_api.py) before reading.
_api.write_pages(DOCS)

# MyST: the theory pages write their mathematics in Unicode; the guide uses $…$ and $$…$$.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc, autosummary, numpydoc
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# optaccept.llm loads torch and transformers on use; mock them only where they are absent.
autodoc_mock_imports = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]


# The docstrings write mathematics in Unicode prose: |supp q|, |V|/|V'|, β_·(A).  In
# reStructuredText |x| is a substitution and β_ a reference, so before numpydoc reads a docstring
# (priority 400 < its 500) the bars and such underscores of its prose are escaped; inline
# literals and roles (``…``, :math:`…`), doctests, literal blocks and math directives are left.
_INLINE = re.compile(r"(``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_{0,2})|(\|)|(?<=\w)(_)(?=[^\w\s{(\[<`*])")
_LITERAL_DIRECTIVES = ("math", "code", "code-block", "sourcecode", "literalinclude", "plot")


def _escape_prose(text: str) -> str:
    return _INLINE.sub(lambda m: m.group(1) or "\\" + (m.group(2) or m.group(3)), text)


def escape_docstring(app, what, name, obj, options, lines):
    literal_at = None  # the indentation of the line that opened a literal context
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if literal_at is not None:
            if not stripped or indent > literal_at or (literal_at == -1 and stripped):
                if literal_at == -1 and not stripped:
                    literal_at = None
                continue
            literal_at = None
        if stripped.startswith(">>>"):
            literal_at = -1  # a doctest block: up to the next blank line
            continue
        directive = re.match(r"\.\. ([\w-]+)::", stripped)
        if directive and directive.group(1) in _LITERAL_DIRECTIVES:
            literal_at = indent
            continue
        if stripped.startswith(".. "):
            continue
        lines[i] = _escape_prose(line)
        if stripped.endswith("::"):
            literal_at = indent


# numpydoc warns (a Python warning, not Sphinx's) on a section it does not know: the verifiers'
# base class lists its methods under "Public Methods"; it is rendered as prose.
warnings.filterwarnings("ignore", message="Unknown section Public Methods", category=UserWarning)


def setup(app):
    app.connect("autodoc-process-docstring", escape_docstring, priority=400)


html_theme = "pydata_sphinx_theme"
html_title = f"optaccept {release}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
html_static_path: list[str] = []
