"""α* by number of drafts and draft law, each value with its certificate's status: one table
that prints, exports (``to_pandas``, ``to_latex``) and plots (:func:`optaccept.plots.plot_alpha_vs_k`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._lib.display import Tabular, html_table
from .._lib.validation import as_distribution, check_choice, check_k, one_renormalization_warning
from ..drafts import LAWS, law_from_name, law_names
from ._solve import optimal_acceptance
from ._verify import verify

__all__ = ["AlphaTable", "alpha_table"]

#: the laws a table can hold: those built from (q, k)
_TABLE_LAWS = law_names(takes_k=True)


@dataclass(frozen=True)
class AlphaTable(Tabular):
    """α* of one (p, q) pair for each number of drafts k and each draft law, with the status of
    each value's certificate (:func:`optaccept.verify`).

    Attributes
    ----------
    ks : tuple of int
        The numbers of drafts asked for.
    drafts : tuple of str
        The draft laws, by registry name (``"iid"``, ``"swor"``, ``"greedy"``).
    values : dict
        ``values[law][k]``: α* (a float), or None where the law is not defined for k (drafts
        that must be distinct need k ≤ |supp q|).
    certified : dict
        ``certified[law][k]``: ``Verification.ok`` of the value (None: not verified, or no
        value).
    methods : dict
        ``methods[law][k]``: the method that computed the value.
    support : int
        |supp q|, the largest k of the laws with distinct drafts.

    Examples
    --------
    >>> import optaccept as oa
    >>> t = oa.optimal.alpha_table([.5, .3, .2], [.2, .3, .5], ks=(1, 2, 4), drafts=("iid", "swor"))
    >>> ks, values = t.curve("swor")  # without replacement: k ≤ |supp q| = 3
    >>> ks, [round(v, 4) for v in values]  # k = 2: 69/70 by the dual (★) over all 8 subsets
    ([1, 2], [0.7, 0.9857])
    >>> t.ok, t.to_pandas().shape
    (True, (6, 5))
    """

    ks: tuple[int, ...]
    drafts: tuple[str, ...]
    values: dict[str, dict[int, float | None]]
    certified: dict[str, dict[int, bool | None]]
    methods: dict[str, dict[int, str | None]]
    support: int

    @property
    def value(self) -> float:
        """The largest α* in the table (the headline number)."""
        return max(v for row in self.values.values() for v in row.values() if v is not None)

    @property
    def std_err(self) -> None:
        """None: every value is exact up to the solver's accuracy."""
        return None

    @property
    def method(self) -> str:
        """The methods used, joined (e.g. ``"sorted"``)."""
        used = sorted({m for row in self.methods.values() for m in row.values() if m is not None})
        return "+".join(used)

    @property
    def ok(self) -> bool | None:
        """True when every value is certified, False when one is not, None when none was
        verified."""
        status = [c for row in self.certified.values() for c in row.values() if c is not None]
        return None if not status else all(status)

    def curve(self, drafts: str) -> tuple[list[int], list[float]]:
        """The ks at which ``drafts`` is defined, and α* at each.

        Parameters
        ----------
        drafts : str
            A law of the table.

        Returns
        -------
        ks : list of int
        values : list of float
        """
        check_choice("drafts", drafts, self.drafts)
        row = self.values[drafts]
        ks = [k for k in self.ks if row[k] is not None]
        return ks, [float(row[k]) for k in ks]

    def _records(self) -> list[dict[str, Any]]:
        return [
            {
                "drafts": law,
                "k": k,
                "alpha_star": self.values[law][k],
                "method": self.methods[law][k],
                "certified": self.certified[law][k],
            }
            for law in self.drafts
            for k in self.ks
        ]

    _caption = (
        r"Optimal acceptance $\alpha^*$ by number of drafts $k$ and draft law; every value is checked by "
        r"\texttt{verify} unless marked; --: the law is not defined for this $k$."
    )

    def _cell(self, law: str, k: int) -> str:
        v = self.values[law][k]
        if v is None:
            return "--"
        return f"{v:.4f}" if self.certified[law][k] is not False else f"{v:.4f} (not certified)"

    def _latex_rows(self) -> tuple[list[str], list[list[Any]]]:
        return ["draft law"] + [f"$k={k}$" for k in self.ks], [
            [law] + [self._cell(law, k) for k in self.ks] for law in self.drafts
        ]

    def __str__(self) -> str:
        head = ["draft law"] + [f"k={k}" for k in self.ks]
        rows = [[law] + [self._cell(law, k).replace("--", "—") for k in self.ks] for law in self.drafts]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        status = {True: "every value certified", False: "not every value certified", None: "not verified"}[self.ok]
        out = [fmt.format(*head).rstrip(), fmt.format(*["-" * w for w in widths]).rstrip()]
        return "\n".join(out + [fmt.format(*r).rstrip() for r in rows] + [f"α* ({status}); — : not defined for k"])

    def __repr__(self) -> str:
        return f"AlphaTable(drafts={self.drafts}, ks={self.ks}, ok={self.ok})"

    def _repr_html_(self) -> str:
        rows = [[law] + [self._cell(law, k).replace("--", "—") for k in self.ks] for law in self.drafts]
        return html_table(
            ["draft law"] + [f"k={k}" for k in self.ks],
            rows,
            title="α* by k and draft law",
            caption="—: not defined for this k (distinct drafts need k ≤ |supp q|).",
        )


@one_renormalization_warning
def alpha_table(
    p: Any,
    q: Any,
    ks: Iterable[int],
    drafts: Sequence[str] = ("iid", "swor", "greedy"),
    *,
    verify_each: bool = True,
) -> AlphaTable:
    """α* of (p, q) for each number of drafts and each draft law, each value certified.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions (the library's one input rule).
    ks : iterable of int
        Numbers of drafts, each at least 1.
    drafts : sequence of {"iid", "swor", "greedy"}
        Draft laws by registry name (``optaccept.drafts.LAWS``).
    verify_each : bool
        Check every value with :func:`optaccept.verify` (default); False skips the checks
        (``certified`` is then None).

    Returns
    -------
    AlphaTable
        ``values[law][k]``, ``certified[law][k]``; ``to_pandas()``, ``to_latex()``; drawn by
        :func:`optaccept.plots.plot_alpha_vs_k`.

    Raises
    ------
    InputError
        If p or q is not a distribution, a k is below 1, or a law name is unknown.

    Examples
    --------
    >>> import optaccept as oa
    >>> t = oa.optimal.alpha_table([.40, .25, .15, .12, .08], [.30, .10, .35, .05, .20], ks=(1, 2))
    >>> t.values["iid"][2], t.ok
    (0.9075, True)
    """
    ks = tuple(check_k(k) for k in ks)
    drafts = tuple(check_choice("drafts", d, _TABLE_LAWS) for d in drafts)
    support = int(np.count_nonzero(as_distribution(q, "q")))
    values: dict[str, dict[int, float | None]] = {}
    certified: dict[str, dict[int, bool | None]] = {}
    methods: dict[str, dict[int, str | None]] = {}
    for law in drafts:
        values[law], certified[law], methods[law] = {}, {}, {}
        for k in ks:
            if LAWS[law].distinct_drafts and k > support:
                values[law][k] = certified[law][k] = methods[law][k] = None
                continue
            d = law_from_name(law, q, k)
            res = optimal_acceptance(p, d)
            values[law][k] = float(res.value)
            methods[law][k] = res.method
            certified[law][k] = bool(verify(p, d, res).ok) if verify_each else None
    return AlphaTable(ks, drafts, values, certified, methods, support)
