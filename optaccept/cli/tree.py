"""Command line: ``optaccept tree`` — accepted tokens of a tree shape, or the best tree
for a node budget or a cost curve, on the built-in synthetic pair or on a stored
distribution file (docs/trees.md §8c).

    optaccept tree --shape 3,2                      # accepted tokens per step of a shape
    optaccept tree --shape "[(0,), (1,), (0, 0)]"   # a vLLM speculative_token_tree string
    optaccept tree --budget 16                      # the best tree of 16 nodes
    optaccept tree --cost linear:1,0.05 --budget 64 # the best speed: cost(n) = 1 + 0.05 n
    optaccept tree --cost costs.json --json         # a measured table {n: seconds}
    optaccept tree --profile --chain 4              # per-depth acceptance rates along generated text
    optaccept tree --profile --shape 3,2 --json     # ... with the forms vLLM, SGLang and TRT-LLM replay
    optaccept tree --distributions run.npz --budget 16   # the best tree for one's own models' laws

With ``--distributions FILE`` (a file of :meth:`optaccept.real.Distributions.save`, e.g. from
``optaccept extract``) every stored position whose text goes on for as many positions as the
tree is deep is one context, read as a position pair (:class:`optaccept.sequence.PositionPair`):
a node at depth d below position t has the laws stored at position t + d − 1 of the same text,
whichever tokens were drafted above it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.statistics import std_err as sample_std_err
from ._args import nonnegative_int, positive_float, positive_int

__all__ = ["register"]

#: longest chain ``--chain`` takes (the profile values every depth at every position)
MAX_CHAIN = 256


def register(subparsers: Any) -> None:
    """Add the ``tree`` sub-command."""

    t = subparsers.add_parser(
        "tree",
        help="accepted tokens of a tree shape, or the best tree for a budget or a cost curve",
        description=(
            "Accepted tokens per step of a tree shape (--shape), or the best tree to draft for a node "
            "budget (--budget) or a cost curve (--cost), on the built-in synthetic pair (--contexts "
            "random target/draft pairs over --vocab tokens, tree.synthetic_pair) or on the positions of a "
            "distribution file (--distributions)."
        ),
    )
    what = t.add_mutually_exclusive_group()
    what.add_argument(
        "--shape",
        metavar="SPEC",
        help="a branching tuple such as 3,2 or index paths such as '[(0,), (1,), (0, 0)]' (vLLM's string)",
    )
    what.add_argument("--chain", type=positive_int, default=None, metavar="N", help="a chain of N drafted tokens")
    t.add_argument("--budget", type=positive_int, default=None, help="nodes of the best tree (with --cost: the most)")
    what.add_argument(
        "--cost",
        metavar="COST",
        help="seconds per verify of n nodes: a comma list (entry i: i + 1 nodes), a .json file "
        "(a list or {n: seconds}), or linear:A,B for A + B n",
    )
    t.add_argument("--strategy", choices=["sequoia", "ceiling", "dynamic"], default="sequoia", help="how to pick")
    t.add_argument(
        "--children",
        choices=["topk", "swor", "iid"],
        default=None,
        help="how children are drafted (default topk; with --profile: iid for --verifier token or block)",
    )
    t.add_argument(
        "--verifier",
        choices=["target_only", "token", "block", "traversal", "token_optimal", "optimal"],
        default="target_only",
        help="verifier (block: of a chain)",
    )
    t.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        help="with --shape and children drawn from q: Rao-Blackwellised estimate over this many trees per "
        "context (default: exact)",
    )
    t.add_argument(
        "--profile",
        action="store_true",
        help="with --shape or --chain: the acceptance profile (P(accepted >= d) per depth, averaged along "
        "generated text) and the forms engines replay it in (tree.acceptance_profile)",
    )
    t.add_argument(
        "--positions",
        type=positive_int,
        default=16,
        help="with --profile: positions of each generated text that are valued",
    )
    t.add_argument(
        "--distributions",
        metavar="FILE",
        default=None,
        help="a distribution file (.npz of real.Distributions.save, e.g. from 'optaccept extract'): each "
        "position followed by as many positions of its text as the tree is deep is a context, a node at "
        "depth d read at position t + d - 1 (a position pair); instead of the synthetic pair",
    )
    t.add_argument("--vocab", type=positive_int, default=50, help="tokens of the synthetic pair")
    t.add_argument(
        "--contexts",
        type=positive_int,
        default=None,
        help="contexts: synthetic pairs (default 8), or the first positions of --distributions (default: all)",
    )
    t.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the first context")
    t.add_argument("--scale", type=positive_float, default=2.0, help="spread of the target's logits")
    t.add_argument("--noise", type=positive_float, default=1.0, help="draft logits = target's + noise N(0, 1)")
    t.add_argument("--json", action="store_true", help="print JSON instead of text")
    t.set_defaults(func=_tree)


def _shape(text: str) -> Any:
    from ..tree import Shape
    from ..tree._shape import as_shape

    s = text.strip()
    try:
        if s.startswith(("[", "(")) and ("(" in s[1:] or "[" in s[1:]):
            return Shape.from_vllm(s)
        parts = [v.strip() for v in s.strip("()[] ").split(",") if v.strip()]
        try:
            bs = tuple(int(v) for v in parts)
        except ValueError:
            raise InputError(f"shape: a branching tuple such as 3,2 or index paths, got {text!r}") from None
        return as_shape(bs)
    except InputError as e:
        msg = str(e)
        for head in ("shape: ", "s: "):
            if msg.startswith(head):
                msg = msg[len(head) :]
        raise InputError(f"--shape: {msg}") from None


def _cost(text: str, budget: int | None) -> Any:
    if text.startswith("linear:"):
        try:
            a, b = (float(v) for v in text[len("linear:") :].split(","))
        except ValueError:
            raise InputError(f"--cost: linear:A,B with two numbers, got {text!r}") from None
        return lambda n: a + b * n
    if text.endswith(".json"):
        path = Path(text)
        if not path.is_file():
            raise InputError(f"--cost: no such file {text}")
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"--cost: {text} is not valid JSON ({e.__class__.__name__})") from None
        if isinstance(data, dict):
            try:
                return {int(k): v for k, v in data.items()}
            except ValueError:
                raise InputError(f"--cost: the keys of {text} must be node counts") from None
        if isinstance(data, list):
            return data
        raise InputError(f"--cost: {text} must hold a list or an object {{n: seconds}}")
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise InputError(f"--cost: a comma list of seconds, a .json file or linear:A,B, got {text!r}") from None


def _rename(exc: Exception) -> Exception:
    """Messages of the library name its arguments; on the command line they are options."""
    msg = str(exc).replace("pass samples=", "pass --samples").replace(" and budget=", " and --budget ")
    for head, opt in (
        ("positions, samples: ", "--positions, --samples: "),
        ("positions: ", "--positions: "),
        ("cost: ", "--cost: "),
        ("budget: ", "--budget: "),
        ("verifier", "--verifier"),
        ("strategy ", "--strategy "),
        ("children: ", "--children: "),
    ):
        if msg.startswith(head):
            return type(exc)(opt + msg[len(head) :])
    return type(exc)(msg)


def _tree(args: argparse.Namespace) -> int:
    from .. import tree

    if args.shape is None and args.chain is None and args.budget is None and args.cost is None:
        raise InputError("tree: give --shape, --chain, --budget or --cost")
    if (args.shape is not None or args.chain is not None) and args.budget is not None:
        raise InputError(f"--budget: goes with --cost or alone, not with {'--shape' if args.shape else '--chain'}")
    if args.profile and args.shape is None and args.chain is None:
        raise InputError("--profile: give the tree with --shape or --chain")
    if args.chain is not None:
        if args.chain > MAX_CHAIN:
            raise InputError(f"--chain: at most {MAX_CHAIN} tokens, got {args.chain}")
        shape = tree._shape.as_shape((1,) * args.chain)
    else:
        shape = _shape(args.shape) if args.shape is not None else None
    cost = _cost(args.cost, args.budget) if args.cost is not None else None
    if args.distributions is not None:
        from ..tree._shape import MAX_NODES

        if args.budget is not None and args.budget > MAX_NODES:  # before the file is read for that depth
            raise InputError(f"--budget: an integer in 1..{MAX_NODES}, got {args.budget}")
        if args.profile:
            raise InputError("--profile: generates text from the synthetic pair; not with --distributions")
        largest = shape.size if shape is not None else _largest_size(cost, args.budget)  # nodes; a chain's depth
        pairs, source = _stored_pairs(
            args.distributions, shape.depth if shape is not None else largest, largest, args.contexts
        )
    else:
        contexts = 8 if args.contexts is None else args.contexts
        pairs = [
            tree.synthetic_pair(args.vocab, rng=args.seed + i, scale=args.scale, noise=args.noise)
            for i in range(contexts)
        ]
        source = {
            "pair": "tree.synthetic_pair",
            "vocab": args.vocab,
            "contexts": contexts,
            "seeds": [args.seed, args.seed + contexts - 1],
            "scale": args.scale,
            "noise": args.noise,
        }
    where = "synthetic contexts" if args.distributions is None else f"positions of {args.distributions}"
    if args.samples is not None and (shape is None or args.samples < 2):
        raise InputError("--samples: an integer >= 2, with --shape or --chain")
    if args.profile:
        return _profile(args, pairs, shape, source)
    if args.children is None:
        args.children = "topk"
    if args.samples is not None and args.children == "topk":
        raise InputError(
            "--samples: top-k children make one deterministic tree, valued exactly; "
            "--samples estimates trees drawn from q (--children iid or swor)"
        )
    if shape is not None:
        try:
            values = [
                float(
                    tree.accepted_tokens(
                        P,
                        Q,
                        tree.TreeDraftLaw(shape, args.children),
                        verifier=args.verifier,
                        samples=args.samples,
                        rng=None if args.samples is None else np.random.default_rng([args.seed, i]),
                        progress=None,
                    ).value
                )
                for i, (P, Q) in enumerate(pairs)
            ]
        except InputError as e:
            raise _rename(e) from None
        v = np.asarray(values)
        se = sample_std_err(v) if v.size > 1 else None  # over contexts; unknown from one context
        out = {
            "shape": shape.to_choices(),
            "vllm": shape.to_vllm(),
            "nodes": shape.size,
            "children": args.children,
            "verifier": args.verifier,
            "accepted": float(v.mean()),
            "std_err": se,
            "by_context": values,
            "method": "exact" if args.samples is None else f"Rao-Blackwellised, {args.samples} trees per context",
            "engines": _engines(shape),
            "source": source,
        }
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(f"shape ({shape.size} nodes): {shape.to_vllm()}")
            print(f"children = {args.children}   verifier = {args.verifier}")
            print(f"accepted tokens per step = {out['accepted']:.6f} ± {_se_text(se)} over {v.size} {where}")
        return 0
    try:
        best = tree.best_tree(
            pairs,
            args.budget,
            cost=cost,
            strategy=args.strategy,
            children=args.children,
            verifier=args.verifier,
            progress=None,
        )
    except InputError as e:
        raise _rename(e) from None
    shapes = best if isinstance(best, list) else [best]
    meta = shapes[0].meta
    out = {
        "strategy": args.strategy,
        "children": args.children,
        "verifier": args.verifier,
        "nodes": shapes[0].size,
        "accepted": meta["value"],
        "tokens_per_step": meta["tokens_per_step"],
        "source": source,
    }
    if cost is not None:
        out["cost"] = meta["cost"]
        out["tokens_per_second"] = meta["tokens_per_second"]
    if isinstance(best, list):
        out["trees"] = [{"context": i, "choices": s.to_choices(), "vllm": s.to_vllm()} for i, s in enumerate(best)]
    else:
        out["choices"] = best.to_choices()
        out["vllm"] = best.to_vllm()
        out["engines"] = _engines(best)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"best tree ({args.strategy}, {args.children} children, {args.verifier}): {out['nodes']} nodes, "
        f"for {len(pairs)} {where}"
    )
    if isinstance(best, list):
        for i, s in enumerate(best):
            print(f"context {i}: {s.to_vllm()}")
    else:
        print(f"vLLM speculative_token_tree: {best.to_vllm()}")
        eng = out["engines"]
        print(f"TensorRT-LLM: max_draft_len={eng['trtllm']['max_draft_len']} with eagle_choices (--json)")
        kind = "this tree" if eng["sglang_static"] else "its dynamic tree of as many nodes, not this one"
        print("SGLang: " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in eng["sglang"].items()) + f" ({kind})")
    print(f"accepted tokens per step = {out['accepted']:.6f}   tokens per step = {out['tokens_per_step']:.6f}")
    if cost is not None:
        print(f"cost = {out['cost']:.6g} s per verify   tokens per second = {out['tokens_per_second']:.6g}")
    return 0


def _largest_size(cost: Any, budget: int | None) -> int:
    """The most nodes a best tree may have (its greatest depth: a chain): ``--budget``, else
    the largest size the cost covers (64 for linear:A,B, as tree.best_tree searches)."""
    from ..tree._best import DEFAULT_MAX_NODES

    if budget is not None:
        return budget
    if isinstance(cost, dict):
        return max(max(cost, default=1), 1)
    if isinstance(cost, list):
        return max(len(cost), 1)
    return DEFAULT_MAX_NODES


def _stored_pairs(path: str, depth: int, nodes: int, limit: int | None) -> tuple[list, dict[str, Any]]:
    """(target, draft) sequence models, one per position of the distribution file at ``path``
    that its text continues for ``depth`` positions (a node at depth d below position t reads
    position t + d − 1); at most ``limit`` of them, the first in file order.

    Each text's rows are kept on the tokens where some row of it has p > 0 or q > 0, and on the
    ids below ``nodes`` + its largest draft support: a node has at most ``nodes`` children, and
    the top-b tokens of a row (zero-mass ones by lower id) lie among those ids and the supports,
    so every tree and value is the full vocabulary's, at the size of the support."""
    from ..real import Distributions

    try:
        data = Distributions.load(path)
    except InputError as e:
        msg = str(e)
        if msg.endswith("has an unknown format"):
            msg += _other_format(path)
        raise InputError("--distributions: " + (msg[len("path: ") :] if msg.startswith("path: ") else msg)) from None
    m, n = len(data), data.vocab_size
    if m == 0:
        raise InputError(f"--distributions: {path} holds no positions")
    prompt, step = data.prompt_index, data.step
    # a text breaks where the prompt changes or the steps (when stored) do not follow on
    breaks = np.flatnonzero((prompt[1:] != prompt[:-1]) | ((step[1:] >= 0) & (step[1:] != step[:-1] + 1))) + 1
    texts = list(zip(np.concatenate([[0], breaks]).tolist(), np.concatenate([breaks, [m]]).tolist()))
    longest = max(hi - lo for lo, hi in texts)
    if longest < depth:
        raise InputError(
            f"--distributions: no position of {path} is followed by {depth - 1} more of its text, as a tree "
            f"{depth} deep needs (its longest text has {longest}); give a smaller --budget or --shape"
        )

    def law(rows: np.ndarray, t: int):
        return lambda prefix: rows[t + len(prefix)]

    pairs, starts = [], []
    for lo, hi in texts:
        take = list(range(lo, hi - depth + 1))
        if limit is not None:
            take = take[: max(0, limit - len(starts))]
        if not take:
            continue
        p, q = data.rows(take[0], take[-1] + depth)
        keep = ((p > 0) | (q > 0)).any(axis=0)
        keep[: min(n, nodes + int((q > 0).sum(axis=1).max()))] = True
        if not keep.all():
            p, q = np.ascontiguousarray(p[:, keep]), np.ascontiguousarray(q[:, keep])
        pairs += [(law(p, t - take[0]), law(q, t - take[0])) for t in take]
        starts += take
    source = {"distributions": str(path), "positions": starts, "contexts": len(pairs), "depth": depth, "vocab": n}
    return pairs, source


def _other_format(path: str) -> str:
    """What an optaccept archive of another kind holds, as the end of a refusal ("" if unknown)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            fmt = json.loads(str(z["meta"])).get("format", "")
    except Exception:  # noqa: BLE001 - only a better message is at stake
        return ""
    if not isinstance(fmt, str) or not fmt:
        return ""
    hint = " (draft trees: real.DraftTrees)" if "DraftTrees" in fmt else ""
    return f": it holds {fmt}{hint}, not the distributions of real.Distributions.save or 'optaccept extract'"


def _engines(shape: Any) -> dict[str, Any]:
    """The parameters each engine drafts ``shape`` with (Shape.to_engine); SGLang's are those
    of its dynamic tree of the same size when the shape is not one it drafts statically."""

    out: dict[str, Any] = {name: shape.to_engine(name) for name in ("vllm", "trtllm")}
    try:
        out["sglang"] = shape.to_engine("sglang")
        out["sglang_static"] = True
    except MethodError:
        out["sglang"] = shape.to_engine("sglang", strict=False)
        out["sglang_static"] = False
    return out


def _se_text(se: float | None) -> str:
    """A standard error as printed: unknown (None) from fewer than two contexts."""
    return "unknown (needs at least 2 contexts)" if se is None else f"{se:.2g}"


def _profile(args: argparse.Namespace, pairs: list, shape: Any, source: dict[str, Any]) -> int:
    """``--profile``: tree.acceptance_profile on the synthetic pairs, with the engine forms."""
    from .. import tree
    from ..tree._profile import ENGINES

    try:
        prof = tree.acceptance_profile(
            pairs,
            shape,
            verifier=args.verifier,
            children=args.children,
            positions=args.positions,
            samples=64 if args.samples is None else args.samples,
            rng=args.seed,
            progress=False,
        )
    except InputError as e:
        raise _rename(e) from None
    engines = {name: prof.to_engine(name) for name in ENGINES}
    out = {
        "shape": shape.to_choices(),
        "vllm": shape.to_vllm(),
        "nodes": shape.size,
        "children": prof.children,
        "verifier": prof.verifier,
        "rates": [float(r) for r in prof.rates],
        "mean_accepted": prof.mean_accepted,
        "al": prof.al,
        "std_err": prof.std_err,
        "by_position": [[float(r) for r in row] for row in prof.by_position],
        "method": prof.method,
        "texts": prof.texts,
        "positions": prof.positions,
        "engines": engines,
        "source": dict(source, text_seed=args.seed),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"acceptance profile of {shape.to_vllm()} ({shape.size} nodes)")
    print(
        f"children = {prof.children}   verifier = {prof.verifier}   {prof.method}; "
        f"{prof.texts} synthetic texts x {prof.positions} positions"
    )
    print("P(accepted >= d):  " + "  ".join(f"d={d}: {r:.4f}" for d, r in enumerate(prof.rates, 1)))
    print(
        f"mean accepted drafted tokens = {prof.mean_accepted:.6f} ± {_se_text(prof.std_err)}   "
        f"AL (bonus token counted) = {prof.al:.6f}"
    )
    print("replay it in an engine:")
    for name, form in engines.items():
        print(f"  {name}: " + "  ".join(f"{k}={v}" for k, v in form.items()))
    return 0
