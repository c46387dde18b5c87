"""Every figure of optaccept, as public functions.

Each plot function takes ``ax=None`` (a new figure when None) and returns the Axes; labels
use the papers' notation (α*, p target, q draft, k drafts).  :func:`save_figure` writes a
figure as PNG and PDF with reproducible bytes.  Theory: docs/theory.md.

=============================  =====================================================
core                           :func:`plot_alpha_vs_k`
verifiers                      :func:`plot_acceptance_curves` (Khisti et al.'s Fig. 2),
                               :func:`plot_gap_heatmap`, :func:`plot_gap_bars`
sequence (Yin et al.)          :func:`plot_simulation`, :func:`plot_batch_rejections`,
                               :func:`plot_pareto_front`, :func:`plot_decoder_losses`
real distributions (``llm``)   :func:`plot_gaps`, :func:`plot_position_gaps`
trees of drafts (``tree``)     :func:`plot_accepted_tokens`, :func:`plot_budget_curve`
engines                        :func:`plot_speed_of_light`
the paper style                :func:`paper_style` (TrueType fonts, at least 7 pt at print
                               size, the Okabe–Ito colour-blind-safe palette),
                               :func:`paper_figure` (a column or the text width),
                               :func:`legend_below`, :func:`save_figure`,
                               :data:`LATEX_PREAMBLE` (the packages ``to_latex()`` needs)
=============================  =====================================================
"""

from .._lib.display.latex import LATEX_PREAMBLE
from ._core import plot_alpha_vs_k
from ._engines import plot_speed_of_light
from ._llm import legend_below, plot_gaps, plot_position_gaps
from ._sequence import plot_batch_rejections, plot_decoder_losses, plot_pareto_front, plot_simulation
from ._style import paper_figure, paper_style, save_figure
from ._trees import plot_accepted_tokens, plot_budget_curve
from ._verifiers import plot_acceptance_curves, plot_gap_bars, plot_gap_heatmap

__all__ = [
    "LATEX_PREAMBLE",
    "plot_position_gaps",
    "legend_below",
    "plot_simulation",
    "plot_batch_rejections",
    "plot_decoder_losses",
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
