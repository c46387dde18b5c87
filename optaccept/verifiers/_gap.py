"""Gap table: each verifier's exact acceptance beside α* of its own draft law."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import InputError, MethodError
from .._validation import as_distribution_pair, check_k
from ._base import Verifier

__all__ = ["GapTable", "gap_table"]


@dataclass(frozen=True)
class GapTable:
    """Rows = verifiers, columns = k.  ``alpha[name][k]`` is the verifier's acceptance
    ("output" notion), ``alpha_star[name][k]`` α* of its draft law; None where the
    verifier is not defined for k or its exact acceptance is beyond its size limit."""

    ks: tuple[int, ...]
    names: tuple[str, ...]
    alpha: dict[str, dict[int, float | None]]
    alpha_star: dict[str, dict[int, float | None]]

    def gap(self, name: str, k: int) -> float | None:
        """α* − α for one cell (None where undefined)."""
        a, s = self.alpha[name][k], self.alpha_star[name][k]
        return None if a is None or s is None else s - a

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict: {"ks": [...], "rows": {name: {k: {"alpha", "alpha_star", "gap"}}}}."""
        return {
            "ks": list(self.ks),
            "rows": {
                n: {
                    k: {"alpha": self.alpha[n][k], "alpha_star": self.alpha_star[n][k], "gap": self.gap(n, k)}
                    for k in self.ks
                }
                for n in self.names
            },
        }

    def __str__(self) -> str:
        head = ["verifier"] + [f"k={k}: α / α*" for k in self.ks]
        lines = []
        for n in self.names:
            cells = [n]
            for k in self.ks:
                a, s = self.alpha[n][k], self.alpha_star[n][k]
                cells.append("—" if a is None else f"{a:.4f} / {s:.4f}")
            lines.append(cells)
        widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        out = [fmt.format(*head), fmt.format(*["-" * w for w in widths])]
        out += [fmt.format(*r) for r in lines]
        return "\n".join(out)

    def to_markdown(self) -> str:
        """The table as Markdown (α / α* per cell)."""
        head = "| verifier | " + " | ".join(f"k={k}: α / α*" for k in self.ks) + " |"
        sep = "|---|" + "---|" * len(self.ks)
        rows = []
        for n in self.names:
            cells = []
            for k in self.ks:
                a, s = self.alpha[n][k], self.alpha_star[n][k]
                cells.append("—" if a is None else f"{a:.4f} / {s:.4f}")
            rows.append(f"| {n} | " + " | ".join(cells) + " |")
        return "\n".join([head, sep, *rows])

    def _long_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "verifier": n,
                "k": k,
                "alpha": self.alpha[n][k],
                "alpha_star": self.alpha_star[n][k],
                "gap": self.gap(n, k),
            }
            for n in self.names
            for k in self.ks
        ]

    def to_pandas(self) -> Any:
        """A pandas DataFrame in long format (verifier, k, alpha, alpha_star, gap); needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("GapTable.to_pandas needs pandas (pip install pandas)") from None
        return pd.DataFrame(self._long_rows())

    def to_latex(
        self, caption: str = r"Exact acceptance $\alpha$ and $\alpha^*$ of each verifier's own draft law."
    ) -> str:
        """A LaTeX ``table`` (booktabs) with α / α* per cell; ``--`` where undefined."""
        from .._display import latex_table

        rows = [
            [n]
            + [
                "--" if self.alpha[n][k] is None else f"{self.alpha[n][k]:.4f} / {self.alpha_star[n][k]:.4f}"
                for k in self.ks
            ]
            for n in self.names
        ]
        return latex_table(["verifier"] + [f"$k={k}$: $\\alpha$ / $\\alpha^*$" for k in self.ks], rows, caption)

    def __repr__(self) -> str:
        return f"GapTable({len(self.names)} verifiers, ks={list(self.ks)})"

    def _repr_html_(self) -> str:
        from .._display import html_table

        rows = [
            [n]
            + [
                "—" if self.alpha[n][k] is None else f"{self.alpha[n][k]:.4f} / {self.alpha_star[n][k]:.4f}"
                for k in self.ks
            ]
            for n in self.names
        ]
        return html_table(
            ["verifier"] + [f"k={k}: α / α*" for k in self.ks],
            rows,
            title="Gap table",
            caption="α: the verifier's exact acceptance; α*: optimum of its own draft law.",
        )


def gap_table(p: Any, q: Any, ks: Iterable[int], verifiers: Sequence[Verifier] | None = None) -> GapTable:
    """Exact acceptance of each verifier and α* of its own draft law, for each k.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    ks : iterable of int
        Numbers of drafts (columns).
    verifiers : sequence of Verifier, optional
        Rows (default: ``optaccept.verifiers.ALL``).

    Returns
    -------
    GapTable
        Printable (``str``), ``to_dict()``, ``to_markdown()``.
    """
    from ..optimal import optimal_acceptance
    from . import ALL

    pf, qf = as_distribution_pair(p, q)
    try:
        ks_t = tuple(check_k(k, "ks") for k in ks)
    except TypeError:
        raise InputError("ks: must be an iterable of integers") from None
    if not ks_t:
        raise InputError("ks: needs at least one number of drafts")
    vs = list(ALL if verifiers is None else verifiers)
    if not all(isinstance(v, Verifier) for v in vs):
        raise InputError("verifiers: every entry must be a verifier from optaccept.verifiers")
    alpha: dict[str, dict[int, float | None]] = {}
    star: dict[str, dict[int, float | None]] = {}
    for v in vs:
        alpha[v.name], star[v.name] = {}, {}
        for k in ks_t:
            a = s = None
            if v.supports(k):
                try:
                    law = v.drafts(qf, k)
                    a = v.acceptance(pf, qf, k)
                    s = float(optimal_acceptance(pf, law).value)
                except (MethodError, InputError):
                    a = s = None
            alpha[v.name][k], star[v.name][k] = a, s
    return GapTable(ks_t, tuple(v.name for v in vs), alpha, star)
