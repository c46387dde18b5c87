"""Main job of the sequence-level theory: figures and a table of values at a fixed seed."""

from __future__ import annotations

import pathlib

import numpy as np

__all__ = ["run", "SEED"]

#: The stated seed: ``MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(SEED))``.
SEED = 10


def _llm_pair():
    """The shipped language-model distributions as a PositionPair (columns with no mass dropped),
    or None when the file or the llm module is not available."""
    try:
        from ..llm import Distributions, sample_path

        path = sample_path()
        if not path.exists():
            return None
        dists = Distributions.load(path)
    except (ImportError, OSError, ValueError):
        return None
    from ._markov import PositionPair

    keep = np.flatnonzero((dists.target > 0).any(0) | (dists.draft > 0).any(0))
    return PositionPair(dists.target[:, keep], dists.draft[:, keep]), dists


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Write ``sequence_rejections.png``, ``sequence_pareto.png`` and ``sequence_values.md``.

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

    from . import (
        MarkovPair,
        PositionPair,
        acceleration,
        batch_expected_rejections,
        batch_rejection_limit,
        decoder_losses,
        expected_rejections,
        simulate_batch_rejections,
        simulate_rejections,
    )
    from ._plots import (
        plot_batch_improvement,
        plot_batch_rejections,
        plot_decoder_losses,
        plot_pareto_front,
        plot_simulation,
    )

    out_dir = pathlib.Path(figures_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    chain = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(SEED))
    runs = 1000 if quick else 5000
    exact = expected_rejections(chain)
    sim = simulate_rejections(chain, runs=runs, rng=np.random.default_rng(SEED + 1))
    Ms = [1, 2, 3, 4, 5, 8, 16] if quick else [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64, 128, 256]
    simulated = {}
    for M in (4, 5):
        for cont in ("single", "matching"):
            simulated[(cont, M)] = simulate_batch_rejections(
                chain, M, runs=runs // 2, rng=np.random.default_rng(SEED + M), continuation=cont
            )

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    plot_simulation(sim, exact, ax=axes[0])
    axes[0].set_title("Theorem 1: SD, seed chain (S=7, T=50)")
    plot_batch_rejections(chain, Ms, simulated=simulated, ax=axes[1])
    axes[1].set_title("Theorem 3 / Prop. 1: batch SD (× = Monte Carlo ± 5σ)")
    plot_batch_improvement(list(range(1, 21)), ax=axes[2])
    axes[2].set_title("One-step batch improvement (closed forms)")
    fig.tight_layout()
    paths = [out_dir / "sequence_rejections.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)

    rng = np.random.default_rng(SEED)
    p = rng.dirichlet(np.full(30, 0.5))
    q = rng.dirichlet(np.full(30, 0.5))
    eps = np.linspace(0.0, 0.1, 21)
    llm = _llm_pair()
    fig, axes = plt.subplots(1, 3 if llm else 2, figsize=(15 if llm else 10, 4.2))
    plot_pareto_front(p, q, ax=axes[0])
    axes[0].set_title("Theorems 4-5: bias vs rejection (n = 30)")
    plot_decoder_losses(p, q, eps, ax=axes[1])
    axes[1].set_title("Decoding-OPT vs Decoding-UNO")
    if llm:
        plot_decoder_losses(llm[0].target, llm[0].draft, eps, ax=axes[2])
        axes[2].set_title(f"same, language-model rows (mean of {llm[0].horizon})")
    fig.tight_layout()
    paths.append(out_dir / "sequence_pareto.png")
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)

    # values at the stated seed
    rows = [
        ("Theorem 1 exact E[N_rej]", f"{exact:.6f}"),
        (f"Monte Carlo of SD ({runs} runs)", f"{sim.mean:.4f} ± {sim.stderr:.4f}"),
        ("acceleration T / E[N_rej]", f"{acceleration(chain):.4f}"),
    ]
    for cont in ("single", "matching"):
        for M in (2, 4, 5, 16):
            rows.append(
                (f"batch SD exact, M = {M}, {cont}", f"{batch_expected_rejections(chain, M, continuation=cont):.6f}")
            )
        for M in (4, 5):
            est = simulated[(cont, M)]
            rows.append(
                (f"batch SD Monte Carlo, M = {M}, {cont} ({est.runs} runs)", f"{est.mean:.4f} ± {est.stderr:.4f}")
            )
        rows.append((f"M → ∞ limit, {cont}", f"{batch_rejection_limit(chain, continuation=cont):.6f}"))
    pos = PositionPair(np.tile(p, (4, 1)), np.tile(q, (4, 1)))
    d = decoder_losses(pos.target, pos.draft, [0.0, 0.02, 0.05])
    for e, r, lo, lu in zip(d.eps, d.rejection, d.loss_opt, d.loss_uno):
        rows.append((f"ε = {e:g}: P(reject), loss OPT, loss UNO (n = 30 example)", f"{r:.4f}, {lo:.4f}, {lu:.4f}"))
    if llm:
        pair, dists = llm
        rows.append(
            (
                f"language-model rows ({pair.horizon} positions, {dists.meta.get('target_model', '?')}): "
                "Σ TV, batch M = 4 (single)",
                f"{expected_rejections(pair):.4f}, {batch_expected_rejections(pair, 4):.4f}",
            )
        )
        d = decoder_losses(pair.target, pair.draft, [0.0, 0.02, 0.05])
        for e, r, lo, lu in zip(d.eps, d.rejection, d.loss_opt, d.loss_uno):
            rows.append(
                (f"ε = {e:g}: P(reject), loss OPT, loss UNO (language-model rows)", f"{r:.4f}, {lo:.4f}, {lu:.4f}")
            )
    text = [
        "# Sequence-level values",
        "",
        f"`MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng({SEED}))`",
        "",
        "| quantity | value |",
        "|---|---|",
    ]
    text += [f"| {a} | {b} |" for a, b in rows]
    paths.append(out_dir / "sequence_values.md")
    paths[2].write_text("\n".join(text) + "\n", encoding="utf-8")
    print(
        f"sequence: Theorem 1 = {exact:.4f}, simulated {sim.mean:.4f} ± {sim.stderr:.4f}; "
        f"batch M=4 (single) = {batch_expected_rejections(chain, 4):.4f}; "
        f"limit (single) = {batch_rejection_limit(chain):.4f}"
    )
    return paths
