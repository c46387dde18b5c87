"""Command line: ``optaccept conjecture -n 3 -k 3 [--drafts iid|swor|independent] [--json]``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``conjecture`` sub-command to an ``argparse`` sub-parser collection."""
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
    from ._main import positive_int

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
    parser.add_argument("--json", action="store_true", help="print the certificate as JSON")
    parser.add_argument("--no-rays", action="store_true", help="leave the rays out of the JSON")
    parser.set_defaults(func=_handler)


def _handler(args: argparse.Namespace) -> int:
    import json

    from ..polyhedra._report import check_k_draft_condition

    rep = check_k_draft_condition(args.n, args.k, args.drafts, reduce=args.reduce)
    if args.json:
        print(json.dumps(rep.to_json(include_rays=not args.no_rays), indent=1))
    else:
        print(rep.summary())
        for e in rep.inequalities:
            print(f"  {e} >= 0")
        verdict = "holds" if rep.holds else "FAILS"
        print(f"The cone gives exactly p(S) >= D(set in S): {verdict}.")
    return 0 if rep.holds else 1
