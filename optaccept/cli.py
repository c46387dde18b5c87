"""Command line: ``optaccept alpha|gap|conjecture|extract|gap-table|... ``.

Every sub-command exits 0 on success; bad input prints one line
``optaccept: error: <message>`` on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from ._errors import InputError, MissingDependencyError, SolverError

__all__ = ["main", "build_parser"]

# Sub-packages that add their own sub-commands through ``_cli.register(subparsers)``.
_PLUGINS = ("verifiers", "polyhedra", "sequence", "llm")

_LAWS = {"iid": "IID", "swor": "WithoutReplacement", "greedy": "Greedy", "spechub": "SpecHub"}


def _alpha(args: argparse.Namespace) -> int:
    import numpy as np

    from . import drafts as d
    from ._io import load_vector
    from .optimal import optimal_acceptance, verify

    p = load_vector(args.target, "--target")
    q = load_vector(args.draft, "--draft")
    if p.size != q.size:
        raise InputError(f"--target and --draft: lengths differ ({p.size} vs {q.size})")
    cls = getattr(d, _LAWS[args.drafts])
    law = cls(q, normalize=args.normalize) if args.drafts == "spechub" else cls(q, args.k, normalize=args.normalize)
    res = optimal_acceptance(p, law, args.method, normalize=args.normalize)
    check = verify(p, law, res, normalize=args.normalize)
    if args.json:
        out = res.to_dict()
        out["verification"] = {
            "dual_value": float(check.dual_value),
            "value_gap": float(check.value_gap),
            "duality_gap": check.duality_gap,
            "max_violation": check.max_violation,
            "ok": check.ok,
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
        del np
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="optaccept",
        description="Optimal acceptance probability of (multi-draft) speculative decoding.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    a = sub.add_parser("alpha", help="α* of a target/draft pair, with its certificate")
    a.add_argument("--target", required=True, help="target distribution p (.npy, .json or .txt)")
    a.add_argument("--draft", required=True, help="draft distribution q (.npy, .json or .txt)")
    a.add_argument("-k", type=int, default=2, help="number of drafts (default 2)")
    a.add_argument("--drafts", choices=sorted(_LAWS), default="iid", help="draft law (default iid)")
    a.add_argument("--method", default="auto", choices=["auto", "transport", "lp", "subsets", "sorted", "closed_form"])
    a.add_argument("--normalize", action="store_true", help="rescale inputs that do not sum to 1")
    a.add_argument("--json", action="store_true", help="print JSON")
    a.set_defaults(func=_alpha)
    j = sub.add_parser("main", help="regenerate the figures and tables (same as python -m optaccept.jobs)")
    j.add_argument("--quick", action="store_true")
    j.add_argument("--figures", default="figures")
    j.add_argument("--only", nargs="*", default=None)
    j.set_defaults(
        func=lambda ns: importlib.import_module("optaccept.jobs").run_all(ns.figures, quick=ns.quick, only=ns.only)
    )
    for name in _PLUGINS:
        try:
            mod = importlib.import_module(f"optaccept.{name}._cli")
        except ImportError:
            continue
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = args.func(args)
    except (InputError, MissingDependencyError, SolverError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"optaccept: error: {msg}", file=sys.stderr)
        return 2
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
