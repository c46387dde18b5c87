"""Figures for engine teams (docs/engines.md §4): the exact oracle tree against the
Speed-of-Light bound of Pankratov & Alistarh (EACL 2026)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InputError
from ..tree import BudgetCurve
from ._style import COLUMN_WIDTH, in_paper_style, new_axes, palette_color
from ._trees import finish_budget_axes

__all__ = ["plot_speed_of_light"]


@in_paper_style
def plot_speed_of_light(
    curve: Any,
    bound: Sequence[float],
    *,
    ax: Any = None,
    title: str | None = None,
    legend: bool = True,
    bound_label: str = "Speed-of-Light, leading term (μ + μ₂) ln N / μ²",
):
    """Expected accepted tokens per step against the node budget N (log₂ axis): the exact
    oracle tree (``"ceiling"`` of a :class:`optaccept.tree.BudgetCurve`, shaded ± 2
    standard errors over positions), the drafted dynamic tree when the curve has it, and a
    bound's values at the curve's budgets (a dashed line).

    Parameters
    ----------
    curve : optaccept.tree.BudgetCurve
        With the strategy ``"ceiling"`` (and optionally ``"dynamic"``).
    bound : sequence of float
        One value per budget of ``curve`` (e.g. ``optaccept.jobs.engines.sol_leading_term``).
    ax : matplotlib Axes, optional
        Drawn into when given; a new figure otherwise.
    title : str, optional
    legend : bool
        A legend below the axes.
    bound_label : str
        The bound's legend label.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    InputError
        ``curve`` is not a BudgetCurve with ``"ceiling"``, or ``bound`` has not one value
        per budget.

    Examples
    --------
    >>> from optaccept import plots, tree
    >>> pairs = [tree.synthetic_pair(6, rng=s) for s in range(2)]
    >>> curve = tree.budget_curve(pairs, budgets=(2, 4), strategies=("dynamic", "ceiling"), progress=False)
    >>> ax = plots.plot_speed_of_light(curve, bound=[1.0, 1.5])  # the bound at each budget
    >>> len(ax.get_lines()) >= 2
    True
    """

    if not isinstance(curve, BudgetCurve) or "ceiling" not in curve.values:
        raise InputError("curve: must be a BudgetCurve with the strategy 'ceiling' (see tree.budget_curve)")
    b = np.asarray(bound, dtype=np.float64).ravel()
    xs = np.asarray(curve.budgets, dtype=np.float64)
    if b.size != xs.size:
        raise InputError(f"bound: one value per budget ({xs.size}), got {b.size}")
    ax = new_axes(ax, figsize=(COLUMN_WIDTH, 3.4) if legend else (COLUMN_WIDTH, 2.6))
    m, e = curve.mean("ceiling"), curve.std_err("ceiling")
    black = palette_color("C6")
    ax.fill_between(xs, m - 2 * e, m + 2 * e, color=black, alpha=0.15, lw=0)
    ax.plot(xs, m, "-", color=black, lw=1.3, label="exact oracle tree (N most probable target prefixes)")
    if "dynamic" in curve.values:
        d, de = curve.mean("dynamic"), curve.std_err("dynamic")
        blue = palette_color("C0")
        ax.fill_between(xs, d - 2 * de, d + 2 * de, color=blue, alpha=0.15, lw=0)
        ax.plot(xs, d, "-.", color=blue, lw=1.2, label="dynamic tree from the draft (EAGLE-2)")
    ax.plot(xs, b, "--", color=palette_color("C1"), lw=1.3, label=bound_label)
    ticks = [n for n in curve.budgets if n & (n - 1) == 0]
    return finish_budget_axes(ax, xs, ticks, title, legend)
