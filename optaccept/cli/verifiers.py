"""Command line: ``optaccept gap --target P --draft Q -k 2 3 4``.

Cells whose exact acceptance is refused at this size are printed as ``refused [i]`` with
the one-line reasons below the table (``why`` in ``--json``); the command itself exits 0.
"""

from __future__ import annotations

import argparse
import json

from .._errors import InputError
from ._args import add_vector_options, load_pair, positive_int

__all__ = ["register"]


def _gap(args: argparse.Namespace) -> int:
    from ..verifiers import ALL, gap_table

    names = {v.name: v for v in ALL}
    if args.verifiers:
        bad = [n for n in args.verifiers if n not in names]
        if bad:
            raise InputError(f"--verifiers: unknown {', '.join(bad)}; choose from {', '.join(sorted(names))}")
        vs = [names[n] for n in args.verifiers]
    else:
        vs = ALL
    p, q = load_pair(args)
    try:
        table = gap_table(p, q, args.k, verifiers=vs, progress=None if not args.quiet else False)
    except MemoryError:
        raise InputError(
            f"gap: out of memory on {p.size:,} tokens at -k {' '.join(map(str, args.k))}; "
            "use fewer -k values or --verifiers without the costly ones"
        ) from None
    if args.json:
        print(json.dumps(table.to_dict(), indent=2))
    elif args.markdown:
        print(table.to_markdown())
    else:
        print(table)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``gap`` sub-command."""

    g = subparsers.add_parser("gap", help="each verifier's exact acceptance beside α* of its draft law")
    add_vector_options(g)
    g.add_argument("-k", type=positive_int, nargs="+", default=[2, 3, 4], help="numbers of drafts")
    g.add_argument("--verifiers", nargs="+", metavar="NAME", help="verifier names (default: all)")
    g.add_argument("--quiet", action="store_true", help="no progress bar (default: a bar on a terminal)")
    fmt = g.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the table as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    g.set_defaults(func=_gap)
