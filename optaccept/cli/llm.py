"""``optaccept extract`` and ``optaccept gap-table`` sub-commands.

Every argument, file and model reference is checked before a model is loaded or a
distribution computed; problems raise :class:`~optaccept.InputError` (one line, exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._errors import InputError
from ._args import nonnegative_int, positive_float, positive_int

__all__ = ["register"]


def _check_device(device: str) -> None:
    import torch

    if device == "auto":
        return
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InputError(f"--device: not a torch device: {device} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device: {device} asked for, but torch sees no CUDA device")


def _check_output(path: str, name: str) -> None:
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{name}: {path} is a folder; give a file name such as dists.npz")
    parent = out.parent if str(out.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise InputError(f"{name}: {parent} is a file, not a folder")


def _extract(args: argparse.Namespace) -> int:
    from ..llm import ModelPair, builtin_prompts
    from ..llm._models import Warp, resolve_model
    from ..llm._prompts import load_prompts

    # 1. Everything that can be wrong with the arguments, before any model is loaded.
    if args.draft_model is not None and args.model is None:
        raise InputError("--draft-model: needs --model (the built-in SmolLM2 pair is one model)")
    separate = args.draft_model is not None
    draft_t = args.draft_temperature
    if draft_t is None:
        draft_t = args.target_temperature if separate else 1.5
    for flag, temp in (("--target-temperature", args.target_temperature), ("--draft-temperature", draft_t)):
        try:
            Warp(temp, args.top_k, args.top_p)
        except InputError as exc:
            text = str(exc).replace("temperature:", f"{flag}:").replace("top_k:", "--top-k:")
            raise InputError(text.replace("top_p:", "--top-p:")) from None
    prompts = load_prompts(args.prompts) if args.prompts else builtin_prompts()
    if args.limit is not None:
        prompts = prompts[: args.limit]
    _check_output(args.output, "--output")
    if args.checkpoint is not None and Path(args.checkpoint).is_file():
        raise InputError(f"--checkpoint: {args.checkpoint} is a file, not a folder")
    _check_device(args.device)
    if args.model is not None:
        resolve_model(args.model, "--model")
        if separate:
            resolve_model(args.draft_model, "--draft-model")

    # 2. Load and extract.
    from ..llm import extract

    if args.model is None:
        pair = ModelPair.smollm2(
            draft_temperature=draft_t,
            target_temperature=args.target_temperature,
            top_k=args.top_k,
            top_p=args.top_p,
        )
    else:
        pair = ModelPair.from_pretrained(
            args.model,
            args.draft_model,
            target_temperature=args.target_temperature,
            draft_temperature=draft_t,
            top_k=args.top_k,
            top_p=args.top_p,
        )
    data = extract(
        pair,
        prompts,
        max_new_tokens=args.max_new_tokens,
        device=args.device,
        rng=args.seed,
        batch_size=args.batch_size,
        checkpoint=args.checkpoint,
        progress=not args.quiet,
    )
    path = data.save(args.output)
    info = data.meta.get("extraction", {})
    secs = info.get("seconds", 0.0)
    rate = f", {info['new_positions'] / secs:.1f} positions/s" if secs else ""
    print(f"wrote {path}: {len(data)} positions, vocabulary {data.vocab_size}{rate}")
    return 0


def _gap_table(args: argparse.Namespace) -> int:
    # Arguments and every file first, before any computation.

    from ..plots import paper_figure, paper_style, plot_gaps, save_figure
    from ..plots._style import COLUMN_WIDTH, TEXT_WIDTH
    from ..real import Distributions

    if args.out is not None and Path(args.out).is_file():
        raise InputError(f"--out: {args.out} is a file, not a folder")
    _check_device(args.device)
    datas = []
    for f in args.files:
        try:
            data = Distributions.load(f)
        except InputError as exc:
            raise InputError(str(exc).replace("path: ", "", 1)) from None
        if args.max_positions is not None:
            data = data.subset(slice(0, args.max_positions))
        datas.append(data)

    from ..llm import PositionGapTable, position_gap_table

    tables = [
        position_gap_table(data, ks=args.k, device=args.device, slow_verifiers=not args.fast, progress=not args.quiet)
        for data in datas
    ]
    table = PositionGapTable.concat(tables)
    print(table)
    if args.out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "llm_gap_table.csv")
        (out / "llm_gap_table.md").write_text(table.to_markdown() + "\n", encoding="utf-8")
        temps = sorted({t for t, _, _ in table.values})
        ncols = min(len(temps), 2)
        nrows = -(-len(temps) // ncols)
        with paper_style():
            fig, axes = paper_figure(
                nrows, ncols, width=TEXT_WIDTH if ncols > 1 else COLUMN_WIDTH, height=2.8 * nrows, squeeze=False
            )
            for ax in axes.ravel()[len(temps) :]:
                ax.set_visible(False)
            for ax, t in zip(axes.ravel(), temps):
                plot_gaps(table, t, ax=ax)
            fig.tight_layout()
            save_figure(fig, out / "llm_gap_table")
        plt.close(fig)
        print(f"wrote {out}/llm_gap_table.csv, .md, .png, .pdf")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``extract`` and ``gap-table`` to the ``optaccept`` command."""

    e = subparsers.add_parser("extract", help="extract target/draft next-token distributions from a model pair")
    e.add_argument("-o", "--output", default="dists.npz", help="output file")
    e.add_argument(
        "--model",
        default=None,
        help="target model: a local folder or a Hub id already in the Hugging Face cache, never downloaded "
        "(default: the built-in SmolLM2-135M-Instruct, Q4_1 GGUF)",
    )
    e.add_argument(
        "--draft-model",
        default=None,
        help="draft model, as --model (default: the target itself, at --draft-temperature)",
    )
    e.add_argument("--target-temperature", type=positive_float, default=1.0, help="target temperature")
    e.add_argument(
        "--draft-temperature",
        type=positive_float,
        default=None,
        help="draft temperature (default: 1.5 when one model plays both parts; "
        "the target temperature when --draft-model is given)",
    )
    e.add_argument("--top-k", type=positive_int, default=None, help="top-k truncation of both sides (default: none)")
    e.add_argument(
        "--top-p", type=positive_float, default=None, help="top-p truncation of both sides, in (0, 1] (default: none)"
    )
    e.add_argument(
        "--prompts",
        default=None,
        help="prompt file (.txt one per line, or .jsonl with 'text') (default: the built-in set of 36)",
    )
    e.add_argument("--limit", type=positive_int, default=None, help="use only the first N prompts (default: all)")
    e.add_argument("--max-new-tokens", type=positive_int, default=32, help="generated tokens per prompt")
    e.add_argument("--batch-size", type=positive_int, default=8, help="prompts per batch")
    e.add_argument("--seed", type=nonnegative_int, default=0, help="sampling seed")
    e.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:1, ...")
    e.add_argument(
        "--checkpoint",
        default=None,
        help="folder for per-batch shards; rerunning resumes an interrupted run (default: none)",
    )
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=_extract)

    g = subparsers.add_parser("gap-table", help="mean α* per draft law and α per verifier on extracted distributions")
    g.add_argument("files", nargs="+", metavar="FILE", help="distribution files (.npz) written by 'optaccept extract'")
    g.add_argument("-k", type=positive_int, nargs="+", default=[2, 3, 4, 8], help="numbers of drafts")
    g.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, ...")
    g.add_argument(
        "--max-positions", type=positive_int, default=None, help="use only the first N positions (default: all)"
    )
    g.add_argument("--out", default=None, help="folder for CSV, Markdown and PNG outputs (default: print only)")
    g.add_argument("--fast", action="store_true", help="skip the position-by-position rrs_wor and spechub columns")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.set_defaults(func=_gap_table)
