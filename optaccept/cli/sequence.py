"""Command line: ``optaccept sequence rejections ...`` and ``optaccept sequence pareto ...``."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.io import parse_numbers
from ._args import add_vector_options, load_pair, nonnegative_int, positive_float, positive_int

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``sequence`` command and its sub-commands to an argparse sub-parser set."""

    parser = subparsers.add_parser(
        "sequence",
        help="sequence-level theory: rejections, batch SD, Pareto front",
        description="Sequence-level theory of speculative decoding (Yin et al., NeurIPS 2024).",
    )
    sub = parser.add_subparsers(dest="sequence_command", required=True, metavar="{rejections,pareto}")

    rej = sub.add_parser("rejections", help="expected rejections of (batch) SD on a random chain")
    rej.add_argument("--states", type=positive_int, default=7, help="number of states (tokens) of the chain")
    rej.add_argument("--horizon", type=positive_int, default=50, help="number of generated tokens T")
    rej.add_argument("--seed", type=nonnegative_int, default=10, help="seed of the random chain")
    rej.add_argument("-k", dest="k", type=positive_int, nargs="+", default=[1, 4], help="numbers of drafts k")
    rej.add_argument(
        "--concentration", type=positive_float, default=1.0, help="Dirichlet concentration of the chain's rows"
    )
    rej.add_argument(
        "--continuation",
        choices=["single", "matching"],
        default="single",
        help="which drafts stay candidates after an acceptance",
    )
    rej.add_argument("--runs", type=nonnegative_int, default=0, help="Monte Carlo runs (0: exact values only)")
    rej.set_defaults(func=_rejections)

    par = sub.add_parser("pareto", help="Pareto front and Decoding-OPT/UNO for two laws")
    add_vector_options(par, aliases=True)
    par.add_argument("--eps", default="0,0.01,0.02,0.05,0.1", help="thresholds ε >= 0, comma-separated")
    par.add_argument("--json", action="store_true", help="print JSON instead of text")
    par.set_defaults(func=_pareto)


def _rejections(args: argparse.Namespace) -> int:
    from ..sequence import MarkovPair, batch_expected_rejections
    from ..sequence._batch import _check_m, batch_rejection_limit, simulate_batch_rejections

    for k in args.k:
        _check_m(k)
    chain = MarkovPair.random(
        states=args.states,
        horizon=args.horizon,
        concentration=args.concentration,
        rng=np.random.default_rng(args.seed),
    )
    print(
        f"MarkovPair.random(states={args.states}, horizon={args.horizon}, "
        f"rng=np.random.default_rng({args.seed})), continuation={args.continuation}"
    )
    for k in args.k:
        exact = batch_expected_rejections(chain, k, continuation=args.continuation)
        line = f"k = {k}: E[N_rej] = {exact:.6f}, acceleration = {chain.horizon / exact:.4f}"
        if args.runs > 0:
            est = simulate_batch_rejections(
                chain, k, samples=args.runs, rng=np.random.default_rng(args.seed + k), continuation=args.continuation
            )
            line += f", Monte Carlo {est.mean:.4f} ± {est.std_err:.4f}"
        print(line)
    print(f"k -> inf limit: {batch_rejection_limit(chain, continuation=args.continuation):.6f}")
    return 0


def _pareto(args: argparse.Namespace) -> int:
    from ..sequence import decoder_losses

    p, q = load_pair(args)
    eps = parse_numbers(args.eps, "--eps")
    if not np.all(np.isfinite(eps)) or np.any(eps < 0):  # named as the option, before the library's check
        raise InputError(f"--eps: over-acceptance thresholds must be finite and >= 0, got {args.eps}")
    d = decoder_losses(p, q, eps)
    if args.json:
        print(
            json.dumps(
                {
                    "tv": d.tv,
                    "eps": d.eps.tolist(),
                    "rejection": d.rejection.tolist(),
                    "loss_opt": d.loss_opt.tolist(),
                    "loss_uno": d.loss_uno.tolist(),
                },
                indent=2,
            )
        )
        return 0
    print(f"TV(p, q) = {d.tv:.6f}")
    print("eps        P(reject)  loss OPT   loss UNO   P(reject)+loss OPT")
    for e, r, lo, lu in zip(d.eps, d.rejection, d.loss_opt, d.loss_uno):
        print(f"{e:<10.4g} {r:<10.6f} {lo:<10.6f} {lu:<10.6f} {r + lo:.6f}")
    return 0
