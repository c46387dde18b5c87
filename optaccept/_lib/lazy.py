"""Names a package loads on first use, and names that moved to another home.

A package's ``__init__`` states its tables and gets its ``__getattr__`` (PEP 562) from
:func:`moved_names`, and its ``__dir__`` from :func:`listed_names`, so that no ``__init__``
holds the logic:

>>> __getattr__ = moved_names("optaccept.llm", {"Distributions": "optaccept.real:Distributions"})

Every target is written ``"module:name"`` (the object ``name`` of ``module``) or
``"module"`` (the module itself); a module starting with a dot is relative to the package.

* a **moved** name resolves to its new home and warns with a :class:`DeprecationWarning`
  naming that home, at each use (it is not cached, so every caller learns);
* a **lazy** name resolves silently and is cached in the package, so that importing the
  package does not import what it needs (a heavy dependency, or a slow sub-package).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._errors import MissingDependencyError

__all__ = ["moved_names", "listed_names", "resolve"]

#: Optional dependencies whose absence a lazy name reports as MissingDependencyError.
_OPTIONAL = ("torch", "transformers", "tokenizers", "safetensors", "gguf", "accelerate", "huggingface_hub")


def resolve(target: str, package: str) -> Any:
    """The object a table's target names.

    Parameters
    ----------
    target : str
        ``"module:name"`` or ``"module"``; a leading dot makes ``module`` relative to
        ``package``.
    package : str
        The package the table belongs to (its ``__name__``).

    Returns
    -------
    object
        The named object, or the module itself when ``target`` has no ``":"``.
    """
    module, _, name = target.partition(":")
    loaded = importlib.import_module(module, package if module.startswith(".") else None)
    return getattr(loaded, name) if name else loaded


def _public(target: str, package: str) -> str:
    """How a target reads in a message: ``optaccept.real.Distributions``."""
    module, _, name = target.partition(":")
    if module.startswith("."):
        module = importlib.util.resolve_name(module, package)
    return f"{module}.{name}" if name else module


def moved_names(
    package: str,
    moved: Mapping[str, str] | None = None,
    *,
    lazy: Mapping[str, str] | None = None,
    install: str | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for names that moved and names loaded on use.

    Parameters
    ----------
    package : str
        The package's ``__name__``, as in ``moved_names(__name__, {...})``.
    moved : mapping of str to str, optional
        Old name -> its new home ``"module:name"``.  Each use warns
        ``"<package>.<old> moved to <module>.<name>; the old name will be removed in the next
        release"`` (:class:`DeprecationWarning`, pointing at the caller's line).
    lazy : mapping of str to str, optional
        Name -> ``"module:name"`` or ``"module"``, imported on first use, without a warning,
        and cached in the package.  A name in both tables is a moved one.
    install : str, optional
        The install step of the package's optional dependencies (``"optaccept[llm]"``): a lazy
        name whose module fails to import for want of one of them (torch, transformers, ...)
        raises :class:`~optaccept.MissingDependencyError` naming the name, the dependency and
        this step.

    Returns
    -------
    callable
        ``__getattr__(name)``; a name in neither table raises :class:`AttributeError`.
    """
    moved = dict(moved or {})
    lazy = dict(lazy or {})

    def __getattr__(name: str) -> Any:
        if name in moved:
            target = moved[name]
            warnings.warn(
                f"{package}.{name} moved to {_public(target, package)}; the old name will be removed in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return resolve(target, package)
        if name in lazy:
            try:
                value = resolve(lazy[name], package)
            except ImportError as exc:
                missing = (exc.name or "").partition(".")[0]
                if install is None or missing not in _OPTIONAL:
                    raise
                raise MissingDependencyError(f"{package}.{name} needs {missing}: pip install '{install}'") from exc
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    __getattr__.__qualname__ = f"{package}.__getattr__"
    return __getattr__


def listed_names(package: str, *names: Iterable[str]) -> Callable[[], list[str]]:
    """A module ``__dir__``: the package's own names and the given ones (its lazy names).

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    *names : iterable of str
        Further names to list (moved names are better left out: they are on their way out).

    Returns
    -------
    callable
        ``__dir__()``, the sorted names.
    """
    extra = {name for group in names for name in group}

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | extra)

    return __dir__
