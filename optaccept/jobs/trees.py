"""Main-job part for trees of drafts: accepted tokens per step on the built-in real pair.

1. The shipped draft trees (``optaccept.real.trees_path("iid", "extended")`` and
   ``("swor", "extended")``: SmolLM2-135M-Instruct as target, its layer-skip copy as
   draft, both top-50; 4 chains of 4 tokens, 12 trees after each of the 296 extended
   prompts — in quick mode the small files, 2 trees after each of the 36 built-in
   prompts): the table ``trees_accepted_tokens.{md,csv,tex}`` with its paired
   differences and the figure ``trees_accepted_tokens.{png,pdf}`` (one panel per draft
   length) — reproducible, committed.
2. Full mode only: a fresh extraction of the same trees from the model (on cuda when
   available), with its table and figure in the untracked ``<figures>/local/`` folder
   (its numbers depend on the machine's floating point), and the extraction speed.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Estimate, csv_number, write_table
from ..llm import builtin_prompts
from ..plots import paper_figure, plot_accepted_tokens, plot_budget_curve, save_figure
from ..plots._style import TEXT_WIDTH
from ..real import DraftTrees, tree_table, trees_path
from ..real._tables import VERIFIER_NAMES
from ..tree import BudgetCurve, TreeDraftLaw, budget_curve
from ..tree._budget import NAMES
from .llm import _one_torch_thread

__all__ = [
    "run",
    "SHIPPED_SETTINGS",
    "accepted_tokens_report",
    "record_budget_laws",
    "stored_budget_models",
    "StoredLaws",
    "BUDGET_LAWS",
    "budget_report",
    "budget_rows",
    "model_budget_curve",
]

#: How the shipped files were made (``optaccept.llm.extract_trees`` arguments).
SHIPPED_SETTINGS = dict(k=4, length=4, trees_per_prompt=2, seed=0)
#: the same, as extract_trees takes them: the chains' law apart
_SHIPPED_RUN = {
    ("rng" if key == "seed" else key): v for key, v in SHIPPED_SETTINGS.items() if key not in ("k", "length")
}


def _shipped_law(children: str) -> TreeDraftLaw:
    """The shipped trees' law: SHIPPED_SETTINGS' k chains of its length, drawn ``children``."""
    return TreeDraftLaw(length=SHIPPED_SETTINGS["length"], k=SHIPPED_SETTINGS["k"], children=children)


TOP_K = 50
#: node budgets of the best-tree curves
BUDGETS = (4, 8, 16, 32, 64)
#: The laws the budget curve reads from the built-in pair, stored once (``optaccept/data``).
BUDGET_LAWS = "smollm2_layerskip_budget_laws.npz"


def _sparse_law(row: Any) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero entries of a law: token ids (int32) and masses as stored (float32)."""
    row = np.asarray(row, dtype=np.float64)
    ids = np.flatnonzero(row).astype(np.int32)
    return ids, row[ids].astype(np.float32)


def _law_from_stored(masses: np.ndarray) -> np.ndarray:
    """Stored float32 masses as a float64 law, renormalised over the nonzero entries in id
    order (the same sum on every machine and in the recording run)."""
    v = np.asarray(masses, dtype=np.float64)
    return v / v.sum()


class StoredLaws:
    """The next-token laws of one model after one prompt, replayed from stored data.

    A sequence model (``optaccept.tree``) on a compact vocabulary: the token ids that occur
    in the stored laws of this prompt, in increasing order (ties keep their order), so a
    law is a short float64 vector.  A prefix whose law was not stored raises
    :class:`~optaccept.InputError`.
    """

    def __init__(self, laws: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]], vocab: np.ndarray, name: str):
        self.vocab = np.asarray(vocab)
        self.name = name
        self._laws = laws

    def next_token_probs(self, prefix: Any) -> np.ndarray:
        key = tuple(int(t) for t in prefix)
        if key not in self._laws:
            raise InputError(
                f"prefix: {self.name} has no stored law after {key}; record the laws again "
                "(optaccept.jobs.trees.record_budget_laws)"
            )
        ids, masses = self._laws[key]
        out = np.zeros(self.vocab.size)
        out[ids] = _law_from_stored(masses)
        return out

    def batch_next_token_probs(self, prefixes: Any) -> np.ndarray:
        return np.stack([self.next_token_probs(p) for p in prefixes])


class _Recorder:
    """A language-model sequence model whose laws are rounded as stored (float32 masses,
    renormalised by :func:`_law_from_stored`) and kept, so that the recording run reads
    exactly the laws a replay gives."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.laws: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        self.n = 0

    def batch_next_token_probs(self, prefixes: Any) -> np.ndarray:
        keys = [tuple(int(t) for t in p) for p in prefixes]
        todo = [k for k in dict.fromkeys(keys) if k not in self.laws]
        if todo:
            for k, row in zip(todo, self.model.batch(todo), strict=True):
                self.laws[k] = _sparse_law(row)
                self.n = row.size
        out = []
        for k in keys:
            ids, masses = self.laws[k]
            row = np.zeros(self.n)
            row[ids] = _law_from_stored(masses)
            out.append(row)
        return np.stack(out)

    def next_token_probs(self, prefix: Any) -> np.ndarray:
        return self.batch_next_token_probs([prefix])[0]

    def release(self) -> None:
        """Free the model's cached laws and key/value cache (the recorded laws stay)."""
        self.model._cache.clear()
        self.model._runner = None


def record_budget_laws(path: str | Path | None = None, *, budgets: tuple[int, ...] = BUDGETS, progress: bool = True):
    """Run the budget curve of the built-in pair (SmolLM2-135M-Instruct and its layer-skip
    draft, top-50, the 36 built-in prompts) on the model once and store every law it reads
    (token ids and float32 masses per prefix, per prompt and model) in ``path`` (default:
    ``optaccept/data/smollm2_layerskip_budget_laws.npz``).  One prompt at a time, so memory
    stays small.  Returns the path.  Needs the ``llm`` extra."""
    from tqdm.auto import tqdm

    from ..llm import sequence_models, smollm2_layerskip

    path = Path(path) if path is not None else Path(__file__).resolve().parents[1] / "data" / BUDGET_LAWS
    prompts = builtin_prompts()
    with _one_torch_thread():
        pair = smollm2_layerskip(top_k=TOP_K)
        recs = []
        for p in prompts:
            t, d = sequence_models(pair, p)
            recs.append((_Recorder(t), _Recorder(d)))
        for t, d in tqdm(recs, desc="root laws", disable=not progress):
            t.next_token_probs(())
            d.next_token_probs(())
            t.release()
            d.release()
        for t, d in tqdm(recs, desc="budget curve, per prompt", disable=not progress):
            budget_curve([(t, d)], budgets, calibration=recs)  # Sequoia's rates: every prompt's root
            t.release()
            d.release()
    return _save_laws(recs, path, budgets, [p.id for p in prompts])


def _save_laws(recs: list, path: Path, budgets: tuple[int, ...], prompt_ids: list) -> Path:
    """Write the recorded laws of (target, draft) recorders, one pair per prompt."""
    arrays: dict[str, np.ndarray] = {}
    for role, j in (("target", 0), ("draft", 1)):
        prompt_of, lengths, tokens, ids_len, ids, masses = [], [], [], [], [], []
        for i, rec in enumerate(recs):
            for key in sorted(rec[j].laws, key=lambda k: (len(k), k)):
                a, m = rec[j].laws[key]
                prompt_of.append(i)
                lengths.append(len(key))
                tokens.extend(key)
                ids_len.append(a.size)
                ids.append(a)
                masses.append(m)
        arrays[f"{role}_prompt"] = np.asarray(prompt_of, dtype=np.int16)
        arrays[f"{role}_prefix_length"] = np.asarray(lengths, dtype=np.int16)
        arrays[f"{role}_prefix_tokens"] = np.asarray(tokens, dtype=np.int32)
        arrays[f"{role}_law_size"] = np.asarray(ids_len, dtype=np.int16)
        arrays[f"{role}_ids"] = np.concatenate(ids).astype(np.int32)
        arrays[f"{role}_masses"] = np.concatenate(masses).astype(np.float32)
    arrays["budgets"] = np.asarray(budgets, dtype=np.int32)
    arrays["prompt_ids"] = np.asarray([str(i) for i in prompt_ids], dtype=np.str_)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    return path


def _compact(laws: dict, vocab: np.ndarray, where: dict[int, int]) -> dict:
    """Laws and prefixes on the compact vocabulary ``vocab`` (``where``: id -> index)."""
    return {tuple(where[t] for t in k): (np.searchsorted(vocab, a), m) for k, (a, m) in laws.items()}


def stored_budget_models(path: str | Path | None = None) -> list[tuple[StoredLaws, StoredLaws]]:
    """(target, draft) per built-in prompt, replayed from the stored laws (see
    :func:`record_budget_laws`): the input of the committed budget curve."""
    path = Path(path) if path is not None else Path(__file__).resolve().parents[1] / "data" / BUDGET_LAWS
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    n_prompts = int(data["prompt_ids"].size)
    per_prompt: list[dict[str, dict]] = [{"target": {}, "draft": {}} for _ in range(n_prompts)]
    for role in ("target", "draft"):
        tok_end = np.cumsum(data[f"{role}_prefix_length"].astype(np.int64))
        law_end = np.cumsum(data[f"{role}_law_size"].astype(np.int64))
        for r, i in enumerate(data[f"{role}_prompt"]):
            t0 = tok_end[r] - data[f"{role}_prefix_length"][r]
            l0 = law_end[r] - data[f"{role}_law_size"][r]
            key = tuple(int(x) for x in data[f"{role}_prefix_tokens"][t0 : tok_end[r]])
            per_prompt[int(i)][role][key] = (
                data[f"{role}_ids"][l0 : law_end[r]],
                data[f"{role}_masses"][l0 : law_end[r]],
            )
    out = []
    for i, laws in enumerate(per_prompt):
        vocab = np.unique(
            np.concatenate(
                [a for role in laws.values() for a, _ in role.values()]
                + [np.asarray(k, dtype=np.int64) for role in laws.values() for k in role if k]
            )
        )
        where = {int(v): j for j, v in enumerate(vocab)}

        out.append(
            (
                StoredLaws(_compact(laws["target"], vocab, where), vocab, f"target, prompt {i}"),
                StoredLaws(_compact(laws["draft"], vocab, where), vocab, f"draft, prompt {i}"),
            )
        )
    return out


def accepted_tokens_report(trees: dict[str, Any], stem: Path, what: str, *, progress: bool = True) -> list[Path]:
    """Table (md, csv, tex) and figure (png, pdf) of accepted tokens per step for
    stored trees (draft law -> DraftTrees); returns the paths written."""
    import matplotlib.pyplot as plt

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    table = tree_table(trees, progress=progress)
    first = next(iter(trees.values()))
    m = first.meta
    notes = (
        f"{what}.\n\nTarget: {m.get('target_model')} {m.get('target_warp')}; draft: {m.get('draft_model')} "
        f"{m.get('draft_warp')}. Trees: "
        + ", ".join(f"{d}: {t.n_trees} trees of {t.k} chains × {t.length} tokens" for d, t in trees.items())
        + ", cut to k chains of L tokens. "
        + f"Prompts: {len(set(first.prompt_index.tolist()))}. Entries: expected draft tokens accepted per step "
        "(bonus or correction token not counted) ± standard error clustered by prompt. L = 1: exact per prompt "
        "(token-level RRS with and without replacement, traversal = RRS without replacement at one token, batch SD "
        "of Yin et al., and the optimum α* of the root's draft law), averaged over the trees' prompts. L ≥ 2: "
        "Rao–Blackwellised mean over the trees; the optimum is known at this scale for k = 1 (= block "
        "verification, Sun et al.); elsewhere the upper bound of docs/trees.md §4b (one-token optimum at depth 1, "
        "union bound below) caps every lossless verifier. Verifier comparisons (second table): paired differences "
        "on the same trees, clustered by prompt; across draft laws (different trees after the same prompts), "
        "paired by prompt: the mean over prompts of the difference of the prompt means, with its standard "
        "error over the prompts."
    )
    md = stem.with_suffix(".md")
    md.write_text(
        f"# Accepted tokens per step on the built-in pair\n\n{notes}\n\n"
        + table.to_markdown()
        + "\n\n## Paired differences (same trees, or same prompts across draft laws)\n\n"
        + table.differences_markdown()
        + "\n"
    )
    tex = stem.with_suffix(".tex")
    tex.write_text(table.to_latex())
    csv_path = _write_csv(
        stem.with_suffix(".csv"),
        ["drafts", "verifier", "name", "k", "length", "value", "std_err", "trees", "prompts", "method"],
        table.rows,
    )
    diff_path = _write_csv(
        stem.parent / f"{stem.name}_differences.csv",
        ["drafts", "length", "k", "a", "b", "value", "std_err"],
        table.differences,
    )
    lengths = sorted({r["length"] for r in table.rows})
    ncols = 2 if len(lengths) > 2 else len(lengths)
    nrows = -(-len(lengths) // ncols)
    fig, axes = paper_figure(
        nrows, ncols, width=TEXT_WIDTH, height=2.0 * nrows + 0.9, squeeze=False, layout="constrained"
    )
    flat = axes.ravel()
    for i, (ax, L) in enumerate(zip(flat, lengths)):
        plot_accepted_tokens(table, L, ax=ax, legend=False)
        ax.set_ylabel("")  # one label for the whole figure (fig.supylabel below)
        if i < len(lengths) - ncols:
            ax.set_xlabel("")
    for ax in flat[len(lengths) :]:
        ax.set_visible(False)
    handles, labels = flat[len(lengths) - 1].get_legend_handles_labels()
    for ax in flat[: len(lengths)]:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab, strict=True):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)

    rank = {name: i for i, name in enumerate(VERIFIER_NAMES.values())}  # one legend order for any data
    order = sorted(range(len(labels)), key=lambda i: rank.get(labels[i], len(rank)))
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    fig.supylabel("expected accepted tokens per step", fontsize=8)
    fig.suptitle("SmolLM2-135M-Instruct, layer-skip draft (error bars ± 2 s.e.)")
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False, fontsize=7)
    figs = save_figure(fig, stem)
    plt.close(fig)
    print(table.to_markdown())
    return [md, csv_path, diff_path, tex, *figs]


def _write_csv(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> Path:
    """Rows (dicts) as CSV, floats with the tables' precision policy
    (``optaccept._lib.display.csv_number``: the same bytes on every machine)."""

    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(fields)
        for r in rows:
            w.writerow([csv_number(r[f]) if isinstance(r[f], float | np.floating) else r[f] for f in fields])
    return path


def budget_rows(curve: Any) -> tuple[list[str], list[list[Any]], list[str], list[list[Any]]]:
    """The budget curve as written: (header, rows) read by people — a row per budget N, a
    column per strategy, mean ± standard error — and (header, rows) of the CSV — a row per
    strategy and budget."""

    strategies = list(curve.values)
    header = ["N"] + [NAMES[s] for s in strategies]
    rows = [
        [int(n)] + [Estimate(float(curve.mean(s)[j]), float(curve.std_err(s)[j]), 3) for s in strategies]
        for j, n in enumerate(curve.budgets)
    ]
    data_head = ["strategy", "name", "budget", "value", "std_err", "positions"]
    data_rows = [
        [r["strategy"], r["name"], r["budget"], r["value"], r["std_err"], r["positions"]] for r in curve.rows()
    ]
    return header, rows, data_head, data_rows


def budget_report(
    curve: Any, stem: Path, what: str, *, pair: str = "SmolLM2-135M-Instruct, layer-skip draft, top-50"
) -> list[Path]:
    """Table (md, csv, tex) and figure (png, pdf) of a :class:`optaccept.tree.BudgetCurve`
    (``what``: its provenance, in the notes and caption; ``pair``: the figure's title)."""
    import matplotlib.pyplot as plt

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    notes = (
        f"{what}. Expected draft tokens accepted per step (target-only verification, which is optimal on a "
        "deterministic tree: docs/trees.md Proposition 1.1) of the best tree of N nodes found by each strategy, "
        f"mean ± standard error over {curve.meta['positions']} positions (one per prompt, the first token of the "
        "answer); Sequoia's positional rates calibrated in-sample on the same positions. The ceiling (the N "
        "most probable target prefixes) bounds every deterministic tree of N nodes."
    )
    header, rows, data_head, data_rows = budget_rows(curve)
    paths = write_table(
        stem,
        header,
        rows,
        title="The best tree for a node budget on the built-in pair",
        notes=notes,
        data=(data_head, data_rows),
        latex=["$N$"] + header[1:],
        caption="Expected draft tokens accepted per step by the best tree of $N$ nodes of each strategy "
        f"(mean ± standard error over {curve.meta['positions']} positions); {what}.",
    )
    ax = plot_budget_curve(
        curve, title=f"{pair}\nerror bars: ± 2 standard errors over {curve.meta['positions']} positions"
    )
    figs = save_figure(ax.figure, stem)
    plt.close(ax.figure)
    print(curve.to_markdown())
    return [*paths, *figs]


def run(figures_dir: Path, *, quick: bool = False) -> list[Path]:
    import matplotlib

    from ..llm import extract_trees, smollm2_layerskip

    matplotlib.use("Agg")

    figures_dir = Path(figures_dir)
    prompts = "builtin" if quick else "extended"
    shipped = {d: DraftTrees.load(trees_path(d, prompts)) for d in ("iid", "swor")}
    paths = accepted_tokens_report(
        shipped,
        figures_dir / "trees_accepted_tokens",
        f"From the draft trees shipped in optaccept/data (`trees_path(drafts, {prompts!r})`)",
        progress=not quick,
    )
    # committed: from the laws stored once in optaccept/data, in float64 (the same on every machine)
    t0 = time.perf_counter()
    curve = budget_curve(stored_budget_models(), BUDGETS, progress=not quick)
    print(f"   budget curves from the stored laws: {time.perf_counter() - t0:.1f} s")
    paths += budget_report(
        curve,
        figures_dir / "trees_budget",
        "SmolLM2-135M-Instruct and its layer-skip draft, top-k 50 (laws stored in optaccept/data)",
    )
    if quick:
        return paths

    fresh = {}
    with _one_torch_thread():
        pair = smollm2_layerskip(top_k=TOP_K)
        for d in ("iid", "swor"):
            t0 = time.perf_counter()
            fresh[d] = extract_trees(pair, builtin_prompts(), drafts=_shipped_law(d), **_SHIPPED_RUN)
            dt = time.perf_counter() - t0
            print(f"   extracted {fresh[d]} in {dt:.1f} s ({fresh[d].n_nodes / dt:.1f} nodes/s)")
    local = figures_dir / "local"
    paths += accepted_tokens_report(
        fresh, local / "trees_accepted_tokens", "From draft trees freshly extracted on this machine"
    )
    # local: the model's own float32 forward passes (their sums depend on the CPU)
    t0 = time.perf_counter()
    with _one_torch_thread():
        fresh_curve = model_budget_curve(pair, builtin_prompts(), BUDGETS)
    print(f"   budget curves from the model: {time.perf_counter() - t0:.1f} s")
    paths += budget_report(
        fresh_curve,
        local / "trees_budget",
        "SmolLM2-135M-Instruct and its layer-skip draft, top-k 50 (model run on this machine)",
    )
    return paths


def model_budget_curve(pair: Any, prompts: list, budgets: tuple[int, ...] = BUDGETS, *, progress: bool = True):
    """``tree.budget_curve`` of a model pair over ``prompts``, one prompt at a time (the
    models of a prompt, with their caches of vocabulary-sized laws, are dropped after it:
    memory stays that of one prompt).  Sequoia's rates are calibrated on the root laws of
    every prompt, as ``budget_curve`` on all the prompts at once does, so the result is the
    same."""
    from tqdm.auto import tqdm

    from ..llm import sequence_models

    roots = []
    for p in tqdm(prompts, desc="root laws", disable=not progress):
        t, d = sequence_models(pair, p)
        roots.append((t(()), d(())))
    calibration = [(_root_only(pt), _root_only(qt)) for pt, qt in roots]
    parts = []
    for p in tqdm(prompts, desc="budget curve, per prompt", disable=not progress):
        parts.append(budget_curve([sequence_models(pair, p)], budgets, calibration=calibration, progress=False))
    first = parts[0]
    values = {s: np.vstack([c.values[s] for c in parts]) for s in first.values}
    meta = {**first.meta, "positions": len(parts)}
    return BudgetCurve(first.budgets, values, first.rates, meta)


def _root_only(law: np.ndarray):
    """A sequence model that knows only its root law (for Sequoia's calibration)."""

    def model(prefix: Any) -> np.ndarray:
        if tuple(prefix):
            raise KeyError(tuple(prefix))
        return law

    return model
