"""Command line: ``optaccept audit LOG.npz [--declared RULE] [--drafts iid|swor|greedy|topk]
[--compare-laws] [--json]``, and ``optaccept audit-assisted`` (Hugging Face assisted generation
on the built-in pair, logged through hooks and audited).

The log's arrays say which kind it is.  One step per row: ``P`` and ``Q`` (steps × vocabulary,
float; float32 is fine), ``X`` (steps × k, int: the drafted tokens in draw order) and ``Y``
(steps, int: the emitted tokens).  A chain per call: ``P`` (calls × (γ + 1) × vocabulary),
``Q`` (calls × γ × vocabulary), ``X`` (calls × γ), ``m`` (calls: accepted drafted tokens) and
``Y``.  The target's top-m probabilities only: ``ids`` and ``probs`` (steps × m), ``X``, ``Y``
and ``Q`` — or, without ``Q``, ``n`` (the vocabulary size).  The report opens with the verdict
("lossless" within the margin, "not lossless", or "inconclusive" with the size that would
decide).  Exit status, as a test tool: 0 when no check raised an alarm (verdict "lossless" or
"inconclusive", and the declared rule's value consistent), 1 on an alarm (not lossless, or not
the declared rule), 2 on bad input.
"""

from __future__ import annotations

import argparse
import zipfile
from typing import Any

import numpy as np

from .._errors import InputError
from ._args import positive_int

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``audit`` sub-command."""
    from ..audit._core import DECLARED, FALSE_ALARM
    from ..drafts import law_names

    parser = subparsers.add_parser(
        "audit",
        help="audit a logged verifier: lossless? acceptance against its rule and against alpha*",
        description=__doc__.split("\n\n", 1)[1].strip(),
    )
    parser.add_argument(
        "log", help="a .npz file: P, Q, X, Y (steps); P, Q, X, m, Y (chains); ids, probs, X, Y[, Q | n]"
    )
    parser.add_argument("--declared", choices=DECLARED, default=None, help="the rule the implementation claims")
    parser.add_argument(
        "--drafts", choices=law_names(batched=True), default="iid", help="the draft law X came from (for alpha*)"
    )
    parser.add_argument(
        "--false-alarm",
        type=float,
        default=FALSE_ALARM,
        help="false-alarm rate of the losslessness test (default: %(default)g)",
    )
    parser.add_argument(
        "--compare-laws",
        action="store_true",
        help="also alpha* of every draft law (iid, swor, greedy, topk: the k most likely tokens of q) with the "
        "same rows and k (the gap's draft-law part; steps logs)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_handler)

    hf = subparsers.add_parser(
        "audit-assisted",
        help="run Hugging Face assisted generation on the built-in pair, log its sampler through hooks, audit",
        description=(
            "Runs transformers' generate(..., assistant_model=..., do_sample=True) with SmolLM2-135M-Instruct as "
            "target and its layer-skip copy as assistant (offline), logs every call of its speculative sampler "
            "(the p and q it used, the candidates, the accepted count, the emitted token) and audits the log: "
            "is the generated text distributed as p, were the drafts drawn from the q it divided by, and how many "
            "candidates it accepts against speculative sampling's exact value and the one-chain optimum. Exit "
            "status 0 when both tests pass, 1 otherwise, 2 on bad input."
        ),
    )
    hf.add_argument("--prompts", type=positive_int, default=12, help="built-in prompts to run (default %(default)s)")
    hf.add_argument("--tokens", type=positive_int, default=48, help="new tokens per prompt (default %(default)s)")
    hf.add_argument("--top-k", type=positive_int, default=None, help="top-k warp of both models (default: none)")
    hf.add_argument("--seed", type=int, default=0, help="torch seed of the first prompt (default %(default)s)")
    hf.add_argument("--json", action="store_true", help="print the report as JSON")
    hf.set_defaults(func=_assisted_handler)


def _handler(args: argparse.Namespace) -> int:
    from ..audit import audit_chain_log, audit_log, audit_topm_log

    names = ("P", "Q", "X", "Y", "m", "ids", "probs", "n")
    with open(args.log, "rb") as handle:  # closed even when numpy's reader fails on the file
        try:
            loaded = np.load(handle, allow_pickle=False)
        except (zipfile.BadZipFile, ValueError, EOFError):
            raise InputError(f"{args.log}: not a .npz file of arrays (np.savez with P, Q, X, Y)") from None
        if not isinstance(loaded, np.lib.npyio.NpzFile):  # a .npy file: one array, not a log
            raise InputError(
                f"{args.log}: holds a single array, not a log; save the log's arrays with np.savez (P, Q, X, Y)"
            )
        try:
            with loaded as f:
                arrays = {a: f[a] for a in names if a in f.files}
        except (zipfile.BadZipFile, ValueError, EOFError):
            raise InputError(f"{args.log}: not a .npz file of arrays (np.savez with P, Q, X, Y)") from None
    if not 0 < args.false_alarm < 1:
        raise InputError(f"--false-alarm: must lie in (0, 1), got {args.false_alarm}")

    def need(*wanted: str, kind: str) -> None:
        missing = [a for a in wanted if a not in arrays]
        if missing:
            raise InputError(
                f"{args.log}: missing array(s) {', '.join(missing)} (a {kind} log holds {', '.join(wanted)})"
            )

    if "ids" in arrays or "probs" in arrays:  # the target's top-m probabilities only
        need("ids", "probs", "X", "Y", kind="top-m")
        if args.declared not in (None, "sd", "target_only"):
            raise InputError(f"--declared: a top-m log brackets 'sd' and 'target_only' only, got {args.declared!r}")
        n = int(arrays["n"]) if "n" in arrays else None
        rep = audit_topm_log(
            arrays["ids"],
            arrays["probs"],
            arrays.get("Q"),
            arrays["X"],
            arrays["Y"],
            args.declared,
            drafts=args.drafts,
            n=n,
            false_alarm=args.false_alarm,
        )
    elif "m" in arrays:  # one chain per call
        need("P", "Q", "X", "m", "Y", kind="chain")
        P, Q, X = arrays["P"], arrays["Q"], arrays["X"]
        if P.ndim != 3 or Q.ndim != 3 or X.ndim != 2:
            raise InputError(
                f"{args.log}: a chain log has P (calls, γ + 1, n), Q (calls, γ, n), X (calls, γ); got "
                f"{P.shape}, {Q.shape}, {X.shape}"
            )
        if args.declared not in (None, "sd"):
            raise InputError(
                f"--declared: a chain log is compared with speculative sampling ('sd'), got {args.declared!r}"
            )
        rep = audit_chain_log(list(P), list(Q), list(X), arrays["m"], arrays["Y"], false_alarm=args.false_alarm)
    else:
        need("P", "Q", "X", "Y", kind="steps")
        P, Q, X, Y = (arrays[a] for a in ("P", "Q", "X", "Y"))
        if P.ndim != 2 or Q.shape != P.shape:
            raise InputError(f"{args.log}: P and Q must be 2-D arrays of one shape, got {P.shape} and {Q.shape}")
        if not (np.issubdtype(X.dtype, np.integer) and np.issubdtype(Y.dtype, np.integer)):
            raise InputError(f"{args.log}: X and Y must hold integer token ids")
        steps = P.shape[0]
        if Y.shape != (steps,):
            raise InputError(f"{args.log}: Y must hold one emitted token per step ({steps}, as P), got shape {Y.shape}")
        if X.ndim != 2 or X.shape[0] != steps:
            raise InputError(f"{args.log}: X must have one row of drafted tokens per step ({steps}, k), got {X.shape}")
        rep = audit_log(
            P,
            Q,
            X,
            Y,
            declared=args.declared,
            drafts=args.drafts,
            false_alarm=args.false_alarm,
            compare_laws=args.compare_laws,
        )
    print(rep.to_json() if args.json else str(rep))
    return 0 if rep.ok else 1


def _assisted_handler(args: argparse.Namespace) -> int:
    from ..audit import audit_chain_log
    from ..llm import builtin_prompts, log_assisted_generation, smollm2_layerskip

    prompts = builtin_prompts()
    if not 1 <= args.prompts <= len(prompts):
        raise InputError(f"--prompts: must lie in 1..{len(prompts)}, got {args.prompts}")
    for option, value in (("--tokens", args.tokens), ("--top-k", args.top_k)):  # parse-time checked; callers too
        if value is not None and value < 1:
            raise InputError(f"{option}: must be a positive integer, got {value}")
    pair = smollm2_layerskip(top_k=args.top_k)
    log = log_assisted_generation(
        pair,
        prompts[: args.prompts],
        max_new_tokens=args.tokens,
        top_k=args.top_k,
        rng=args.seed,
        progress=not args.json,
    )
    rep = audit_chain_log(log.P, log.Q, log.X, log.m, log.Y)
    if args.json:
        print(rep.to_json())
    else:
        d = rep.details
        print(f"Hugging Face assisted generation, {log!r}")
        print(rep)
        print(
            f"  drafts follow q        {'yes' if d['drafts_follow_q'] else 'NO'} (largest KS distance "
            f"{max(d['drafts_ks_distance'].values()):.2e} vs threshold {d['drafts_ks_threshold']:.2e}, "
            f"{d['drafted_tokens']} drafted tokens)"
        )
    return 0 if rep.ok and rep.details["drafts_follow_q"] else 1
