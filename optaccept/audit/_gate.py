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
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError

__all__ = [
    "regression_gate",
    "sample_size",
    "RegressionGate",
    "SampleSize",
    "step_values",
    "StepValues",
    "synthetic_chain_log",
    "DEFINITIONS",
]

#: Definitions of the mean accepted length a gate can test.
DEFINITIONS = ("pooled", "per_request")
#: Verifiers whose exact per-step expectation a chain log gives.
CHAIN_VERIFIERS = ("token", "block", "target_only")
#: Verifiers whose exact per-step expectation a one-token log (rows p_t, q_t) gives.
STEP_VERIFIERS = ("sd", "rrs", "kseq-output", "greedy", "nss", "target_only")


@dataclass
class StepValues:
    """Per-step values read from a log: ``exact`` (expected accepted drafts given the step; None
    for plain counts), ``counts`` (accepted drafts as logged; None when not logged) and
    ``request`` (the request of each step)."""

    exact: np.ndarray | None
    counts: np.ndarray | None
    request: np.ndarray
    kind: str
    verifier: str | None = None

    @property
    def values(self) -> np.ndarray:
        """What the gate averages: the exact expectations when known, else the counts."""
        return self.exact if self.exact is not None else self.counts


def _as_arrays(log: Any, name: str) -> dict[str, Any]:
    if isinstance(log, StepValues):
        return {"_steps": log}
    if isinstance(log, (str, os.PathLike)):
        import zipfile

        try:
            with np.load(log, allow_pickle=False) as f:
                return {a: f[a] for a in f.files}
        except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
            raise InputError(f"{name}: cannot read {os.fspath(log)!r} as a .npz log ({exc})") from None
    if isinstance(log, Mapping):
        return dict(log)
    arr = np.asarray(log)
    if arr.ndim == 1 and arr.dtype != object:
        return {"accepted": arr}
    raise InputError(
        f"{name}: a .npz path, a mapping of arrays (P, Q, X, request ...) or a 1-D array of accepted counts, "
        f"got {type(log).__name__}"
    )


def _chain_exact(P: np.ndarray, Q: np.ndarray, X: np.ndarray, verifier: str) -> np.ndarray:
    """Expected accepted drafts of each chain step (rows of X; −1 pads shorter chains)."""
    T, g = X.shape
    valid = X >= 0
    Xc = np.where(valid, X, 0)
    rows = np.arange(T)[:, None]
    cols = np.arange(g)[None, :]
    px = np.asarray(P[rows, cols, Xc], dtype=np.float64)  # only the drafted tokens' entries are read
    if verifier == "target_only":
        ratio = px
    else:
        qx = np.asarray(Q[rows, cols, Xc], dtype=np.float64)
        if (valid & (qx <= 0)).any():
            raise InputError("Q: a drafted token has draft probability 0 in its row (were the drafts drawn from Q?)")
        ratio = np.minimum(1.0, px / np.where(qx > 0, qx, 1.0))
    ratio = np.where(valid, ratio, 0.0)
    if verifier in ("token", "target_only"):
        return np.cumprod(ratio, axis=1).sum(axis=1)
    from ..tree import DraftTree, tree_value

    out = np.empty(T)
    for t in range(T):
        chain = tuple(int(x) for x in X[t][valid[t]])
        if not chain:
            out[t] = 0.0
            continue
        rp = {chain[:i]: np.asarray(P[t, i], dtype=np.float64) for i in range(len(chain) + 1)}
        rq = {chain[:i]: np.asarray(Q[t, i], dtype=np.float64) for i in range(len(chain))}
        out[t] = float(
            tree_value(
                DraftTree((chain,), len(chain), "iid"),
                lambda u, rp=rp: rp[tuple(u)],
                lambda u, rq=rq: rq[tuple(u)],
                "block",
            )
        )
    return out


def _tree_exact(P: np.ndarray, tokens: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Target-only verification of a drafted tree with distinct sibling tokens: the expected
    accepted depth is Σ_v P(reach v), P(reach v) = P(reach parent) · p_parent(token_v)."""
    T, N1 = tokens.shape
    reach = np.zeros((T, N1))
    reach[:, 0] = 1.0
    for v in range(1, N1):
        u = int(parents[v])
        if not 0 <= u < v:
            raise InputError("parents: node v's parent must be a node before it (0 is the root)")
        present = tokens[:, v] >= 0
        pv = np.asarray(P[:, u], dtype=np.float64)[np.arange(T), np.where(present, tokens[:, v], 0)]
        reach[:, v] = np.where(present, reach[:, u] * pv, 0.0)
    kids: dict[int, list[int]] = {}
    for v in range(1, N1):
        kids.setdefault(int(parents[v]), []).append(v)
    for sib in kids.values():
        if len(sib) > 1:
            toks = tokens[:, sib]
            s = np.sort(np.where(toks >= 0, toks, -np.arange(1, len(sib) + 1)[None, :]), axis=1)
            if (np.diff(s, axis=1) == 0).any():
                raise InputError("tokens: equal sibling tokens; target-only tree values need distinct siblings")
    return reach[:, 1:].sum(axis=1)


def step_values(log: Any, verifier: str | None = None, *, name: str = "log") -> StepValues:
    """Per-step exact expectations (and logged counts) of a log, with its request ids.

    Parameters
    ----------
    log : path, mapping of arrays, or 1-D array
        A ``.npz`` file or mapping holding one of

        * a **chain log**: ``P`` float (T, γ + 1, n) (or (T, γ, n)) the target's laws after
          X[:i], ``Q`` float (T, γ, n) the draft's, ``X`` int (T, γ) the drafted tokens (−1 pads
          shorter chains), optionally ``m`` int (T,) the accepted drafts;
        * a **one-token log** (the format of :func:`optaccept.audit.audit_log`): ``P``, ``Q``
          float (T, n), ``X`` int (T, k), optionally ``Y`` int (T,) (accepted when Y ∈ X);
        * a **tree log** (target-only verification, distinct siblings): ``tokens`` int
          (T, N + 1), ``parents`` int (N + 1,), ``P`` float (T, N + 1, n), optionally ``m``;
        * **plain counts**: ``accepted`` (or ``m``) int (T,);

        and ``request`` int (T,), the request of each step (without it every step counts as its
        own request, which understates the standard error when steps of a request correlate).
        A bare 1-D array is plain counts without request ids.
    verifier : str, optional
        Chain logs: "token" (default), "block", "target_only"; one-token logs: "rrs" (default),
        "sd", "kseq-output", "greedy", "nss", "target_only"; tree logs: "target_only".
    name : str
        The argument name error messages give to the log.

    Returns
    -------
    StepValues
        ``exact`` (None for plain counts), ``counts`` (None when not logged), ``request``
        (one id per step), the log's ``kind`` and the ``verifier`` used.

    Raises
    ------
    InputError
        If the log lacks the arrays of every kind, its shapes disagree, a token id is out of
        range, or ``verifier`` does not fit the kind of log.
    """
    arrays = _as_arrays(log, name)
    if "_steps" in arrays:
        return arrays["_steps"]
    request = arrays.get("request")
    counts = arrays.get("accepted", arrays.get("m"))
    exact = None
    kind = "counts"
    if "tokens" in arrays and "parents" in arrays:
        if verifier not in (None, "target_only"):
            raise InputError(f"verifier: tree logs are valued for 'target_only', got {verifier!r}")
        verifier = "target_only"
        if "P" not in arrays:
            raise InputError(f"{name}: a tree log needs P (the target's laws at the nodes)")
        exact = _tree_exact(arrays["P"], np.asarray(arrays["tokens"], dtype=np.int64), np.asarray(arrays["parents"]))
        kind = "tree"
    elif "P" in arrays or "X" in arrays:
        missing = [a for a in ("P", "Q", "X") if a not in arrays]
        if missing:
            raise InputError(f"{name}: missing array(s) {', '.join(missing)} (a chain or one-token log holds P, Q, X)")
        P, Q = arrays["P"], arrays["Q"]
        X = np.asarray(arrays["X"], dtype=np.int64)
        if X.ndim != 2 or len(P) != X.shape[0] or len(Q) != X.shape[0]:
            raise InputError(f"{name}: P, Q, X must have one row per step, got {np.shape(P)}, {np.shape(Q)}, {X.shape}")
        if np.ndim(P) == 3:
            verifier = "token" if verifier is None else verifier
            if verifier not in CHAIN_VERIFIERS:
                raise InputError(f"verifier: chain logs are valued for {CHAIN_VERIFIERS}, got {verifier!r}")
            g = X.shape[1]
            if np.shape(P)[1] < g or np.shape(Q)[1] < g:
                raise InputError(f"{name}: P and Q need at least γ = {g} rows per step")
            if X.size and (X.max() >= np.shape(P)[2]):
                raise InputError(f"X: token ids must lie in [0, {np.shape(P)[2]})")
            exact = _chain_exact(P, Q, X, verifier)
            kind = "chain"
        elif np.ndim(P) == 2:
            from ..verifiers import batched_acceptance, target_only_acceptance

            verifier = "rrs" if verifier is None else verifier
            if verifier not in STEP_VERIFIERS:
                raise InputError(f"verifier: one-token logs are valued for {STEP_VERIFIERS}, got {verifier!r}")
            k = X.shape[1]
            T = X.shape[0]
            chunk = max(1, (1 << 22) // max(1, int(np.shape(P)[1])))  # about 32 MB per float64 block
            parts = []
            for lo in range(0, T, chunk):
                Pf = np.asarray(P[lo : lo + chunk], dtype=np.float64)
                Qf = np.asarray(Q[lo : lo + chunk], dtype=np.float64)
                Pf = Pf / Pf.sum(axis=1, keepdims=True)
                Qf = Qf / Qf.sum(axis=1, keepdims=True)
                if verifier == "target_only":
                    from ..drafts import IID

                    parts.append([target_only_acceptance(Pf[t], IID(Qf[t], k)) for t in range(len(Pf))])
                else:
                    parts.append(np.asarray(batched_acceptance(Pf, Qf, k, verifier), dtype=np.float64))
            exact = np.concatenate([np.asarray(v, dtype=np.float64) for v in parts])
            if counts is None and "Y" in arrays:
                Y = np.asarray(arrays["Y"], dtype=np.int64).reshape(-1)
                counts = (X == Y[:, None]).any(axis=1)
            kind = "step"
        else:
            raise InputError(f"{name}: P must be (steps, n) or (steps, γ + 1, n), got shape {np.shape(P)}")
    elif counts is None:
        raise InputError(f"{name}: no arrays to value (a log holds P, Q, X, request, or accepted and request)")
    T = len(exact) if exact is not None else len(counts)
    if counts is not None:
        counts = np.asarray(counts, dtype=np.float64).reshape(-1)
        if counts.size != T or not np.isfinite(counts).all() or (counts < 0).any():
            raise InputError(f"{name}: accepted counts must be {T} non-negative numbers")
    if T == 0:
        raise InputError(f"{name}: the log has no steps")
    if request is None:
        request = np.arange(T)
    request = np.asarray(request).reshape(-1)
    if request.size != T:
        raise InputError(f"request: must have one id per step ({T}), got {request.size}")
    return StepValues(exact, counts, request, kind, verifier)


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
    _, inv = np.unique(request, return_inverse=True)
    R = int(inv.max()) + 1
    m = float(a.mean())
    sums = np.bincount(inv, weights=a, minlength=R)
    sizes = np.bincount(inv, minlength=R)
    dev = np.bincount(inv, weights=a - m, minlength=R)
    pooled_se = math.sqrt(R / (R - 1) * float(dev @ dev)) / a.size if R > 1 else math.nan
    means = sums / sizes
    pr = float(means.mean())
    pr_se = float(means.std(ddof=1) / math.sqrt(R)) if R > 1 else math.nan
    return Summary(m, pooled_se, pr, pr_se, int(a.size), R)


def _check_prob(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating)) or not 0 < x < 1:
        raise InputError(f"{name}: must lie in (0, 1), got {x!r}")
    return float(x)


def _check_definition(definition: Any) -> str:
    if definition not in DEFINITIONS:
        raise InputError(f"definition: must be one of {DEFINITIONS}, got {definition!r}")
    return definition


@dataclass
class RegressionGate:
    """The decision of :func:`regression_gate` and what it rests on.

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
        per step, or plain per-step accepted counts).
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
class SampleSize:
    """Requests per run (baseline and candidate alike) a gate needs to see a relative drop
    ``change`` of AL with probability ``power`` at ``false_alarm``: ``requests`` for the test
    on exact expectations (None for a counts-only log), ``requests_counts`` for the 0/1-average
    test (None when the log holds no counts).

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
    """

    requests: int | None
    requests_counts: int | None
    change: float
    false_alarm: float
    power: float
    definition: str
    baseline_al: float
    steps_per_request: float

    def __str__(self) -> str:
        def fmt(v: int | None) -> str:
            return "—" if v is None else f"{v:,}"

        return (
            f"Requests per run to detect a {100 * self.change:g} % drop of AL {self.baseline_al:.3f} "
            f"({self.definition}; false alarm {self.false_alarm:g}, power {self.power:g}; "
            f"{self.steps_per_request:.1f} steps per request): exact {fmt(self.requests)}, "
            f"0/1 counts {fmt(self.requests_counts)}"
        )


def _requests_needed(s: Summary, definition: str, delta: float, z: float) -> int:
    _, se = s.mean(definition)
    var_one = se * se * s.requests  # variance contributed per request
    return max(2, math.ceil(2.0 * var_one * z * z / (delta * delta)))


def sample_size(
    baseline_log: Any,
    change: float = 0.02,
    false_alarm: float = 1e-3,
    power: float = 0.9,
    *,
    verifier: str | None = None,
    definition: str = "pooled",
) -> SampleSize:
    """Requests each run needs for :func:`regression_gate` to see a relative drop ``change`` of AL.

    With per-request variance σ² (R·SE², SE clustered, from ``baseline_log``) and equal request
    counts R in both runs, the difference has standard error σ·sqrt(2/R); the one-sided test at
    ``false_alarm`` detects a drop Δ = ``change``·AL with probability ``power`` when
    R ≥ 2σ²(z_{1−false_alarm} + z_{power})²/Δ² (normal approximation; the steps per request are
    those of the baseline).

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

    Returns
    -------
    SampleSize
        ``requests`` (exact expectations) and ``requests_counts`` (0/1 average), side by side.

    Raises
    ------
    InputError
        If a probability lies outside (0, 1), ``definition`` is unknown, the log is refused
        by :func:`step_values`, or it has fewer than two requests.
    """
    from scipy.stats import norm

    change = _check_prob(change, "change")
    false_alarm = _check_prob(false_alarm, "false_alarm")
    power = _check_prob(power, "power")
    definition = _check_definition(definition)
    v = step_values(baseline_log, verifier, name="baseline_log")
    if len(np.unique(v.request)) < 2:
        raise InputError("baseline_log: needs at least two requests (the variance is estimated across requests)")
    z = float(norm.ppf(1 - false_alarm) + norm.ppf(power))
    ref = _summary(v.values, v.request)
    delta = change * (ref.mean(definition)[0] + 1.0)
    exact = None if v.exact is None else _requests_needed(ref, definition, delta, z)
    counts = None if v.counts is None else _requests_needed(_summary(v.counts, v.request), definition, delta, z)
    return SampleSize(
        requests=exact,
        requests_counts=counts,
        change=change,
        false_alarm=false_alarm,
        power=power,
        definition=definition,
        baseline_al=ref.mean(definition)[0] + 1.0,
        steps_per_request=ref.steps / ref.requests,
    )


def synthetic_chain_log(
    requests: int,
    *,
    tokens: int = 32,
    gamma: int = 3,
    n: int = 50,
    noise: float = 1.0,
    seed: int = 0,
    rng: Any = 0,
    rows: bool = True,
) -> dict[str, np.ndarray] | StepValues:
    """A chain log of speculative decoding on the built-in synthetic pair, for tests and benchmarks.

    Request r decodes ``tokens`` tokens (the last step may pass them) with
    ``tree.synthetic_pair(n, seed=seed + r, noise=noise)``: at every step γ = ``gamma`` tokens are
    drafted from the draft model, verified token by token (speculative sampling: accept x_i with
    probability min(1, p/q), else draw the correction from (p − q)₊; a bonus token from p after γ
    acceptances), and the text continues from the emitted tokens.  Requests with the same seed
    share the target model (the "prompt") whatever ``noise``: a larger ``noise`` is a worse draft.

    Returns the log's arrays (``P``, ``Q``, ``X``, ``m``, ``request``) with ``rows=True``, or only
    the per-step values (:class:`StepValues`, exact expectations and counts) with ``rows=False``.

    Parameters
    ----------
    requests : int
        Number of requests.
    tokens : int
        Tokens decoded per request.
    gamma : int
        Drafted tokens per step.
    n : int
        Vocabulary size of the synthetic pair.
    noise : float
        How far the draft model is from the target (larger: worse).
    seed : int
        Seed of request 0's synthetic pair (request r uses ``seed + r``).
    rng : numpy.random.Generator or int
        Source of the decoding's randomness.
    rows : bool
        Return the log's arrays (True) or only the per-step values (False).

    Returns
    -------
    dict of str to ndarray, or StepValues
        As described above.
    """
    from .._validation import check_rng
    from ..tree import synthetic_pair

    rng = check_rng(rng)
    Ps, Qs, Xs, ms, req, ex = [], [], [], [], [], []
    for r in range(requests):
        target, draft = synthetic_pair(n, seed=seed + r, noise=noise)
        memo_p: dict[tuple[int, ...], np.ndarray] = {}
        memo_q: dict[tuple[int, ...], np.ndarray] = {}

        def P(u: tuple[int, ...], memo_p=memo_p, target=target) -> np.ndarray:
            if u not in memo_p:
                memo_p[u] = target(u)
            return memo_p[u]

        def Q(u: tuple[int, ...], memo_q=memo_q, draft=draft) -> np.ndarray:
            if u not in memo_q:
                memo_q[u] = draft(u)
            return memo_q[u]

        text: tuple[int, ...] = ()
        while len(text) < tokens:
            xs: list[int] = []
            for _ in range(gamma):
                q = Q(text + tuple(xs))
                xs.append(int(min(np.searchsorted(np.cumsum(q), rng.random() * q.sum(), side="right"), n - 1)))
            prow = [P(text + tuple(xs[:i])) for i in range(gamma + 1)]
            qrow = [Q(text + tuple(xs[:i])) for i in range(gamma)]
            ratio = np.array([min(1.0, prow[i][xs[i]] / qrow[i][xs[i]]) for i in range(gamma)])
            m = 0
            while m < gamma and rng.random() < ratio[m]:
                m += 1
            if m < gamma:
                res = np.maximum(prow[m] - qrow[m], 0.0)
            else:
                res = prow[gamma]
            c = np.cumsum(res)
            y = int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), n - 1))
            text = text + tuple(xs[:m]) + (y,)
            ms.append(m)
            req.append(r)
            ex.append(float(np.cumprod(ratio).sum()))
            if rows:
                Ps.append(np.array(prow))
                Qs.append(np.array(qrow))
                Xs.append(xs)
    if not rows:
        return StepValues(np.array(ex), np.array(ms, dtype=np.float64), np.array(req), "chain", "token")
    return {
        "P": np.array(Ps),
        "Q": np.array(Qs),
        "X": np.array(Xs, dtype=np.int64),
        "m": np.array(ms, dtype=np.int64),
        "request": np.array(req, dtype=np.int64),
    }
