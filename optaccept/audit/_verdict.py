r"""The audits' one verdict: every audit entry point hands its statistics to :func:`decide`, which
splits the stated false-alarm rate over all the checks, runs each, and returns a
:class:`Verdict` — "lossless" (within a stated margin), "not lossless" or "inconclusive" — with
the per-check details the reports print and write (docs/audit.md §"The verdict").

**Checks.**  m checks share the false-alarm rate δ (Bonferroni: each runs at δ/m, so a correct
implementation raises any alarm with probability at most δ):

* *law* checks — a Kolmogorov distance d of n values from Uniform(0, 1) (the randomised
  transforms of the output against the target; per order, per depth, pooled).  The check
  departs when d > ε = √(ln(2m/δ)/(2n)) (Dvoretzky–Kiefer–Wolfowitz with Massart's constant,
  exact for every n).  On the same event of probability ≥ 1 − δ the true distance is at most
  d + ε: the check's *upper bound*, the equivalence half of the verdict.
* *optimum* check — the measured mean above the best lossless value (one-sided z against
  Φ⁻¹(1 − δ/m)): a proof of loss, so it decides "not lossless".
* *declared* check — the measured mean against the declared rule's exact value (two-sided z
  against Φ⁻¹(1 − δ/(2m))); a departure reads "not the declared rule" (a lossless rule other
  than the declared one departs here without being lossy).

The z checks use the normal approximation of a mean (its false-alarm rate is measured in
benchmarks/bench_audit_verdict.py).  No z is computed from a zero standard error: when every
value equals one end of its range [lo, hi], Markov's inequality bounds the chance of that
under any law with mean μ, ((μ − lo)/(hi − lo))ⁿ at the top end, and the check departs when this
bound is at most its share of δ; any other constant sample is reported as untested.

**Verdict.**  "not lossless" when a law or optimum check departs; otherwise "inconclusive" when
the run had no power (nothing drafted, accepted or rejected: the path a bug would sit on was
not exercised) or some law check's upper bound exceeds the margin ε (then the report gives the
sample size whose thresholds are ε/2: a lossless implementation then keeps every upper bound
within ε with probability ≥ 1 − δ, thresholds scaling as 1/√n); otherwise
"lossless": with confidence 1 − δ every tested law is within the margin of its lossless law in
Kolmogorov distance.  ``lossless`` (the reports' boolean) is False exactly for "not lossless".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .._lib.statistics import ks_threshold, normal_quantile

__all__ = ["MARGIN", "Check", "Verdict", "decide", "mean_check"]

#: Default margin of the equivalence half of the verdict (Kolmogorov distance of each tested law).
MARGIN = 0.02
#: The three verdicts.
VERDICTS = ("lossless", "not lossless", "inconclusive")


@dataclass(frozen=True)
class Check:
    """One check of an audit: its kind ("law", "optimum", "declared"), the statistic (a
    Kolmogorov distance, or a z; None when the bound on a constant sample decided), the
    threshold it is held against, the values it read, whether it departs, and for a law check
    the upper bound on the true distance (``upper``)."""

    name: str
    kind: str
    statistic: float | None
    threshold: float
    samples: int
    departs: bool
    upper: float | None = None
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    """What :func:`decide` found (module docstring): ``verdict`` one of "lossless", "not
    lossless", "inconclusive"; ``checks`` every check with its details; ``no_power`` why the run
    could not decide whatever its size; ``samples_to_decide`` the samples (in the audit's unit)
    at which every law check's threshold is ``margin`` / 2 (a lossless implementation is then
    found "lossless" with probability ≥ 1 − ``false_alarm``)."""

    verdict: str
    false_alarm: float
    margin: float
    checks: tuple[Check, ...]
    no_power: tuple[str, ...] = ()
    samples_to_decide: int | None = None
    unit: str = "samples"

    @property
    def lossless(self) -> bool:
        """False exactly when a check proves or detects a loss."""
        return self.verdict != "not lossless"

    @property
    def declared_rule(self) -> bool | None:
        """False when the measured mean departs from the declared rule's value; None when no
        declared rule was compared."""
        dec = [c for c in self.checks if c.kind == "declared"]
        return None if not dec else not any(c.departs for c in dec)

    @property
    def alarms(self) -> tuple[Check, ...]:
        """The checks that depart."""
        return tuple(c for c in self.checks if c.departs)

    @property
    def bound(self) -> float | None:
        """The largest upper bound of the law checks (None without law checks)."""
        ups = [c.upper for c in self.checks if c.upper is not None]
        return max(ups) if ups else None

    def check(self, kind: str) -> Check | None:
        """The first check of this kind (None if none)."""
        return next((c for c in self.checks if c.kind == kind), None)

    def rows(self) -> list[tuple[str, str]]:
        """The verdict's lines for a report: the verdict, the worst law check, the margin's
        bound, and the declared-rule and optimum checks."""
        conf = f"{1 - self.false_alarm:g}"
        law = [c for c in self.checks if c.kind == "law"]
        if self.verdict == "lossless":
            head = f"lossless within {self.margin:g} (confidence {conf}: every tested law within the margin)"
        elif self.verdict == "not lossless":
            head = "NOT LOSSLESS: " + "; ".join(c.name for c in self.alarms if c.kind != "declared")
        else:
            why = list(self.no_power)
            if self.samples_to_decide is not None:
                why.append(f"about {self.samples_to_decide:,} {self.unit} would decide at margin {self.margin:g}")
            head = "inconclusive (" + ("; ".join(why) or f"not within the margin {self.margin:g}") + ")"
        rows = [("verdict", head)]
        if law:
            worst = max(law, key=lambda c: c.statistic / c.threshold)
            rows.append(
                (
                    "lossless",
                    f"{'yes' if self.lossless else 'NO'} (false-alarm rate ≤ {self.false_alarm:g} over "
                    f"{len(self.checks)} checks; worst law check '{worst.name}': KS distance "
                    f"{worst.statistic:.2e} vs threshold {worst.threshold:.2e})",
                )
            )
            rows.append(
                (
                    "resolution",
                    f"departures of total variation ≥ {2 * min(c.threshold for c in law):.3g} along a tested order "
                    f"are flagged with probability ≥ {conf}",
                )
            )
            rows.append(
                (
                    "bound",
                    f"every tested law within {self.bound:.3g} of its lossless law (Kolmogorov distance, "
                    f"confidence {conf})",
                )
            )
        for c in self.checks:
            if c.kind == "law":
                continue
            if c.statistic is None:
                stat = c.note
            else:
                stat = (
                    f"z = {c.statistic:+.2f} vs ±{c.threshold:.2f}"
                    if c.kind == "declared"
                    else (f"z = {c.statistic:+.2f} vs {c.threshold:.2f}")
                )
                stat += f", {c.samples:,} {self.unit}" + (f"; {c.note}" if c.note else "")
            if c.kind == "declared":
                rows.append(
                    ("declared rule check", ("NOT THE DECLARED RULE: " if c.departs else "consistent: ") + stat)
                )
            elif c.departs:
                rows.append(
                    (
                        "above the optimum",
                        "the measured value exceeds the best lossless value: the implementation is not lossless ("
                        + stat
                        + ")",
                    )
                )
        return rows

    def to_dict(self) -> dict[str, Any]:
        """The verdict as plain data (with ``lossless`` and ``declared_rule``)."""
        d = asdict(self)
        d["checks"] = [asdict(c) for c in self.checks]
        d["lossless"] = self.lossless
        d["declared_rule"] = self.declared_rule
        return d


@dataclass(frozen=True)
class _Mean:
    """A measured mean against a reference: ``reference`` (lo, hi) (an exact value is lo = hi;
    a truncated log's interval otherwise); ``bounds`` the range of one value (for the bound on
    a constant sample), None if unknown."""

    measured: float
    std_err: float
    reference: tuple[float, float]
    samples: int
    bounds: tuple[float, float] | None = None
    note: str = field(default="")


def mean_check(
    measured: float,
    std_err: float | None,
    reference: float | tuple[float, float],
    samples: int,
    bounds: tuple[float, float] | None = None,
    note: str = "",
) -> _Mean:
    """A mean to compare with a reference (the declared rule's value, or the optimum): the
    argument of :func:`decide`'s ``declared`` and ``optimum``."""
    ref = (float(reference), float(reference)) if not isinstance(reference, tuple) else tuple(map(float, reference))
    se = 0.0 if std_err is None or not math.isfinite(std_err) else float(std_err)
    return _Mean(float(measured), se, ref, int(samples), bounds, note)  # type: ignore[arg-type]


def _constant_bound(m: _Mean, side: str) -> float | None:
    """The natural log of Markov's bound on the chance that every value sits at the end of its
    range where the sample sits, under a law whose mean is the reference (None: not at an end)."""
    if m.bounds is None:
        return None
    lo, hi = m.bounds
    if hi <= lo:
        return None
    tol = 1e-12 * max(1.0, abs(hi), abs(lo))
    if abs(m.measured - hi) <= tol and side in ("above", "both") and m.reference[1] < hi - tol:
        frac = (m.reference[1] - lo) / (hi - lo)
    elif abs(m.measured - lo) <= tol and side in ("below", "both") and m.reference[0] > lo + tol:
        frac = (hi - m.reference[0]) / (hi - lo)
    else:
        return None
    return -math.inf if frac <= 0 else m.samples * math.log(frac)


def _power_of_ten(log_p: float) -> str:
    if log_p == -math.inf:
        return "0"
    e = log_p / math.log(10)
    return f"{math.exp(log_p):.2e}" if e > -300 else f"10^{e:.0f}"


def _z_check(name: str, kind: str, m: _Mean, alpha: float) -> Check:
    two = kind == "declared"
    zstar = normal_quantile(1 - alpha / 2) if two else normal_quantile(1 - alpha)
    lo, hi = m.reference
    if m.std_err > 0:
        diff = m.measured - hi if m.measured > hi else (m.measured - lo if m.measured < lo else 0.0)
        z = diff / m.std_err
        departs = abs(z) > zstar if two else z > zstar
        return Check(name, kind, z, zstar, m.samples, bool(departs), note=m.note)
    # no spread: no z
    if lo <= m.measured <= hi:
        return Check(name, kind, 0.0, zstar, m.samples, False, note=m.note)
    b = _constant_bound(m, "both" if two else "above")
    if b is None:
        return Check(
            name, kind, None, zstar, m.samples, False, note=f"every value {m.measured:g}: no spread, not tested"
        )
    share = alpha / 2 if two else alpha
    return Check(
        name,
        kind,
        None,
        zstar,
        m.samples,
        b <= math.log(share),
        note=f"all {m.samples:,} values at {m.measured:g} (no spread, no z): probability ≤ {_power_of_ten(b)} "
        "under the reference (Markov)",
    )


def decide(
    law: Mapping[str, tuple[float, int]],
    false_alarm: float,
    *,
    margin: float = MARGIN,
    declared: _Mean | None = None,
    optimum: _Mean | None = None,
    samples: int | None = None,
    unit: str = "samples",
    no_power: Sequence[str] = (),
    thresholds: Mapping[str, float] | None = None,
) -> Verdict:
    """The verdict from an audit's statistics (module docstring).

    Parameters
    ----------
    law : mapping of str to (float, int)
        Each law check's Kolmogorov distance and the number of values it read.
    false_alarm : float
        δ, shared by all the checks.
    margin : float
        The equivalence margin (Kolmogorov distance).
    declared, optimum : from :func:`mean_check`, optional
        The measured mean against the declared rule's value, and against the best lossless value.
    samples : int, optional
        The audit's size in its own unit (steps, calls, trees, texts), to scale the sample size
        that would decide.
    unit : str
        That unit's name.
    no_power : sequence of str
        Why the run could not decide (nothing drafted, accepted or rejected).
    thresholds : mapping of str to float, optional
        Thresholds given instead of computed (a report built by hand).

    Returns
    -------
    Verdict
    """
    m = len(law) + (declared is not None) + (optimum is not None)
    alpha = false_alarm / max(m, 1)
    checks = []
    for name, (d, n) in law.items():
        thr = thresholds[name] if thresholds is not None else ks_threshold(max(int(n), 1), false_alarm, m)
        checks.append(Check(name, "law", float(d), float(thr), int(n), bool(d > thr), upper=float(d + thr)))
    if optimum is not None:
        checks.append(_z_check("measured above the best lossless value", "optimum", optimum, alpha))
    if declared is not None:
        checks.append(_z_check("measured against the declared rule", "declared", declared, alpha))
    lossy = any(c.departs for c in checks if c.kind != "declared")
    to_decide = None
    ups = [c.upper for c in checks if c.upper is not None]
    if lossy:
        verdict = "not lossless"
    elif no_power:
        verdict = "inconclusive"
    elif ups and max(ups) <= margin:
        verdict = "lossless"
    else:
        verdict = "inconclusive"
        if ups and samples:
            # under losslessness each distance stays within its threshold (probability ≥ 1 − δ),
            # so thresholds at margin / 2 decide; they scale as 1/√n
            worst = max(c.threshold for c in checks if c.kind == "law")
            to_decide = int(math.ceil(samples * (2 * worst / margin) ** 2))
    return Verdict(verdict, false_alarm, margin, tuple(checks), tuple(no_power), to_decide, unit)


class Verdicted:
    """What every audit report shares: its :class:`Verdict` (field ``decision``), from which
    ``lossless``, ``verdict``, ``ok``, ``above_optimum``, ``expected_z`` and the verdict's
    lines are read, so that no field contradicts another.  A report built by hand without a
    decision gets one from its own fields (:meth:`_fallback`)."""

    def __post_init__(self) -> None:
        if self.decision is None:  # type: ignore[attr-defined]
            self.decision = self._fallback()
        self.lossless = self.decision.lossless

    #: the report's fields holding the measured mean, its standard error, the declared rule's
    #: value and the best lossless value (read by :meth:`_fallback`)
    _means = ("accepted", "std_err", "expected", "optimum")
    #: the unit of the report's sample size
    _unit = "samples"

    def _fallback(self) -> Verdict:
        """The verdict of a report built from its fields: the law checks at the thresholds
        given, the means against the declared rule's and the best lossless values."""
        d = self.ks_distance  # type: ignore[attr-defined]
        t = self.ks_threshold  # type: ignore[attr-defined]
        thr = t if isinstance(t, Mapping) else dict.fromkeys(d, t)
        n = int(getattr(self, "steps", None) or getattr(self, "calls", 0) or 1)
        mean, se, exp, top = (getattr(self, a, None) for a in self._means)
        ok_top = top is not None and math.isfinite(top)
        return decide(
            {k: (v, n) for k, v in d.items()},
            self.false_alarm,  # type: ignore[attr-defined]
            thresholds=thr,
            declared=None if mean is None or exp is None else mean_check(mean, se, exp, n),
            optimum=None if mean is None or not ok_top else mean_check(mean, se, (-math.inf, top), n),
            samples=n,
            unit=self._unit,
        )

    @property
    def verdict(self) -> str:
        """ "lossless" (within the margin), "not lossless" or "inconclusive" (:attr:`decision`)."""
        return self.decision.verdict  # type: ignore[attr-defined]

    @property
    def ok(self) -> bool:
        """No alarm: not shown lossy, and consistent with the declared rule (if any)."""
        return self.decision.lossless and self.decision.declared_rule is not False  # type: ignore[attr-defined]

    @property
    def above_optimum(self) -> bool:
        """True when the measured value exceeds the best lossless value beyond the check's
        threshold: that alone shows the implementation is not lossless."""
        c = self.decision.check("optimum")  # type: ignore[attr-defined]
        return bool(c is not None and c.departs)

    @property
    def not_declared(self) -> bool:
        """True when the measured value departs from the declared rule's beyond its threshold
        ("not the declared rule")."""
        return self.decision.declared_rule is False  # type: ignore[attr-defined]

    @property
    def expected_z(self) -> float | None:
        """(measured − declared rule's value) / standard error; None without a declared rule
        or when the standard error is zero (no z from a zero standard error)."""
        c = self.decision.check("declared")  # type: ignore[attr-defined]
        return None if c is None else c.statistic
