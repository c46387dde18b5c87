"""Efficiency-gap tables on real next-token distributions.

For every position of a :class:`Distributions` and every number of drafts k:
α* for three draft laws (i.i.d., without replacement, greedy; Hu et al.,
ICLR 2025) and the exact acceptance α of practical verifiers (docs/theory.md §5),
then their mean and spread over positions — the quantities of Hu et al.'s
Table 1 and Khisti et al.'s comparisons, on this data.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError, SolverError
from .._lib.display import Estimate, LatexRaw, Tabular, html_table, latex_table
from .._lib.limits import show_progress
from .._lib.rows import resolve_device, shared_sort
from .._lib.statistics import std_err as sample_std_err
from ..optimal import batched_optimal_acceptance
from ..real import Distributions
from ..real._storage import check_data_and_ks
from ..verifiers import batched_acceptance as batched_verifier_acceptance
from ..verifiers._batched import kseq_both as _kseq_both

__all__ = ["PositionGapTable", "position_gap_table", "QUANTITIES"]

#: name -> (kind, description).  "α*" rows are optima of a draft law, "α" rows
#: the exact acceptance of a verifier ("output ∈ drafts" unless said otherwise).
QUANTITIES: dict[str, tuple[str, str]] = {
    "alpha_iid": ("α*", "optimal, i.i.d. drafts (with replacement)"),
    "alpha_swor": ("α*", "optimal, drafts without replacement"),
    "alpha_greedy": ("α*", "optimal, Hu et al.'s greedy drafts"),
    "sd": ("α", "single-draft speculative sampling (k = 1)"),
    "nss": ("α", "NSS: ignore drafts, sample p"),
    "rrs": ("α", "RRS with replacement (SpecInfer), i.i.d. drafts"),
    "rrs_wor": ("α", "RRS without replacement (Jeon et al.), k = 2 at vocabulary scale"),
    "kseq": ("α", "K-SEQ (SpecTr), output ∈ drafts"),
    "kseq_rule": ("α", "K-SEQ (SpecTr), accepted by the rule"),
    "spechub": ("α", "SpecHub (k = 2, its own hub draft law)"),
    "greedy_verifier": ("α", "Hu et al.'s greedy verifier"),
}

_BATCHED = {
    "sd": "sd",
    "nss": "nss",
    "rrs": "rrs",
    "kseq": "kseq-output",
    "kseq_rule": "kseq",
    "greedy_verifier": "greedy",
}
_VERIFIER_CLASSES = {"sd": "SD", "nss": "NSS", "rrs": "RRS", "kseq": "KSeq", "greedy_verifier": "HuGreedy"}


@dataclasses.dataclass
class PositionGapTable(Tabular):
    """Per-position values and their summary.

    In the results' vocabulary ``value`` and ``std_err`` are the ``mean`` and ``sem`` columns
    of :meth:`to_pandas` (one entry per draft temperature, k and quantity), ``method``
    ``"exact per position"`` (each position's value is exact; the means carry a standard error
    over positions), ``ok`` says every mean is finite.

    Attributes
    ----------
    values : dict
        ``values[(draft_temperature, k, name)]`` = array of per-position values.
    checks : dict
        ``checks[(draft_temperature, k)]`` = fractions of positions where the
        papers' qualitative findings hold (see :meth:`findings`).
    notes : list of str
        How the verifier columns were computed and cross-checked.
    meta : dict
        Provenance of the data.

    Examples
    --------
    >>> from optaccept import llm, real
    >>> data = real.Distributions.load(real.sample_path()).subset(range(4))
    >>> table = llm.position_gap_table(data, ks=(2,), progress=False)
    >>> table
    PositionGapTable(4 positions, draft temperatures [0.7], ks=[2], 11 quantities)
    >>> table.values[(0.7, 2, "alpha_iid")].shape
    (4,)
    >>> row = table.rows[0]
    >>> row["quantity"], row["kind"], round(row["mean"], 4), row["positions"]
    ('alpha_iid', 'α*', 0.9684, 4)
    >>> print(table.to_csv().splitlines()[0])
    draft_temperature,k,quantity,kind,mean,std,sem,min,positions
    """

    values: dict[tuple[float, int, str], np.ndarray]
    checks: dict[tuple[float, int], dict[str, float]]
    notes: list[str]
    meta: dict[str, Any]

    #: each position's value is exact; the means carry a standard error over positions
    method = "exact per position"

    @property
    def value(self) -> np.ndarray:
        """The ``mean`` column of :attr:`rows`."""
        return np.array([r["mean"] for r in self.rows])

    @property
    def std_err(self) -> np.ndarray:
        """The ``sem`` column of :attr:`rows` (standard error of each mean over positions)."""
        return np.array([r["sem"] for r in self.rows])

    @property
    def ok(self) -> bool:
        """Whether every mean is finite."""
        return bool(np.isfinite(self.value).all())

    def _records(self) -> list[dict[str, Any]]:
        return self.rows

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Long format: one dict per (draft temperature, k, quantity)."""
        out = []
        for (temp, k, name), v in self.values.items():
            n = int(v.size)
            std = float(v.std(ddof=1)) if n > 1 else 0.0
            out.append(
                {
                    "draft_temperature": temp,
                    "k": k,
                    "quantity": name,
                    "kind": QUANTITIES[name][0],
                    "mean": float(v.mean()),
                    "std": std,
                    "sem": sample_std_err(v) if n else float("nan"),
                    "min": float(v.min()),
                    "positions": n,
                }
            )
        return out

    def mean(self, name: str, k: int, draft_temperature: float | None = None) -> float:
        """Mean of one quantity (the only temperature when there is one).

        Parameters
        ----------
        name : str
            The quantity (``"alpha_iid"``, ``"rrs"``, …).
        k : int
            Number of drafts.
        draft_temperature : float, optional
            The draft temperature; needed when the table has several.

        Returns
        -------
        float
            The mean over positions.

        Raises
        ------
        InputError
            If the table has no such value.
        """
        temps = sorted({t for t, _, _ in self.values})
        t = temps[0] if draft_temperature is None and len(temps) == 1 else draft_temperature
        try:
            return float(self.values[(t, k, name)].mean())
        except KeyError:
            raise InputError(f"no value for {name!r} at k={k}, draft temperature {t}") from None

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """CSV (long format); written to ``path`` when given.

        Parameters
        ----------
        path : str or os.PathLike, optional
            The file written (None: none).

        Returns
        -------
        str
            The CSV text, one row per (draft temperature, k, quantity).
        """
        buf = io.StringIO()
        fields = ["draft_temperature", "k", "quantity", "kind", "mean", "std", "sem", "min", "positions"]
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({**r, **{f: f"{r[f]:.6f}" for f in ("mean", "std", "sem", "min")}})
        text = buf.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_markdown(self) -> str:
        """Wide Markdown table: mean ± standard error per (draft temperature, k).

        Returns
        -------
        str
            One row per (draft temperature, k), one column per quantity.
        """
        names = [n for n in QUANTITIES if any(key[2] == n for key in self.values)]
        header = "| T_draft | k | " + " | ".join(names) + " |"
        lines = [header, "|" + "---|" * (len(names) + 2)]
        keys = sorted({(t, k) for t, k, _ in self.values})
        for t, k in keys:
            cells = []
            for n in names:
                v = self.values.get((t, k, n))
                if v is None:
                    cells.append("–")
                else:
                    sem = sample_std_err(v)
                    cells.append(f"{v.mean():.4f} ± {sem:.4f}")
            lines.append(f"| {t:g} | {k} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def findings(self) -> str:
        """The papers' qualitative findings, checked position by position.

        Returns
        -------
        str
            One line per (draft temperature, k): the fraction of positions where each holds.
        """
        lines = []
        for (t, k), c in sorted(self.checks.items()):
            parts = [f"{name} {100 * frac:.1f}%" for name, frac in c.items()]
            lines.append(f"T_draft={t:g}, k={k}: " + "; ".join(parts))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_markdown() + "\n\n" + self.findings() + "\n\n" + "\n".join(self.notes)

    def __repr__(self) -> str:
        temps = sorted({t for t, _, _ in self.values})
        ks = sorted({k for _, k, _ in self.values})
        n = next(iter(self.values.values())).size if self.values else 0
        return f"PositionGapTable({n} positions, draft temperatures {temps}, ks={ks}, {len(QUANTITIES)} quantities)"

    def _wide(self) -> tuple[list[str], list[list[Any]]]:
        """Quantities and rows (draft temperature, k, then mean ± standard error per quantity,
        ``None`` where a quantity is not defined), as numbers: the CSV gets one per cell."""

        names = [n for n in QUANTITIES if any(key[2] == n for key in self.values)]
        rows = []
        for t, k in sorted({(t, k) for t, k, _ in self.values}):
            cells: list[Any] = [float(t), int(k)]
            for n in names:
                v = self.values.get((t, k, n))
                sem = 0.0 if v is None else sample_std_err(v)
                cells.append(None if v is None else Estimate(float(v.mean()), float(sem)))
            rows.append(cells)
        return names, rows

    def to_latex(self, caption: str = "Mean acceptance ± standard error over positions.") -> str:
        """Mean ± standard error as a booktabs LaTeX ``table*``: a row per quantity, a column per
        (draft temperature, k).

        Parameters
        ----------
        caption : str
            The table's caption (LaTeX).

        Returns
        -------
        str
            The ``table*`` environment.
        """

        names, rows = self._wide()
        # a row per quantity, a column per (draft temperature, k): it fits the text width
        head = [""] + [rf"$T_{{\mathrm{{draft}}}} = {r[0]:g}$, $k = {r[1]}$" for r in rows]
        body = [
            [LatexRaw((r"$\alpha^*$ " if QUANTITIES[n][0] == "α*" else r"$\alpha$ ") + n.replace("_", r"\_"))]
            + [r[2 + j] for r in rows]
            for j, n in enumerate(names)
        ]
        return latex_table(head, body, caption, wide=True)

    def _repr_html_(self) -> str:
        names, rows = self._wide()
        return html_table(
            ["T_draft", "k"] + names,
            rows,
            title="Gap table (mean ± standard error over positions)",
            caption="; ".join(f"{n}: {QUANTITIES[n][1]}" for n in names),
        )

    @classmethod
    def concat(cls, tables: Sequence[PositionGapTable]) -> PositionGapTable:
        """One table from several (e.g. one per draft temperature).

        Parameters
        ----------
        tables : sequence of PositionGapTable
            The tables; a later table's value for the same key replaces an earlier one's.

        Returns
        -------
        PositionGapTable
            Their values, checks and notes, with the first table's provenance.
        """
        values: dict = {}
        checks: dict = {}
        notes: list[str] = []
        for tb in tables:
            values.update(tb.values)
            checks.update(tb.checks)
            notes.extend(n for n in tb.notes if n not in notes)
        return cls(values, checks, notes, tables[0].meta if tables else {})


def _all_values(p: Any, q: Any, k: int) -> dict[str, Any]:
    vals = {
        "alpha_iid": batched_optimal_acceptance(p, q, k, "iid"),
        "alpha_swor": batched_optimal_acceptance(p, q, k, "swor"),
        "alpha_greedy": batched_optimal_acceptance(p, q, k, "greedy"),
    }
    for name, v in _BATCHED.items():
        if name not in ("kseq", "kseq_rule"):
            vals[name] = batched_verifier_acceptance(p, q, k, v)
    # K-SEQ's two notions share ρ*: one call (inputs validated just above).
    vals["kseq_rule"], vals["kseq"] = _kseq_both(p, q, k)
    return vals


def _verifiers_module() -> Any:
    try:
        from .. import verifiers
    except ImportError:
        return None
    return verifiers


def position_gap_table(
    data: Distributions,
    ks: Sequence[int] = (2, 3, 4, 8),
    *,
    device: Any = "auto",
    batch_size: int | None = None,
    cross_check: int = 8,
    slow_verifiers: bool = True,
    progress: bool | None = None,
) -> PositionGapTable:
    """Mean α* per draft law and mean α per verifier, for each k.

    Parameters
    ----------
    data : Distributions
        Target rows p and draft rows q (renormalised in float64).
    ks : sequence of int
        Numbers of drafts.
    device : str or torch.device
        Where the batched solvers run (``"auto"``: cuda when available).
    batch_size : int, optional
        Positions per batch (default 8 on the CPU, 256 on a GPU).
    cross_check : int
        Positions on which the batched verifier formulas are compared with
        ``optaccept.verifiers`` (when importable); a mismatch above 1e-8
        raises :class:`~optaccept.SolverError`.
    slow_verifiers : bool
        Add the columns only ``optaccept.verifiers`` computes (RRS without
        replacement and SpecHub, at k = 2), position by position (O(n log n) each).
    progress : bool, optional
        tqdm bars counting positions (the batched pass, then the k = 2 columns of
        ``slow_verifiers``).  Default: on in a terminal and in Jupyter, off otherwise.

    Returns
    -------
    PositionGapTable

    Examples
    --------
    >>> from optaccept import llm, real
    >>> data = real.Distributions.load(real.sample_path()).subset(range(4))
    >>> table = llm.position_gap_table(data, ks=(2, 4), progress=False)
    >>> round(table.mean("alpha_iid", 2), 4), round(table.mean("rrs", 2), 4)
    (0.9684, 0.9454)
    >>> table.mean("alpha_iid", 4) >= table.mean("alpha_iid", 2)  # more drafts, no less acceptance
    True
    >>> print(table.findings().splitlines()[0].split("; ")[1])
    RRS ≤ α*_iid 100.0%
    """
    import torch
    from tqdm.auto import tqdm

    ks = check_data_and_ks(data, ks)
    dev = resolve_device(device)
    if batch_size is None:
        batch_size = 8 if dev.type == "cpu" else 256
    if batch_size < 1:
        raise InputError(f"batch_size: must be at least 1, got {batch_size}")
    temp = float(data.meta.get("draft_warp", {}).get("temperature", float("nan")))
    acc: dict[tuple[float, int, str], list[np.ndarray]] = {}
    show = show_progress(progress)
    bar = tqdm(total=len(data), desc=f"gap table, k in {list(ks)}", unit="position", disable=not show)
    for lo in range(0, len(data), batch_size):
        p, q = data.compact_rows(lo, lo + batch_size)
        pt, qt = torch.from_numpy(p).to(dev), torch.from_numpy(q).to(dev)
        with shared_sort():  # one sort by p/q per batch, shared by all k and solvers
            for k in ks:
                for name, v in _all_values(pt, qt, k).items():
                    acc.setdefault((temp, k, name), []).append(np.asarray(v.cpu().numpy(), dtype=np.float64))
        bar.update(p.shape[0])
    bar.close()
    values = {key: np.concatenate(v) for key, v in acc.items()}
    notes = [
        "α* columns and the sd, nss, rrs, kseq, kseq_rule and greedy_verifier columns: "
        "batched closed forms of optaccept.llm (torch)."
    ]
    ver = _verifiers_module()
    if ver is None:
        notes.append(
            "optaccept.verifiers is not importable: the verifier columns are not "
            "cross-checked and the rrs_wor and spechub columns are left out."
        )
    else:
        m = min(cross_check, len(data))
        worst = 0.0
        for i in range(m):
            p, q = data.compact_rows(i, i + 1)
            for k in ks:
                for name, cls in _VERIFIER_CLASSES.items():
                    kk = 1 if name == "sd" else k
                    ref = getattr(ver, cls)().acceptance(p[0], q[0], kk, notion="output")
                    worst = max(worst, abs(float(ref) - values[(temp, k, name)][i]))
                ref = ver.KSeq().acceptance(p[0], q[0], k, notion="rule")
                worst = max(worst, abs(float(ref) - values[(temp, k, "kseq_rule")][i]))
        if worst > 1e-8:
            raise SolverError(f"batched verifier acceptance differs from optaccept.verifiers by {worst:.3g}")
        notes.append(f"Cross-checked against optaccept.verifiers on {m} positions (largest difference {worst:.1e}).")
        if slow_verifiers and 2 in ks:
            rw, sh = [], []
            for i in tqdm(range(len(data)), desc="rrs_wor, spechub (k = 2)", unit="position", disable=not show):
                p, q = data.compact_rows(i, i + 1)
                rw.append(ver.RRSWithoutReplacement().acceptance(p[0], q[0], 2))
                sh.append(ver.SpecHubVerifier().acceptance(p[0], q[0], 2))
            values[(temp, 2, "rrs_wor")] = np.array(rw, dtype=np.float64)
            values[(temp, 2, "spechub")] = np.array(sh, dtype=np.float64)
            notes.append("rrs_wor and spechub (k = 2): optaccept.verifiers, position by position.")
    checks = {}
    tol = 1e-9
    for k in ks:
        a_iid = values[(temp, k, "alpha_iid")]
        a_swor = values[(temp, k, "alpha_swor")]
        c = {
            "α*_swor ≥ α*_iid": float(np.mean(a_swor >= a_iid - tol)),
            "RRS ≤ α*_iid": float(np.mean(values[(temp, k, "rrs")] <= a_iid + tol)),
            "K-SEQ ≤ α*_iid": float(np.mean(values[(temp, k, "kseq")] <= a_iid + tol)),
            "RRS < α*_iid (strictly, by 1e-6)": float(np.mean(values[(temp, k, "rrs")] < a_iid - 1e-6)),
            "K-SEQ ≥ (1-(1-1/k)^k) α*_iid": float(
                np.mean(values[(temp, k, "kseq")] >= (1 - (1 - 1 / k) ** k) * a_iid - tol)
            ),
        }
        if (temp, k, "rrs_wor") in values:
            c["RRS w/o ≤ α*_swor"] = float(np.mean(values[(temp, k, "rrs_wor")] <= a_swor + tol))
        checks[(temp, k)] = c
    return PositionGapTable(values, checks, notes, dict(data.meta))
