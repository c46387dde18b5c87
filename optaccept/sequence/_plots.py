"""Former home of the sequence plots; they live in the public :mod:`optaccept.plots`."""

from ..plots import (  # noqa: F401
    plot_batch_improvement,
    plot_batch_rejections,
    plot_decoder_losses,
    plot_pareto_front,
    plot_simulation,
)
