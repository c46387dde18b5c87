"""Names a package loads on first use: the one place of optaccept that imports by name.

A package's ``__init__`` states its table of lazy names and gets its ``__getattr__`` (PEP 562)
from :func:`lazy_names` and its ``__dir__`` from :func:`listed_names`, so that no ``__init__``
holds logic:

>>> __getattr__ = lazy_names("optaccept.llm", {"extract": "._extract:extract"})

A target is written ``"module:name"`` (the object ``name`` of ``module``) or ``"module"`` (the
module itself); a module starting with a dot is relative to the package.  A lazy name resolves
silently on first use and is cached in the package, so that importing the package does not
import what the name needs (a heavy dependency, or a slow sub-package).  The house test
``tests/house/test_layers.py`` checks that every target is a module the layers contract allows
the package to import.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._errors import MissingDependencyError

__all__ = ["lazy_names", "listed_names", "resolve"]

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


def lazy_names(package: str, lazy: Mapping[str, str], *, install: str | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for names loaded on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``, as in ``lazy_names(__name__, {...})``.
    lazy : mapping of str to str
        Name -> ``"module:name"`` or ``"module"``, imported on first use and cached in the
        package.
    install : str, optional
        The install step of the package's optional dependencies (``"optaccept[llm]"``): a lazy
        name whose module fails to import for want of one of them (torch, transformers, ...)
        raises :class:`~optaccept.MissingDependencyError` naming the name, the dependency and
        this step.

    Returns
    -------
    callable
        ``__getattr__(name)``; a name not in the table raises :class:`AttributeError`.
    """
    lazy = dict(lazy)

    def __getattr__(name: str) -> Any:
        if name not in lazy:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            value = resolve(lazy[name], package)
        except ImportError as exc:
            missing = (exc.name or "").partition(".")[0]
            if install is None or missing not in _OPTIONAL:
                raise
            raise MissingDependencyError(f"{package}.{name} needs {missing}: pip install '{install}'") from exc
        setattr(sys.modules[package], name, value)
        return value

    __getattr__.__qualname__ = f"{package}.__getattr__"
    return __getattr__


def listed_names(package: str, *names: Iterable[str]) -> Callable[[], list[str]]:
    """A module ``__dir__``: the package's own names and the given ones (its lazy names).

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    *names : iterable of str
        Further names to list.

    Returns
    -------
    callable
        ``__dir__()``, the sorted names.
    """
    extra = {name for group in names for name in group}

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | extra)

    return __dir__
