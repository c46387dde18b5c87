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
from .._lib.statistics import bernoulli_std_err, ks_threshold, ks_uniform, l1_threshold, moment_std_err, within
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
#: The draft law each other rule's exact acceptance assumes.
_RULE_LAW = {"sd": "iid", "rrs": "iid", "kseq": "iid", "nss": "iid", "greedy": "greedy"}


@dataclass
class AuditReport(Report):
    """What an audit found.  ``lossless`` is the decision of the test of "output law = p" at
    false-alarm rate ``false_alarm``; ``acceptance`` is the measured P(Y ∈ drafts) with its
    standard error; ``expected`` the exact acceptance of the declared rule (None if none was
    declared); ``alpha_star`` the optimum of the draft law; gaps are ``alpha_star − acceptance``.
    In the results' vocabulary ``value`` is ``acceptance`` ± ``std_err`` (``acceptance_se``
    is its old name), ``method`` ``"sampled"``, ``ok`` lossless and not above the optimum;
    ``to_pandas()`` and ``to_latex()`` give its numbers as one row.

    Attributes
    ----------
    lossless : bool
        Whether every tested order's transforms passed the Kolmogorov test.
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

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> fn = testing.verifier_fn(verifiers.RRS())
    >>> rep = audit.audit_verifier(fn, p, q, k=2, samples=2000, rng=np.random.default_rng(0), declared="rrs")
    >>> type(rep).__name__, rep.steps, rep.lossless, rep.declared
    ('AuditReport', 2000, True, 'rrs')
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

    #: the value is a sample mean
    method = "sampled"

    @property
    def value(self) -> float:
        """``acceptance``, the results' name for it."""
        return self.acceptance

    @property
    def ok(self) -> bool:
        """Whether the output law passed the losslessness test and the acceptance is not above
        the optimum (:attr:`above_optimum`)."""
        return bool(self.lossless) and not self.above_optimum

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
    def expected_z(self) -> float | None:
        """(measured − expected) / SE for the declared rule (None without one)."""
        if self.expected is None:
            return None
        return (self.acceptance - self.expected) / max(self.std_err, 1e-300)

    @property
    def detectable(self) -> float:
        """The resolution of this run: a departure whose transforms sit at Kolmogorov distance
        ≥ this value along a tested order (hence a total variation at least this large between
        the output law and p) is flagged with probability ≥ 1 − ``false_alarm``."""
        return 2.0 * self.ks_threshold

    @property
    def above_optimum(self) -> bool:
        """True when the measured acceptance exceeds α* (or the top of its guaranteed
        interval) by more than four standard errors: no lossless verifier of this draft law
        accepts that often, so this alone shows the implementation is not lossless."""
        top = self.details.get("alpha_star_interval", (None, self.alpha_star))[1]
        if top is None or math.isnan(top) or self.details.get("no_q"):
            return False
        return self.acceptance - top > 4 * self.std_err

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            (
                "lossless",
                f"{'yes' if self.lossless else 'NO'} (false-alarm rate ≤ {self.false_alarm:g}; "
                f"largest KS distance {max(self.ks_distance.values()):.2e} vs threshold {self.ks_threshold:.2e}, "
                f"order '{max(self.ks_distance, key=self.ks_distance.get)}')",
            ),
            (
                "resolution",
                f"departures of total variation ≥ {self.detectable:.3g} along a tested order are flagged with "
                f"probability ≥ {1 - self.false_alarm:g}",
            ),
            (
                "TV(output, p) ≤",
                "—" if self.tv_upper is None else f"{self.tv_upper:.4f} (confidence {1 - self.false_alarm:g})",
            ),
            ("acceptance", f"{self.acceptance:.5f} ± {self.std_err:.5f} (measured, {self.steps:,} steps)"),
            (
                "declared rule",
                "—"
                if self.declared is None
                else f"{self.declared}: exact {self.expected:.5f} (z = {self.expected_z:+.2f})",
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
        if self.above_optimum:
            rows.append(
                (
                    "above the optimum",
                    "the measured acceptance exceeds the best lossless value by more than 4 standard errors: "
                    "the implementation is not lossless",
                )
            )
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
            f"AuditReport(lossless={self.lossless}, acceptance={self.acceptance:.5f}±{self.std_err:.5f}, "
            f"expected={self.expected}, alpha_star={self.alpha_star:.5f}, steps={self.steps})"
        )

    def to_json(self) -> str:
        """The report as JSON, with the derived quantities.

        Returns
        -------
        str
            The fields, plus ``gap``, ``verifier_gap``, ``draft_gap``, ``best_law``,
            ``detectable`` and ``above_optimum`` (NaN α* written as null).
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
        return json.dumps(d, indent=2, default=float)


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
    return float(batched_acceptance(p[None, :], q[None, :], k, declared)[0])


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
        The rate at which a correct implementation is declared not lossless (default 1e-6).
    batch : int, optional
        Rows per call of ``fn`` (default: 50,000, at most 2²³ / n so that each of P and Q
        stays within 64 MB: 64 rows at n = 131,072).  The batch's P and Q are read-only
        views of one row each (no copy per row); ``fn`` must not write to them.

    Returns
    -------
    AuditReport
        The losslessness verdict, the measured acceptance with its standard error, the
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
    eps = ks_threshold(N, false_alarm, len(ORDERS))
    dist = {o: ks_uniform(_pit_one(pf, qf, Y, o, rng)) for o in ORDERS}
    ok = within(dist, eps)
    # TV upper bound at confidence 1 − false_alarm (Bretagnolle–Huber–Carol over the n tokens)
    emp = np.bincount(Y, minlength=n) / N
    lam = l1_threshold(n, N, false_alarm)
    tv_upper = min(1.0, 0.5 * float(np.abs(emp - pf).sum()) + lam / 2)
    a = float(acc.mean())
    se = bernoulli_std_err(a, N)
    alpha = float(optimal_acceptance(pf, law).value)
    by_law = _alpha_by_law(pf, qf, law.k)
    return AuditReport(
        lossless=ok,
        tv_upper=tv_upper,
        acceptance=a,
        std_err=se,
        expected=_expected(declared, pf, qf, law.k, law),
        alpha_star=alpha,
        steps=N,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=eps,
        declared=declared,
        alpha_by_law=by_law,
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
            exp_sum += float(np.sum(batched_acceptance(Pc, Qc, k, declared)))
    rows_p.finish()
    rows_q.finish()
    eps = ks_threshold(T, false_alarm, len(ORDERS))
    dist = {o: ks_uniform(np.concatenate(v)) for o, v in us.items()}
    mean = acc_sum / T
    se = moment_std_err(mean, acc_sq / T, T)
    return AuditReport(
        lossless=all(d <= eps for d in dist.values()),
        tv_upper=None,
        acceptance=mean,
        std_err=se,
        expected=None if declared is None else exp_sum / T,
        alpha_star=alpha_sum / T,
        steps=T,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=eps,
        declared=declared,
        alpha_by_law=None if law_sums is None else {m: v / T for m, v in law_sums.items()},
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
