"""Command line: ``optaccept gap --target F --draft F -k 2 3 4``."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def _gap(args: argparse.Namespace) -> int:
    import json

    from .._errors import InputError
    from .._io import load_vector
    from . import ALL, gap_table

    p = load_vector(args.target, "--target")
    q = load_vector(args.draft, "--draft")
    if p.size != q.size:
        raise InputError(f"--target and --draft: lengths differ ({p.size} vs {q.size})")
    names = {v.name: v for v in ALL}
    if args.verifiers:
        bad = [n for n in args.verifiers if n not in names]
        if bad:
            raise InputError(f"--verifiers: unknown {bad}; choose from {sorted(names)}")
        vs = [names[n] for n in args.verifiers]
    else:
        vs = ALL
    table = gap_table(p, q, args.k, verifiers=vs)
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
    g.add_argument("--target", required=True, help="target distribution p (.npy, .json or .txt)")
    g.add_argument("--draft", required=True, help="draft distribution q (.npy, .json or .txt)")
    g.add_argument("-k", type=int, nargs="+", default=[2, 3, 4], help="numbers of drafts (default 2 3 4)")
    g.add_argument("--verifiers", nargs="+", help="verifier names (default: all)")
    fmt = g.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the table as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    g.set_defaults(func=_gap)
