"""The optimal verifier run on real next-token distributions, beside α* and practical verifiers.

:func:`realised_optimal` builds the optimal verifier (``optaccept.optimal_verifier``,
docs/optimal_verifier.md) for i.i.d. drafts (or drafts without replacement, ``law="swor"``)
at a fixed random subset of the positions of a :class:`Distributions`, at the full
vocabulary, runs it (Monte Carlo) and tabulates, per k, the mean realised acceptance ± its
standard error next to the mean α* of (★), the rule's own exact acceptance, and the exact
acceptance of practical verifiers on the same positions: RRS (SpecInfer) and K-SEQ (SpecTr)
for i.i.d. drafts, RRS without replacement for the other law.  One build takes up to
seconds at vocabulary 49,152, so a subset is used.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Estimate, Shown, Tabular, html_table, markdown_table
from .._lib.validation import check_choice, check_rng, check_size
from ._storage import Distributions, check_data_and_ks

__all__ = ["RealisedTable", "realised_optimal"]

#: column -> description (per-position arrays in RealisedTable.values[(k, column)]).
COLUMNS: dict[str, str] = {
    "alpha_iid": "α* of (★), i.i.d. drafts",
    "rule": "exact acceptance of the optimal verifier's rule",
    "realised": "optimal verifier, run: fraction of outputs among the drafts",
    "rrs": "RRS with replacement (SpecInfer), exact",
    "kseq": "K-SEQ (SpecTr), output ∈ drafts, exact",
}
#: the same for drafts without replacement (``law="swor"``).
SWOR_COLUMNS: dict[str, str] = {
    "alpha_swor": "α* of (★), drafts without replacement",
    "rule": "exact acceptance of the optimal verifier's rule",
    "realised": "optimal verifier, run: fraction of outputs among the drafts",
    "rrs_wor": "RRS without replacement (Jeon et al.), exact",
}
_LAW_NAMES = {"iid": "i.i.d.", "swor": "without replacement"}


def _columns(law: str) -> dict[str, str]:
    return COLUMNS if law == "iid" else SWOR_COLUMNS


@dataclasses.dataclass
class RealisedTable(Tabular):
    """Per-position values on a subset of positions, and their summary per k.

    In the results' vocabulary ``value`` and ``std_err`` are the realised acceptance and its
    Monte Carlo standard error, one entry per row of :meth:`to_pandas` (per k; the
    ``realised`` and ``realised_se`` columns), ``method`` is ``"sampled"``, ``ok`` says every
    row agrees with α* (|z| ≤ 5).

    Attributes
    ----------
    positions : ndarray of int
        The positions used (sorted).
    size : int
        Monte Carlo samples per position and k.
    values : dict
        ``values[(k, column)]`` = per-position array (columns in ``COLUMNS``).
    position_std_err : dict
        ``position_std_err[k]`` = per-position standard errors of the realised acceptance
        (old name ``se``).
    meta : dict
        Provenance of the data.
    law : str
        ``"iid"`` (columns ``COLUMNS``) or ``"swor"`` (``SWOR_COLUMNS``).

    Examples
    --------
    >>> from optaccept import real
    >>> data = real.Distributions.load(real.sample_path())
    >>> tab = real.realised_optimal(data, ks=(2,), positions=2, rng=0, samples=500, progress=False)
    >>> type(tab).__name__, tab.ok, sorted({k for k, _ in tab.values})
    ('RealisedTable', True, [2])
    """

    positions: np.ndarray
    size: int
    values: dict[tuple[int, str], np.ndarray]
    position_std_err: dict[int, np.ndarray]
    meta: dict[str, Any]
    law: str = "iid"

    #: the realised acceptance is a Monte Carlo mean
    method = "sampled"
    _caption = (
        "Optimal verifier run on real distributions: mean acceptance "
        "over a random subset of positions (realised ± Monte Carlo standard error)."
    )

    @property
    def value(self) -> np.ndarray:
        """The mean realised acceptance, one entry per k (row of :meth:`to_pandas`)."""
        return np.array([r["realised"] for r in self.rows])

    @property
    def std_err(self) -> np.ndarray:
        """Its Monte Carlo standard error, one entry per k."""
        return np.array([r["realised_se"] for r in self.rows])

    @property
    def ok(self) -> bool:
        """Whether every row's realised acceptance agrees with α* within 5 standard errors."""
        return all(abs(r["z"]) <= 5 for r in self.rows)

    def _records(self) -> list[dict[str, Any]]:
        return self.rows

    @property
    def columns(self) -> dict[str, str]:
        """Column -> description for this table's draft law."""
        return _columns(self.law)

    @property
    def ks(self) -> list[int]:
        return sorted({k for k, _ in self.values})

    def summary(self, k: int) -> dict[str, float]:
        """Means over the subset; ``realised_se`` is the Monte Carlo standard error of the
        mean realised acceptance (sqrt(Σ se_i²)/m), ``z`` = (realised − α*) / realised_se.

        Parameters
        ----------
        k : int
            Number of drafts (a key of ``position_std_err``).

        Returns
        -------
        dict of str to float
            The mean of every column, ``realised_se``, ``z``, ``k``, ``positions`` and
            ``samples_per_position``.

        Raises
        ------
        InputError
            If the table has no row for k.
        """
        if k not in self.position_std_err:
            raise InputError(f"k: no row for k={k}; the table has {self.ks}")
        m = self.positions.size
        out = {c: float(self.values[(k, c)].mean()) for c in self.columns}
        out["realised_se"] = float(math.sqrt(float(np.sum(self.position_std_err[k] ** 2))) / m)
        d = out["realised"] - out[f"alpha_{self.law}"]
        out["z"] = d / out["realised_se"] if out["realised_se"] > 0 else 0.0
        out["k"], out["positions"], out["samples_per_position"] = k, m, self.size
        return out

    @property
    def rows(self) -> list[dict[str, float]]:
        """One dict per k (see :meth:`summary`)."""
        return [self.summary(k) for k in self.ks]

    def _wide(self) -> tuple[list[str], list[list[Any]]]:
        """Header and rows of the table as read (Markdown, LaTeX); cells are numbers
        (:class:`~optaccept._lib.display.Estimate` for the run, ``Shown`` for rounded values), so
        that the CSV holds one number per cell."""

        practical = [c for c in self.columns if c not in ("rule", "realised") and not c.startswith("alpha")]
        names = {"rrs": "RRS", "kseq": "K-SEQ", "rrs_wor": "RRS w/o repl."}
        head = ["k", "positions", f"α* ({_LAW_NAMES[self.law]})", "optimal verifier, run", "z", "rule (exact)"] + [
            names[c] for c in practical
        ]
        body = []
        for r in self.rows:
            a = r[f"alpha_{self.law}"]
            body.append(
                [
                    int(r["k"]),
                    int(r["positions"]),
                    Shown(a, f"{a:.4f}"),
                    Estimate(r["realised"], r["realised_se"], 5),
                    Shown(r["z"], f"{r['z']:+.2f}"),
                    Shown(r["rule"], f"{r['rule']:.4f}"),
                ]
                + [Shown(r[c], f"{r[c]:.4f}") for c in practical]
            )
        return head, body

    def to_markdown(self) -> str:
        """The table as Markdown.

        Returns
        -------
        str
            One row per k: α*, the run ± its standard error, z, the rule's exact value and
            the practical verifiers.
        """

        return markdown_table(*self._wide()).rstrip("\n")

    def _latex_rows(self) -> tuple[list[str], list[list[Any]]]:
        """The page form of ``to_latex()``: the table of :meth:`to_markdown`."""
        head, body = self._wide()
        return ["$k$", "positions", r"$\alpha^*$", r"realised $\pm$ SE", "$z$", "rule"] + head[6:], body

    def _repr_html_(self) -> str:
        head, body = self._wide()
        return html_table(
            head,
            body,
            title=f"Optimal verifier, run ({self.size:,} samples per position)",
            caption="; ".join(f"{c}: {d}" for c, d in self.columns.items()),
        )

    def __str__(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        return (
            f"RealisedTable({self.positions.size} positions, ks={self.ks}, law={self.law!r}, "
            f"{self.size} samples per position)"
        )

    def plot(self, ax: Any = None) -> Any:
        """Mean acceptance against k: α*, the optimal verifier run (± 2 SE), RRS, K-SEQ.

        Returns the matplotlib Axes.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; None: a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(3.3, 3.2), layout="constrained")
        rows = self.rows
        ks = [r["k"] for r in rows]
        ax.plot(ks, [r[f"alpha_{self.law}"] for r in rows], "k-", label=rf"$\alpha^*$ ({_LAW_NAMES[self.law]})")
        ax.errorbar(
            ks,
            [r["realised"] for r in rows],
            yerr=[2 * r["realised_se"] for r in rows],
            fmt="o",
            color="C3",
            capsize=3,
            label="optimal verifier, run (± 2 SE)",
        )
        styles = {
            "rrs": ("s--", "C0", "RRS"),
            "kseq": ("^:", "C2", "K-SEQ"),
            "rrs_wor": ("s--", "C0", "RRS without replacement"),
        }
        for c in self.columns:
            if c in styles:
                fmt, color, label = styles[c]
                ax.plot(ks, [r[c] for r in rows], fmt, color=color, label=label)
        ax.set_xlabel("number of drafts $k$")
        ax.set_ylabel(f"mean acceptance ({self.positions.size} positions)")
        ax.set_xticks(ks)
        ax.grid(alpha=0.3)
        # below the axes, never over the data
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2, frameon=False)
        return ax


def realised_optimal(
    data: Distributions,
    ks: Sequence[int] = (2, 4),
    positions: int | Sequence[int] = 24,
    rng: np.random.Generator | int | None = 0,
    *,
    samples: int = 20_000,
    progress: bool = True,
    drafts: str = "iid",
) -> RealisedTable:
    """Run the optimal verifier on a random subset of positions and tabulate its acceptance.

    Parameters
    ----------
    data : Distributions
        Target rows p and draft rows q (float64, full vocabulary).
    ks : sequence of int
        Numbers of drafts.
    positions : int or sequence of int
        How many positions to draw at random (without replacement, with ``rng``), or the
        positions themselves.
    rng : numpy.random.Generator, int or None
        Chooses the positions and drives the verifier (default: seed 0, so the default
        table is reproducible; None: fresh entropy).
    samples : int
        Monte Carlo samples (draft tuple, output) per position and k.
    progress : bool
        Show a tqdm progress bar.
    drafts : {"iid", "swor"}
        i.i.d. drafts, or drafts without replacement (the verifier lists the C(m, k) draft
        sets of the m tokens with q > 0: fine for the shipped top-50 rows at k ≤ 3).

    Returns
    -------
    RealisedTable

    Examples
    --------
    >>> from optaccept import real
    >>> data = real.Distributions.load(real.sample_path())
    >>> tab = real.realised_optimal(data, ks=(2,), positions=2, rng=0, samples=500, progress=False)
    >>> len(tab.positions), tab.size, tab.law
    (2, 500, 'iid')
    """
    from tqdm.auto import tqdm

    from .. import verifiers

    ks = check_data_and_ks(data, ks)
    rng = check_rng(rng)
    samples = check_size(samples)
    if samples < 1:
        raise InputError("samples: must be at least 1")
    check_choice("drafts", drafts, _LAW_NAMES)
    if isinstance(positions, (int, np.integer)) and not isinstance(positions, bool):
        if not 1 <= positions <= len(data):
            raise InputError(f"positions: must be between 1 and {len(data)}, got {positions}")
        idx = np.sort(rng.choice(len(data), size=int(positions), replace=False))
    else:
        idx = np.asarray(list(positions), dtype=np.int64)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= len(data):
            raise InputError(f"positions: must be indices in [0, {len(data)})")
    acc: dict[tuple[int, str], list[float]] = {}
    ses: dict[int, list[float]] = {}
    practical = {"rrs": verifiers.RRS(), "kseq": verifiers.KSeq(), "rrs_wor": verifiers.RRSWithoutReplacement()}
    cols = [c for c in _columns(drafts) if c in practical]
    for i in tqdm(idx.tolist(), desc="optimal verifier, run", disable=not progress):
        p, q = data.rows(i, i + 1)
        pc, qc = data.compact_rows(i, i + 1)
        for k in ks:
            r = verifiers.realised_acceptance(p[0], q[0], k, rng, samples, drafts=drafts)
            vals = [(f"alpha_{drafts}", r.value), ("rule", r.acceptance), ("realised", r.mean)]
            vals += [(c, practical[c].acceptance(pc[0], qc[0], k, notion="output")) for c in cols]
            for c, v in vals:
                acc.setdefault((k, c), []).append(float(v))
            ses.setdefault(k, []).append(r.std_err)
    values = {key: np.asarray(v) for key, v in acc.items()}
    return RealisedTable(idx, samples, values, {k: np.asarray(v) for k, v in ses.items()}, dict(data.meta), drafts)
