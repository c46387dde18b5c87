"""Former home of the verifier plots; they live in the public :mod:`optaccept.plots`."""

from ..plots import plot_acceptance_curves, plot_gap_bars, plot_gap_heatmap  # noqa: F401
