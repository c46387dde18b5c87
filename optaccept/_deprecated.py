"""Old spellings of public arguments, kept working for one release with a ``DeprecationWarning``.

:func:`renamed` maps an old keyword to its new name; :func:`legacy` lets a function rewrite a
call written in an older signature (several old arguments folded into one object) before it
runs.  The wrapped function keeps its own signature (``inspect.signature`` follows
``__wrapped__``), so the old spellings appear nowhere in it.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

from ._errors import InputError

__all__ = ["renamed", "legacy", "warn_deprecated"]


def warn_deprecated(func: str, old: str, new: str, *, stacklevel: int | None = None) -> None:
    """Warn that ``old`` in a call of ``func`` is spelled ``new`` from this release on.

    Parameters
    ----------
    func : str
        The public function, as the caller names it (e.g. ``"tree.accepted_tokens"``).
    old : str
        The old spelling, e.g. ``"length="``.
    new : str
        The new spelling, e.g. ``"drafts=TreeDraftLaw(length=...)"``.
    stacklevel : int, optional
        Passed to :func:`warnings.warn`; by default the first frame outside the package (the
        user's call, however many of the package's wrappers stand between), so that Python's
        default filters show the warning where the old spelling is written.
    """
    warnings.warn(
        f"{func}: {old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=_outside_level() if stacklevel is None else stacklevel,
    )


#: The package's folder: frames from files below it are the package's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _outside_level() -> int:
    """``stacklevel`` (for a call of :func:`warnings.warn` in this module's caller's caller)
    of the first frame whose file is not below the package's folder."""
    frame = sys._getframe(2)  # the caller of warn_deprecated
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame = frame.f_back
        level += 1
    return level


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


def _alias(cls_name: str, old: str, new: str) -> property:
    def get(self: Any) -> Any:
        warnings.warn(
            f"{cls_name}.{old} is renamed {cls_name}.{new}; the old name will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(get, doc=f"Old name of ``{new}`` (warns; removed in the next release).")


def renamed_attributes(**old_to_new: str) -> Callable[[type], type]:
    """A class decorator that keeps old names working for one release.

    ``@renamed_attributes(se="std_err")`` makes ``obj.se`` return ``obj.std_err`` with a
    :class:`DeprecationWarning` naming the new name; on a dataclass whose field is the new
    name, the old constructor keyword is accepted with the same warning.  Put it above
    ``@dataclass``.

    Parameters
    ----------
    **old_to_new : str
        Old attribute name -> new attribute name.

    Returns
    -------
    callable
        The decorator (it returns the class, changed in place).
    """

    def decorate(cls: type) -> type:
        for old, new in old_to_new.items():
            setattr(cls, old, _alias(cls.__name__, old, new))
        names = {f.name for f in fields(cls)} if is_dataclass(cls) else set()
        keywords = {old: new for old, new in old_to_new.items() if new in names}
        if keywords:
            init = cls.__init__

            @functools.wraps(init)
            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                for old, new in keywords.items():
                    if old in kwargs:
                        warnings.warn(
                            f"{cls.__name__}({old}=...) is renamed {new}=...; the old keyword will be removed "
                            "in the next release",
                            DeprecationWarning,
                            stacklevel=2,
                        )
                        kwargs[new] = kwargs.pop(old)
                init(self, *args, **kwargs)

            cls.__init__ = __init__
        return cls

    return decorate
