"""Main job: efficiency gaps on real SmolLM2 next-token distributions.

1. The shipped distributions (``optaccept.real.sample_path()``: target at temperature 1.0,
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

from .._lib.display import CSV_FLOOR, Estimate, write_table
from .._lib.statistics import std_err as sample_std_err
from ..llm import builtin_prompts
from ..plots import paper_figure, plot_gaps, save_figure
from ..plots._llm import describe_pair, plot_position_gaps
from ..plots._style import COLUMN_WIDTH, QUANTITY_LABELS, TEXT_WIDTH, legend_under
from ..real import Distributions, realised_optimal, sample_path

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


#: The draft law whose optimum α* each verifier of the gap table is measured against (its own
#: draft law: NSS, RRS and K-SEQ draw i.i.d. drafts).  SpecHub's own law is not in the table.
OWN_LAW = {
    "nss": "alpha_iid",
    "rrs": "alpha_iid",
    "kseq": "alpha_iid",
    "rrs_wor": "alpha_swor",
    "greedy_verifier": "alpha_greedy",
}
_LAW_WORDS = {"alpha_iid": "i.i.d.", "alpha_swor": "w/o repl.", "alpha_greedy": "greedy"}


def _estimate(v: np.ndarray):
    """Mean ± standard error over positions of a per-position array."""

    sem = sample_std_err(v)
    mean = float(v.mean())
    # below 1e-12: rounding noise of a constant (e.g. α* = 1 at every position)
    return Estimate(0.0 if abs(mean) < CSV_FLOOR else mean, 0.0 if sem < CSV_FLOOR else sem)


def gap_rows(table) -> tuple[list[str], list[list], list[str], list[list], list[str]]:
    """The gap table as written: (header, rows) read by people — a row per quantity (optima,
    verifiers, then each verifier's gap α*(own law) − α, paired per position), a column per k
    (and draft temperature) —, (header, rows) of the CSV — a row per (draft temperature, k) —,
    and the notes on the quantities left out (SD, the same at every k; K-SEQ's rule
    acceptance, which equals its output-in-drafts rate on these positions)."""

    vals = table.values
    temps = sorted({t for t, _, _ in vals})
    keys = sorted({(t, k) for t, k, _ in vals})
    present = [n for n in QUANTITY_LABELS if any(key[2] == n for key in vals)]
    optima = [n for n in present if n.startswith("alpha_")]
    verifiers = [n for n in present if not n.startswith("alpha_") and n not in ("sd", "kseq_rule")]
    gaps = [n for n in verifiers if OWN_LAW.get(n) in optima]

    def label(n: str) -> str:
        return QUANTITY_LABELS[n].replace("$\\alpha$*, ", "α* ").replace("$\\alpha$, ", "")

    def gap_label(n: str) -> str:
        return f"gap α*({_LAW_WORDS[OWN_LAW[n]]}) − α, " + label(n)

    def cell(t, k, n, gap=False):
        v = vals.get((t, k, n))
        if v is None:
            return None
        return _estimate(vals[(t, k, OWN_LAW[n])] - v) if gap else _estimate(v)

    ks = sorted({k for _, k in keys})
    several = len(temps) > 1
    header = (["T_draft"] if several else []) + ["quantity"] + [f"k = {k}" for k in ks]
    rows = []
    for t in temps:
        lead = [f"{t:g}"] if several else []
        for n in optima + verifiers:
            rows.append(lead + [label(n)] + [cell(t, k, n) for k in ks])
        for n in gaps:
            rows.append(lead + [gap_label(n)] + [cell(t, k, n, gap=True) for k in ks])
    data_head = ["T_draft", "k"] + optima + verifiers + [f"gap_{n}" for n in gaps]
    data_rows = [
        [float(t), int(k)] + [cell(t, k, n) for n in optima + verifiers] + [cell(t, k, n, True) for n in gaps]
        for t, k in keys
    ]
    notes = []
    for t in temps:
        sd = [vals[(t, k, "sd")] for k in ks if (t, k, "sd") in vals]
        if sd:
            notes.append(
                "SD with one draft (α* at k = 1; the same at every k, left out of the table)"
                + (f", draft temperature {t:g}" if several else "")
                + f": {_estimate(sd[0])}."
            )
    rule = [
        np.max(np.abs(vals[(t, k, "kseq_rule")] - vals[(t, k, "kseq")]))
        for t, k in keys
        if (t, k, "kseq") in vals and (t, k, "kseq_rule") in vals
    ]
    if rule:
        notes.append(
            "K-SEQ (SpecTr) is shown as the probability that its output is one of the drafts; the probability "
            f"that its rule accepts a draft differs from it by at most {max(rule):.1e} per position here "
            "(left out of the table; both are columns of `PositionGapTable`)."
        )
    return header, rows, data_head, data_rows, notes


def _write_table(table, stem: pathlib.Path, what: str) -> list[pathlib.Path]:
    header, rows, data_head, data_rows, left_out = gap_rows(table)
    findings = "\n".join(f"- {line}" for line in table.findings().splitlines())
    notes = (
        f"{what}. Entries: mean ± standard error over positions; α* rows: optimal acceptance per draft law "
        "(docs/theory.md §2); verifier rows: exact acceptance α of each verifier (docs/theory.md §5); gap rows: "
        "α* of the verifier's own draft law − α, mean ± standard error of the per-position differences; "
        "– : defined for k = 2 only.\n\n"
        + "\n".join(f"- {n}" for n in left_out)
        + "\n\n## Findings (share of positions)\n\n"
        + findings
        + "\n\n"
        + "\n".join(f"- {n}" for n in table.notes)
        + "\n\n## Table"
    )
    latex_header = [
        ("$T_{\\mathrm{draft}}$" if h == "T_draft" else "" if h == "quantity" else f"${h}$") for h in header
    ]
    return write_table(
        stem,
        header,
        rows,
        title="Efficiency gaps on SmolLM2-135M-Instruct next-token distributions",
        notes=notes,
        latex=latex_header,
        data=(data_head, data_rows),
        caption=f"Mean acceptance ± standard error over positions, and each verifier's gap to the optimum of its "
        f"own draft law; {what}. {' '.join(left_out)}",
    )


def _figure(table, stem: pathlib.Path, title: str) -> list[pathlib.Path]:
    import matplotlib.pyplot as plt

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

    iid = law == "iid"
    positions = (8 if quick else 24) if iid else (4 if quick else 12)
    table = realised_optimal(
        shipped,
        ks=(2, 4) if iid else (2, 3),
        positions=positions,
        rng=np.random.default_rng(0),
        samples=20_000,
        progress=True,
        drafts=law,
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
    fig, ax = paper_figure(width=COLUMN_WIDTH, height=3.9, layout="constrained")
    table.plot(ax=ax)
    for line in ax.get_lines():  # figure text writes α* with a full-size star (no 4.9 pt superscript)
        line.set_label(line.get_label().replace(r"$\alpha^*$", r"$\alpha$*"))
    for coll in ax.containers:
        coll.set_label(coll.get_label().replace(r"$\alpha^*$", r"$\alpha$*"))
    legend_under(ax)
    ax.set_title(describe_pair(shipped.meta).replace("; ", ";\n") + "\nerror bars: ± 2 standard errors (Monte Carlo)")
    paths += save_figure(fig, stem)
    plt.close(fig)
    return paths


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Gap table of the shipped distributions (committed) and of a fresh SmolLM2 extraction
    (``<figures>/local/``).  ``quick``: the first 100 shipped positions, and 4 prompts x 8
    tokens instead of 12 prompts x 16 tokens for the fresh extraction."""
    import matplotlib

    matplotlib.use("Agg")

    from ..llm import ModelPair, PositionGapTable, position_gap_table
    from ..llm._extract import extract_sweep

    figures_dir = pathlib.Path(figures_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)

    shipped = Distributions.load(sample_path())
    if quick:
        shipped = shipped.subset(slice(0, 100))
    t0 = time.perf_counter()
    table = position_gap_table(shipped, ks=KS, device="cpu", progress=True)
    print(f"llm: gap table of {len(shipped)} shipped positions in {time.perf_counter() - t0:.1f} s")
    what = (
        f"{describe_pair(shipped.meta)}; {len(shipped)} positions of the shipped file (`optaccept.real.sample_path()`)"
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
            pair, DRAFT_TEMPERATURES, prompts, max_new_tokens=n_tokens, device="auto", rng=0, progress=True
        )
        t_extract = time.perf_counter() - t0
        n_pos = len(next(iter(sweep.values())))
        t0 = time.perf_counter()
        tables = [position_gap_table(d, ks=KS, device="auto", progress=True) for d in sweep.values()]
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
