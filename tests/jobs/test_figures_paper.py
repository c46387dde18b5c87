"""Every public plot renders at a paper's size in the one style, with what a machine can
check: TrueType fonts embedded (no Type 3), width ≤ the text width, no glyph below 7 pt
(mathtext scripts included), legends never over data (legend and data boxes compared in
display coordinates), no text outside the figure, y-limits that contain the data, the
colour-blind-safe palette, and the committed PDFs too."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optaccept import plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MAX_WIDTH_PT = plots._style.TEXT_WIDTH * 72 + 5  # bbox_inches="tight" may add a few points of padding


def _pairs():
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    return p, q


def _gap_table():
    from optaccept import llm
    from optaccept.real import Distributions, sample_path

    data = Distributions.load(sample_path()).subset(np.arange(6))
    return llm.position_gap_table(data, ks=(2, 3), progress=False, slow_verifiers=False, cross_check=0)


def _tree_table():
    from optaccept.real import DraftTrees, tree_table, trees_path

    trees = {d: DraftTrees.load(trees_path(d)).select(np.arange(4)) for d in ("iid", "swor")}
    return tree_table(trees, ks=(1, 2), lengths=(1, 2))


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
        "plot_batch_improvement": lambda: plots._sequence.plot_batch_improvement([1, 2, 3, 4]),
        "plot_pareto_front": lambda: plots.plot_pareto_front(p, q),
        "plot_decoder_losses": lambda: plots.plot_decoder_losses(p, q, np.linspace(0, 0.1, 5)),
        "plot_gaps": lambda: plots.plot_gaps(_gap_table()),
        "plot_position_gaps": lambda: plots.plot_position_gaps(_gap_table(), 2),
        "plot_accepted_tokens": lambda: plots.plot_accepted_tokens(_tree_table(), 1),
        "plot_budget_curve": lambda: plots.plot_budget_curve(_budget_curve()),
        "plot_speed_of_light": lambda: plots.plot_speed_of_light(
            _budget_curve(), np.log2([2, 4, 8, 16]), title="synthetic pairs"
        ),
    }


def _budget_curve():
    from optaccept import tree

    pairs = [tree.synthetic_pair(40, rng=s, scale=2.0) for s in range(3)]
    return tree.budget_curve(pairs, (2, 4, 8, 16))


def _simulation():
    from optaccept.sequence import expected_rejections, simulate_rejections

    chain = _chain()
    est = simulate_rejections(chain, samples=200, rng=np.random.default_rng(0))
    return plots.plot_simulation(est, expected_rejections(chain))


def _check_pdf(path: Path):
    data = path.read_bytes()
    assert b"/Type3" not in data, f"{path.name}: Type 3 fonts"
    assert b"/FontFile2" in data or b"/FontFile" in data, f"{path.name}: fonts not embedded"
    m = re.search(rb"/MediaBox \[ ?([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)", data)
    assert m and float(m.group(3)) <= MAX_WIDTH_PT, f"{path.name}: {float(m.group(3)) / 72:.2f} in wide"


def _smallest_glyph(text) -> float:
    """Size (pt) of the smallest glyph of a Text: mathtext super- and subscripts print at 70 %."""
    s = text.get_text()
    size = text.get_fontsize()
    scripts = [m for m in re.findall(r"(?<!\\)\$([^$]*)(?<!\\)\$", s) if re.search(r"[\^_]", m)]
    return size * 0.7 if scripts else size


def _data_points(ax) -> np.ndarray:
    """Display coordinates of the data drawn in ``ax``: line vertices, scatter and error-bar
    points, bar corners."""
    pts = []
    for line in ax.get_lines():
        if line.get_visible() and len(line.get_xdata()):
            xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
            pts.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        if coll.get_visible() and len(coll.get_offsets()):
            pts.append(coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float)))
    for patch in ax.patches:
        if patch.get_visible():
            bb = patch.get_window_extent()
            pts.append(np.array([[bb.x0, bb.y0], [bb.x1, bb.y1], [bb.x0, bb.y1], [bb.x1, bb.y0]]))
    pts = [p[np.all(np.isfinite(p), axis=1)] for p in pts]
    return np.vstack(pts) if pts else np.zeros((0, 2))


def _check_legends(fig, renderer):
    """Legends never over data: no legend box meets the plot area of any axes (so no data
    point lies under it either, which is checked too, in display coordinates)."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for leg in legends:
        if not leg.get_visible():
            continue
        lb = leg.get_window_extent(renderer).padded(-1)  # a pixel of tolerance at the edges
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            ab = ax.get_window_extent(renderer)
            assert not lb.overlaps(ab), ("legend over the axes", ax.get_title(), lb.bounds, ab.bounds)
            pts = _data_points(ax)
            inside = (pts[:, 0] > lb.x0) & (pts[:, 0] < lb.x1) & (pts[:, 1] > lb.y0) & (pts[:, 1] < lb.y1)
            assert not inside.any(), ("data under the legend", ax.get_title(), pts[inside][:3])


def _check_figure(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert fig.get_figwidth() <= plots._style.TEXT_WIDTH + 1e-9
    for text in fig.findobj(matplotlib.text.Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        assert text.get_fontsize() >= plots._style.MIN_FONT_PT - 1e-9, (text.get_text(), text.get_fontsize())
        assert _smallest_glyph(text) >= plots._style.MIN_FONT_PT - 1e-9, ("glyph below 7 pt", text.get_text())
    _check_legends(fig, renderer)
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
        fig, axes = plt.subplots(1, 2, figsize=(plots._style.TEXT_WIDTH, 2.6), sharey=True, layout="constrained")
        for ax, L in zip(axes, (1, 2)):
            plots.plot_accepted_tokens(table, L, ax=ax, legend=False)
    _check_figure(fig)
    assert axes[1].get_ylim()[0] <= 0.0
    plt.close(fig)


def test_every_public_plot_is_covered():
    public = {n for n in plots.__all__ if n.startswith("plot_")}
    assert public | {"plot_batch_improvement"} == set(_cases())  # and the main job's own figure


@pytest.mark.parametrize("pdf", sorted((ROOT / "figures").glob("*.pdf")), ids=lambda p: p.name)
def test_committed_figures_are_paper_ready(pdf):
    _check_pdf(pdf)


def test_palette_is_colour_blind_safe_and_used():
    """The colour cycle is Okabe and Ito's palette (then grey, yellow, wine): what "C0", "C1", …
    mean in every figure drawn in the paper style."""
    okabe_ito = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}
    assert okabe_ito <= set(plots._style.PALETTE)
    ax = plots.plot_alpha_vs_k(*_pairs(), ks=(1, 2, 3))
    colours = [
        matplotlib.colors.to_hex(line.get_color()).upper() for line in ax.get_lines() if line.get_label()[:1] != "_"
    ]
    assert colours and all(c in plots._style.PALETTE for c in colours), colours
    markers = {line.get_marker() for line in ax.get_lines() if line.get_label()[:1] != "_"}
    styles = {line.get_linestyle() for line in ax.get_lines() if line.get_label()[:1] != "_"}
    assert len(markers) == len(colours) and len(styles) == len(colours)  # not by colour alone
    plt.close(ax.figure)


def test_legend_check_catches_a_legend_over_data():
    """The legend check fails on a legend drawn over the data (it can fail)."""
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(3.3, 2.5))
        ax.plot([0, 1], [0, 1], label="a line through the middle")
        ax.legend(loc="center")
    with pytest.raises(AssertionError):
        _check_figure(fig)
    plt.close(fig)


def test_glyph_check_catches_superscripts():
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(3.3, 2.5))
        ax.set_xlabel(r"$\alpha^*$")  # 8 pt: its star prints at 5.6 pt
    with pytest.raises(AssertionError, match="glyph below 7 pt"):
        _check_figure(fig)
    plt.close(fig)
