"""Every public plot renders at a paper's size in the one style, with what a machine can
check: TrueType fonts embedded (no Type 3), width ≤ the text width, no font below 7 pt,
no text outside the figure, y-limits that contain the data, and the committed PDFs too."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optaccept import plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MAX_WIDTH_PT = plots.TEXT_WIDTH * 72 + 5  # bbox_inches="tight" may add a few points of padding


def _pairs():
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    return p, q


def _gap_table():
    from optaccept import llm
    from optaccept.llm import Distributions, sample_path

    data = Distributions.load(sample_path()).subset(np.arange(6))
    return llm.gap_table(data, ks=(2, 3), progress=False, slow_verifiers=False, cross_check=0)


def _tree_table():
    from optaccept import tree
    from optaccept.llm import DraftTrees, trees_path

    trees = {d: DraftTrees.load(trees_path(d)).select(np.arange(4)) for d in ("iid", "swor")}
    return tree.tree_table(trees, ks=(1, 2), lengths=(1, 2))


def _chain():
    from optaccept.sequence import MarkovPair

    return MarkovPair.random(states=3, horizon=8, rng=np.random.default_rng(0))


def _cases():
    p, q = _pairs()
    gaps = {"rrs": {2: 0.01, 3: 0.02}, "sd": {2: None, 3: None}, "optimal": {2: 0.0, 3: 0.0}}
    ses = {"rrs": {2: 0.001, 3: 0.002}, "sd": {2: 0.0, 3: 0.0}, "optimal": {2: 0.0, 3: 0.0}}
    t = np.linspace(0, 0.5, 11)
    return {
        "plot_alpha_vs_k": lambda: plots.plot_alpha_vs_k(p, q, ks=(1, 2, 3)),
        "plot_acceptance_curves": lambda: plots.plot_acceptance_curves(t, {"a": 0.5 + t, "b": 0.4 + t}, title="x"),
        "plot_gap_heatmap": lambda: plots.plot_gap_heatmap(gaps, ses, title="gaps"),
        "plot_gap_bars": lambda: plots.plot_gap_bars(gaps, title="gaps"),
        "plot_simulation": lambda: _simulation(),
        "plot_batch_rejections": lambda: plots.plot_batch_rejections(_chain(), [1, 2, 4]),
        "plot_batch_improvement": lambda: plots.plot_batch_improvement([1, 2, 3, 4]),
        "plot_pareto_front": lambda: plots.plot_pareto_front(p, q),
        "plot_decoder_losses": lambda: plots.plot_decoder_losses(p, q, np.linspace(0, 0.1, 5)),
        "plot_gaps": lambda: plots.plot_gaps(_gap_table()),
        "plot_position_gaps": lambda: plots.plot_position_gaps(_gap_table(), 2),
        "plot_accepted_tokens": lambda: plots.plot_accepted_tokens(_tree_table(), 1),
        "plot_budget_curve": lambda: plots.plot_budget_curve(_budget_curve()),
    }


def _budget_curve():
    from optaccept import tree

    pairs = [tree.synthetic_pair(40, seed=s, scale=2.0) for s in range(3)]
    return tree.budget_curve(pairs, (2, 4, 8, 16))


def _simulation():
    from optaccept.sequence import expected_rejections, simulate_rejections

    chain = _chain()
    est = simulate_rejections(chain, runs=200, rng=np.random.default_rng(0))
    return plots.plot_simulation(est, expected_rejections(chain))


def _check_pdf(path: Path):
    data = path.read_bytes()
    assert b"/Type3" not in data, f"{path.name}: Type 3 fonts"
    assert b"/FontFile2" in data or b"/FontFile" in data, f"{path.name}: fonts not embedded"
    m = re.search(rb"/MediaBox \[ ?([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)", data)
    assert m and float(m.group(3)) <= MAX_WIDTH_PT, f"{path.name}: {float(m.group(3)) / 72:.2f} in wide"


def _check_figure(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert fig.get_figwidth() <= plots.TEXT_WIDTH + 1e-9
    for text in fig.findobj(matplotlib.text.Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        assert text.get_fontsize() >= plots.MIN_FONT_PT - 1e-9, (text.get_text(), text.get_fontsize())
    # everything drawn (labels, titles, legends, annotations) lies inside the figure
    bb = fig.get_tightbbox(renderer)  # inches
    w, h = fig.get_size_inches()
    assert bb.x0 >= -0.03 and bb.y0 >= -0.03 and bb.x1 <= w + 0.03 and bb.y1 <= h + 0.03, (bb.bounds, (w, h))
    for ax in fig.axes:
        lo, hi = sorted(ax.get_ylim())
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), dtype=float)
            y = y[np.isfinite(y)]
            if y.size and ax.get_yscale() == "linear":
                assert lo - 1e-9 <= y.min() and y.max() <= hi + 1e-9, (ax.get_title(), y.min(), y.max(), lo, hi)


@pytest.mark.parametrize("name", sorted(_cases()))
def test_public_plot_at_paper_size(name, tmp_path):
    ax = _cases()[name]()
    assert isinstance(ax, matplotlib.axes.Axes)
    fig = ax.figure
    _check_figure(fig)
    pdf = [p for p in plots.save_figure(fig, tmp_path / name) if p.suffix == ".pdf"][0]
    _check_pdf(pdf)
    plt.close(fig)


def test_shared_y_panels_are_not_clipped():
    """Notebook 05's figure: panels L = 1, 2 on shared y axes; the L = 2 values (larger) must
    stay in view (set_ylim(bottom=0) in the first panel used to freeze the range)."""
    table = _tree_table()
    with plots.paper_style():
        fig, axes = plt.subplots(1, 2, figsize=(plots.TEXT_WIDTH, 2.6), sharey=True, layout="constrained")
        for ax, L in zip(axes, (1, 2)):
            plots.plot_accepted_tokens(table, L, ax=ax, legend=False)
    _check_figure(fig)
    assert axes[1].get_ylim()[0] <= 0.0
    plt.close(fig)


def test_every_public_plot_is_covered():
    public = {n for n in plots.__all__ if n.startswith("plot_")}
    assert public == set(_cases())


@pytest.mark.parametrize("pdf", sorted((ROOT / "figures").glob("*.pdf")), ids=lambda p: p.name)
def test_committed_figures_are_paper_ready(pdf):
    _check_pdf(pdf)
