"""The command line's argument types and shared options: a parser whose errors are one
``optaccept: error:`` line, range-checked argparse types, the ``--target``/``--draft`` pair."""

from __future__ import annotations

import argparse
import re
from typing import Any

from .._errors import InputError
from .._lib.io import VECTOR_HELP, load_vector
from .._lib.validation import as_distribution_pair

__all__ = [
    "Parser",
    "positive_int",
    "nonnegative_int",
    "positive_float",
    "add_vector_options",
    "load_pair",
    "plain_text",
]


class _UsageError(Exception):
    """A command-line parsing error, reported as one line."""


#: reST markup of docstrings reused as help: roles (:func:`x`, :class:`~a.b`) and literals (``x``)
_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|obj|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """``text`` without reST markup, as help prints it: :func:`a.b` -> a.b, ``x`` -> x."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


class _Formatter(argparse.HelpFormatter):
    """Adds ``(default: X)`` to every option's help that has a meaningful default, and prints
    descriptions and help without reST markup (some reuse docstrings)."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain_text(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return plain_text(super()._expand_help(action))

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return text
        d = action.default
        shown = " ".join(map(str, d)) if isinstance(d, (list, tuple)) else str(d)
        return f"{text} (default: {shown.replace('%', '%%')})"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors become one ``optaccept: error:`` line (exit 2)
    and whose help shows every default.  Sub-parsers inherit both."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        where = self.prog.removeprefix("optaccept").strip()
        raise _UsageError(f"{where}: {message}" if where else message)


def _typed(kind: type, lo: float, strict: bool, what: str):
    def convert(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if v < lo or (strict and v == lo):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return v

    convert.__name__ = what
    return convert


#: argparse types that refuse out-of-range values at parse time (before any work).
positive_int = _typed(int, 1, False, "an integer >= 1")
nonnegative_int = _typed(int, 0, False, "an integer >= 0")
positive_float = _typed(float, 0.0, True, "a number > 0")


def add_vector_options(parser: argparse.ArgumentParser, *, aliases: bool = False) -> None:
    """``--target``, ``--draft`` and ``--normalize``, the same for every sub-command."""
    t = ("--target", "--p") if aliases else ("--target",)
    d = ("--draft", "--q") if aliases else ("--draft",)
    parser.add_argument(*t, dest="target", required=True, metavar="P", help=f"target distribution p: {VECTOR_HELP}")
    parser.add_argument(*d, dest="draft", required=True, metavar="Q", help=f"draft distribution q: {VECTOR_HELP}")
    parser.add_argument(
        "--normalize", action="store_true", help="rescale vectors that do not sum to 1 (default: refuse them)"
    )


def load_pair(args: argparse.Namespace) -> tuple[Any, Any]:
    """Read ``--target`` and ``--draft`` and clean them as a pair (lengths first)."""
    for option, text in (("--target", args.target), ("--draft", args.draft)):
        if not str(text).strip():  # not "." (the folder an empty path resolves to)
            raise InputError(f"{option}: is empty; give a file or a comma-separated list of numbers")
    p = load_vector(args.target, "--target")
    q = load_vector(args.draft, "--draft")
    return as_distribution_pair(p, q, normalize=args.normalize, names=("--target", "--draft"))
