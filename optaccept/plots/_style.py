"""Shared figure helpers: axes creation, paper labels, reproducible PNG + PDF output."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["new_axes", "save_figure", "integer_ticks", "VERIFIER_LABELS", "QUANTITY_LABELS"]

#: Paper names of the verifiers of ``optaccept.verifiers`` (legend and tick labels).
VERIFIER_LABELS = {
    "sd": "SD (single draft)",
    "nss": "NSS (ignore drafts)",
    "naive_tree": "SD on first draft",
    "rrs": "RRS (SpecInfer)",
    "rrs_wor": "RRS w/o repl. (Jeon et al.)",
    "kseq": "K-SEQ (SpecTr)",
    "spechub": "SpecHub",
    "khisti_is": "IS + trunc. LP (Khisti et al.)",
    "hu_greedy": "greedy (Hu et al.)",
    "optimal": "optimal verifier",
}

#: Legend labels of the columns of ``optaccept.llm.gap_table`` (paper notation).
QUANTITY_LABELS = {
    "alpha_iid": r"$\alpha^*$, i.i.d. drafts",
    "alpha_swor": r"$\alpha^*$, without replacement",
    "alpha_greedy": r"$\alpha^*$, greedy drafts (Hu et al.)",
    "sd": r"$\alpha$, SD (one draft)",
    "nss": r"$\alpha$, NSS (ignore drafts)",
    "rrs": r"$\alpha$, RRS (SpecInfer)",
    "rrs_wor": r"$\alpha$, RRS w/o repl. (Jeon et al.)",
    "kseq": r"$\alpha$, K-SEQ (SpecTr)",
    "kseq_rule": r"$\alpha$, K-SEQ (SpecTr), rule",
    "spechub": r"$\alpha$, SpecHub",
    "greedy_verifier": r"$\alpha$, greedy verifier (Hu et al.)",
}


def new_axes(ax: Any = None, figsize: tuple[float, float] = (5.0, 3.6)) -> Any:
    """``ax`` itself, or the Axes of a new figure of ``figsize`` inches."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    return ax


def integer_ticks(axis: Any, values: Sequence[int] | None = None) -> None:
    """Integer tick labels on ``axis`` (an ``ax.xaxis``/``ax.yaxis``): exactly ``values`` when
    given (works on log scales too), else at most ~8 integer ticks."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator, ScalarFormatter

    if values is None:
        axis.set_major_locator(MaxNLocator(integer=True))
        return
    axis.set_major_locator(FixedLocator(list(values)))
    axis.set_minor_locator(NullLocator())
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    axis.set_major_formatter(fmt)


def save_figure(fig: Any, path: str | os.PathLike, *, formats: Sequence[str] = ("png", "pdf"), dpi: int = 200) -> list[Path]:
    """Write ``fig`` as ``path`` with each suffix in ``formats`` (default PNG and PDF).

    Metadata that would change from run to run (creation date, software version) is left
    out, so the same figure gives the same bytes on the same machine and library versions.
    Returns the paths written.
    """
    path = Path(path)
    out = []
    for ext in formats:
        target = path.with_suffix("." + ext)
        target.parent.mkdir(parents=True, exist_ok=True)
        if ext == "png":
            meta: dict[str, Any] = {"Software": None}
        elif ext == "pdf":
            meta = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
        elif ext == "svg":
            meta = {"Date": None, "Creator": None}
        else:
            meta = {}
        fig.savefig(target, dpi=dpi, metadata=meta, bbox_inches="tight")
        out.append(target)
    return out
