"""Plots of α*: every function takes ``ax=None`` and returns the Axes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .drafts import IID, Greedy, WithoutReplacement
from .optimal import optimal_acceptance

__all__ = ["plot_alpha_vs_k", "LAW_STYLES"]

LAW_STYLES = {
    "iid": ("i.i.d. (with replacement)", "o-"),
    "swor": ("without replacement", "s-"),
    "greedy": ("greedy (Hu et al. §5)", "^-"),
}
_CLASSES = {"iid": IID, "swor": WithoutReplacement, "greedy": Greedy}


def alpha_curve(p: Any, q: Any, ks: Iterable[int], law: str) -> tuple[list[int], list[float]]:
    """α*(p, law(q, k)) for each k that the law admits (k ≤ |supp q| without replacement/greedy)."""
    supp = int(np.count_nonzero(np.asarray(q, dtype=float)))
    xs, ys = [], []
    for k in ks:
        if law != "iid" and k > supp:
            continue
        xs.append(int(k))
        ys.append(float(optimal_acceptance(p, _CLASSES[law](q, k)).value))
    return xs, ys


def plot_alpha_vs_k(
    p: Any,
    q: Any,
    ks: Sequence[int] = tuple(range(1, 9)),
    laws: Sequence[str] = ("iid", "swor", "greedy"),
    ax: Any = None,
    title: str | None = None,
):
    """Plot α* against the number of drafts k for several draft laws.

    k = 1 is the single-draft value Σ_y min(p(y), q(y)) = 1 − TV(p, q) for every law.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    for law in laws:
        label, style = LAW_STYLES[law]
        xs, ys = alpha_curve(p, q, ks, law)
        ax.plot(xs, ys, style, label=label, ms=4)
    ax.set_xlabel("number of drafts k")
    ax.set_ylabel("optimal acceptance α*")
    ax.set_ylim(top=1.005)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    return ax
