"""The one result type of the α* solvers, its plans and its verification report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._lib.display import Tabular, html_fields, short

__all__ = ["AcceptanceResult", "FlowPlan", "TransportPlan", "Verification"]


@dataclass(frozen=True)
class FlowPlan:
    """A flow of the compressed max-flow LP: ``flow[a, y]`` is the mass of draft set
    ``sets[a]`` matched to token y (non-zero only for y ∈ sets[a]).  Its total is a
    lower bound on α*.  ``flow`` is a dense array, or a ``scipy.sparse`` matrix where a
    dense one would not fit (a large vocabulary with a small draft support).

    Attributes
    ----------
    sets : tuple of tuple of int
        The draft sets, each as sorted token ids.
    flow : ndarray or scipy.sparse matrix, shape (len(sets), n)
        ``flow[a, y]``: mass of ``sets[a]`` sent to token y.
    """

    sets: tuple[tuple[int, ...], ...]
    flow: Any  # (len(sets), n): ndarray or scipy.sparse matrix

    @property
    def value(self) -> float:
        return float(self.flow.sum())


@dataclass(frozen=True)
class TransportPlan:
    """A coupling of the primal transport LP: ``coupling[i, y]`` = π(x̄ᵢ, y) for the
    ordered tuple ``tuples[i]``; rows sum to D(x̄ᵢ), columns to p(y).

    Attributes
    ----------
    tuples : ndarray of int, shape (m, k)
        The ordered draft tuples.
    coupling : ndarray of float64, shape (m, n)
        ``coupling[i, y]`` = π(x̄ᵢ, y).
    """

    tuples: np.ndarray  # (m, k)
    coupling: np.ndarray  # (m, n)

    @property
    def value(self) -> float:
        hit = np.zeros(self.coupling.shape, dtype=bool)
        rows = np.repeat(np.arange(self.tuples.shape[0]), self.tuples.shape[1])
        hit[rows, self.tuples.ravel()] = True
        return float(self.coupling[hit].sum())

    def to_flow(self) -> FlowPlan:
        """Compress to a flow over draft sets (mass sent to y ∈ set(x̄) only).

        Returns
        -------
        FlowPlan
            The coupling's rows summed by draft set, with the mass sent outside each set dropped.
        """
        index: dict[tuple[int, ...], int] = {}
        rows = []
        for row in self.tuples.tolist():
            key = tuple(sorted(set(row)))
            rows.append(index.setdefault(key, len(index)))
        sets = tuple(index)
        flow = np.zeros((len(sets), self.coupling.shape[1]))
        np.add.at(flow, np.array(rows), self.coupling)
        mask = np.zeros(flow.shape, dtype=bool)
        for a, s in enumerate(sets):
            mask[a, list(s)] = True
        return FlowPlan(sets, np.where(mask, flow, 0.0))


class AcceptanceResult(Tabular):
    """Optimal acceptance α* with its certificate.

    It speaks the results' vocabulary (``value``, ``std_err``, ``method``, ``ok``) and has
    ``to_dict()``, ``to_pandas()`` (one row) and ``to_latex()``; ``float(result)`` is the value
    as a float.

    Attributes
    ----------
    value : float or Fraction
        α* as computed by ``method`` (Fraction in exact mode).
    std_err : None
        Always None: α* is computed, not estimated.
    ok : bool
        Whether the certificate it carries agrees with the value (see :attr:`ok`);
        :func:`~optaccept.verify` re-checks it independently against p.
    subset : tuple of int
        Sorted token ids of a subset S attaining (★): p(S) + 1 − D(set ⊆ S) = upper_bound.
    method : str
        The method that produced the value.
    plan : FlowPlan, TransportPlan or None
        A feasible flow / coupling attaining lower_bound (LP methods), else None.
    upper_bound : float or Fraction
        (★) evaluated at ``subset`` — an upper bound on α* (weak duality).
    lower_bound : float or None
        Value of ``plan`` — a lower bound on α* — when a plan exists.
    law : DraftLaw
        The draft law solved for.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> res = oa.optimal_acceptance(p, oa.IID(q, k=2))
    >>> res.method, res.subset, res.ok
    ('sorted', (0, 2, 4), True)
    >>> round(float(res), 4), res.std_err
    (0.9075, None)
    >>> from fractions import Fraction as F
    >>> exact = oa.optimal_acceptance([F(1, 2), F(1, 4), F(1, 4)], oa.IID([F(1, 4), F(1, 4), F(1, 2)], k=1))
    >>> exact.value, exact.exact  # one draft: sum of min(p, q)
    (Fraction(3, 4), True)
    """

    __slots__ = ("value", "method", "plan", "upper_bound", "lower_bound", "law", "_subset", "_subset_fn")

    def __init__(
        self,
        value: float | Fraction,
        method: str,
        law: Any,
        *,
        subset: tuple[int, ...] | None = None,
        subset_fn: Callable[[], np.ndarray] | None = None,
        plan: FlowPlan | TransportPlan | None = None,
        upper_bound: float | Fraction | None = None,
        lower_bound: float | None = None,
    ) -> None:
        self.value = value
        self.method = method
        self.law = law
        self.plan = plan
        self.upper_bound = value if upper_bound is None else upper_bound
        self.lower_bound = lower_bound
        self._subset = subset
        self._subset_fn = subset_fn

    @property
    def subset(self) -> tuple[int, ...]:
        """Sorted tuple of token ids of the dual certificate S (computed on first access)."""
        if self._subset is None:
            ids = self._subset_fn() if self._subset_fn is not None else np.array([], dtype=np.int64)
            self._subset = tuple(int(i) for i in np.sort(np.asarray(ids)))
        return self._subset

    def __getstate__(self) -> dict[str, Any]:
        # the subset is made concrete: its lazy form is a closure over the solver's scratch
        state = {name: getattr(self, name) for name in self.__slots__ if name not in ("_subset", "_subset_fn")}
        state["_subset"] = self.subset
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in self.__slots__:
            setattr(self, name, state.get(name))

    @property
    def exact(self) -> bool:
        return isinstance(self.value, Fraction)

    @property
    def gap(self) -> float | None:
        """upper_bound − lower_bound when a plan exists (a certified optimality gap)."""
        if self.lower_bound is None:
            return None
        return float(self.upper_bound) - float(self.lower_bound)

    @property
    def std_err(self) -> None:
        """None: α* is computed, not estimated (the results' rule for exact values)."""
        return None

    @property
    def ok(self) -> bool:
        """Whether the certificate it carries agrees with the value: (★) at ``subset`` equals
        it (exactly in exact mode, within 1e-9 otherwise) and, with a plan, the plan's value
        is within 1e-9 of it.  :func:`~optaccept.verify` re-checks both against p."""
        if self.exact and isinstance(self.upper_bound, Fraction):
            upper = self.upper_bound == self.value
        else:
            upper = abs(float(self.upper_bound) - float(self.value)) <= 1e-9
        return upper and (self.lower_bound is None or abs(float(self.value) - float(self.lower_bound)) <= 1e-9)

    def __float__(self) -> float:
        return float(self.value)

    _caption = "Optimal acceptance and its certificate."

    def _records(self) -> list[dict[str, Any]]:
        rec = {"value": self.value, "std_err": None, "method": self.method, "ok": self.ok}
        rec.update((k, v) for k, v in self.to_dict().items() if k not in rec)
        rec["upper_bound"] = self.upper_bound  # a number (to_dict writes exact values as strings)
        return [rec]

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python summary (for JSON).

        Returns
        -------
        dict
            ``value``, ``method``, ``law`` (its repr), ``subset``, ``upper_bound`` and
            ``lower_bound``; exact values as strings such as ``"3/4"``.
        """
        return {
            "value": str(self.value) if self.exact else float(self.value),
            "method": self.method,
            "law": repr(self.law),
            "subset": list(self.subset),
            "upper_bound": str(self.upper_bound) if self.exact else float(self.upper_bound),
            "lower_bound": None if self.lower_bound is None else float(self.lower_bound),
        }

    def __repr__(self) -> str:
        v = str(self.value) if self.exact else f"{float(self.value):.12g}"
        s = self.subset
        shown = repr(s) if len(s) <= 8 else "(" + ", ".join(map(str, s[:8])) + f", ... {len(s) - 8} more)"
        return f"AcceptanceResult(value={v}, method={self.method!r}, subset={shown}, law={self.law!r})"

    def _repr_html_(self) -> str:
        fields = [
            ("α* (value)", self.value),
            ("method", self.method),
            ("draft law", repr(self.law)),
            ("certificate S (subset)", self.subset),
            ("upper bound (★) at S", self.upper_bound),
        ]
        if self.lower_bound is not None:
            fields += [("lower bound (plan value)", self.lower_bound), ("certified gap", self.gap)]
        return html_fields("AcceptanceResult", fields)


@dataclass(frozen=True)
class Verification(Tabular):
    """Independent re-check of an :class:`AcceptanceResult` (see :func:`verify`).

    In the results' vocabulary: ``value`` is ``dual_value`` (α* when ``ok``), ``std_err`` None
    (computed), ``method`` what proved the lower bound (``witness``, or ``"own rule"`` for an
    optimal verifier), ``ok`` both bounds proved; ``to_pandas()`` and ``to_latex()`` give its
    fields as one row.

    Attributes
    ----------
    dual_value : float or Fraction
        (★) recomputed at the result's subset from the law's own formula — the upper bound
        on α* that the subset proves.
    value_gap : float or Fraction
        |result.value − dual_value| (also ``upper_gap``).
    primal_value : float or None
        Total of the plan's flow (None without a plan).
    duality_gap : float or None
        dual_value − primal_value (≥ 0 up to rounding; 0 certifies optimality).
    max_violation : float or None
        Largest violation of the plan's constraints (capacity, sign, y ∈ set).
    tol : float
        Tolerance of the float comparisons (0 in exact mode).
    details : dict
        Extra figures of the check (for an optimal verifier: its own ``acceptance`` and
        ``layout_violation``).
    lower_bound : float, Fraction or None
        Value of the feasible coupling or flow that proves the lower bound (the result's
        plan, or a witness built by :func:`verify`); None when none could be built.
    lower_gap : float, Fraction or None
        |result.value − lower_bound| (None without a lower bound).
    lower_violation : float, Fraction or None
        Largest feasibility error of that witness.
    witness : str or None
        What proves the lower bound (None: not asked for, as for an optimal verifier, whose
        own rule is the witness and is checked through ``primal_value``).
    witness_optimal : bool
        Whether the witness's construction reaches α* when the value is right (a plan, the
        optimal verifier's layout, a max flow); False for a valid bound that is not tight in
        general, whose shortfall then neither confirms nor refutes the value.
    basis : str or None
        What backs each bound, in words: for the upper bound how D(set ⊆ S) at the subset was
        evaluated (the law's float formula, exact, or with outward rounding), for the lower
        bound the witness or theorem (e.g. Theorem 2.7 of docs/theory.md §2.2 with interval
        evaluation for drafts without replacement at scale).  Shown by the repr.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> law = oa.IID(q, k=2)
    >>> check = oa.verify(p, law, oa.optimal_acceptance(p, law))
    >>> check.ok, round(float(check.dual_value), 4), check.witness is not None
    (True, 0.9075, True)
    """

    dual_value: float | Fraction
    value_gap: float | Fraction
    primal_value: float | None = None
    duality_gap: float | None = None
    max_violation: float | None = None
    tol: float = 1e-9
    details: dict[str, Any] = field(default_factory=dict)
    lower_bound: float | Fraction | None = None
    lower_gap: float | Fraction | None = None
    lower_violation: float | Fraction | None = None
    witness: str | None = None
    witness_optimal: bool = True
    basis: str | None = None

    @property
    def value(self) -> float | Fraction:
        """``dual_value``: (★) at the result's subset, α* when :attr:`ok`."""
        return self.dual_value

    @property
    def std_err(self) -> None:
        """None: the re-check is computed, not estimated."""
        return None

    @property
    def method(self) -> str:
        """What proved the lower bound: the ``witness``, or ``"own rule"`` (an optimal verifier)."""
        return self.witness if self.witness is not None else "own rule"

    _caption = "Independent re-check of an optimal acceptance."

    def _records(self) -> list[dict[str, Any]]:
        return [{"value": self.value, "std_err": None, "method": self.method, **dict(self._fields())}]

    @property
    def upper_gap(self) -> float | Fraction:
        """|value − (★) at the subset|: how far the subset is from proving the value."""
        return self.value_gap

    @property
    def upper_ok(self) -> bool:
        """Whether (★) at the result's subset equals the value (within ``tol``; exactly in
        exact mode): the subset proves value ≥ α*."""
        if isinstance(self.value_gap, Fraction):
            return self.value_gap == 0
        return abs(float(self.value_gap)) <= self.tol

    @property
    def lower_ok(self) -> bool:
        """Whether a feasible coupling or flow of the value was found and re-checked
        (within ``tol``; exactly in exact mode): it proves value ≤ α*.  (An optimal
        verifier's own rule is checked through ``duality_gap`` and ``max_violation``.)"""
        if self.witness is None:
            checks = [0.0]
            if self.duality_gap is not None:
                checks.append(abs(self.duality_gap))
            if self.max_violation is not None:
                checks.append(self.max_violation)
            return max(checks) <= self.tol
        if self.lower_gap is None:
            return False
        viol = 0 if self.lower_violation is None else self.lower_violation
        if isinstance(self.lower_gap, Fraction) or isinstance(viol, Fraction):
            return self.lower_gap == 0 and viol == 0
        return max(abs(float(self.lower_gap)), float(viol)) <= self.tol

    @property
    def ok(self) -> bool:
        """True when both bounds agree with the value: every gap and violation within ``tol``
        (exactly 0 in exact mode)."""
        return self.upper_ok and self.lower_ok

    @property
    def message(self) -> str:
        """One line: both bounds proved, or which bound failed and by how much."""
        parts = []
        if not self.upper_ok:
            parts.append(
                f"upper bound fails: (★) at the subset is {_num(self.dual_value)}, {_num(self.value_gap)} from the value"
            )
        if not self.lower_ok:
            if self.witness is None:
                parts.append(
                    f"lower bound fails: the rule's acceptance is {_num(self.primal_value)}, duality gap "
                    f"{_num(self.duality_gap)}, violation {_num(self.max_violation)}"
                )
            elif self.lower_gap is None:
                parts.append(f"lower bound not established: {self.witness}")
            elif not self.witness_optimal and not self.lower_violation:
                parts.append(
                    f"lower bound not proved: the {self.witness} reaches {_num(self.lower_bound)}, "
                    f"{_num(self.lower_gap)} below the value (not tight in general, so this neither confirms nor "
                    "refutes the value)"
                )
            else:
                parts.append(
                    f"lower bound fails: the {self.witness} reaches {_num(self.lower_bound)}, "
                    f"{_num(self.lower_gap)} from the value (violation {_num(self.lower_violation)})"
                )
        if not parts:
            lower = f"the {self.witness}" if self.witness else "the verifier's own rule"
            return f"ok: the subset (upper bound) and {lower} (lower bound) both prove the value"
        return "; ".join(parts)

    def _fields(self) -> list[tuple[str, Any]]:
        out = [("ok", self.ok), ("dual_value", self.dual_value), ("value_gap", self.value_gap)]
        if self.primal_value is not None:
            out += [
                ("primal_value", self.primal_value),
                ("duality_gap", self.duality_gap),
                ("max_violation", self.max_violation),
            ]
        if self.witness is not None:
            out += [("lower_bound", self.lower_bound), ("lower_gap", self.lower_gap), ("witness", self.witness)]
        if self.basis is not None:
            out.append(("basis", self.basis))
        if not self.ok:
            out.append(("message", self.message))
        return out

    def __repr__(self) -> str:
        return short("Verification", self._fields())

    def _repr_html_(self) -> str:
        return html_fields(f"Verification ({'ok' if self.ok else 'FAILED'}, tol {self.tol:g})", self._fields())


def _num(v: Any) -> str:
    if v is None:
        return "none"
    return str(v) if isinstance(v, Fraction) else f"{float(v):.6g}"
