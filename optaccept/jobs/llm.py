"""Main job: efficiency gaps on real SmolLM2 next-token distributions.

1. The shipped distributions (``optaccept.llm.sample_path()``: target at temperature 1.0,
   draft at 0.7, both top-50): the gap table as ``llm_gap_table.{md,csv,tex}`` and the
   figure ``llm_gap_table.{png,pdf}`` — reproducible, committed.
2. A fresh extraction from the model (target at temperature 1.0 and drafts at
   :data:`DRAFT_TEMPERATURES`, top-50, one shared set of target continuations), with
   progress bars, into the untracked ``<figures>/local/`` folder: its numbers depend on the
   machine's floating point (CPU threads, GPU), so they are not committed.
"""

from __future__ import annotations

import contextlib
import pathlib
import time
from collections.abc import Iterator

import numpy as np

__all__ = ["run"]

DRAFT_TEMPERATURES = (0.5, 0.7, 1.5)
KS = (2, 3, 4, 8)
TOP_K = 50


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[int]:
    """One torch thread for the model passes, whatever the machine's load: float32 sums
    depend on how a product is split between threads, so a thread count that followed the
    load (as it once did) made a re-run's figures differ in the 7th digit and flip near-ties
    of the budget search.  (On a busy 2-core machine, two threads also ran up to ten times
    slower.)"""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(old)


def _write_table(table, stem: pathlib.Path, what: str) -> list[pathlib.Path]:
    from .._display import write_table
    from ..plots import QUANTITY_LABELS

    temps = sorted({t for t, _, _ in table.values})
    names, rows = table._wide()  # mean ± standard error per (T_draft, k) and quantity
    findings = "\n".join(f"- {line}" for line in table.findings().splitlines())
    notes = (
        f"{what}. Entries: mean ± standard error over positions; α* columns: optimal acceptance per draft law "
        "(docs/theory.md §2), the others: exact acceptance α of each verifier (docs/theory.md §5); "
        "– : defined for k = 2 only.\n\n## Findings (share of positions)\n\n"
        + findings
        + "\n\n"
        + "\n".join(f"- {n}" for n in table.notes)
        + "\n\n## Table"
    )
    header = ["T_draft", "k"] + names
    latex = ["$T_{\\mathrm{draft}}$", "$k$"] + [
        QUANTITY_LABELS[n].replace("$\\alpha^*$, ", "$\\alpha^*$ ").replace("$\\alpha$, ", "") for n in names
    ]
    return write_table(
        stem,
        header,
        rows,
        title="Efficiency gaps on SmolLM2-135M-Instruct next-token distributions",
        notes=notes,
        latex_header=latex,
        latex_transpose=2,
        caption=f"Mean acceptance ± standard error over positions; {what}." if len(temps) else what,
    )


def _figure(table, stem: pathlib.Path, title: str) -> list[pathlib.Path]:
    import matplotlib.pyplot as plt

    from ..plots import TEXT_WIDTH, paper_figure, plot_gaps, plot_position_gaps, save_figure

    temps = sorted({t for t, _, _ in table.values})
    npanels = len(temps) + 1
    ncols = npanels if npanels <= 3 else 2
    nrows = -(-npanels // ncols)
    fig, axes = paper_figure(
        nrows, ncols, width=TEXT_WIDTH, height=2.6 * nrows + 1.3, squeeze=False, layout="constrained"
    )
    for ax in axes.ravel()[npanels:]:
        ax.set_visible(False)
    axes = axes.ravel()[:npanels]
    for ax, t in zip(axes, temps, strict=False):
        plot_gaps(
            table,
            t,
            ax=ax,
            legend=False,
            title=f"draft temperature {t:g}" if len(temps) > 1 else "mean acceptance against $k$",
        )
    t_scatter = 0.7 if 0.7 in temps else temps[0]
    plot_position_gaps(table, 2, "rrs", draft_temperature=t_scatter, ax=axes[-1])
    axes[-1].set_title("per position, $k = 2$" + (f", draft temperature {t_scatter:g}" if len(temps) > 1 else ""))
    fig.suptitle(title.replace(" (", "\n(", 1))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False)
    paths = save_figure(fig, stem)
    plt.close(fig)
    return paths


def _realised(shipped, stem: pathlib.Path, *, quick: bool, law: str = "iid") -> list[pathlib.Path]:
    """The optimal verifier *run* on a seeded subset of shipped positions (Monte Carlo
    acceptance ± SE next to α*, its rule's exact acceptance and practical verifiers): i.i.d.
    drafts at k = 2, 4, or drafts without replacement at k = 2, 3 (the verifier lists the
    draft sets of the rows' 50 drafted tokens)."""
    import matplotlib.pyplot as plt

    from .._display import write_table
    from ..llm._realised import realised_optimal
    from ..plots import COLUMN_WIDTH, describe_pair, paper_figure, save_figure

    iid = law == "iid"
    positions = (8 if quick else 24) if iid else (4 if quick else 12)
    table = realised_optimal(
        shipped,
        ks=(2, 4) if iid else (2, 3),
        positions=positions,
        rng=np.random.default_rng(0),
        size=20_000,
        progress=True,
        law=law,
    )
    head, body = table._wide()
    drafts = "i.i.d. drafts" if iid else "drafts without replacement"
    what = (
        f"{len(table.positions)} positions drawn with numpy.random.default_rng(0) from the shipped file; "
        f"{table.size:,} decoding steps per position and k ({drafts})"
    )
    against = ", RRS and K-SEQ" if iid else " and RRS without replacement"
    paths = write_table(
        stem,
        head,
        body,
        title="The optimal verifier, run on real SmolLM2 distributions" + ("" if iid else f" ({drafts})"),
        notes=what,
        caption="Optimal verifier run on real distributions"
        + ("" if iid else f" ({drafts})")
        + f": mean acceptance (Monte Carlo $\\pm$ SE) against $\\alpha^*${against}",
    )
    fig, ax = paper_figure(width=COLUMN_WIDTH, height=2.8)
    table.plot(ax=ax)
    ax.legend(loc="upper left", frameon=False)
    ax.set_title(describe_pair(shipped.meta).replace("; ", ";\n"))
    fig.tight_layout()
    paths += save_figure(fig, stem)
    plt.close(fig)
    return paths


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Gap table of the shipped distributions (committed) and of a fresh SmolLM2 extraction
    (``<figures>/local/``).  ``quick``: the first 100 shipped positions, and 4 prompts x 8
    tokens instead of 12 prompts x 16 tokens for the fresh extraction."""
    import matplotlib

    matplotlib.use("Agg")

    from .._storage import Distributions
    from ..llm._data import sample_path
    from ..llm._extract import extract_sweep
    from ..llm._gap import PositionGapTable, gap_table
    from ..llm._models import ModelPair
    from ..llm._prompts import builtin_prompts
    from ..plots import describe_pair

    figures_dir = pathlib.Path(figures_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)

    shipped = Distributions.load(sample_path())
    if quick:
        shipped = shipped.subset(slice(0, 100))
    t0 = time.perf_counter()
    table = gap_table(shipped, ks=KS, device="cpu", progress=True)
    print(f"llm: gap table of {len(shipped)} shipped positions in {time.perf_counter() - t0:.1f} s")
    what = (
        f"{describe_pair(shipped.meta)}; {len(shipped)} positions of the shipped file (`optaccept.llm.sample_path()`)"
    )
    paths = _write_table(table, figures_dir / "llm_gap_table", what)
    paths += _figure(
        table,
        figures_dir / "llm_gap_table",
        f"{describe_pair(shipped.meta)} ({len(shipped)} positions; error bars ± 1 standard error)",
    )

    paths += _realised(shipped, figures_dir / "llm_realised_optimal", quick=quick)
    paths += _realised(shipped, figures_dir / "llm_realised_optimal_swor", quick=quick, law="swor")

    local = figures_dir / "local"
    n_prompts, n_tokens = (4, 8) if quick else (12, 16)
    # Every other built-in prompt: all kinds are represented.
    prompts = builtin_prompts()[::2][:n_prompts]
    with _one_torch_thread() as threads:
        t0 = time.perf_counter()
        pair = ModelPair.smollm2(target_temperature=1.0, draft_temperature=DRAFT_TEMPERATURES[0], top_k=TOP_K)
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        sweep = extract_sweep(
            pair, DRAFT_TEMPERATURES, prompts, max_new_tokens=n_tokens, device="auto", seed=0, progress=True
        )
        t_extract = time.perf_counter() - t0
        n_pos = len(next(iter(sweep.values())))
        t0 = time.perf_counter()
        tables = [gap_table(d, ks=KS, device="auto", progress=True) for d in sweep.values()]
        t_gap = time.perf_counter() - t0
    fresh = PositionGapTable.concat(tables)
    meta = next(iter(sweep.values())).meta
    what = (
        f"fresh extraction: {meta.get('target_model', '?')} at target temperature 1.0, drafts at temperatures "
        f"{', '.join(f'{t:g}' for t in DRAFT_TEMPERATURES)}, top-{TOP_K}; {len(prompts)} built-in prompts x up to "
        f"{n_tokens} tokens = {n_pos} positions (seed 0)"
    )
    paths += _write_table(fresh, local / "llm_fresh_gap_table", what)
    paths += _figure(
        fresh,
        local / "llm_fresh_gap_table",
        f"fresh extraction, SmolLM2-135M-Instruct, target T = 1, top-{TOP_K} ({n_pos} positions)",
    )
    print(
        f"llm: SmolLM2 load {t_load:.1f}s, extraction {n_pos} positions in {t_extract:.1f}s "
        f"({n_pos / t_extract:.1f} positions/s), gap table {t_gap:.1f}s, "
        f"{threads} torch thread(s)"
    )
    print(fresh.to_markdown())
    print(fresh.findings())
    return paths
