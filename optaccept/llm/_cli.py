"""``optaccept extract`` and ``optaccept gap-table`` sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._errors import InputError

__all__ = ["register"]


def _extract(args: argparse.Namespace) -> int:
    from ._extract import extract
    from ._models import ModelPair
    from ._prompts import builtin_prompts, load_prompts

    if args.model is None:
        pair = ModelPair.smollm2(
            draft_temperature=args.draft_temperature,
            target_temperature=args.target_temperature,
            top_k=args.top_k,
            top_p=args.top_p,
        )
    else:
        pair = ModelPair.from_pretrained(
            args.model,
            args.draft_model,
            target_temperature=args.target_temperature,
            draft_temperature=args.draft_temperature,
            top_k=args.top_k,
            top_p=args.top_p,
        )
    prompts = load_prompts(args.prompts) if args.prompts else builtin_prompts()
    if args.limit is not None:
        if args.limit < 1:
            raise InputError(f"--limit: must be at least 1, got {args.limit}")
        prompts = prompts[: args.limit]
    data = extract(
        pair,
        prompts,
        max_new_tokens=args.max_new_tokens,
        device=args.device,
        seed=args.seed,
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
    from ._gap import GapTable, gap_table, plot_gaps
    from ._storage import Distributions

    tables = []
    for f in args.files:
        data = Distributions.load(f)
        if args.max_positions is not None:
            data = data.subset(slice(0, args.max_positions))
        tables.append(
            gap_table(data, ks=args.k, device=args.device, slow_verifiers=not args.fast,
                      progress=not args.quiet)
        )
    table = GapTable.concat(tables)
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
        fig, axes = plt.subplots(1, len(temps), figsize=(4.5 * len(temps), 3.6), squeeze=False)
        for ax, t in zip(axes[0], temps, strict=True):
            plot_gaps(table, t, ax=ax)
        fig.tight_layout()
        fig.savefig(out / "llm_gap_table.png", dpi=120)
        plt.close(fig)
        print(f"wrote {out}/llm_gap_table.csv, .md, .png")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``extract`` and ``gap-table`` to the ``optaccept`` command."""
    e = subparsers.add_parser(
        "extract", help="extract target/draft next-token distributions from a model pair"
    )
    e.add_argument("-o", "--output", default="dists.npz", help="output file (default dists.npz)")
    e.add_argument("--model", default=None,
                   help="local folder of the target model (default: SmolLM2-135M-Instruct)")
    e.add_argument("--draft-model", default=None,
                   help="local folder of the draft model (default: the target)")
    e.add_argument("--target-temperature", type=float, default=1.0)
    e.add_argument("--draft-temperature", type=float, default=1.5)
    e.add_argument("--top-k", type=int, default=None, help="top-k truncation of both sides")
    e.add_argument("--top-p", type=float, default=None, help="top-p truncation of both sides")
    e.add_argument("--prompts", default=None,
                   help="prompt file (.txt one per line, or .jsonl); default: built-in set")
    e.add_argument("--limit", type=int, default=None, help="use only the first N prompts")
    e.add_argument("--max-new-tokens", type=int, default=32)
    e.add_argument("--batch-size", type=int, default=8)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, ...")
    e.add_argument("--checkpoint", default=None,
                   help="folder for per-batch shards; rerunning resumes an interrupted run")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=_extract)

    g = subparsers.add_parser(
        "gap-table", help="mean α* per draft law and α per verifier on extracted distributions"
    )
    g.add_argument("files", nargs="+", help="distribution files written by 'optaccept extract'")
    g.add_argument("-k", type=int, nargs="+", default=[2, 3, 4, 8], help="numbers of drafts")
    g.add_argument("--device", default="auto")
    g.add_argument("--max-positions", type=int, default=None)
    g.add_argument("--out", default=None, help="folder for CSV, Markdown and PNG outputs")
    g.add_argument("--fast", action="store_true",
                   help="skip the position-by-position rrs_wor and spechub columns")
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=_gap_table)
