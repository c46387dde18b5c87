r"""Audit a rule declared lossy (docs/audit.md §13): how far its output law is from the target,
and how much acceptance any rule with that bias could reach.

One draft X ~ q per step; ``fn(P, Q, X, rng) -> (accepted, Y)``.  Measured:
* the bias TV(p̂, p) of the empirical output law p̂ over N steps, with an interval that holds
  with probability at least 1 − δ: P(‖p̂ − v‖₁ ≥ λ) ≤ (2ⁿ − 2) e^{−Nλ²/2} for the true output
  law v (Weissman, Ordentlich, Seroussi, Verdú and Weinberger, 2003), so
  |TV(p̂, p) − TV(v, p)| ≤ TV(p̂, v) < λ/2;
* the acceptance (mean of ``accepted``) ± its standard error.

The front: every rule that accepts the draft with probability b(x) and otherwise draws from
some law has rejection rate R and bias at least TV(p, q) − R (Yin et al., NeurIPS 2024,
Theorem 5; :func:`optaccept.sequence.pareto_front`), so with bias β its acceptance is at most
1 − max(0, TV(p, q) − β).  ``front`` is this value at the measured bias (and at the ends of its
interval), read off :func:`optaccept.sequence.pareto_front`.

Declared rules with exact values: ``"ensemble"`` (Hugging Face's ``assistant_ensemble_weight``
w: the static ensemble v = w·p + (1 − w)·q, acceptance 1 − w·TV(p, q), bias (1 − w)·TV(p, q);
on the front — DIVERSED, arXiv 2604.07622, proved the static ensemble's Pareto optimality),
``"sd"`` (lossless: acceptance 1 − TV, bias 0) and ``"accept_all"`` (acceptance 1, bias TV).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Report
from .._lib.limits import show_progress
from .._lib.statistics import l1_threshold
from .._lib.validation import as_distribution_pair, check_choice, check_rng, check_size
from ._pit import FALSE_ALARM

__all__ = ["LossyAuditReport", "audit_lossy", "front_acceptance", "DECLARED_LOSSY"]

#: Declared rules :func:`audit_lossy` has exact values for.
DECLARED_LOSSY = ("ensemble", "sd", "accept_all")


def front_acceptance(p: Any, q: Any, bias: float) -> float:
    """The largest acceptance of any one-draft rule whose output law is within TV ``bias`` of
    p: 1 − (the least rejection rate on the front of :func:`optaccept.sequence.pareto_front`
    with loss ≤ ``bias``), i.e. 1 − max(0, TV(p, q) − bias) (Yin et al., Theorem 5).

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    bias : float
        The allowed TV distance of the output law from p, ≥ 0.

    Returns
    -------
    float
        The largest acceptance, in [1 − TV(p, q), 1].

    Raises
    ------
    InputError
        If p or q is not a distribution, or ``bias`` is not a number ≥ 0.
    """

    pf, qf = as_distribution_pair(p, q)
    if not (isinstance(bias, (int, float, np.floating)) and bias >= 0):
        raise InputError(f"bias: must be a number >= 0, got {bias!r}")
    from ..sequence import pareto_front  # (tqdm): optaccept.audit loads without it

    pts = np.asarray(pareto_front(pf, qf), dtype=np.float64)  # (R, loss), loss rising
    order = np.argsort(pts[:, 1], kind="stable")
    R, loss = pts[order, 0], pts[order, 1]
    if bias >= loss[-1]:
        return 1.0 - float(R[-1])
    return 1.0 - float(np.interp(float(bias), loss, R))


@dataclass
class LossyAuditReport(Report):
    """What :func:`audit_lossy` measured.  In the results' vocabulary ``value`` is
    ``accepted`` ± ``std_err`` (``accepted_se`` is its old name), ``method`` ``"sampled"``,
    ``ok`` neither above the front nor inconsistent with the declared rule; ``to_pandas()``
    and ``to_latex()`` give its numbers as one row.  ``bias`` = TV(p̂, p) with its interval
    [``bias_low``, ``bias_high``] at confidence 1 − ``false_alarm``; ``accepted`` ± ``std_err``;
    ``front`` the best acceptance at the measured bias (``front_high`` at ``bias_high``);
    ``expected`` / ``expected_bias`` the declared rule's exact values (None if none).

    Attributes
    ----------
    accepted, std_err : float
        Measured acceptance and its standard error.
    bias : float
        Measured TV(p̂, p) of the outputs.
    bias_low, bias_high : float
        Its interval at confidence 1 − ``false_alarm``.
    front, front_high : float
        The best acceptance of any rule at ``bias`` and at ``bias_high``.
    tv_pq : float
        TV(p, q).
    steps : int
        Number of steps run.
    false_alarm : float
        One minus the confidence of the bias interval.
    declared : str or None
        The rule claimed (one of :data:`DECLARED_LOSSY`).
    expected, expected_bias : float or None
        The declared rule's exact acceptance and bias.
    details : dict
        Further facts of the run.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> p = np.array([.5, .3, .2, 0]); q = np.array([.2, .2, .3, .3])
    >>> def claims_all(P, Q, X, rng):  # emits from p but reports every draft accepted
    ...     return np.ones(len(X), dtype=bool), rng.choice(4, len(X), p=p)
    >>> rep = audit.audit_lossy(claims_all, p, q, samples=5_000, rng=0, progress=False)
    >>> type(rep).__name__, rep.accepted, round(rep.front_high, 2) < 1
    ('LossyAuditReport', 1.0, True)
    >>> rep.above_front, rep.ok  # no rule this little biased accepts every draft
    (True, False)
    """

    _title = "Lossy-rule audit report"

    accepted: float
    std_err: float
    bias: float
    bias_low: float
    bias_high: float
    front: float
    front_high: float
    tv_pq: float
    steps: int
    false_alarm: float
    declared: str | None = None
    expected: float | None = None
    expected_bias: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    #: the value is a sample mean
    method = "sampled"

    @property
    def value(self) -> float:
        """``accepted``, the results' name for it."""
        return self.accepted

    @property
    def ok(self) -> bool:
        """Whether the acceptance is not above the front (:attr:`above_front`) and agrees with
        the declared rule where one was declared (:attr:`consistent` is not False)."""
        return not self.above_front and self.consistent is not False

    _caption = "Audit of a lossy rule: the measured acceptance and bias against the front."

    @property
    def gap(self) -> float:
        """``front − accepted``: acceptance left on the table at this bias (negative beyond
        sampling error is impossible for an honest acceptance count)."""
        return self.front - self.accepted

    @property
    def above_front(self) -> bool:
        """True when the acceptance exceeds the front even at the top of the bias interval by
        more than 5 standard errors: the reported acceptance cannot be the rule's own."""
        return self.accepted - 5 * self.std_err > self.front_high + 1e-12

    @property
    def consistent(self) -> bool | None:
        """Whether the measured bias interval holds the declared bias and the acceptance lies
        within 5 standard errors (plus 1e-9) of the declared value; None if nothing was
        declared."""
        if self.expected is None or self.expected_bias is None:
            return None
        ok_bias = self.bias_low - 1e-12 <= self.expected_bias <= self.bias_high + 1e-12
        return ok_bias and abs(self.accepted - self.expected) <= 5 * self.std_err + 1e-9

    def _rows(self) -> list[tuple[str, str]]:
        conf = 1 - self.false_alarm
        rows = [
            ("declared", repr(self.declared)),
            ("steps", f"{self.steps:,}"),
            (
                "bias TV(output, p)",
                f"{self.bias:.4f} measured; in [{self.bias_low:.4f}, {self.bias_high:.4f}] with probability ≥ {conf:g}",
            ),
            ("acceptance", f"{self.accepted:.4f} ± {self.std_err:.4f} (estimate ± s.e.)"),
            (
                "front",
                f"{self.front:.4f} at the measured bias, {self.front_high:.4f} at its upper end "
                f"(best acceptance of any rule that biased; TV(p, q) = {self.tv_pq:.4f}); gap = {self.gap:.4f}",
            ),
        ]
        if self.expected is not None:
            rows.append(("declared values", f"acceptance {self.expected:.6f}, bias {self.expected_bias:.6f} (exact)"))
            rows.append(("consistent", str(self.consistent)))
        if self.above_front:
            rows.append(("ABOVE THE FRONT", "no rule with this bias accepts this much: the acceptance count is wrong"))
        return rows

    def to_json(self) -> str:
        """The report as JSON (the fields, the gap and the verdicts).

        Returns
        -------
        str
            The fields, plus ``gap``, ``above_front`` and ``consistent``.
        """
        d = asdict(self)
        d.update(gap=self.gap, above_front=self.above_front, consistent=self.consistent)
        return json.dumps(d)


def _declared_values(declared: str, weight: float | None, tv: float) -> tuple[float, float]:
    if declared == "ensemble":
        if weight is None or not 0 <= weight <= 1:
            raise InputError(f"weight: 'ensemble' needs the weight w of p in [0, 1], got {weight!r}")
        return 1.0 - weight * tv, (1.0 - weight) * tv
    if weight is not None:
        raise InputError(f"weight: only the declared rule 'ensemble' takes a weight, not {declared!r}")
    return (1.0 - tv, 0.0) if declared == "sd" else (1.0, tv)


def audit_lossy(
    fn: Callable[..., Any],
    p: Any,
    q: Any,
    *,
    samples: int = 200_000,
    rng: np.random.Generator | int | None = None,
    declared: str | None = None,
    weight: float | None = None,
    false_alarm: float = FALSE_ALARM,
    batch: int = 50_000,
    progress: bool | None = None,
) -> LossyAuditReport:
    """Audit a one-draft rule declared lossy: its bias, its acceptance, and the front.

    Parameters
    ----------
    fn : callable
        ``fn(P, Q, X, rng) -> (accepted, Y)``: ``P``, ``Q`` float (B, n) read-only rows (every
        row is p, q), ``X`` int (B, 1) the drafts (X ~ q), ``rng`` a numpy Generator; returns
        whether each draft was accepted (B,) and the emitted tokens (B,).
    p, q : array_like, shape (n,)
        Target and draft distributions.
    samples : int
        Steps to run.
    rng : numpy.random.Generator or int
        All randomness (the drafts and ``fn``'s own).
    declared : str, optional
        A rule of :data:`DECLARED_LOSSY` whose exact acceptance and bias are reported;
        "ensemble" needs ``weight`` (Hugging Face's ``assistant_ensemble_weight``).
    false_alarm : float
        1 − the confidence of the bias interval (default 1e-6).
    batch : int
        Rows per call of ``fn``.
    progress : bool, optional
        Show a progress bar (unit: batch); default: in a terminal or notebook.

    Returns
    -------
    LossyAuditReport

    Raises
    ------
    InputError
        Naming the argument (an unknown ``declared``, a missing ``weight``, malformed output
        of ``fn``); refusals come before ``fn`` is called.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> p = np.array([.5, .3, .2, 0]); q = np.array([.2, .2, .3, .3]); w = 0.25
    >>> mix = w * p + (1 - w) * q  # Hugging Face's ensemble: speculative sampling against the mixture
    >>> def fn(P, Q, X, rng):
    ...     x = X[:, 0]
    ...     accepted = rng.random(len(x)) < np.minimum(1, mix[x] / q[x])
    ...     return accepted, np.where(accepted, x, rng.choice(4, len(x), p=[.75, .25, 0, 0]))
    >>> rep = audit.audit_lossy(fn, p, q, samples=20_000, rng=0, declared="ensemble", weight=w, progress=False)
    >>> round(rep.tv_pq, 4), round(rep.expected, 4), round(rep.expected_bias, 4)  # 1 - w TV, (1 - w) TV
    (0.4, 0.9, 0.3)
    >>> round(rep.accepted, 2), rep.bias_low <= 0.3 <= rep.bias_high, rep.consistent, rep.above_front
    (0.9, True, True, False)
    """

    rng = check_rng(rng)
    pf, qf = as_distribution_pair(p, q)
    samples = check_size(samples, "samples")
    batch = check_size(batch, "batch")
    if samples < 2 or batch < 1:
        raise InputError("samples, batch: samples must be at least 2 and batch at least 1")
    if not 0 < false_alarm < 1:
        raise InputError(f"false_alarm: must lie in (0, 1), got {false_alarm!r}")
    check_choice("declared", declared, DECLARED_LOSSY, allow_none=True)
    n = pf.size
    tv = 0.5 * float(np.abs(pf - qf).sum())
    expected = expected_bias = None
    if declared is not None:
        expected, expected_bias = _declared_values(declared, weight, tv)
    elif weight is not None:
        raise InputError("weight: given without declared='ensemble'")
    counts = np.zeros(n, dtype=np.int64)
    acc_sum = acc_sq = 0.0
    from tqdm.auto import tqdm

    bar = tqdm(total=samples, unit="step", disable=not show_progress(progress), desc="audit_lossy")
    for lo in range(0, samples, batch):
        B = min(batch, samples - lo)
        P = np.broadcast_to(pf, (B, n))
        Q = np.broadcast_to(qf, (B, n))
        X = rng.choice(n, size=(B, 1), p=qf)
        out = fn(P, Q, X, rng)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise InputError("fn: must return (accepted, Y): one acceptance flag and one token per row")
        a = np.asarray(out[0], dtype=np.float64).reshape(-1)
        Y = np.asarray(out[1], dtype=np.int64).reshape(-1)
        if a.shape != (B,) or Y.shape != (B,) or Y.min() < 0 or Y.max() >= n or np.any((a != 0) & (a != 1)):
            raise InputError(f"fn: must return {B} flags in {{0, 1}} and {B} tokens in [0, {n})")
        counts += np.bincount(Y, minlength=n)
        acc_sum += float(a.sum())
        acc_sq += float((a * a).sum())
        bar.update(B)
    bar.close()
    N = samples
    emp = counts / N
    bias = 0.5 * float(np.abs(emp - pf).sum())
    # Weissman et al. (2003): P(‖p̂ − v‖₁ ≥ λ) ≤ (2ⁿ − 2) e^{−Nλ²/2}; (2ⁿ − 2) < 2ⁿ
    lam = l1_threshold(n, N, false_alarm)
    lo_b, hi_b = max(0.0, bias - lam / 2), min(1.0, bias + lam / 2)
    mean = acc_sum / N
    var = max(acc_sq / N - mean * mean, 0.0) * N / (N - 1)
    return LossyAuditReport(
        accepted=mean,
        std_err=math.sqrt(var / N),
        bias=bias,
        bias_low=lo_b,
        bias_high=hi_b,
        front=front_acceptance(pf, qf, bias),
        front_high=front_acceptance(pf, qf, hi_b),
        tv_pq=tv,
        steps=N,
        false_alarm=false_alarm,
        declared=declared,
        expected=expected,
        expected_bias=expected_bias,
        details={
            "bias_radius": lam / 2,
            "weight": weight,
            "output_law": emp.tolist() if n <= 64 else None,
        },
    )
