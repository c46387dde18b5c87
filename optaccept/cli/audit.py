"""Command line: ``optaccept audit LOG.npz [--declared RULE] [--drafts iid|swor|greedy] [--json]``.

The log holds arrays ``P`` and ``Q`` (steps × vocabulary, float; float32 is fine), ``X``
(steps × k, int: the drafted tokens in draw order) and ``Y`` (steps, int: the emitted
tokens).  Exit status, as a test tool: 0 when the audit finds the implementation lossless,
1 when it does not, 2 on bad input.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``audit`` sub-command."""
    from ..audit._core import DECLARED, FALSE_ALARM

    parser = subparsers.add_parser(
        "audit",
        help="audit a logged verifier: lossless? acceptance against its rule and against alpha*",
        description=__doc__.split("\n\n", 1)[1].strip(),
    )
    parser.add_argument("log", help="a .npz file with arrays P, Q, X, Y")
    parser.add_argument("--declared", choices=DECLARED, default=None, help="the rule the implementation claims")
    parser.add_argument(
        "--drafts", choices=("iid", "swor", "greedy"), default="iid", help="the draft law X came from (for alpha*)"
    )
    parser.add_argument(
        "--false-alarm",
        type=float,
        default=FALSE_ALARM,
        help="false-alarm rate of the losslessness test (default: %(default)g)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_handler)


def _handler(args: argparse.Namespace) -> int:
    import zipfile

    import numpy as np

    from .._errors import InputError
    from ..audit import audit_log

    try:
        with np.load(args.log, allow_pickle=False) as f:
            arrays = {a: f[a] for a in ("P", "Q", "X", "Y") if a in f.files}
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise InputError(f"{args.log}: not a .npz file of arrays (np.savez with P, Q, X, Y)") from None
    missing = [a for a in ("P", "Q", "X", "Y") if a not in arrays]
    if missing:
        raise InputError(f"{args.log}: missing array(s) {', '.join(missing)} (a log holds P, Q, X, Y)")
    P, Q, X, Y = (arrays[a] for a in ("P", "Q", "X", "Y"))
    if P.ndim != 2 or Q.shape != P.shape:
        raise InputError(f"{args.log}: P and Q must be 2-D arrays of one shape, got {P.shape} and {Q.shape}")
    if not (np.issubdtype(X.dtype, np.integer) and np.issubdtype(Y.dtype, np.integer)):
        raise InputError(f"{args.log}: X and Y must hold integer token ids")
    if not 0 < args.false_alarm < 1:
        raise InputError(f"--false-alarm: must lie in (0, 1), got {args.false_alarm}")
    rep = audit_log(P, Q, X, Y, declared=args.declared, drafts=args.drafts, false_alarm=args.false_alarm)
    print(rep.to_json() if args.json else str(rep))
    return 0 if rep.lossless else 1
