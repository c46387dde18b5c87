"""Main-job part for the core: α* of the built-in example for every law and method,
a table, and the figure α* vs k."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .._errors import MethodError
from .._lib.display import Shown, write_table
from ..drafts import IID, Greedy, Independent, SpecHub, WithoutReplacement
from ..optimal import optimal_acceptance, verify
from ..plots import paper_figure, plot_alpha_vs_k, save_figure
from ..plots._style import TEXT_WIDTH

__all__ = ["EXAMPLE_P", "EXAMPLE_Q", "run", "example_table"]

#: The built-in example (target p, draft q) of the README.
EXAMPLE_P = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
EXAMPLE_Q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])

_METHODS = ("sorted", "closed_form", "subsets", "lp", "transport")


def example_laws(k: int = 3):
    q = EXAMPLE_Q
    return [
        IID(q, k),
        IID(q, 2),
        WithoutReplacement(q, k),
        Greedy(q, k),
        SpecHub(q),
        Independent([q, EXAMPLE_P[::-1]]),
    ]


def _gap_text(g: float) -> str:
    """A certificate gap for the table: its size, or ``< 1e-12`` below that (the last bits
    of an LP solve vary from run to run; the table must not)."""
    g = float(g)
    return "< 1e-12" if abs(g) < 1e-12 else f"{g:.1e}"


def _gap_cell(g: float | None):
    """The gap as a table cell: shown as :func:`_gap_text`, written to CSV as a number — 0
    below 1e-12 (the noise floor, so that re-runs give the same bytes); ``None`` if no gap."""

    if g is None:
        return None
    g = float(g)
    return Shown(0.0 if abs(g) < 1e-12 else float(f"{g:.1e}"), _gap_text(g))


def example_table(p: np.ndarray = EXAMPLE_P, k: int = 3) -> list[dict]:
    """α* for every law and every method that handles it, with the certificate check
    (``seconds``: the solve time, machine-dependent)."""
    rows = []
    for law in example_laws(k):
        for m in _METHODS:
            t0 = time.perf_counter()
            try:
                res = optimal_acceptance(p, law, m)
            except MethodError:
                continue
            dt = time.perf_counter() - t0
            chk = verify(p, law, res)
            rows.append(
                {
                    "law": repr(law),
                    "method": m,
                    "alpha_star": float(res.value),
                    "subset": " ".join(map(str, res.subset)) or "∅",
                    "recheck_gap": float(chk.value_gap),
                    "duality_gap": None if chk.duality_gap is None else float(chk.duality_gap),
                    "ok": chk.ok,
                    "seconds": dt,
                }
            )
    return rows


def run(figures_dir: Path, *, quick: bool = False) -> list[Path]:
    """Write ``alpha_example.{md,csv,tex}`` (α* of the built-in example by law and method, with
    certificates) and ``alpha_vs_k.{png,pdf}``; solve times go to the run log only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tqdm.auto import tqdm

    figures_dir = Path(figures_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)
    rows = example_table()
    header = ["draft law", "method", "α*", "certificate S", "re-check gap", "duality gap", "certified"]
    table = [
        [
            r["law"],
            r["method"],
            Shown(round(r["alpha_star"], 12), f"{r['alpha_star']:.12f}"),
            r["subset"],
            _gap_cell(r["recheck_gap"]),
            _gap_cell(r["duality_gap"]),
            "yes" if r["ok"] else "NO",
        ]
        for r in rows
    ]
    paths = write_table(
        figures_dir / "alpha_example",
        header,
        table,
        title="α* of the built-in example",
        notes=(
            f"Target p = {EXAMPLE_P.tolist()}, draft q = {EXAMPLE_Q.tolist()} (Independent: q and p reversed). "
            "Re-check gap: |α* − (★) recomputed at S from the law's own formula|; duality gap: cut − flow "
            "(LP methods); gaps below 1e-12 (rounding and solver noise, which varies from run to run) "
            "show as < 1e-12 (0 in the CSV). docs/theory.md §2."
        ),
        latex=[
            "draft law",
            "method",
            r"$\alpha^*$",
            "certificate $S$",
            "re-check gap",
            "duality gap",
            "certified",
        ],
        caption="Optimal acceptance of the built-in example for every draft law and method, with certificates.",
    )
    for r in rows:
        print(f"{r['law']:36s} {r['method']:12s} α* = {r['alpha_star']:.12f}  {1e3 * r['seconds']:8.2f} ms")

    rng = np.random.default_rng(2025)
    n = 5_000 if quick else 50_257
    p = rng.dirichlet(np.full(n, 0.05))
    q = 0.6 * p + 0.4 * rng.dirichlet(np.full(n, 0.05))
    fig, axes = paper_figure(1, 2, width=TEXT_WIDTH, height=2.7)
    with tqdm(total=2, desc="core: α* against k", leave=False) as bar:
        plot_alpha_vs_k(
            EXAMPLE_P,
            EXAMPLE_Q,
            ks=range(1, 9),
            ax=axes[0],
            legend=False,
            title=f"built-in example, $n = {EXAMPLE_P.size}$",
        )
        bar.update()
        plot_alpha_vs_k(
            p,
            q,
            ks=(1, 2, 3, 4, 6, 8, 12, 16),
            ax=axes[1],
            legend=False,
            title=f"random pair, $n = {n:,}$\n(Dirichlet(0.05), seed 2025)",
        )
        bar.update()
    fig.suptitle(r"Optimal acceptance $\alpha$* against the number of drafts: exact values (no error bars)")
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=3, frameon=False)
    paths += save_figure(fig, figures_dir / "alpha_vs_k")
    plt.close(fig)
    return paths
