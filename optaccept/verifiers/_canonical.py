r"""Canonical decomposition (Khisti et al., ICLR 2025, Theorem 1; docs/theory.md §3).

Every lossless verifier can be replaced, without losing acceptance, by
(1) importance-weighted selection of one drafted token: from draft set A pick y ∈ A
with weight β_y(A) ≥ 0, Σ_{y∈A} β_y(A) = 1, so the selected token has law
:math:`p_I(y) = \sum_A D(A)\,\beta_y(A)`; then (2) single-draft speculative sampling of
that token against p.  Hence

.. math:: \alpha^*(p, D) = \max_\beta \sum_y \min\bigl(p(y), p_I(y)\bigr),

a linear program in β (and t_y ≤ p(y), t_y ≤ p_I(y)), solved here with HiGHS over the
explicit set law.  (Khisti et al. index β by the ordered tuple; only its set matters.)
The returned value is re-checked against ``optimal_acceptance`` of the same law.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, csr_matrix

from .._errors import InputError, SolverError
from .._lib.display import Tabular, html_fields, short
from .._lib.limits import MAX_ENUMERATION
from .._lib.validation import as_distribution
from ..drafts import DraftLaw
from ..optimal import optimal_acceptance
from ..optimal._flow import incidence, polish_flow

__all__ = ["CanonicalDecomposition", "canonical_decomposition"]

#: Largest gap tolerated between the LP value and α* from ``optimal_acceptance``.
CHECK_TOL = 1e-7
#: Largest number of (set, token) arcs for the max-flow polish of the LP's β.
MAX_POLISH_ARCS = 200_000


def _polish(sets, D: np.ndarray, p: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Finish the LP's β to a maximum flow with the package's one max-flow algorithm
    (:func:`optaccept.optimal._flow.polish_flow`: Dinic's, in integer units of 2^-80).

    HiGHS stops within its tolerances (~1e-7 on laws whose set probabilities are ~1e-12, as
    near-one-hot drafts give).  The selection problem is a max flow source → A (capacity
    D(A)) → y ∈ A → sink (capacity p(y)), with f(A, y) = min-part of D(A) β_y(A); starting
    from the LP's flow, the polish raises it to a maximum flow (exact up to
    (sets + tokens)·2^-80) whose value is Σ min(p, p_I) = α*.  Mass a set cannot send
    usefully stays on its LP-chosen tokens (it never lowers Σ min(p, p_I)).
    """
    m, n = beta.shape
    send = D[:, None] * beta  # D(A) β_y(A)
    inflow = send.sum(axis=0)
    # useful flow: scale each token's incoming mass down to p(y)
    scale = np.where(inflow > p, p / np.where(inflow > 0, inflow, 1.0), 1.0)
    start = send * scale[None, :]
    inc = incidence(sets, n)
    owner = np.repeat(np.arange(m), np.diff(inc.indptr))
    flow = csr_matrix((start[owner, inc.indices], inc.indices, inc.indptr), shape=(m, n))
    f = polish_flow(flow, D, p).toarray()
    # β: the flow, plus each set's unsent mass where the LP put it
    rest = np.clip(send - f, 0.0, None)
    left = D - f.sum(axis=1)
    tot = rest.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        extra = np.where(tot[:, None] > 0, rest * (left / np.where(tot > 0, tot, 1.0))[:, None], 0.0)
    out = f + np.clip(extra, 0.0, None)
    rows = out.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        new_beta = np.where(rows[:, None] > 0, out / np.where(rows > 0, rows, 1.0)[:, None], beta)
    return new_beta


@dataclass(frozen=True)
class CanonicalDecomposition(Tabular):
    """Result of :func:`canonical_decomposition`.

    In the results' vocabulary ``value`` is Σ min(p, p_I), ``std_err`` None (computed),
    ``method`` ``"canonical decomposition"``, ``ok`` whether it equals the independent α*
    within 1e-7; ``to_pandas()`` and ``to_latex()`` give its numbers as one row.

    Attributes
    ----------
    sets : tuple of tuple of int
        The draft sets A (sorted token ids) with D(A) > 0.
    set_probs : ndarray, shape (len(sets),)
        D(A).
    beta : ndarray, shape (len(sets), n)
        Selection weights β_y(A) (zero off A; rows sum to 1).
    p_I : ndarray, shape (n,)
        Law of the selected token, Σ_A D(A) β_·(A).
    value : float
        Σ_y min(p(y), p_I(y)) — equals α* of the law.
    alpha_star : float
        α* from ``optimal_acceptance`` (the independent re-check).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> import optaccept as oa
    >>> cd = verifiers.canonical_decomposition(p, oa.Greedy(q, k=2))
    >>> cd.sets[:2], cd.beta.sum(axis=1).round(6)[:2]  # sets {2, y}; each row of weights sums to 1
    (((0, 2), (1, 2)), array([1., 1.]))
    >>> round(cd.value, 4), round(cd.alpha_star, 4)
    (0.8608, 0.8608)
    """

    sets: tuple[tuple[int, ...], ...]
    set_probs: np.ndarray
    beta: np.ndarray
    p_I: np.ndarray
    value: float
    alpha_star: float

    #: the value of Khisti et al.'s canonical decomposition (their Theorem 1)
    method = "canonical decomposition"
    #: a computed value carries no standard error
    std_err = None
    _caption = "Canonical decomposition (Khisti et al., Theorem 1)."

    @property
    def ok(self) -> bool:
        """Whether ``value`` equals the independently computed ``alpha_star`` within 1e-7."""
        return abs(self.value - self.alpha_star) <= 1e-7

    def __repr__(self) -> str:
        return short(
            "CanonicalDecomposition",
            [("value", self.value), ("alpha_star", self.alpha_star), ("sets", len(self.sets)), ("p_I", self.p_I)],
        )

    def _repr_html_(self) -> str:
        return html_fields(
            "Canonical decomposition (Khisti et al., Theorem 1)",
            [
                ("value Σ min(p, p_I)", self.value),
                ("α* (independent re-check)", self.alpha_star),
                ("draft sets A with D(A) > 0", len(self.sets)),
                ("p_I (law of the selected token)", self.p_I),
            ],
        )


def canonical_decomposition(p: Any, drafts: DraftLaw, *, max_sets: int = MAX_ENUMERATION) -> CanonicalDecomposition:
    """Optimal importance weights β of Khisti et al.'s canonical decomposition.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution (Khisti et al.: q).
    drafts : DraftLaw
        Draft law (IID, WithoutReplacement, Greedy, Independent, SpecHub, Joint).
    max_sets : int
        Largest number of draft sets enumerated.

    Returns
    -------
    CanonicalDecomposition
        β, p_I and the value Σ min(p, p_I) (= α*).

    Raises
    ------
    InputError
        Bad p or law.
    SolverError
        The LP failed, or its value differs from α* by more than 1e-7.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> import optaccept as oa
    >>> cd = verifiers.canonical_decomposition(p, oa.IID(q, k=2))
    >>> round(cd.value, 4), cd.ok  # sum of min(p, p_I) = alpha*
    (0.9075, True)
    >>> cd.p_I.round(4)
    array([0.42  , 0.19  , 0.2225, 0.0875, 0.08  ])
    """

    if not isinstance(drafts, DraftLaw):
        raise InputError(f"drafts: must be a draft law (IID, WithoutReplacement, ...), got {type(drafts).__name__}")
    pf = as_distribution(p, "p", n=drafts.n)
    sl = drafts.set_law(max_sets=max_sets)
    sets = sl.sets
    D = np.asarray(sl.probs, dtype=np.float64)
    n = drafts.n
    # variables: one β per (set, member), then t_y
    a_idx = np.concatenate([np.full(len(s), a) for a, s in enumerate(sets)]).astype(np.int64)
    y_idx = np.concatenate([np.asarray(s, dtype=np.int64) for s in sets])
    nb = a_idx.size
    c = np.concatenate([np.zeros(nb), -np.ones(n)])
    # equality: Σ_{y∈A} β_y(A) = 1
    A_eq = coo_matrix((np.ones(nb), (a_idx, np.arange(nb))), shape=(len(sets), nb + n))
    b_eq = np.ones(len(sets))
    # t_y − Σ_A D(A) β_y(A) ≤ 0
    rows = np.concatenate([y_idx, np.arange(n)])
    cols = np.concatenate([np.arange(nb), nb + np.arange(n)])
    vals = np.concatenate([-D[a_idx], np.ones(n)])
    A_ub = coo_matrix((vals, (rows, cols)), shape=(n, nb + n))
    bounds = [(0.0, None)] * nb + [(0.0, float(v)) for v in pf]
    res = linprog(c, A_ub=A_ub.tocsr(), b_ub=np.zeros(n), A_eq=A_eq.tocsr(), b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"canonical decomposition LP failed: {res.message}")
    beta = np.zeros((len(sets), n))
    beta[a_idx, y_idx] = np.clip(res.x[:nb], 0.0, None)
    beta /= beta.sum(axis=1, keepdims=True)
    if a_idx.size <= MAX_POLISH_ARCS:
        beta = _polish(sets, D, pf, beta)
    p_I = D @ beta
    value = float(np.minimum(pf, p_I).sum())
    alpha_star = float(optimal_acceptance(pf, drafts).value)
    if abs(value - alpha_star) > CHECK_TOL:
        raise SolverError(
            f"canonical decomposition value {value!r} differs from α* = {alpha_star!r} by more than {CHECK_TOL}"
        )
    return CanonicalDecomposition(tuple(sets), D, beta, p_I, value, alpha_star)
