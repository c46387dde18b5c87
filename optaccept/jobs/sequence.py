"""Main job of the sequence-level theory: figures and a table of values at a fixed seed."""

from __future__ import annotations

import pathlib

import numpy as np

from .. import real
from .._lib.display import Estimate, Shown, write_table
from ..plots import paper_figure, plot_pareto_front, save_figure
from ..plots._llm import describe_pair
from ..plots._sequence import plot_batch_improvement, plot_batch_rejections, plot_decoder_losses, plot_simulation
from ..plots._style import TEXT_WIDTH
from ..sequence import (
    MarkovPair,
    PositionPair,
    acceleration,
    batch_expected_rejections,
    decoder_losses,
    expected_rejections,
    simulate_rejections,
)
from ..sequence._batch import batch_rejection_limit, simulate_batch_rejections

__all__ = ["run", "SEED"]

#: The stated seed: ``MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(SEED))``.
SEED = 10


def _llm_pair():
    """The shipped language-model distributions as a PositionPair (columns with no mass dropped),
    or None when the file is not available."""
    try:
        path = real.sample_path()
        if not path.exists():
            return None
        dists = real.Distributions.load(path)
    except (ImportError, OSError, ValueError):
        return None

    keep = np.flatnonzero((dists.target > 0).any(0) | (dists.draft > 0).any(0))
    return PositionPair(dists.target[:, keep], dists.draft[:, keep]), dists


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Write ``sequence_rejections.{png,pdf}``, ``sequence_pareto.{png,pdf}`` and
    ``sequence_values.{md,csv,tex}``.

    Parameters
    ----------
    figures_dir : pathlib.Path
        Output folder (created if missing).
    quick : bool
        Fewer Monte Carlo runs and batch sizes.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tqdm.auto import tqdm

    out_dir = pathlib.Path(figures_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=5, desc="sequence: exact recursions and Monte Carlo", leave=False)
    chain = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(SEED))
    chain_words = f"Markov pair, 7 states, $T = 50$, seed {SEED}"
    runs = 1000 if quick else 5000
    exact = expected_rejections(chain)
    sim = simulate_rejections(chain, samples=runs, rng=np.random.default_rng(SEED + 1))
    bar.update()
    Ms = [1, 2, 4, 8, 16] if quick else [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64, 128, 256]
    simulated = {}
    for M in (4, 5):
        for cont in ("single", "matching"):
            simulated[(cont, M)] = simulate_batch_rejections(
                chain, M, samples=runs // 2, rng=np.random.default_rng(SEED + M), continuation=cont
            )
    bar.update()

    fig, axes = paper_figure(1, 3, width=TEXT_WIDTH, height=3.7, layout="constrained")
    plot_simulation(sim, exact, ax=axes[0])
    axes[0].set_title(f"Theorem 1: speculative decoding\n{chain_words}")
    plot_batch_rejections(chain, Ms, simulated=simulated, ax=axes[1])
    axes[1].set_title("Theorem 3, Proposition 1: batch SD\n(same chain; $M$ draft sequences)")
    plot_batch_improvement(list(range(1, 21)), ax=axes[2])
    axes[2].set_title("Theorem 3's closed forms:\none-step batch improvement")
    fig.suptitle(
        "Rejections per sequence: exact values (lines); Monte Carlo band exact ± 2σ/√runs, crosses ± 5 standard errors"
    )
    paths = save_figure(fig, out_dir / "sequence_rejections")
    plt.close(fig)
    bar.update()

    rng = np.random.default_rng(SEED)
    p = rng.dirichlet(np.full(30, 0.5))
    q = rng.dirichlet(np.full(30, 0.5))
    eps = np.linspace(0.0, 0.1, 21)
    llm = _llm_pair()
    fig, axes = paper_figure(1, 3 if llm else 2, width=TEXT_WIDTH, height=3.6, layout="constrained")
    plot_pareto_front(p, q, ax=axes[0])
    axes[0].set_title(f"Theorems 4–5: bias against rejection\n$n = 30$, $p, q \\sim$ Dir(1/2), seed {SEED}")
    plot_decoder_losses(p, q, eps, ax=axes[1])
    axes[1].set_title("Decoding-OPT against\nDecoding-UNO over $\\varepsilon$ (same $p, q$)")
    if llm:
        plot_decoder_losses(llm[0].target, llm[0].draft, eps, ax=axes[2])
        axes[2].set_title(f"same, mean over {llm[0].horizon} positions\nof real distributions (SmolLM2)")
    fig.suptitle("Bias and rejection of the decoders: exact values (no error bars)")
    paths += save_figure(fig, out_dir / "sequence_pareto")
    plt.close(fig)
    bar.update()

    # values at the stated seed: one quantity a row, as numbers (Estimate: Monte Carlo ± SE)

    def exact_(v: float, digits: int = 6) -> Shown:
        return Shown(float(f"{v:.12g}"), f"{v:.{digits}f}")

    names = {"single": "Yin et al.'s batch SD", "matching": "token tree"}
    rows = [
        ("Theorem 1: exact E[N_rej]", exact_(exact)),
        (f"Monte Carlo of speculative decoding ({runs} runs)", Estimate(sim.mean, sim.std_err)),
        ("acceleration T / E[N_rej]", exact_(acceleration(chain), 4)),
    ]
    for cont in ("single", "matching"):
        for M in (2, 4, 5, 16):
            rows.append(
                (f"{names[cont]}, exact, M = {M}", exact_(batch_expected_rejections(chain, M, continuation=cont)))
            )
        for M in (4, 5):
            est = simulated[(cont, M)]
            rows.append((f"{names[cont]}, Monte Carlo, M = {M} ({est.runs} runs)", Estimate(est.mean, est.std_err)))
        rows.append((f"{names[cont]}, limit as M → ∞", exact_(batch_rejection_limit(chain, continuation=cont))))

    def losses(d, where: str) -> None:
        for e, r, lo, lu in zip(d.eps, d.rejection, d.loss_opt, d.loss_uno, strict=True):
            for what, v in (("P(reject)", r), ("bias, Decoding-OPT", lo), ("bias, Decoding-UNO", lu)):
                rows.append((f"ε = {e:g}, {where}: {what}", exact_(v, 4)))

    pos = PositionPair(np.tile(p, (4, 1)), np.tile(q, (4, 1)))
    losses(decoder_losses(pos.target, pos.draft, [0.0, 0.02, 0.05]), "n = 30 example")
    if llm:
        pair, dists = llm
        where = f"real distributions ({pair.horizon} positions, {describe_pair(dists.meta)})"
        rows.append((f"{where}: Σ TV", exact_(expected_rejections(pair), 4)))
        rows.append((f"{where}: Yin et al.'s batch SD with M = 4", exact_(batch_expected_rejections(pair, 4), 4)))
        losses(decoder_losses(pair.target, pair.draft, [0.0, 0.02, 0.05]), "real distributions")
    paths += write_table(
        out_dir / "sequence_values",
        ["quantity", "value"],
        rows,
        title="Sequence-level values (Yin et al.)",
        notes=(
            f"`MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng({SEED}))`. "
            "Yin et al.'s batch SD as we read it: only the accepted draft continues ("
            '`continuation="single"`); token tree: every draft matching the accepted text continues '
            '(`continuation="matching"`, an algorithm the paper does not analyse); docs/theory.md §6.'
        ),
        caption="Sequence-level quantities of Yin et al. at the stated seed.",
    )
    bar.update()
    bar.close()
    print(
        f"sequence: Theorem 1 = {exact:.4f}, simulated {sim.mean:.4f} ± {sim.std_err:.4f}; "
        f"batch M=4 (single) = {batch_expected_rejections(chain, 4):.4f}; "
        f"limit (single) = {batch_rejection_limit(chain):.4f}"
    )
    return paths
