r"""Acceptance regression gates that do not flake: exact per-step expectations, standard errors
clustered by request (docs/engines.md §2).

**Rao–Blackwellisation.**  Given the drafted tokens of a step and the target's and draft's laws
along them, the number of drafted tokens a verifier accepts is random only through the
verifier's own coins; its conditional expectation is exact.  For a chain x_1 … x_γ verified
token by token (speculative sampling, Leviathan et al. 2023) it is
Σ_{i≤γ} Π_{j≤i} min(1, p_j(x_j)/q_j(x_j)); verified by the target alone (deterministic drafts)
Σ_i Π_{j≤i} p_j(x_j); block verification (Sun et al., ICLR 2025) through
:func:`optaccept.tree.tree_value`.  A one-token log with the whole rows p_t, q_t gives even the
expectation over the drafts: the rule's exact acceptance (:func:`optaccept.verifiers.
batched_acceptance`).  Replacing each step's count by its conditional expectation keeps the mean
and removes the variance of the verifier's coins (law of total variance), so the same difference
is found with fewer requests.

**Definitions.**  AL is the mean number of tokens a step emits, accepted drafts + 1 (the
correction or bonus token): the number vLLM and SGLang report; TensorRT-LLM's forced count is
AL − 1.  A difference of AL equals the difference of AL − 1; a *relative* change is stated
against AL.  *Pooled* AL averages all steps of all requests (vLLM, SGLang); *per-request* AL
averages each request's own mean (SpecForge): they weight requests differently and can order two
runs differently (vLLM #42508), so both are reported and ``definition`` picks the one tested.

**Standard errors** are clustered by request (the steps of one request share its prompt and are
not independent): for the pooled mean, sqrt(R/(R−1) · Σ_r S_r²)/T with S_r the sum of request r's
deviations from the mean; for the per-request mean, the standard deviation of the R request
means over √R.  The gate is one-sided: it declares a regression when
(candidate − baseline)/SE < −t, t the (1 − ``false_alarm``) quantile of Student's t with
min(R_baseline, R_candidate) − 1 degrees of freedom.  Its false-alarm rate is asymptotic in the
number of requests; benchmarks/bench_gate.py measures it, and its power, by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Tabular
from .._lib.statistics import cluster_means, clustered_mean, mean_std_err, normal_quantile
from .._lib.validation import check_choice
from ._logs import StepValues, step_values

__all__ = [
    "regression_gate",
    "sample_size",
    "RegressionGate",
    "SampleSize",
    "DEFINITIONS",
    "StepValues",  # defined in ._logs; kept importable from here
]

#: Definitions of the mean accepted length a gate can test.
DEFINITIONS = ("pooled", "per_request")


@dataclass
class Summary:
    """One log's mean accepted drafts per step, both definitions, ± SE clustered by request."""

    pooled: float
    pooled_se: float
    per_request: float
    per_request_se: float
    steps: int
    requests: int

    @property
    def al(self) -> float:
        """Pooled AL: accepted drafts + 1 per step."""
        return self.pooled + 1.0

    def mean(self, definition: str) -> tuple[float, float]:
        return (self.pooled, self.pooled_se) if definition == "pooled" else (self.per_request, self.per_request_se)


def _summary(values: np.ndarray, request: np.ndarray) -> Summary:
    a = np.asarray(values, dtype=np.float64)
    m, pooled_se = clustered_mean(a, request, few=math.nan)
    means = cluster_means(a, request)
    pr, pr_se = mean_std_err(means, few=math.nan)
    return Summary(m, pooled_se, pr, pr_se, int(a.size), int(means.size))


def _check_prob(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating)) or not 0 < x < 1:
        raise InputError(f"{name}: must lie in (0, 1), got {x!r}")
    return float(x)


def _check_definition(definition: Any) -> str:
    check_choice("definition", definition, DEFINITIONS)
    return definition


@dataclass
class RegressionGate(Tabular):
    """The decision of :func:`regression_gate` and what it rests on.

    In the results' vocabulary ``value`` is ``difference`` ± ``std_err``, ``method`` what the
    means average, ``ok`` not regressed; ``to_pandas()`` and ``to_latex()`` give its numbers
    as one row.

    ``difference`` is candidate − baseline in accepted tokens per step (the same in AL and in
    AL − 1), under ``definition``; ``std_err`` its standard error clustered by request;
    ``regressed`` whether difference/std_err < −``critical``.  ``by_definition`` holds the
    difference, SE and decision under both definitions; ``counts`` the same test on the
    logged 0/1 counts (None when the logs hold no counts); ``baseline``/``candidate`` the
    summaries of each log.

    Attributes
    ----------
    regressed : bool
        The decision.
    difference : float
        Candidate − baseline mean accepted tokens per step.
    std_err : float
        Its standard error, clustered by request.
    critical : float
        The one-sided critical value of the test.
    false_alarm : float
        The test's false-alarm rate.
    definition : {"pooled", "per_request"}
        Which mean is tested.
    method : str
        What the means average (exact per-step expectations or logged counts).
    baseline, candidate : Summary
        Each log's means under both definitions, with standard errors.
    by_definition : dict
        Difference, standard error and decision under each definition.
    counts : dict or None
        The same test on the logged counts.
    note : str
        A remark on the decision, or "".
    details : dict
        Further facts (the ``margin``).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> rng = np.random.default_rng(0)
    >>> base = {"accepted": rng.integers(0, 4, 400), "request": np.repeat(np.arange(100), 4)}
    >>> cand = {"accepted": np.maximum(base["accepted"] - 1, 0), "request": base["request"]}
    >>> gate = audit.regression_gate(base, cand)
    >>> type(gate).__name__, gate.regressed, round(gate.difference, 4)
    ('RegressionGate', True, -0.775)
    """

    regressed: bool
    difference: float
    std_err: float
    critical: float
    false_alarm: float
    definition: str
    method: str
    baseline: Summary
    candidate: Summary
    by_definition: dict[str, dict[str, float]]
    counts: dict[str, float] | None = None
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float:
        """``difference``, the results' name for it."""
        return self.difference

    @property
    def ok(self) -> bool:
        """Whether the candidate passed the gate (not :attr:`regressed`)."""
        return not self.regressed

    _caption = "Acceptance regression gate: candidate minus baseline accepted tokens per step."

    @property
    def z(self) -> float:
        if self.std_err > 0:
            return self.difference / self.std_err
        return 0.0 if self.difference == 0 else math.copysign(math.inf, self.difference)

    @property
    def relative_change(self) -> float:
        """difference / baseline AL (AL counts the correction or bonus token)."""
        return self.difference / (self.baseline.mean(self.definition)[0] + 1.0)

    def __str__(self) -> str:
        b, c = self.baseline, self.candidate
        lines = [
            f"Acceptance regression gate ({self.method}; {self.definition} definition; one-sided, "
            f"false-alarm rate {self.false_alarm:g})",
            f"  regressed        {'YES' if self.regressed else 'no'} (t = {self.z:+.2f} vs −{self.critical:.2f})",
            f"  difference       {self.difference:+.4f} tokens/step ± {self.std_err:.4f} "
            f"({100 * self.relative_change:+.2f} % of baseline AL)",
        ]
        for label, s in (("baseline", b), ("candidate", c)):
            lines.append(
                f"  {label:<16} AL pooled {s.pooled + 1:.4f} ± {s.pooled_se:.4f}, per request "
                f"{s.per_request + 1:.4f} ± {s.per_request_se:.4f} (AL − 1 = accepted drafts: {s.pooled:.4f}); "
                f"{s.steps:,} steps, {s.requests:,} requests"
            )
        other = "per_request" if self.definition == "pooled" else "pooled"
        o = self.by_definition[other]
        lines.append(
            f"  {other:<16} difference {o['difference']:+.4f} ± {o['std_err']:.4f} "
            f"({'regressed' if o['regressed'] else 'not regressed'})"
        )
        if self.counts is not None:
            lines.append(
                f"  0/1 counts       difference {self.counts['difference']:+.4f} ± {self.counts['std_err']:.4f} "
                f"({'regressed' if self.counts['regressed'] else 'not regressed'}; the noisier test)"
            )
        if self.note:
            lines.append(f"  note             {self.note}")
        return "\n".join(lines)


def _test(sb: Summary, sc: Summary, definition: str, false_alarm: float, margin: float) -> dict[str, float]:
    from scipy.stats import t as student

    mb, eb = sb.mean(definition)
    mc, ec = sc.mean(definition)
    diff = mc - mb
    se = math.sqrt(eb * eb + ec * ec)
    df = max(1, min(sb.requests, sc.requests) - 1)
    crit = float(student.ppf(1 - false_alarm, df))
    shift = margin * (mb + 1.0)
    regressed = bool(se > 0 and (diff + shift) / se < -crit) or bool(se == 0 and diff + shift < 0)
    return {"difference": diff, "std_err": se, "critical": crit, "regressed": regressed}


def regression_gate(
    baseline_log: Any,
    candidate_log: Any,
    false_alarm: float = 1e-3,
    *,
    verifier: str | None = None,
    definition: str = "pooled",
    margin: float = 0.0,
) -> RegressionGate:
    """Has the mean accepted length dropped from ``baseline_log`` to ``candidate_log``?

    Parameters
    ----------
    baseline_log, candidate_log : path, mapping or array
        Logs as :func:`step_values` reads them (chain, one-token or tree logs with a request id
        per step, sparse chain logs (:class:`~optaccept.audit.SparseChainLog`, its mapping or ``.npz``), or plain
        per-step accepted counts).
    false_alarm : float
        One-sided rate at which an unchanged mean is declared a regression (default 1e-3;
        asymptotic in the number of requests, measured in docs/engines.md §2).
    verifier : str, optional
        The rule whose exact per-step expectation is used (see :func:`step_values`).
    definition : {"pooled", "per_request"}
        Which mean is tested; both are reported.
    margin : float
        Tolerated relative drop of AL (default 0: any significant drop is a regression).

    Returns
    -------
    RegressionGate
        ``regressed``, ``difference``, ``std_err`` and the rest (see the class).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> base = {"accepted": np.tile([2, 1, 3, 2], 50), "request": np.repeat(np.arange(50), 4)}
    >>> cand = {"accepted": np.tile([1, 1, 2, 1], 50), "request": np.repeat(np.arange(50), 4)}
    >>> audit.regression_gate(base, cand).regressed
    True
    """
    false_alarm = _check_prob(false_alarm, "false_alarm")
    definition = _check_definition(definition)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise InputError(f"margin: must lie in [0, 1), got {margin!r}")
    vb = step_values(baseline_log, verifier, name="baseline_log")
    vc = step_values(candidate_log, verifier, name="candidate_log")
    exact = vb.exact is not None and vc.exact is not None
    if exact:
        method = f"exact per-step expectations ({vb.kind} log, verifier {vb.verifier!r})"
        note = ""
        xb, xc = vb.exact, vc.exact
    else:
        if vb.counts is None or vc.counts is None:
            raise InputError("baseline_log, candidate_log: one log holds only p, q rows, the other only counts")
        method = "0/1 counts"
        note = "plain per-step counts: this test is the noisier one (an exact log needs fewer requests)"
        xb, xc = vb.counts, vc.counts
    for label, v in (("baseline_log", vb), ("candidate_log", vc)):
        if len(np.unique(v.request)) < 2:
            raise InputError(f"{label}: needs at least two requests (the standard error is clustered by request)")
    sb, sc = _summary(xb, vb.request), _summary(xc, vc.request)
    both = {d: _test(sb, sc, d, false_alarm, margin) for d in DEFINITIONS}
    counts = None
    if exact and vb.counts is not None and vc.counts is not None:
        counts = _test(
            _summary(vb.counts, vb.request), _summary(vc.counts, vc.request), definition, false_alarm, margin
        )
    main = both[definition]
    return RegressionGate(
        regressed=main["regressed"],
        difference=main["difference"],
        std_err=main["std_err"],
        critical=main["critical"],
        false_alarm=false_alarm,
        definition=definition,
        method=method,
        baseline=sb,
        candidate=sc,
        by_definition=both,
        counts=counts,
        note=note,
        details={"margin": margin},
    )


@dataclass
class SampleSize(Tabular):
    """Requests per run (baseline and candidate alike) a gate needs to see a relative drop
    ``change`` of AL with probability ``power`` at ``false_alarm``: ``requests`` for the test
    on exact expectations (None for a counts-only log), ``requests_counts`` for the 0/1-average
    test (None when the log holds no counts).  In the results' vocabulary ``value`` is
    ``requests`` (``requests_counts`` for a counts-only log), ``std_err`` None (a formula),
    ``method`` how it is found (:func:`sample_size`), ``ok`` a number of requests was found.

    Attributes
    ----------
    requests : int or None
        Requests per run for the test on exact expectations.
    requests_counts : int or None
        Requests per run for the test on the 0/1 counts.
    change : float
        The relative drop of AL to detect.
    false_alarm : float
        The test's false-alarm rate.
    power : float
        The probability of detecting the drop.
    definition : {"pooled", "per_request"}
        Which mean is tested.
    baseline_al : float
        The baseline's mean accepted length (AL, counting the bonus token).
    steps_per_request : float
        The baseline's mean steps per request.
    confidence : float
        Confidence of the upper bound on the per-request variance the plan uses.
    baseline_requests : int
        Requests in the baseline log (the variance's R₀ − 1 degrees of freedom).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> rng = np.random.default_rng(0)
    >>> base = {"accepted": rng.integers(0, 4, 400), "request": np.repeat(np.arange(100), 4)}
    >>> n = audit.sample_size(base, change=0.2, power=0.9)
    >>> n.requests_counts, round(n.baseline_al, 4), n.definition
    (61, 2.6175, 'pooled')
    """

    requests: int | None
    requests_counts: int | None
    change: float
    false_alarm: float
    power: float
    definition: str
    baseline_al: float
    steps_per_request: float
    confidence: float = 0.9
    baseline_requests: int = 0

    #: how the number of requests is found
    method = "noncentral t, variance at its upper confidence bound"
    #: a formula of the logs' variances, not an estimate with its own error
    std_err = None
    _caption = "Requests per run a regression gate needs."

    @property
    def value(self) -> int | None:
        """``requests``, or ``requests_counts`` for a log with counts only."""
        return self.requests if self.requests is not None else self.requests_counts

    @property
    def ok(self) -> bool:
        """Whether a number of requests was found for either test."""
        return self.value is not None

    def __str__(self) -> str:
        def fmt(v: int | None) -> str:
            return "—" if v is None else f"{v:,}"

        return (
            f"Requests per run to detect a {100 * self.change:g} % drop of AL {self.baseline_al:.3f} "
            f"({self.definition}; false alarm {self.false_alarm:g}, power {self.power:g} with the variance at its "
            f"{self.confidence:g} upper bound from {self.baseline_requests:,} requests; "
            f"{self.steps_per_request:.1f} steps per request): exact {fmt(self.requests)}, "
            f"0/1 counts {fmt(self.requests_counts)}"
        )


def _power(R: int, nc_per_root: float, false_alarm: float) -> float:
    """Power of the gate's one-sided t-test with R requests per run: P(T > t_{1−α, R−1}),
    T noncentral t with R − 1 degrees of freedom and noncentrality Δ/(σ·sqrt(2/R))."""
    from scipy.stats import nct
    from scipy.stats import t as student

    df = R - 1
    return float(nct.sf(student.ppf(1 - false_alarm, df), df, nc_per_root * math.sqrt(R)))


def _requests_needed(
    s: Summary, definition: str, delta: float, false_alarm: float, power: float, confidence: float
) -> int:
    """The fewest requests per run with which the gate's t-test reaches ``power`` against a drop
    ``delta`` when the per-request variance is its upper ``confidence`` bound."""
    from scipy.stats import chi2

    _, se = s.mean(definition)
    var_one = se * se * s.requests  # variance contributed per request
    df0 = s.requests - 1
    var_up = var_one * df0 / float(chi2.ppf(1 - confidence, df0))  # Cochran: df·s²/σ² ~ χ²(df)
    if not var_up > 0:
        return 2
    k = delta / math.sqrt(2.0 * var_up)  # noncentrality per sqrt(request)
    z = normal_quantile(1 - false_alarm) + normal_quantile(power)
    start = max(2, math.ceil((z / k) ** 2))  # the normal plan: the t-test needs about as many or more
    if _power(start, k, false_alarm) >= power:
        lo, hi = 1, start  # power(lo) < power (or lo = 1: no test), power(hi) ≥ power
    else:
        lo, hi = start, start + max(2, start // 8)
        while _power(hi, k, false_alarm) < power:
            lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 2 and _power(mid, k, false_alarm) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def sample_size(
    baseline_log: Any,
    change: float = 0.02,
    false_alarm: float = 1e-3,
    power: float = 0.9,
    *,
    verifier: str | None = None,
    definition: str = "pooled",
    confidence: float = 0.9,
) -> SampleSize:
    """Requests each run needs for :func:`regression_gate` to see a relative drop ``change`` of AL.

    The per-request variance σ̂² = R₀·SE² (SE clustered by request) is estimated from the R₀
    requests of ``baseline_log``; the plan uses its upper ``confidence`` bound
    σ²_U = (R₀ − 1)·σ̂²/χ²_{1−confidence}(R₀ − 1) (Cochran's theorem: (R₀ − 1)σ̂²/σ² ~ χ²(R₀ − 1)
    for normal request means), so that a baseline that happened to vary little does not plan too
    few requests.  With R requests in each run the difference has standard error σ·sqrt(2/R), and
    the gate declares a regression when difference/SE < −t_{1−false_alarm}(R − 1) (Student's t):
    its power against a drop Δ = ``change``·AL is that of a noncentral t with R − 1 degrees of
    freedom and noncentrality Δ/(σ_U·sqrt(2/R)) beyond the critical value.  ``requests`` is the
    fewest R whose power reaches ``power``.  Hence power ≥ ``power`` whenever σ² ≤ σ²_U, which
    holds with probability ``confidence`` over the baseline's requests (exactly so for normal
    request means; benchmarks/bench_gate.py measures it on decoded requests, redrawing the
    baseline, docs/engines.md §2).  The candidate is assumed to vary as the baseline, and the
    steps per request are the baseline's.

    Parameters
    ----------
    baseline_log : path, mapping or array
        A log as :func:`step_values` reads it, with at least two requests.
    change : float
        The relative drop of AL to detect, in (0, 1).
    false_alarm : float
        One-sided false-alarm rate, in (0, 1).
    power : float
        Probability of detecting the drop, in (0, 1).
    verifier : str, optional
        The rule whose exact per-step expectation is used (see :func:`step_values`).
    definition : {"pooled", "per_request"}
        Which mean is tested.
    confidence : float
        Confidence of the upper bound on the per-request variance the plan uses, in (0, 1)
        (default 0.9).

    Returns
    -------
    SampleSize
        ``requests`` (exact expectations) and ``requests_counts`` (0/1 average), side by side.

    Raises
    ------
    InputError
        If a probability lies outside (0, 1), ``definition`` is unknown, the log is refused
        by :func:`step_values`, or it has fewer than two requests.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> rng = np.random.default_rng(0)
    >>> base = {"accepted": rng.integers(0, 4, 400), "request": np.repeat(np.arange(100), 4)}
    >>> n = audit.sample_size(base, change=0.1)  # requests per run to see a 10 % drop of the accepted length
    >>> type(n).__name__, n.requests_counts, n.change
    ('SampleSize', 227, 0.1)
    """
    change = _check_prob(change, "change")
    false_alarm = _check_prob(false_alarm, "false_alarm")
    power = _check_prob(power, "power")
    confidence = _check_prob(confidence, "confidence")
    definition = _check_definition(definition)
    v = step_values(baseline_log, verifier, name="baseline_log")
    if len(np.unique(v.request)) < 2:
        raise InputError("baseline_log: needs at least two requests (the variance is estimated across requests)")
    ref = _summary(v.values, v.request)
    delta = change * (ref.mean(definition)[0] + 1.0)
    plan = (definition, delta, false_alarm, power, confidence)
    exact = None if v.exact is None else _requests_needed(ref, *plan)
    counts = None if v.counts is None else _requests_needed(_summary(v.counts, v.request), *plan)
    return SampleSize(
        requests=exact,
        requests_counts=counts,
        change=change,
        false_alarm=false_alarm,
        power=power,
        definition=definition,
        baseline_al=ref.mean(definition)[0] + 1.0,
        steps_per_request=ref.steps / ref.requests,
        confidence=confidence,
        baseline_requests=ref.requests,
    )
