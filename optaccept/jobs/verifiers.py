"""Main job of the verifiers: Khisti et al.'s Figure 2 and a gap table on a random ensemble.

Figure 2 (Khisti et al., ICLR 2025): alphabet of 3, draft q uniform, target
p = (1/3, t, 2/3 − t) and p = (1/6, t, 5/6 − t); two i.i.d. drafts; α* against K-SEQ
(SpecTr) and RRS (SpecInfer).  α* is computed in exact rational arithmetic on the grid
t = j/180, so the plateau α* = 1 is read off the computation.

Gap ensemble (stated): ``ENSEMBLE_SIZE`` instances, n = ``ENSEMBLE_N``, p and q
independent Dirichlet(1/2, …, 1/2) from ``numpy.random.default_rng(SEED)``,
k ∈ ``ENSEMBLE_KS``.
"""

from __future__ import annotations

import json
import pathlib
from fractions import Fraction
from typing import Any

import numpy as np

from .._lib.display import CSV_FLOOR, Estimate, Shown, csv_number, write_table
from .._lib.statistics import std_err as sample_std_err
from ..drafts import IID
from ..optimal import optimal_acceptance
from ..plots import paper_figure, plot_acceptance_curves, plot_gap_heatmap, save_figure
from ..plots._style import TEXT_WIDTH, VERIFIER_LABELS

__all__ = ["run", "figure2_data", "gap_ensemble", "SEED", "ENSEMBLE_N", "ENSEMBLE_SIZE", "ENSEMBLE_KS"]

SEED = 2025
ENSEMBLE_N = 10
ENSEMBLE_SIZE = 200
ENSEMBLE_KS = (1, 2, 3, 4)
#: Grid denominator of t in Figure 2.
GRID = 180


def figure2_data(first: Fraction, grid: int = GRID) -> dict[str, Any]:
    """Curves of Khisti et al.'s Figure 2 for target (first, t, 1 − first − t), q uniform on 3.

    Returns a dict with ``t`` (floats), ``optimal`` (α*, exact then float), ``K-SEQ`` and
    ``RRS`` (floats), and ``plateau`` = (smallest t, largest t) on the grid with α* = 1
    exactly (None if there is none).
    """
    from ..verifiers import RRS, KSeq

    first = Fraction(first)
    third = Fraction(1, 3)
    law = IID([third] * 3, 2)
    qf = np.full(3, 1 / 3)
    rest = 1 - first
    ts, star, kseq, rrs, ones = [], [], [], [], []
    j = 0
    while Fraction(j, grid) <= rest:
        t = Fraction(j, grid)
        p = [first, t, rest - t]
        a = optimal_acceptance(p, law).value
        pf = np.array([float(v) for v in p])
        ts.append(float(t))
        star.append(float(a))
        if a == 1:
            ones.append(t)
        kseq.append(KSeq().acceptance(pf, qf, 2))
        rrs.append(RRS().acceptance(pf, qf, 2))
        j += 1
    plateau = (min(ones), max(ones)) if ones else None
    return {"t": ts, "optimal": star, "K-SEQ": kseq, "RRS": rrs, "plateau": plateau}


def gap_ensemble(
    size: int = ENSEMBLE_SIZE, n: int = ENSEMBLE_N, ks: tuple[int, ...] = ENSEMBLE_KS, seed: int = SEED
) -> dict[str, Any]:
    """Mean acceptance and mean gap to α* of each verifier's own draft law over the
    stated ensemble; also the mean gap to α* of i.i.d. drafts."""
    from tqdm.auto import tqdm

    from ..verifiers import ALL

    rng = np.random.default_rng(seed)
    sums: dict[str, dict[int, list[float]]] = {v.name: {k: [] for k in ks} for v in ALL}
    for _ in tqdm(range(size), desc="gap ensemble", leave=False):
        p = rng.dirichlet(np.full(n, 0.5))
        q = rng.dirichlet(np.full(n, 0.5))
        for k in ks:
            iid_star = float(optimal_acceptance(p, IID(q, k)).value)
            for v in ALL:
                if not v.supports(k):
                    continue
                a = v.acceptance(p, q, k)
                own = float(optimal_acceptance(p, v.drafts(q, k)).value)
                sums[v.name][k].append((a, own - a, iid_star - a))
    out: dict[str, Any] = {"seed": seed, "n": n, "size": size, "ks": list(ks), "rows": {}}
    for name, row in sums.items():
        out["rows"][name] = {}
        for k, vals in row.items():
            if vals:
                arr = np.array(vals)
                out["rows"][name][k] = {
                    "mean_alpha": float(arr[:, 0].mean()),
                    "mean_gap_own": float(arr[:, 1].mean()),
                    "sem_gap_own": sample_std_err(arr[:, 1]),
                    "max_gap_own": float(arr[:, 1].max()),
                    "mean_gap_iid": float(arr[:, 2].mean()),
                }
    return out


def _r(x: float) -> float:
    """Round to 4 decimals without printing -0.0000."""
    return round(x, 4) + 0.0


def _floor(x: float) -> float:
    """0 below 1e-12 (rounding noise of a gap that is exactly 0), else ``x``."""

    return 0.0 if abs(x) < CSV_FLOOR else x


def _label(name: str) -> str:
    return VERIFIER_LABELS.get(name, name)


def _gap_rows(ens: dict[str, Any]) -> list[list[Any]]:
    """The table as read, a row per verifier and k: mean α, the mean gap to α* of the
    verifier's own draft law ± standard error, and the mean gap to α* of i.i.d. drafts (the
    verifier's name on the first row of its group only)."""

    rows = []
    for name, row in ens["rows"].items():
        first = True
        for k in ens["ks"]:
            c = row.get(k)
            if c is None:
                continue
            rows.append(
                [
                    _label(name) if first else "",
                    int(k),
                    Shown(c["mean_alpha"], f"{c['mean_alpha']:.4f}"),
                    Estimate(_r(c["mean_gap_own"]), _floor(c["sem_gap_own"])),
                    Shown(c["mean_gap_iid"], f"{_r(c['mean_gap_iid']):+.4f}"),
                ]
            )
            first = False
    return rows


def _gap_data(ens: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The same numbers as data (one per CSV cell, long form): a row per verifier and k."""
    head = [
        "verifier",
        "k",
        "mean acceptance",
        "mean gap to own-law alpha*",
        "mean gap to own-law alpha* SE",
        "mean gap to i.i.d. alpha*",
    ]
    rows = [
        [name, int(k), c["mean_alpha"], c["mean_gap_own"], c["sem_gap_own"], c["mean_gap_iid"]]
        for name, row in ens["rows"].items()
        for k in ens["ks"]
        if (c := row.get(k)) is not None
    ]
    return head, rows


def _rounded(obj):
    """Floats as the tables' CSVs hold them (``optaccept._lib.display.csv_number``: 10 significant
    digits, 0 below 1e-12), so that a re-run rewrites the same bytes (the last bits of a mean
    gap and its standard error depend on the summation order)."""

    if isinstance(obj, float):
        return float(csv_number(obj))
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    return obj


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Write ``verifiers_khisti_fig2.{png,pdf}``, ``verifiers_gap.{png,pdf}``,
    ``verifiers_gap.{md,csv,tex}`` and ``verifiers_gap.json`` into ``figures_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tqdm.auto import tqdm

    out = pathlib.Path(figures_dir)
    out.mkdir(parents=True, exist_ok=True)
    grid = 90 if quick else GRID
    figs = []
    fig, axes = paper_figure(1, 2, width=TEXT_WIDTH, height=2.9, sharey=True)
    targets = ((Fraction(1, 3), "(1/3, t, 2/3 − t)"), (Fraction(1, 6), "(1/6, t, 5/6 − t)"))
    for ax, (first, label) in zip(axes, tqdm(targets, desc="verifiers: Khisti et al. Fig. 2 (exact)", leave=False)):
        d = figure2_data(first, grid)
        d["label"] = label
        figs.append(d)
        plot_acceptance_curves(
            d["t"],
            {k: d[k] for k in ("optimal", "K-SEQ", "RRS")},
            title=f"$p = {label.replace('−', '-')}$",
            ax=ax,
            legend=False,
        )
    axes[1].set_ylabel("")
    fig.suptitle(
        "Two i.i.d. drafts, $q$ uniform on 3 tokens (Khisti et al., Fig. 2); "
        f"$\\alpha$* exact on the grid $t = j/{grid}$"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=4, frameon=False)
    paths = save_figure(fig, out / "verifiers_khisti_fig2")
    plt.close(fig)

    ens = gap_ensemble(size=30 if quick else ENSEMBLE_SIZE)
    fig, ax = paper_figure(width=TEXT_WIDTH, height=3.4)
    plot_gap_heatmap(
        {n: {int(k): c["mean_gap_own"] for k, c in row.items()} for n, row in ens["rows"].items()},
        {n: {int(k): c["sem_gap_own"] for k, c in row.items()} for n, row in ens["rows"].items()},
        title=(
            "Mean gap $\\alpha$*(own draft law) − $\\alpha$ ± standard error\n"
            f"{ens['size']} random pairs, $n = {ens['n']}$, $p, q \\sim$ Dirichlet(1/2) (seed {ens['seed']})"
        ),
        ax=ax,
    )
    fig.tight_layout()
    paths += save_figure(fig, out / "verifiers_gap")
    plt.close(fig)

    notes = (
        f"Ensemble: {ens['size']} instances, n = {ens['n']}, p and q independent Dirichlet(1/2) "
        f"(numpy default_rng({ens['seed']})).  Per verifier and k (only the k it is defined for): mean α, "
        "the gap α*(own draft law) − α (mean ± standard error) and the gap α*(i.i.d. drafts) − α (mean; "
        "negative where the verifier's own law drafts better than i.i.d.).  docs/theory.md §5.\n\n"
        "Khisti et al. Figure 2 (q uniform on 3 tokens, two i.i.d. drafts), plateau α* = 1 on the grid "
        f"t = j/{grid}:\n"
        + "\n".join(
            f"- target {d['label']}: "
            + ("none" if d["plateau"] is None else f"t ∈ [{d['plateau'][0]}, {d['plateau'][1]}]")
            for d in figs
        )
    )
    paths += write_table(
        out / "verifiers_gap",
        ["verifier", "k", "α", "gap to α* (own law)", "gap to α* (i.i.d.)"],
        _gap_rows(ens),
        title="Verifiers: gap to the optimum",
        notes=notes,
        data=_gap_data(ens),
        latex=[
            "verifier",
            "$k$",
            r"$\alpha$",
            r"$\alpha^*_{\mathrm{own}} - \alpha$",
            r"$\alpha^*_{\mathrm{iid}} - \alpha$",
        ],
        caption=(
            f"Mean acceptance $\\alpha$ of each verifier over {ens['size']} random pairs ($n = {ens['n']}$), "
            "the mean gap to the optimum of its own draft law ± standard error, and the mean gap to the "
            "optimum of i.i.d. drafts (negative: the verifier's own law drafts better)."
        ),
    )
    p4 = out / "verifiers_gap.json"
    js = dict(ens)
    js["figure2"] = [
        {"target": d["label"], "plateau": None if d["plateau"] is None else [str(x) for x in d["plateau"]]}
        for d in figs
    ]
    p4.write_text(json.dumps(_rounded(js), indent=2) + "\n")
    paths.append(p4)
    for d in figs:
        pl = d["plateau"]
        print(f"   Figure 2, p = {d['label']}: α* = 1 for t in " + ("(none)" if pl is None else f"[{pl[0]}, {pl[1]}]"))
    for name, row in ens["rows"].items():
        print(f"   {name:12s} " + "  ".join(f"k={k}: gap {_r(c['mean_gap_own']):.4f}" for k, c in row.items()))
    return paths
