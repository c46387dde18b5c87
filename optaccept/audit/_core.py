r"""Audit a verifier implementation: is its output law p, what does it accept, how far is
it from the optimum of its draft law (docs/audit.md).

**Losslessness test.**  For every step t with target p_t and output Y_t, and a token order
σ, the randomised probability integral transform

    U_t = F_{t,σ}(Y_t⁻) + V_t · p_t(Y_t),   V_t ~ Uniform(0, 1) independent,

with F_{t,σ} the CDF of p_t along σ, is exactly Uniform(0, 1) and the U_t are independent when
every Y_t ~ p_t given the past (H₀).  The Dvoretzky–Kiefer–Wolfowitz inequality with Massart's
constant, P(sup_u |F̂_N(u) − u| > ε) ≤ 2 e^{−2Nε²}, holds for every N, so rejecting when the
Kolmogorov distance exceeds ε = √(ln(2m/δ)/(2N)) for each of m orders has a false-alarm rate at
most δ (Bonferroni).  The orders are those along which bugs move mass: by p, by q, by p/q, by
token id.  Steps may differ (heterogeneous p_t): the test pools their transforms.

**TV upper bound** (one p, ``audit_verifier``): with N outputs over n tokens,
P(‖p̂ − p_out‖₁ ≥ λ) ≤ 2ⁿ e^{−Nλ²/2} (Bretagnolle–Huber–Carol), so
TV(p_out, p) ≤ TV(p̂, p) + λ/2 with probability at least 1 − δ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError, MissingDependencyError
from .._lib.display import Report
from .._lib.statistics import bernoulli_std_err, ks_uniform, l1_threshold, moment_std_err
from .._lib.statistics import ks_uniform as _ks_uniform  # noqa: F401  (its name before the statistics module)
from .._lib.validation import (
    as_distribution_pair,
    check_choice,
    check_k,
    check_rng,
    check_size,
)
from ..drafts import LAWS, DraftLaw, law_from_name, law_names
from ..optimal import batched_optimal_acceptance, optimal_acceptance
from ..verifiers import batched_acceptance
from ..verifiers._target_only import target_only_acceptance
from ._log_rows import _dtype_of, _Rows
from ._pit import FALSE_ALARM, ORDERS, _pit_one, pit_values
from ._verdict import MARGIN, Verdict, Verdicted, decide, mean_check

__all__ = ["AuditReport", "audit_verifier", "audit_log", "torch_adapter", "FALSE_ALARM", "ORDERS", "pit_values"]

#: Draft laws the audit draws from and compares by name (those of :data:`optaccept.drafts.LAWS`
#: with a batched α*: i.i.d., without replacement, greedy and the engines' deterministic top-k).
_DRAFT_LAWS = law_names(batched=True)
#: Declared rules with an exact per-step acceptance (batched verifiers, target-only, and exact
#: match — accept iff the target's own sample is among the drafts: P(Y ∈ drafts) = E p(set of
#: drafts), target-only's value).
DECLARED = ("sd", "rrs", "kseq", "greedy", "nss", "target_only", "exact_match")
#: Rules whose acceptance holds for any draft law (the others assume drafts sampled from q).
_ANY_LAW = ("target_only", "exact_match")
#: The audit measures P(Y ∈ drafts): K-SEQ's value of that quantity is "kseq-output" (its
#: "kseq" counts acceptances by the rule, which a residual draw equal to a draft adds to).
_MEASURED = {"kseq": "kseq-output"}
#: The draft law each other rule's exact acceptance assumes.
_RULE_LAW = {"sd": "iid", "rrs": "iid", "kseq": "iid", "nss": "iid", "greedy": "greedy"}


@dataclass
class AuditReport(Verdicted, Report):
    """What an audit found.  ``verdict`` is "lossless" (every tested law within the margin, at
    confidence 1 − ``false_alarm``), "not lossless" or "inconclusive" (with the sample size that
    would decide), from the audit's one verdict function (``decision`` holds every check);
    ``lossless`` is False exactly when the verdict is "not lossless" (a law check departs, or
    the acceptance lies above the best lossless value); ``acceptance`` is the measured
    P(Y ∈ drafts) with its standard error; ``expected`` the exact acceptance of the declared
    rule (None if none was declared), ``not_declared`` True when the acceptance departs from it;
    ``alpha_star`` the optimum of the draft law; gaps are ``alpha_star − acceptance``.
    In the results' vocabulary ``value`` is ``acceptance`` ± ``std_err``, ``method``
    ``"sampled"``, ``ok`` no alarm (lossless and the declared rule);
    ``to_pandas()`` and ``to_latex()`` give its numbers as one row.

    Attributes
    ----------
    lossless : bool
        False exactly when the verdict is "not lossless".
    tv_upper : float or None
        An upper bound on TV(output law, p) at confidence 1 − ``false_alarm`` (None for logs).
    acceptance : float
        Measured P(Y ∈ drafts).
    std_err : float
        Its standard error.
    expected : float or None
        Exact acceptance of the declared rule (None without one).
    alpha_star : float
        α* of the draft law (mean over steps for a log; NaN where it cannot be bounded).
    steps : int
        Number of steps audited.
    false_alarm : float
        The losslessness test's false-alarm rate.
    ks_distance : dict of str to float
        Kolmogorov distance of the transforms from Uniform(0, 1), by token order.
    ks_threshold : float
        The distance above which the test flags a departure.
    declared : str or None
        The rule the implementation claims.
    alpha_by_law : dict of str to float or None
        α* of each compared draft law with the same q and k (None if not compared).
    details : dict
        Further facts of the run (the draft law, n or k; intervals of a truncated log).
    decision : Verdict
        The verdict and every check (law checks by order, the optimum and declared-rule
        checks), with the margin and the sample size that would decide.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> fn = testing.verifier_fn(verifiers.RRS())
    >>> rep = audit.audit_verifier(fn, p, q, k=2, samples=2000, rng=np.random.default_rng(0), declared="rrs")
    >>> type(rep).__name__, rep.steps, rep.lossless, rep.declared
    ('AuditReport', 2000, True, 'rrs')
    >>> rep.verdict, rep.decision.samples_to_decide > 2000  # no departure, but 2,000 steps cannot show a margin
    ('inconclusive', True)
    """

    _title = "Audit report"

    lossless: bool
    tv_upper: float | None
    acceptance: float
    std_err: float
    expected: float | None
    alpha_star: float
    steps: int
    false_alarm: float
    ks_distance: dict[str, float]
    ks_threshold: float
    declared: str | None = None
    #: α* of each draft law with the same q and k ("iid", "swor", "greedy", "topk"); None if not computed
    alpha_by_law: dict[str, float] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    decision: Verdict | None = field(default=None, repr=False)

    #: the value is a sample mean
    method = "sampled"
    _means = ("acceptance", "std_err", "expected", "alpha_star")
    _unit = "steps"

    @property
    def value(self) -> float:
        """``acceptance``, the results' name for it."""
        return self.acceptance

    _caption = "Audit of a verifier: the measured acceptance and the test of its output law."

    @property
    def gap(self) -> float:
        """α* − measured acceptance: what the best lossless verifier of this draft law adds."""
        return self.alpha_star - self.acceptance

    @property
    def verifier_gap(self) -> float:
        """The verifier's part of the gap: α* of the draft law used − measured acceptance."""
        return self.gap

    @property
    def draft_gap(self) -> float | None:
        """The draft law's part: the best α* among the compared draft laws (same q and k) − α*
        of the law used (None when the laws were not compared)."""
        if not self.alpha_by_law:
            return None
        return max(0.0, max(self.alpha_by_law.values()) - self.alpha_star)

    @property
    def best_law(self) -> str | None:
        if not self.alpha_by_law:
            return None
        return max(self.alpha_by_law, key=self.alpha_by_law.get)

    @property
    def detectable(self) -> float:
        """The resolution of this run: a departure whose transforms sit at Kolmogorov distance
        ≥ this value along a tested order (hence a total variation at least this large between
        the output law and p) is flagged with probability ≥ 1 − ``false_alarm``."""
        return 2.0 * self.ks_threshold

    def _rows(self) -> list[tuple[str, str]]:
        dec = self.expected_z
        rows = self.decision.rows() + [
            (
                "TV(output, p) ≤",
                "—" if self.tv_upper is None else f"{self.tv_upper:.4f} (confidence {1 - self.false_alarm:g})",
            ),
            ("acceptance", f"{self.acceptance:.5f} ± {self.std_err:.5f} (measured, {self.steps:,} steps)"),
            (
                "declared rule",
                "—"
                if self.declared is None
                else f"{self.declared}: exact {self.expected:.5f}" + ("" if dec is None else f" (z = {dec:+.2f})"),
            ),
            ("α* of the draft law", f"{self.alpha_star:.5f}; gap α* − acceptance = {self.gap:.5f}"),
        ]
        iv, ev = self.details.get("alpha_star_interval"), self.details.get("expected_interval")
        if self.details.get("no_q"):
            rows[-1] = ("α* of the draft law", "not bounded: the log has no q")
        elif iv is not None:  # a truncated log: guaranteed intervals instead of exact values
            rows[-1] = ("α* of the draft law", f"in [{iv[0]:.5f}, {iv[1]:.5f}] (truncated log)")
            if ev is not None:
                rows[-2] = ("declared rule", f"{self.declared}: exact value in [{ev[0]:.5f}, {ev[1]:.5f}]")
        if self.alpha_by_law:
            laws = ", ".join(f"{k} {v:.5f}" for k, v in self.alpha_by_law.items())
            rows.append(
                (
                    "gap, by part",
                    f"verifier {self.verifier_gap:.5f} (a better verifier, same drafts); draft law "
                    f"{self.draft_gap:.5f} (best law: {self.best_law}; α* by law: {laws})",
                )
            )
        return rows

    def __repr__(self) -> str:
        return (
            f"AuditReport(verdict={self.verdict!r}, lossless={self.lossless}, acceptance={self.acceptance:.5f}±{self.std_err:.5f}, "
            f"expected={self.expected}, alpha_star={self.alpha_star:.5f}, steps={self.steps})"
        )

    def to_json(self) -> str:
        """The report as JSON, with the derived quantities.

        Returns
        -------
        str
            The fields, plus ``gap``, ``verifier_gap``, ``draft_gap``, ``best_law``,
            ``detectable``, ``above_optimum``, ``verdict``, ``not_declared`` and ``decision``
            (every check with its details; NaN α* written as null).
        """
        d = asdict(self)
        d["gap"] = None if math.isnan(self.alpha_star) else self.gap
        if math.isnan(self.alpha_star):
            d["alpha_star"] = None
        d["verifier_gap"] = self.verifier_gap
        d["draft_gap"] = self.draft_gap
        d["best_law"] = self.best_law
        d["detectable"] = self.detectable
        d["above_optimum"] = self.above_optimum
        d["verdict"] = self.verdict
        d["not_declared"] = self.not_declared
        d["decision"] = self.decision.to_dict()
        return json.dumps(d, indent=2, default=float)


def step_decision(
    dist: dict[str, float],
    steps: int,
    false_alarm: float,
    hits: tuple[float, float, float],
    expected: float | tuple[float, float] | None,
    top: float | None,
    *,
    margin: float = MARGIN,
) -> Verdict:
    """The verdict of a one-step audit: its law checks (one per order, each over ``steps``
    transforms), the acceptance (``hits`` = (mean, standard error, fraction of steps that
    accepted)) against the best lossless value ``top`` and the declared rule's ``expected``
    (a value or a guaranteed interval); "no power" when every step accepted (the rejection path
    never ran) or none did though the optimum accepts."""
    mean, se, _ = hits
    no_power = []
    if mean >= 1.0:
        no_power.append("every step accepted a draft: the rejection path was never exercised")
    elif mean <= 0.0 and top is not None and top > 0:
        no_power.append("no step accepted a draft: the acceptance path was never exercised")
    return decide(
        {o: (d, steps) for o, d in dist.items()},
        false_alarm,
        margin=margin,
        declared=None if expected is None else mean_check(mean, se, expected, steps, (0.0, 1.0)),
        optimum=None if top is None else mean_check(mean, se, (0.0, top), steps, (0.0, 1.0)),
        samples=steps,
        unit="steps",
        no_power=no_power,
    )


def _law_of(drafts: Any, q: np.ndarray, k: int) -> DraftLaw:
    if isinstance(drafts, DraftLaw):
        return drafts
    check_choice("drafts", drafts, _DRAFT_LAWS, also="a draft-law object")
    return law_from_name(drafts, q, k, allowed=_DRAFT_LAWS)


def _alpha_by_law(p: np.ndarray, q: np.ndarray, k: int) -> dict[str, float]:
    """α* of every named draft law with this q and k (a law needing more support than q has
    is left out)."""
    support = int(np.count_nonzero(q))
    out = {}
    for name in _DRAFT_LAWS:
        if LAWS[name].distinct_drafts and k > support:
            continue
        out[name] = float(optimal_acceptance(p, law_from_name(name, q, k)).value)
    return out


def _expected(declared: str | None, p: np.ndarray, q: np.ndarray, k: int, law: DraftLaw) -> float | None:
    if declared is None:
        return None
    check_choice("declared", declared, DECLARED, allow_none=True)
    if declared in _ANY_LAW:
        return float(target_only_acceptance(p, law))
    return float(batched_acceptance(p[None, :], q[None, :], k, _MEASURED.get(declared, declared))[0])


def audit_verifier(
    fn: Callable[..., Any],
    p: Any,
    q: Any,
    k: int = 2,
    drafts: Any = "iid",
    samples: int = 200_000,
    rng: np.random.Generator | None = None,
    declared: str | None = None,
    *,
    false_alarm: float = FALSE_ALARM,
    batch: int | None = None,
) -> AuditReport:
    """Audit ``fn(P, Q, X, rng) -> Y`` on ``samples`` steps of one (p, q).

    Parameters
    ----------
    fn : callable
        The implementation under audit: ``P``, ``Q`` float arrays (B, n) (every row is p, q),
        ``X`` int (B, k) the drafted tokens in draw order, ``rng`` a numpy Generator; returns
        the emitted tokens, int (B,).  Torch implementations: see :func:`torch_adapter`.
    p, q : array_like, shape (n,)
        Target and draft distributions (the library's sum rule).
    k : int
        Number of drafts; ``drafts`` is "iid", "swor", "greedy", "topk" (the k most likely
        tokens of q, deterministic: :class:`optaccept.drafts.TopK`) or a draft-law object,
        from which the audit draws X.
    samples : int
        Steps to run (in batches of ``batch``).
    rng : numpy.random.Generator
        All randomness: the drafts, ``fn``'s own, and the transforms' tie-breaking.
    declared : str, optional
        The rule ``fn`` claims to implement ("sd", "rrs", "kseq", "greedy", "nss",
        "target_only", "exact_match"): its exact acceptance is reported as ``expected``.
        Each other rule's value assumes its own draft law ("greedy" greedy drafts, the
        rest i.i.d. drafts); with another law only the rules valid for any draft law
        ("target_only", "exact_match") are accepted, and the refusal comes before any call.
    false_alarm : float
        The rate at which a correct implementation raises any alarm (default 1e-6), shared by
        every check of the verdict.
    batch : int, optional
        Rows per call of ``fn`` (default: 50,000, at most 2²³ / n so that each of P and Q
        stays within 64 MB: 64 rows at n = 131,072).  The batch's P and Q are read-only
        views of one row each (no copy per row); ``fn`` must not write to them.

    Returns
    -------
    AuditReport
        The verdict ("lossless" within the margin, 0.02, "not lossless", "inconclusive"), the
        measured acceptance with its standard error, the
        declared rule's exact value, α* of the draft law and of the other laws.

    Raises
    ------
    InputError
        If an input is refused (distributions, k, ``samples``, ``false_alarm``, an unknown
        or inapplicable ``declared``), or ``fn`` returns anything but B token ids in [0, n).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> fn = testing.verifier_fn(verifiers.RRS())
    >>> rep = audit.audit_verifier(fn, p, q, k=2, samples=2000, rng=np.random.default_rng(0), declared="rrs")
    >>> rep.lossless, round(rep.expected, 4), round(rep.alpha_star, 4)  # RRS 0.824 against alpha* 0.9075
    (True, 0.824, 0.9075)
    """
    rng = check_rng(rng)
    pf, qf = as_distribution_pair(p, q)
    k = check_k(k)
    samples = check_size(samples, "samples")
    if samples < 1:
        raise InputError("samples: must be at least 1")
    if not 0 < false_alarm < 1:
        raise InputError(f"false_alarm: must lie in (0, 1), got {false_alarm!r}")
    law = _law_of(drafts, qf, k)
    check_choice("declared", declared, DECLARED, allow_none=True)
    if declared is not None and declared not in _ANY_LAW:
        need = _RULE_LAW[declared]
        if getattr(law, "name", None) != need:
            raise InputError(
                f"declared: {declared!r} has an exact value for drafts={need!r} only, got "
                f"drafts={drafts if isinstance(drafts, str) else type(drafts).__name__!r}; declare one of {_ANY_LAW} "
                "for any draft law"
            )
    n = pf.size
    batch = min(50_000, max(1, (1 << 23) // n)) if batch is None else max(1, check_size(batch, "batch"))
    # one read-only row of p and of q, seen B times: no copy per row (a strided view)
    P_rows = np.broadcast_to(pf, (batch, n))
    Q_rows = np.broadcast_to(qf, (batch, n))
    Y = np.empty(samples, dtype=np.int64)
    acc = np.empty(samples, dtype=bool)
    for lo in range(0, samples, batch):
        B = min(batch, samples - lo)
        X = np.asarray(law.sample(rng, B), dtype=np.int64).reshape(B, -1)
        Yb = _token_ids(fn(P_rows[:B], Q_rows[:B], X, rng), B, n)
        Y[lo : lo + B] = Yb
        acc[lo : lo + B] = (X == Yb[:, None]).any(axis=1)
    N = Y.size
    dist = {o: ks_uniform(_pit_one(pf, qf, Y, o, rng)) for o in ORDERS}
    # TV upper bound at confidence 1 − false_alarm (Bretagnolle–Huber–Carol over the n tokens)
    emp = np.bincount(Y, minlength=n) / N
    lam = l1_threshold(n, N, false_alarm)
    tv_upper = min(1.0, 0.5 * float(np.abs(emp - pf).sum()) + lam / 2)
    a = float(acc.mean())
    se = bernoulli_std_err(a, N, floor=None)
    alpha = float(optimal_acceptance(pf, law).value)
    by_law = _alpha_by_law(pf, qf, law.k)
    expected = _expected(declared, pf, qf, law.k, law)
    decision = step_decision(dist, N, false_alarm, (a, se, a), expected, alpha, margin=MARGIN)
    return AuditReport(
        lossless=decision.lossless,
        tv_upper=tv_upper,
        acceptance=a,
        std_err=se,
        expected=expected,
        alpha_star=alpha,
        steps=N,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        declared=declared,
        alpha_by_law=by_law,
        decision=decision,
        details={"drafts": repr(law), "n": n},
    )


def audit_log(
    P: Any,
    Q: Any,
    X: Any,
    Y: Any,
    declared: str | None = None,
    *,
    drafts: str = "iid",
    rng: np.random.Generator | int | None = 0,
    false_alarm: float = FALSE_ALARM,
    chunk: int | None = None,
    compare_laws: bool = False,
) -> AuditReport:
    """Audit logged steps, each with its own target and draft rows.

    ``P``, ``Q``: float (T, n) (float32 is fine); ``X``: int (T, k) drafts in draw order;
    ``Y``: int (T,) emitted tokens.  The losslessness test pools the steps' randomised
    transforms (exactly uniform under H₀, whatever the p_t); the acceptance is compared with
    the sum of the declared rule's exact per-step values and with Σ α*_t of ``drafts``.
    Rows are processed ``chunk`` at a time (memory O(chunk · n); default: 2²² / n rows, about
    32 MB per float64 array whatever the vocabulary).  ``rng`` (default: a fixed
    seed) draws the transforms' tie-breaking uniforms only.  ``compare_laws``: also the mean
    α* of every draft law with the same rows and k — i.i.d., without replacement, greedy, and
    the engines' deterministic top-k (the gap's draft-law part; costly for "swor" on full
    vocabularies).  ``P`` and ``Q`` may be memory maps (``np.load(...,
    mmap_mode="r")``): only ``chunk`` rows are read at a time.

    Parameters
    ----------
    P, Q : array_like of float, shape (T, n)
        Target and draft rows, one per step.
    X : array_like of int, shape (T, k)
        Drafts in draw order.
    Y : array_like of int, shape (T,)
        Emitted tokens.
    declared : str, optional
        The rule the engine claims (one of :data:`DECLARED`).
    drafts : {"iid", "swor", "greedy", "topk"}
        The draft law whose α* is the reference ("topk": the k most likely tokens of each
        row of Q, ties by lower index, :class:`optaccept.drafts.TopK`).
    rng : numpy.random.Generator, int or None
        Source of the tie-breaking uniforms (default: seed 0, a reproducible report;
        None: fresh entropy).
    false_alarm : float
        The rate at which a correct engine is declared not lossless.
    chunk : int, optional
        Rows per chunk (default: 2²² / n).
    compare_laws : bool
        Also compute the mean α* of every draft law of :func:`optaccept.drafts.law_names`
        ``(batched=True)`` ("iid", "swor", "greedy", "topk"); a law whose k drafts are
        distinct tokens is left out when a row of Q has fewer than k tokens with q > 0.

    Returns
    -------
    AuditReport
        As :func:`audit_verifier`, with per-step means (``tv_upper`` is None).

    Raises
    ------
    InputError
        If the shapes disagree, a row is not a distribution, a token id lies outside
        [0, n), the log is empty, or ``drafts`` or ``declared`` is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> rng = np.random.default_rng(1)  # not the seed of the audit's own uniforms (rng=0)
    >>> T = 2000
    >>> X = rng.choice(5, size=(T, 1), p=q)  # one draft per step
    >>> residual = np.array([.1, .15, 0, .07, 0]) / .32  # (p - q)+ / TV(p, q)
    >>> keep = rng.random(T) < np.minimum(1, p[X[:, 0]] / q[X[:, 0]])
    >>> Y = np.where(keep, X[:, 0], rng.choice(5, T, p=residual))  # speculative decoding
    >>> rep = audit.audit_log(np.tile(p, (T, 1)), np.tile(q, (T, 1)), X, Y, declared="sd")
    >>> rep.lossless, round(rep.expected, 4)  # speculative decoding: sum of min(p, q) = 0.68 per step
    (True, 0.68)
    """
    rng = check_rng(rng)
    X = np.asarray(X, dtype=np.int64)
    Y = np.asarray(Y, dtype=np.int64).reshape(-1)
    T = len(P)  # the steps, as P counts them: each other array is checked against P and named
    if len(Q) != T:
        raise InputError(f"Q: must have {T} rows (one per step, as P), got {len(Q)}")
    if X.ndim != 2 or X.shape[0] != T:
        raise InputError(f"X: must have shape ({T}, k) (one row per step, as P), got {X.shape}")
    if Y.size != T:
        raise InputError(f"Y: must hold {T} token ids (one per step, as P), got {Y.size}")
    k = X.shape[1]
    check_choice("drafts", drafts, _DRAFT_LAWS)
    check_choice("declared", declared, DECLARED, allow_none=True)
    if T == 0:
        raise InputError("Y: the log has no steps")
    n_cols = int(np.shape(P[0])[-1])
    chunk = max(1, (1 << 22) // max(n_cols, 1) if chunk is None else check_size(chunk, "chunk"))
    rows_p = _Rows("P", n_cols, _dtype_of(P))
    rows_q = _Rows("Q", n_cols, _dtype_of(Q))
    us = {o: [] for o in ORDERS}
    acc_sum = exp_sum = alpha_sum = 0.0
    acc_sq = 0.0
    law_sums = dict.fromkeys(_DRAFT_LAWS, 0.0) if compare_laws else None
    for lo in range(0, T, chunk):
        hi = min(T, lo + chunk)
        Pc = rows_p.clean(P[lo:hi], lo)
        Qc = rows_q.clean(Q[lo:hi], lo)
        Yc, Xc = Y[lo:hi], X[lo:hi]
        n = Pc.shape[1]
        if Yc.min() < 0 or Yc.max() >= n or Xc.min() < 0 or Xc.max() >= n:
            raise InputError(f"X, Y: token ids must lie in [0, {n})")
        for o in ORDERS:
            us[o].append(pit_values(Pc, Qc, Yc, o, rng))
        a = (Xc == Yc[:, None]).any(axis=1).astype(np.float64)
        acc_sum += a.sum()
        acc_sq += (a * a).sum()
        alpha_sum += float(np.sum(batched_optimal_acceptance(Pc, Qc, k, drafts)))
        if law_sums is not None:
            if int(np.count_nonzero(Qc > 0, axis=1).min()) < k:  # k distinct drafts do not exist
                law_sums = {m: v for m, v in law_sums.items() if not LAWS[m].distinct_drafts}
            for name in law_sums:
                law_sums[name] += float(np.sum(batched_optimal_acceptance(Pc, Qc, k, name)))
        if declared in _ANY_LAW:
            exp_sum += float(
                sum(target_only_acceptance(Pc[i], law_from_name(drafts, Qc[i], k)) for i in range(hi - lo))
            )
        elif declared is not None:
            exp_sum += float(np.sum(batched_acceptance(Pc, Qc, k, _MEASURED.get(declared, declared))))
    rows_p.finish()
    rows_q.finish()
    dist = {o: ks_uniform(np.concatenate(v)) for o, v in us.items()}
    mean = acc_sum / T
    se = moment_std_err(mean, acc_sq / T, T, floor=0.0)
    expected = None if declared is None else exp_sum / T
    decision = step_decision(dist, T, false_alarm, (mean, se, mean), expected, alpha_sum / T, margin=MARGIN)
    return AuditReport(
        lossless=decision.lossless,
        tv_upper=None,
        acceptance=mean,
        std_err=se,
        expected=expected,
        alpha_star=alpha_sum / T,
        steps=T,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        declared=declared,
        alpha_by_law=None if law_sums is None else {m: v / T for m, v in law_sums.items()},
        decision=decision,
        details={"drafts": drafts, "k": k},
    )


def torch_adapter(fn: Callable[..., Any], *, device: Any = "cpu", dtype: Any = None) -> Callable[..., np.ndarray]:
    """A torch implementation ``fn(P, Q, X, generator) -> Y`` (tensors on ``device``; ``P``,
    ``Q`` float (B, n), ``X`` long (B, k), a ``torch.Generator`` on that device) as the numpy
    callable the audit runs.  The generator is seeded from the audit's numpy generator, so
    a run is reproducible; ``dtype`` (default float32, as engines run) is that of P and Q.

    Parameters
    ----------
    fn : callable
        The torch implementation.
    device : str or torch.device
        Where the tensors and the generator live.
    dtype : torch.dtype, optional
        Dtype of P and Q (default ``torch.float32``).

    Returns
    -------
    callable
        ``wrapped(P, Q, X, rng) -> Y`` on numpy arrays, Y int64 of shape (B,).

    Raises
    ------
    MissingDependencyError
        If torch is not installed.
    """
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is in the llm extra
        raise MissingDependencyError("torch_adapter needs torch (pip install 'optaccept[llm]')") from exc
    dev = torch.device(device)
    dt = torch.float32 if dtype is None else dtype

    def wrapped(P: np.ndarray, Q: np.ndarray, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        gen = torch.Generator(device=dev)
        gen.manual_seed(int(rng.integers(2**63 - 1)))
        Pt = torch.as_tensor(np.ascontiguousarray(P), dtype=dt, device=dev)
        Qt = torch.as_tensor(np.ascontiguousarray(Q), dtype=dt, device=dev)
        Xt = torch.as_tensor(np.ascontiguousarray(X), dtype=torch.long, device=dev)
        Y = fn(Pt, Qt, Xt, gen)
        return torch.as_tensor(Y).reshape(-1).to("cpu").numpy().astype(np.int64)

    return wrapped


def _token_ids(out: Any, B: int, n: int) -> np.ndarray:
    """The verifier's outputs as B integer token ids in [0, n), or one line naming what is wrong:
    the shape as returned (not flattened), and float ids refused rather than cast (a float id is
    an input error of the verifier, not a departure from the law)."""
    try:
        arr = np.asarray(out.cpu() if hasattr(out, "cpu") else out)
    except Exception:  # noqa: BLE001 - anything numpy cannot read is the caller's mistake
        raise InputError(f"fn: must return {B} integer token ids, got {type(out).__name__}") from None
    if arr.shape not in ((B,), (B, 1)):
        raise InputError(f"fn: must return {B} token ids (shape ({B},)), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise InputError(f"fn: must return integer token ids, got dtype {arr.dtype}")
    arr = arr.reshape(B).astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise InputError(f"fn: must return token ids in [0, {n}), got ids from {arr.min()} to {arr.max()}")
    return arr
