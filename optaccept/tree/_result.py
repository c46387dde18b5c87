"""The one result type of the tree computations."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._lib.display import Tabular

__all__ = ["TreeResult", "LPCertificate"]


@dataclass(frozen=True)
class LPCertificate:
    """Evidence for the sequence-level LP (verifier ``"optimal"``), re-checked by the library.

    Attributes
    ----------
    primal_value : float
        Objective of the solver's plan (a lower bound once feasible).
    max_violation : float
        Largest violation of the plan's constraints (equalities and signs).
    upper_bound : float
        b·λ + Σ_j (c - Aᵀλ)_j⁺ · ub_j for the solver's dual λ — a valid upper bound on the
        LP optimum for *any* λ, since every variable lies in [0, ub_j].
    duality_gap : float
        upper_bound - primal_value.
    variables, constraints : int
        LP size.
    tol : float
        Tolerance of ``ok`` on the violation and the gap.
    """

    primal_value: float
    max_violation: float
    upper_bound: float
    duality_gap: float
    variables: int
    constraints: int
    tol: float = 1e-7

    @property
    def ok(self) -> bool:
        return self.max_violation <= self.tol and abs(self.duality_gap) <= self.tol


@dataclass(frozen=True)
class TreeResult(Tabular):
    """Expected number of draft tokens accepted in one step (the correction or bonus
    token not counted).

    It speaks the results' vocabulary (``value``, ``std_err``, ``method``, ``ok``) and has
    ``to_dict()``, ``to_pandas()`` (one row) and ``to_latex()``.  The type of ``value``
    follows one rule: a ``Fraction`` exactly when :attr:`exact` (the models gave Fractions
    and the value was enumerated or recursed, no LP, no sampling), a ``float`` otherwise;
    ``float(result)`` is always the float.

    Attributes
    ----------
    value : float or Fraction
        Exact value (Fraction when the models return Fractions and the verifier needs
        no LP), or the Rao-Blackwellised sample mean.
    verifier, drafts : str
    length, k : int
    std_err : float or None
        Standard error of a sampled estimate (None when exact).
    trees : int
        Draft trees enumerated (exact), sampled, or for ``verifier="optimal"`` the
        distinct node sets the LP is written over.
    certificate : LPCertificate or None
        For ``verifier="optimal"``.
    shape : Shape or None
        The tree shape when the tree was given by ``shape=`` (``drafts`` then holds
        how its children were filled: "topk", "swor" or "iid"; ``k`` its leaves).
    method : str
        ``"exact"`` (enumeration / recursion), ``"lp"`` or ``"sampled"``.
    details : dict
        Anything else (per-tree values of a sampled run, solver statistics).

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> res = tree.accepted_tokens(p, q, tree.TreeDraftLaw(length=2), verifier="block")
    >>> type(res).__name__, res.value, res.method, res.std_err  # exact: a Fraction
    ('TreeResult', Fraction(11, 9), 'exact', None)
    >>> float(res), res.verifier, res.length
    (1.2222222222222223, 'block', 2)
    """

    value: Any
    verifier: str
    drafts: str
    length: int
    k: int
    method: str = "exact"
    std_err: float | None = None
    trees: int = 0
    certificate: LPCertificate | None = None
    shape: Any = None
    details: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def exact(self) -> bool:
        """Whether ``value`` is an exact ``Fraction``."""
        return isinstance(self.value, Fraction)

    @property
    def ok(self) -> bool:
        """Whether the value is finite and, for the LP, its certificate passed its re-check."""
        cert = self.certificate is None or self.certificate.ok
        return cert and abs(float(self.value)) < float("inf")

    def __float__(self) -> float:
        return float(self.value)

    _caption = "Expected draft tokens accepted per step."

    def _records(self) -> list[dict[str, Any]]:
        rec = {"value": self.value, "std_err": self.std_err, "method": self.method, "ok": self.ok}
        rec.update((k, v) for k, v in self.to_dict().items() if k not in rec)
        return [rec]

    def _shown(self) -> str:
        if self.exact:
            return f"{self.value} ≈ {float(self.value):.6g}"
        if self.std_err is not None:
            return f"{float(self.value):.6g} ± {self.std_err:.2g}"
        return f"{float(self.value):.10g}"

    def _tree(self) -> str:
        if self.shape is not None:
            return f"shape={self.shape!r}, children={self.drafts!r}"
        return f"k={self.k}, length={self.length}, drafts={self.drafts!r}"

    def __repr__(self) -> str:
        cert = "" if self.certificate is None else f", certified={self.certificate.ok}"
        return (
            f"TreeResult({self.verifier}: {self._shown()} accepted tokens/step, {self._tree()}, "
            f"method={self.method!r}{cert})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("verifier", self.verifier),
            ("accepted tokens / step", self._shown()),
            *(
                [("shape", repr(self.shape)), ("children", self.drafts)]
                if self.shape is not None
                else [("k × length", f"{self.k} × {self.length}"), ("drafts", self.drafts)]
            ),
            ("method", self.method),
            ("trees", str(self.trees)),
        ]
        if self.certificate is not None:
            c = self.certificate
            rows.append(("certificate", f"gap {c.duality_gap:.2e}, violation {c.max_violation:.2e}, ok={c.ok}"))
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in rows
        )
        return f"<table>{body}</table>"

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python summary (for JSON).

        Returns
        -------
        dict
            ``verifier``, ``drafts``, ``length``, ``k``, ``value`` (a string such as
            ``"5/9"`` when exact), ``std_err``, ``method``, ``trees`` and, for a shaped tree,
            ``shape`` (its index paths).
        """
        return {
            "verifier": self.verifier,
            "drafts": self.drafts,
            "length": self.length,
            "k": self.k,
            "value": str(self.value) if self.exact else float(self.value),
            "std_err": self.std_err,
            "method": self.method,
            "trees": self.trees,
            **({"shape": [list(t) for t in self.shape.paths]} if self.shape is not None else {}),
        }
