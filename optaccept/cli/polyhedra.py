"""Command line: ``optaccept conjecture -n 3 -k 3 [--drafts iid|swor|independent] [--json]``.

An instance beyond the size limits of :func:`optaccept.polyhedra.check_k_draft_condition`
is refused at once with one ``optaccept: error:`` line (exit 2) naming the limit and the
largest accepted n and k; an accepted one shows progress bars on stderr (``--quiet``: none).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._errors import MethodError
from ._args import positive_float, positive_int

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``conjecture`` sub-command to an ``argparse`` sub-parser collection."""
    from ..polyhedra._cone import MAX_DD_SECONDS

    parser = subparsers.add_parser(
        "conjecture",
        help="exact double-description check of the K-draft condition p(S) >= D(set in S)",
        description=(
            "Compute every extreme ray of the Farkas cone of the 'alpha* = 1' transport "
            "system exactly (cddlib, GMP rationals), read each ray with the draft law "
            "substituted (sympy), and say whether the non-trivial inequalities are exactly "
            "p(S) >= D(set of drafts in S), one per nonempty proper S (Khisti et al., Remark 2)."
        ),
    )

    parser.add_argument("-n", type=positive_int, default=3, help="vocabulary size")
    parser.add_argument("-k", type=positive_int, default=3, help="number of drafts")
    parser.add_argument("--drafts", choices=("iid", "swor", "independent"), default="iid", help="draft law")
    cone = parser.add_mutually_exclusive_group()
    cone.add_argument(
        "--reduced",
        dest="reduce",
        action="store_true",
        default=None,
        help="use the symmetry-reduced set cone (default: chosen by size)",
    )
    cone.add_argument(
        "--full",
        dest="reduce",
        action="store_false",
        help="use the full cone over ordered draft tuples (default: chosen by size)",
    )

    parser.add_argument(
        "--max-seconds",
        type=positive_float,
        default=MAX_DD_SECONDS,
        metavar="S",
        help="largest estimated CPU time of the double description; larger instances are refused",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--json", action="store_true", help="print the certificate as JSON")
    parser.add_argument("--no-rays", action="store_true", help="leave the rays out of the JSON")
    parser.set_defaults(func=_handler)


def _handler(args: argparse.Namespace) -> int:
    from ..polyhedra import check_k_draft_condition

    try:
        rep = check_k_draft_condition(
            args.n,
            args.k,
            args.drafts,
            reduce=args.reduce,
            max_seconds=args.max_seconds,
            progress=False if args.quiet else None,
        )
    except MethodError as exc:  # the Python keywords of the advice, as this command's flags
        text = str(exc).replace("(max_seconds)", "(--max-seconds)").replace("(reduce=True)", "(--reduced)")
        raise MethodError(text) from None
    if args.json:
        print(json.dumps(rep.to_json(include_rays=not args.no_rays), indent=1))
    else:
        print(rep.summary())
        for e in rep.inequalities:
            print(f"  {e} >= 0")
        verdict = "holds" if rep.holds else "FAILS"
        print(f"The cone gives exactly p(S) >= D(set in S): {verdict}.")
    return 0 if rep.holds else 1
