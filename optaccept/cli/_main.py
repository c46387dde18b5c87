"""Command line: ``optaccept alpha|gap|conjecture|sequence|extract|gap-table|tree|main``.

One contract for every sub-command:
* success exits 0 (``conjecture`` exits 1 when the checked condition fails);
* bad input of any kind — an unknown option, a bad value, a missing, unreadable,
  corrupt or wrong-kind file — prints one line ``optaccept: error: <message>`` on
  stderr and exits 2, before any model is loaded;
* a closed pipe (``optaccept alpha ... | head``) ends quietly;
* vectors are given the same way everywhere (``--target`` / ``--draft``: a .npy,
  .json or .txt/.csv file, or a comma-separated list) and ``--normalize`` rescales
  those that do not sum to 1 (see ``optaccept._lib.validation`` for the sum rule);
* ``optaccept --version`` prints the installed version.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .. import __version__
from .. import drafts as d
from .._errors import InputError, MissingDependencyError, RenormalizedWarning, SolverError, for_command_line
from . import audit, llm, polyhedra, sequence, tree, verifiers
from ._args import Parser, _UsageError, add_vector_options, load_pair, nonnegative_int, positive_float, positive_int

__all__ = ["main", "build_parser", "Parser", "positive_int", "nonnegative_int", "positive_float"]


_LAWS = tuple(d.LAWS)  # every registered draft law


def _alpha(args: argparse.Namespace) -> int:
    from ..optimal import optimal_acceptance, verify  # the command line loads an analysis when it runs

    if not d.LAWS[args.drafts].takes_k:  # a law that fixes k: SpecHub drafts exactly 2 tokens
        if args.k not in (None, 2):
            raise InputError(f"-k: SpecHub drafts exactly 2 tokens, got -k {args.k} (use --drafts iid, swor or greedy)")
        k = 2
    else:
        k = 2 if args.k is None else args.k
    p, q = load_pair(args)
    law = d.law_from_name(args.drafts, q, k, allowed=_LAWS)
    res = optimal_acceptance(p, law, args.method)
    check = verify(p, law, res)
    if args.json:
        out = res.to_dict()
        out["verification"] = {
            "dual_value": float(check.dual_value),
            "value_gap": float(check.value_gap),
            "duality_gap": check.duality_gap,
            "max_violation": check.max_violation,
            "lower_bound": None if check.lower_bound is None else float(check.lower_bound),
            "witness": check.witness,
            "ok": check.ok,
            "message": check.message,
        }
        print(json.dumps(out, indent=2))
    else:
        S = res.subset
        shown = ", ".join(map(str, S[:20])) + (f", ... ({len(S)} tokens)" if len(S) > 20 else "")
        print(f"alpha* = {float(res.value):.12f}")
        print(f"method = {res.method}   law = {law!r}")
        print(f"certificate S = {{{shown}}}   p(S) + 1 - D(set ⊆ S) = {float(res.upper_bound):.12f}")
        if res.lower_bound is not None:
            print(f"plan value (lower bound) = {res.lower_bound:.12f}   gap = {res.gap:.3g}")
        print(f"independent re-check: value gap {float(check.value_gap):.3g}  ok = {check.ok}")
        print(f"  {check.message}")
    return 0


def _main_job(args: argparse.Namespace) -> int:
    from ..jobs._main import PARTS, run_all

    unknown = [s for s in args.only or [] if s not in PARTS]
    if unknown:
        raise InputError(f"--only: unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    if args.figures is not None and os.path.isfile(args.figures):
        raise InputError(f"--figures: {args.figures} is a file, not a folder")
    return run_all(args.figures, quick=args.quick, only=args.only)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="optaccept",
        description="Optimal acceptance probability of (multi-draft) speculative decoding.",
    )
    parser.add_argument("--version", action="version", version=f"optaccept {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    a = sub.add_parser("alpha", help="α* of a target/draft pair, with its certificate")
    add_vector_options(a)
    a.add_argument("-k", type=positive_int, default=None, help="number of drafts (default: 2; SpecHub: 2 only)")
    a.add_argument("--drafts", choices=sorted(_LAWS), default="iid", help="draft law")
    a.add_argument(
        "--method",
        default="auto",
        choices=["auto", "transport", "lp", "subsets", "sorted", "closed_form"],
        help="solver (auto: sorted for these laws)",
    )
    a.add_argument("--json", action="store_true", help="print JSON instead of text")
    a.set_defaults(func=_alpha)
    from ..jobs._main import PARTS  # the main job's registry (light: no part is imported)

    j = sub.add_parser("main", help="regenerate the figures and tables (same as python -m optaccept.jobs)")
    j.add_argument(
        "--quick",
        action="store_true",
        help="smaller sizes, a minute or two, written to figures/local/quick/ (ignored by git)",
    )
    j.add_argument(
        "--figures", default=None, help="output folder (default figures/, or figures/local/quick/ with --quick)"
    )
    j.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="PART",
        help=f"run only these parts: {' '.join(PARTS)} (default: all)",
    )
    j.set_defaults(func=_main_job)
    # the sub-commands of each analysis (modules beside this one; their heavy imports are lazy)

    for mod in (verifiers, polyhedra, sequence, llm, audit, tree):
        mod.register(sub)
    return parser


def _fail(message: str) -> int:
    line = for_command_line(message.strip().splitlines()[0] if message.strip() else "failed")
    print(f"optaccept: error: {line}", file=sys.stderr)
    return 2


def _show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    text = for_command_line(str(message).splitlines()[0] if str(message) else category.__name__)
    print(f"optaccept: warning: {text}", file=sys.stderr)


def _quiet_broken_pipe() -> None:
    """The reader went away: send what is left to /dev/null (Python's own advice)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        return _fail(str(exc))
    if not getattr(args, "func", None):
        return _fail("no command given; 'optaccept --help' lists them")
    with warnings.catch_warnings():
        warnings.simplefilter("default", RenormalizedWarning)
        old_show = warnings.showwarning
        warnings.showwarning = _show_warning
        try:
            rc = args.func(args)
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
            return 0
        except KeyboardInterrupt:
            print("optaccept: interrupted", file=sys.stderr)
            return 130
        except (InputError, MissingDependencyError, SolverError) as exc:
            return _fail(str(exc) or type(exc).__name__)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            return _fail(f"{where}{exc.strerror or exc}")
        finally:
            warnings.showwarning = old_show
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
