"""Old spellings of public arguments, kept working for one release with a ``DeprecationWarning``.

:func:`renamed` maps an old keyword to its new name; :func:`legacy` lets a function rewrite a
call written in an older signature (several old arguments folded into one object) before it
runs.  The wrapped function keeps its own signature (``inspect.signature`` follows
``__wrapped__``), so the old spellings appear nowhere in it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from ._errors import InputError

__all__ = ["renamed", "legacy", "warn_deprecated"]


def warn_deprecated(func: str, old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` in a call of ``func`` is spelled ``new`` from this release on.

    Parameters
    ----------
    func : str
        The public function, as the caller names it (e.g. ``"tree.accepted_tokens"``).
    old : str
        The old spelling, e.g. ``"length="``.
    new : str
        The new spelling, e.g. ``"drafts=TreeDraftLaw(length=...)"``.
    stacklevel : int
        Passed to :func:`warnings.warn` (3: the caller of the wrapped function).
    """
    warnings.warn(
        f"{func}: {old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed(func: str, **names: str) -> Callable[[Callable], Callable]:
    """Decorator: keyword ``old`` still works as ``new`` (``renamed("f", M="k")``), with a warning.

    Parameters
    ----------
    func : str
        The public name of the decorated function, for the messages.
    **names : str
        Old keyword -> new keyword.

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    InputError
        (From the wrapped call) when both the old and the new keyword are given.
    """

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in names.items():
                if old in kwargs:
                    if new in kwargs:
                        raise InputError(f"{old}: give {new}= only ({old}= is its deprecated spelling)")
                    warn_deprecated(func, f"{old}=", f"{new}=")
                    kwargs[new] = kwargs.pop(old)
            return f(*args, **kwargs)

        return wrapper

    return decorate


def legacy(rewrite: Callable[[tuple, dict], tuple[tuple, dict]]) -> Callable[[Callable], Callable]:
    """Decorator: ``rewrite(args, kwargs) -> (args, kwargs)`` turns a call in an old spelling
    into the new one (and warns, through :func:`warn_deprecated`) before the function runs.

    Parameters
    ----------
    rewrite : callable
        Given the positional and keyword arguments of the call; returns them rewritten
        (unchanged for a call in the new spelling).

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            args, kwargs = rewrite(args, kwargs)
            return f(*args, **kwargs)

        return wrapper

    return decorate
