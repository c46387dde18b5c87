"""Command line: ``optaccept sequence rejections ...`` and ``optaccept sequence pareto ...``."""

from __future__ import annotations

import argparse
from typing import Any

from .._errors import InputError

__all__ = ["register"]


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise InputError(f"{name}: expected comma-separated numbers, got {text!r}") from None


def register(subparsers: Any) -> None:
    """Add the ``sequence`` command and its sub-commands to an argparse sub-parser set."""
    parser = subparsers.add_parser(
        "sequence",
        help="sequence-level theory: rejections, batch SD, Pareto front",
        description="Sequence-level theory of speculative decoding (Yin et al., NeurIPS 2024).",
    )
    sub = parser.add_subparsers(dest="sequence_command", required=True)

    rej = sub.add_parser("rejections", help="expected rejections of (batch) SD on a random chain")
    rej.add_argument("--states", type=int, default=7)
    rej.add_argument("--horizon", type=int, default=50)
    rej.add_argument("--seed", type=int, default=10)
    rej.add_argument("--M", type=int, nargs="+", default=[1, 4], help="numbers of drafts")
    rej.add_argument("--continuation", choices=["single", "matching"], default="single")
    rej.add_argument("--runs", type=int, default=0, help="Monte Carlo runs (0: exact only)")
    rej.set_defaults(func=_rejections)

    par = sub.add_parser("pareto", help="Pareto front and Decoding-OPT/UNO for two laws")
    par.add_argument("--p", required=True, help="target law, comma-separated")
    par.add_argument("--q", required=True, help="draft law, comma-separated")
    par.add_argument("--eps", default="0,0.01,0.02,0.05,0.1", help="thresholds, comma-separated")
    par.set_defaults(func=_pareto)


def _rejections(args: argparse.Namespace) -> int:
    import numpy as np

    from . import (
        MarkovPair,
        batch_expected_rejections,
        batch_rejection_limit,
        simulate_batch_rejections,
    )
    from ._batch import _check_m

    for M in args.M:
        _check_m(M)
    chain = MarkovPair.random(states=args.states, horizon=args.horizon, rng=np.random.default_rng(args.seed))
    print(
        f"MarkovPair.random(states={args.states}, horizon={args.horizon}, "
        f"rng=np.random.default_rng({args.seed})), continuation={args.continuation}"
    )
    for M in args.M:
        exact = batch_expected_rejections(chain, M, continuation=args.continuation)
        line = f"M = {M}: E[N_rej] = {exact:.6f}, acceleration = {chain.horizon / exact:.4f}"
        if args.runs > 0:
            est = simulate_batch_rejections(
                chain, M, runs=args.runs, rng=np.random.default_rng(args.seed + M), continuation=args.continuation
            )
            line += f", Monte Carlo {est.mean:.4f} ± {est.stderr:.4f}"
        print(line)
    print(f"M -> inf limit: {batch_rejection_limit(chain, continuation=args.continuation):.6f}")
    return 0


def _pareto(args: argparse.Namespace) -> int:
    from . import decoder_losses

    p = _floats(args.p, "p")
    q = _floats(args.q, "q")
    eps = _floats(args.eps, "eps")
    d = decoder_losses(p, q, eps)
    print(f"TV(p, q) = {d.tv:.6f}")
    print("eps        P(reject)  loss OPT   loss UNO   P(reject)+loss OPT")
    for e, r, lo, lu in zip(d.eps, d.rejection, d.loss_opt, d.loss_uno):
        print(f"{e:<10.4g} {r:<10.6f} {lo:<10.6f} {lu:<10.6f} {r + lo:.6f}")
    return 0
