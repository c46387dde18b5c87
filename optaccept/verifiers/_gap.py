"""Gap table: each verifier's exact acceptance beside α* of its own draft law."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.display import Tabular, html_table
from .._lib.limits import show_progress
from .._lib.validation import as_distribution_pair, check_k
from ..optimal import optimal_acceptance
from ._all import ALL
from ._base import Verifier

__all__ = ["GapTable", "gap_table"]

#: What a missing cell says when the verifier is not defined for that k.
NOT_DEFINED = "not defined for this k"


@dataclass(frozen=True)
class GapTable(Tabular):
    """Rows = verifiers, columns = k.  ``alpha[name][k]`` is the verifier's acceptance
    ("output" notion), ``alpha_star[name][k]`` α* of its draft law; None where the
    verifier is not defined for k or its exact acceptance is beyond its size limit, and
    then ``missing[name][k]`` says why (the one-line refusal, or "not defined for this k").
    Printed tables mark refused cells "refused [i]" with the reasons below them.  In the
    results' vocabulary ``value`` is the array of the ``alpha`` column of :meth:`to_pandas`
    (NaN where empty), ``std_err`` None (exact), ``method`` ``"exact"``, ``ok`` no cell refused.

    Attributes
    ----------
    ks : tuple of int
        The numbers of drafts, one column each.
    names : tuple of str
        The verifiers' names, one row each.
    alpha : dict of str to dict of int to float or None
        Each verifier's exact acceptance ("output" notion) per k.
    alpha_star : dict of str to dict of int to float or None
        α* of each verifier's own draft law per k.
    missing : dict of str to dict of int to str
        Why a cell is empty, where it is.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> t = verifiers.gap_table(p, q, ks=(1, 2), verifiers=[verifiers.SD(), verifiers.RRS()], progress=False)
    >>> t.ks, t.names
    ((1, 2), ('sd', 'rrs'))
    >>> round(t.alpha["rrs"][2], 4), round(t.alpha_star["rrs"][2], 4)  # RRS against alpha* of i.i.d. drafts
    (0.824, 0.9075)
    >>> t.alpha["sd"][2], t.why("sd", 2)
    (None, 'not defined for this k')
    """

    ks: tuple[int, ...]
    names: tuple[str, ...]
    alpha: dict[str, dict[int, float | None]]
    alpha_star: dict[str, dict[int, float | None]]
    missing: dict[str, dict[int, str]] = field(default_factory=dict)

    #: every cell is an exact acceptance
    method = "exact"
    #: exact values carry no standard error
    std_err = None

    @property
    def value(self) -> Any:
        """The verifiers' acceptance, one entry per row of :meth:`to_pandas` (NaN where empty)."""
        return np.array([np.nan if r["alpha"] is None else r["alpha"] for r in self._long_rows()])

    @property
    def ok(self) -> bool:
        """Whether no cell was refused (cells of a verifier not defined for a k do not count)."""
        return not self._refusals()

    def _records(self) -> list[dict[str, Any]]:
        return self._long_rows()

    def why(self, name: str, k: int) -> str | None:
        """Why a cell is empty (None when it has a value).

        Parameters
        ----------
        name : str
            A verifier's name (a row).
        k : int
            A number of drafts (a column).

        Returns
        -------
        str or None
            The one-line refusal, "not defined for this k", or None.
        """
        if self.alpha[name][k] is not None:
            return None
        return self.missing.get(name, {}).get(k, NOT_DEFINED)

    def _refusals(self) -> list[tuple[str, int, str]]:
        out = []
        for n in self.names:
            for k in self.ks:
                w = self.why(n, k)
                if w is not None and w != NOT_DEFINED:
                    out.append((n, k, w))
        return out

    def _cell(self, name: str, k: int, empty: str, refs: dict[tuple[str, int], int]) -> str:
        a, s = self.alpha[name][k], self.alpha_star[name][k]
        if a is not None:
            return f"{a:.4f} / {s:.4f}"
        return f"refused [{refs[(name, k)]}]" if (name, k) in refs else empty

    def _footnotes(self) -> tuple[dict[tuple[str, int], int], list[str]]:
        refs, notes = {}, []
        for i, (n, k, w) in enumerate(self._refusals(), start=1):
            refs[(n, k)] = i
            notes.append(f"[{i}] {n}, k={k}: {w}")
        return refs, notes

    def gap(self, name: str, k: int) -> float | None:
        """α* − α for one cell (None where undefined).

        Parameters
        ----------
        name : str
            A verifier's name (a row).
        k : int
            A number of drafts (a column).

        Returns
        -------
        float or None
            ``alpha_star[name][k] − alpha[name][k]``, or None where either is missing.
        """
        a, s = self.alpha[name][k], self.alpha_star[name][k]
        return None if a is None or s is None else s - a

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict: {"ks": [...], "rows": {name: {k: {"alpha", "alpha_star", "gap",
        "why"}}}}; ``why`` is None where the cell has a value.

        Returns
        -------
        dict
            The nested dict above.
        """
        return {
            "ks": list(self.ks),
            "rows": {
                n: {
                    k: {
                        "alpha": self.alpha[n][k],
                        "alpha_star": self.alpha_star[n][k],
                        "gap": self.gap(n, k),
                        "why": self.why(n, k),
                    }
                    for k in self.ks
                }
                for n in self.names
            },
        }

    def __str__(self) -> str:
        head = ["verifier"] + [f"k={k}: α / α*" for k in self.ks]
        refs, notes = self._footnotes()
        lines = [[n] + [self._cell(n, k, "—", refs) for k in self.ks] for n in self.names]
        widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        out = [fmt.format(*head).rstrip(), fmt.format(*["-" * w for w in widths]).rstrip()]
        out += [fmt.format(*r).rstrip() for r in lines]
        if any(self.why(n, k) == NOT_DEFINED for n in self.names for k in self.ks):
            out.append("— : the verifier is not defined for this k")
        return "\n".join(out + notes)

    def to_markdown(self) -> str:
        """The table as Markdown (α / α* per cell; the reasons for refused cells below it).

        Returns
        -------
        str
            One row per verifier, one column per k, then the notes.
        """
        head = "| verifier | " + " | ".join(f"k={k}: α / α*" for k in self.ks) + " |"
        sep = "|---|" + "---|" * len(self.ks)
        refs, notes = self._footnotes()
        rows = [f"| {n} | " + " | ".join(self._cell(n, k, "—", refs) for k in self.ks) + " |" for n in self.names]
        undefined = any(self.why(n, k) == NOT_DEFINED for n in self.names for k in self.ks)
        tail = ["", *(["— : the verifier is not defined for this k"] if undefined else []), *notes]
        tail = tail if len(tail) > 1 else []
        return "\n".join([head, sep, *rows, *tail])

    def _long_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "verifier": n,
                "k": k,
                "alpha": self.alpha[n][k],
                "alpha_star": self.alpha_star[n][k],
                "gap": self.gap(n, k),
                "why": self.why(n, k),
            }
            for n in self.names
            for k in self.ks
        ]

    _caption = (
        r"Exact acceptance $\alpha$ of each verifier and $\alpha^*$ of its own draft law; "
        r"--: the verifier is not defined for this $k$; n/a: refused at this size (see \texttt{why})."
    )

    def _latex_rows(self) -> tuple[list[str], list[list[Any]]]:
        """The page form of ``to_latex()``: two rows per verifier (α, then α* of its own draft
        law), so that the table fits a 7-in text width up to k = 8; ``--`` where the verifier is
        not defined for k, ``n/a`` where a value is refused at this size."""

        def cell(value: Any, n: str, k: int) -> str:
            if value is not None:
                return f"{value:.4f}"
            return "--" if self.why(n, k) == NOT_DEFINED else "n/a"

        rows = []
        for n in self.names:
            rows.append([n, "$\\alpha$"] + [cell(self.alpha[n][k], n, k) for k in self.ks])
            rows.append(["", "$\\alpha^*$"] + [cell(self.alpha_star[n][k], n, k) for k in self.ks])
        return ["verifier", ""] + [f"$k={k}$" for k in self.ks], rows

    def __repr__(self) -> str:
        return f"GapTable({len(self.names)} verifiers, ks={list(self.ks)})"

    def _repr_html_(self) -> str:
        refs, notes = self._footnotes()
        rows = [[n] + [self._cell(n, k, "—", refs) for k in self.ks] for n in self.names]
        caption = "α: the verifier's exact acceptance; α*: optimum of its own draft law; —: not defined for this k."
        return html_table(
            ["verifier"] + [f"k={k}: α / α*" for k in self.ks],
            rows,
            title="Gap table",
            caption=" ".join([caption, *notes]),
        )


def gap_table(
    p: Any,
    q: Any,
    ks: Iterable[int],
    verifiers: Sequence[Verifier] | None = None,
    *,
    progress: bool | None = None,
) -> GapTable:
    """Exact acceptance of each verifier and α* of its own draft law, for each k.

    A cell whose exact acceptance (or α*) is refused at this size — e.g. RRS without
    replacement at k ≥ 3 on a full vocabulary, Khisti et al.'s output notion beyond its
    tuple limit — is left empty and :attr:`GapTable.missing` keeps the one-line refusal,
    which the printed table shows below it.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    ks : iterable of int
        Numbers of drafts (columns).
    verifiers : sequence of Verifier, optional
        Rows (default: ``optaccept.verifiers.ALL``).
    progress : bool, optional
        A tqdm bar over the cells (one unit = one verifier at one k).  Default: on in a
        terminal and in Jupyter, off otherwise.

    Returns
    -------
    GapTable
        Printable (``str``), ``to_dict()``, ``to_markdown()``, ``to_pandas()``.

    Examples
    --------
    >>> import optaccept as oa
    >>> t = oa.verifiers.gap_table([.5, .3, .2], [.2, .3, .5], ks=(2,), progress=False)
    >>> round(t.alpha["rrs"][2], 6), t.why("sd", 2)
    (0.76, 'not defined for this k')
    """
    from tqdm.auto import tqdm

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
    missing: dict[str, dict[int, str]] = {}
    cells = [(v, k) for v in vs for k in ks_t]
    bar = tqdm(cells, desc="gap table", unit="cell", disable=not show_progress(progress))
    for v, k in bar:
        bar.set_postfix_str(f"{v.name}, k={k}", refresh=False)
        alpha.setdefault(v.name, {})
        star.setdefault(v.name, {})
        a = s = None
        if v.supports(k):
            try:
                law = v.drafts(qf, k)
                a = v.acceptance(pf, qf, k)
                s = float(optimal_acceptance(pf, law).value)
            except (MethodError, InputError) as exc:
                a = s = None
                missing.setdefault(v.name, {})[k] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        alpha[v.name][k], star[v.name][k] = a, s
    bar.close()
    return GapTable(ks_t, tuple(v.name for v in vs), alpha, star, missing)
