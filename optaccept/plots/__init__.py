"""Every figure of optaccept, as public functions.

Each plot function takes ``ax=None`` (a new figure when None) and returns the Axes; labels
use the papers' notation (α*, p target, q draft, k drafts).  :func:`save_figure` writes a
figure as PNG and PDF with reproducible bytes.  Theory: docs/theory.md.

=============================  =====================================================
core                           :func:`plot_alpha_vs_k`
verifiers                      :func:`plot_acceptance_curves` (Khisti et al.'s Fig. 2),
                               :func:`plot_gap_heatmap`, :func:`plot_gap_bars`
sequence (Yin et al.)          :func:`plot_simulation`, :func:`plot_batch_rejections`,
                               :func:`plot_batch_improvement`, :func:`plot_pareto_front`,
                               :func:`plot_decoder_losses`
real distributions (``llm``)   :func:`plot_gaps`, :func:`plot_position_gaps`
trees of drafts (``tree``)     :func:`plot_accepted_tokens`, :func:`plot_budget_curve`
style (one module)             :func:`paper_style`, :func:`paper_figure`, :data:`PAPER_RC`,
                               :data:`COLUMN_WIDTH`, :data:`TEXT_WIDTH` (TrueType fonts,
                               ≥ 7 pt at print size), :data:`PALETTE` (Okabe–Ito,
                               colour-blind safe; legends below or beside the axes)
helpers                        :func:`save_figure`, :func:`legend_below`,
                               :func:`describe_pair`
=============================  =====================================================
"""

from ._core import plot_alpha_vs_k
from ._engines import plot_speed_of_light
from ._llm import plot_gaps
from ._sequence import plot_pareto_front
from ._style import paper_figure, paper_style, save_figure
from ._trees import plot_accepted_tokens, plot_budget_curve
from ._verifiers import plot_acceptance_curves, plot_gap_bars, plot_gap_heatmap

__all__ = [
    "plot_alpha_vs_k",
    "plot_acceptance_curves",
    "plot_gap_heatmap",
    "plot_gap_bars",
    "plot_pareto_front",
    "plot_gaps",
    "plot_accepted_tokens",
    "plot_budget_curve",
    "plot_speed_of_light",
    "save_figure",
    "paper_figure",
    "paper_style",
]
