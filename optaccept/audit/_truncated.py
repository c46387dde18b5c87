r"""Audit logs that keep only the target's top-m probabilities (docs/audit.md §10).

Engines' capture tools often log, per step, the ids and probabilities of the target's m most
likely tokens (the remaining mass r_t = 1 − Σ is then known, not its spread), the draft law q_t,
the drafts and the output.  What stays exact, and what becomes an interval:
* **Losslessness.**  Merge every token outside the logged set into one symbol "rest" (its
  target mass r_t, its draft mass 1 − q_t(logged)).  Under H₀ the merged output has the merged
  law, so the randomised transforms of :mod:`optaccept.audit._core` taken on the merged
  alphabet are still exactly Uniform(0, 1): the test and its false-alarm rate are unchanged
  (a bug that only moves mass inside the rest is invisible to it — the price of the truncation).
* **Acceptance** P(Y ∈ drafts) is measured from the ids: exact as before.
* **α\*** lies in  [α*(p̂_t) − r_t, min(α*(p̂_t) + r_t, α*(merged))]  for every step, where p̂_t
  completes the log by spreading r_t over the unlogged tokens in proportion to q_t: α* is
  1-Lipschitz in p for the total variation (from a coupling for p, a maximal coupling of p
  with p′ moves the output with probability TV(p, p′)), every completion is within r_t of p̂_t
  in total variation, and merging tokens can only raise α* (an acceptance on the full
  alphabet is one on the merged one; the merged bound is used for i.i.d. drafts, whose merged
  law is i.i.d. from the merged q).  The report gives the mean of each end.
* **Declared rule** ("sd", "target_only"): its exact acceptance is 1-Lipschitz in p as well
  (Σ min(p, q); Σ_y p(y)·P(y ∈ drafts)), so it lies within r_t of its value at p̂_t.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.statistics import bernoulli_std_err, ks_uniform
from .._lib.validation import SUM_TOL, _low_precision, _warn, check_choice, check_rng, plain, sum_tolerance
from ..drafts import law_from_name
from ..optimal import batched_optimal_acceptance
from ..verifiers._target_only import target_only_acceptance
from ._core import _DRAFT_LAWS, AuditReport, step_decision
from ._log_rows import _dtype_of, _Rows
from ._pit import FALSE_ALARM, ORDERS, pit_values

__all__ = ["audit_topm_log"]

#: Declared rules whose exact acceptance is 1-Lipschitz in p (so bracketed under truncation).
DECLARED_TOPM = ("sd", "target_only")


def audit_topm_log(
    ids: Any,
    probs: Any,
    Q: Any,
    X: Any,
    Y: Any,
    declared: str | None = None,
    *,
    drafts: str = "iid",
    n: int | None = None,
    rng: np.random.Generator | int | None = 0,
    false_alarm: float = FALSE_ALARM,
) -> AuditReport:
    """Audit a log with the target's top-m probabilities only.

    ``ids`` int (T, m) and ``probs`` float (T, m): the logged target tokens and their
    probabilities (the rest of each row's mass is unlogged); ``Q`` float (T, n) the draft laws,
    or None when the log has no q (then the test runs along the orders that need no q — by p
    and by id —, α* and "sd" are not bounded (nothing bounds them without q), and "target_only"
    is bracketed from p alone: its acceptance given the drafts is p(set(X)), known on the
    logged tokens and within the unlogged mass r_t elsewhere); ``X`` int (T, k) the drafts;
    ``Y`` int (T,) the outputs; ``n`` the vocabulary size when ``Q`` is None.  Returns an :class:`AuditReport`
    whose ``alpha_star`` is the midpoint of a guaranteed interval
    (``details["alpha_star_interval"]``), as is ``expected`` for a declared rule
    (``details["expected_interval"]``); the losslessness test runs on the merged alphabet
    (module docstring).

    Parameters
    ----------
    ids : array_like of int, shape (T, m)
        The logged target tokens of each step.
    probs : array_like of float, shape (T, m)
        Their target probabilities.
    Q : array_like of float, shape (T, n), or None
        The draft laws; None when the log has none.
    X : array_like of int, shape (T, k)
        The drafts.
    Y : array_like of int, shape (T,)
        The outputs.
    declared : {"sd", "target_only"}, optional
        The rule the engine claims.
    drafts : {"iid", "swor", "greedy"}
        The draft law whose α* is bracketed.
    n : int, optional
        Vocabulary size, needed when ``Q`` is None.
    rng : numpy.random.Generator, int or None
        Source of the tie-breaking uniforms (default: seed 0, a reproducible report;
        None: fresh entropy).
    false_alarm : float
        The rate at which a correct engine is declared not lossless.

    Returns
    -------
    AuditReport
        With midpoints of guaranteed intervals for ``alpha_star`` and ``expected``.

    Raises
    ------
    InputError
        If the shapes disagree, a logged row is not part of a distribution, a token id is
        out of range, or ``declared`` or ``drafts`` is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> rng = np.random.default_rng(1)  # not the seed of the audit's own uniforms (rng=0)
    >>> T = 2000
    >>> X = rng.choice(5, size=(T, 1), p=q)  # one draft per step
    >>> residual = np.array([.1, .15, 0, .07, 0]) / .32  # (p - q)+ / TV(p, q)
    >>> keep = rng.random(T) < np.minimum(1, p[X[:, 0]] / q[X[:, 0]])
    >>> Y = np.where(keep, X[:, 0], rng.choice(5, T, p=residual))  # speculative decoding
    >>> ids = np.tile([0, 1, 2], (T, 1))  # the log keeps the target's top 3 only
    >>> rep = audit.audit_topm_log(ids, p[ids], np.tile(q, (T, 1)), X, Y, declared="sd")
    >>> rep.lossless
    True
    >>> [round(v, 4) for v in rep.details["expected_interval"]]  # holds the exact 0.68
    [0.55, 0.95]
    >>> [round(v, 4) for v in rep.details["alpha_star_interval"]]
    [0.55, 0.75]
    """

    rng = check_rng(rng)
    ids = np.asarray(ids, dtype=np.int64)
    probs_dtype = _dtype_of(probs)
    probs = np.asarray(probs, dtype=np.float64)
    X = np.asarray(X, dtype=np.int64)
    if Q is None:
        return _audit_without_q(ids, probs, X, Y, declared, n, rng, false_alarm, probs_dtype)
    q_rows = _Rows("Q", int(np.shape(Q)[-1]), _dtype_of(Q)) if np.ndim(Q) == 2 else None
    Q = np.asarray(Q, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.int64).reshape(-1)
    T = Y.size
    if ids.ndim != 2 or probs.shape != ids.shape or ids.shape[0] != T:
        raise InputError(f"ids, probs: must be (T, m) arrays of one shape with T = {T} rows")
    if Q.ndim != 2 or Q.shape[0] != T or X.ndim != 2 or X.shape[0] != T:
        raise InputError(f"Q, X: must have {T} rows")
    n, m, k = Q.shape[1], ids.shape[1], X.shape[1]
    if ids.min() < 0 or ids.max() >= n or Y.min() < 0 or Y.max() >= n or X.min() < 0 or X.max() >= n:
        raise InputError(f"ids, X, Y: token ids must lie in [0, {n})")
    check_choice("drafts", drafts, _DRAFT_LAWS)
    check_choice("declared", declared, DECLARED_TOPM, allow_none=True)
    probs = _check_partial_rows(probs, n, probs_dtype)
    assert q_rows is not None
    Q = q_rows.clean(Q, 0)
    q_rows.finish()
    rest = np.clip(1.0 - probs.sum(1), 0.0, 1.0)
    # merged alphabet: the m logged tokens, then "rest"
    Pm = np.concatenate([probs, rest[:, None]], axis=1)
    Pm = Pm / Pm.sum(1, keepdims=True)
    q_logged = np.take_along_axis(Q, ids, axis=1)
    Qm = np.concatenate([q_logged, np.clip(1.0 - q_logged.sum(1), 0.0, 1.0)[:, None]], axis=1)
    Qm = Qm / Qm.sum(1, keepdims=True)
    where = ids == Y[:, None]
    Ym = np.where(where.any(1), where.argmax(1), m)
    us = {o: pit_values(Pm, Qm, Ym, o, rng) for o in ORDERS}
    dist = {o: ks_uniform(u) for o, u in us.items()}
    # completions: the unlogged mass spread in proportion to q (uniformly where q has none)
    P_hat = np.zeros((T, n))
    for t in range(T):
        free = np.ones(n, dtype=bool)
        free[ids[t]] = False
        w = Q[t] * free
        w = w / w.sum() if w.sum() > 0 else free / free.sum()
        P_hat[t] = rest[t] * w
        P_hat[t, ids[t]] = probs[t]
        P_hat[t] /= P_hat[t].sum()
    a_hat = np.asarray(batched_optimal_acceptance(P_hat, Q, k, drafts), dtype=np.float64)
    drafted_rest = ~(X[:, :, None] == ids[:, None, :]).any(2)
    lo = np.clip(a_hat - rest, 0.0, 1.0)
    hi = np.minimum(a_hat + rest, 1.0)
    if drafts == "iid":  # the merged i.i.d. law is i.i.d. from the merged q (not so without replacement)
        hi = np.minimum(hi, np.asarray(batched_optimal_acceptance(Pm, Qm, k, "iid"), dtype=np.float64))
    acc = (X == Y[:, None]).any(1).astype(np.float64)
    mean = float(acc.mean())
    se = bernoulli_std_err(mean, T, floor=None)
    expected = exp_interval = None
    if declared is not None:
        if declared == "sd":
            e_hat = np.minimum(P_hat, Q).sum(1)
        else:
            e_hat = np.array([target_only_acceptance(P_hat[t], law_from_name(drafts, Q[t], k)) for t in range(T)])
        exp_interval = (float(np.clip(e_hat - rest, 0, 1).mean()), float(np.clip(e_hat + rest, 0, 1).mean()))
        expected = 0.5 * (exp_interval[0] + exp_interval[1])
    interval = (float(lo.mean()), float(hi.mean()))
    decision = step_decision(dist, T, false_alarm, (mean, se, mean), exp_interval, interval[1])
    return AuditReport(
        lossless=decision.lossless,
        tv_upper=None,
        acceptance=mean,
        std_err=se,
        expected=expected,
        alpha_star=0.5 * (interval[0] + interval[1]),
        steps=T,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        decision=decision,
        declared=declared,
        details={
            "drafts": drafts,
            "k": k,
            "logged_tokens": m,
            "mean_unlogged_mass": float(rest.mean()),
            "alpha_star_interval": interval,
            "expected_interval": exp_interval,
            "drafts_in_rest": float(drafted_rest.mean()),
        },
    )


def _check_partial_rows(probs: np.ndarray, n: int, dtype: Any) -> np.ndarray:
    """``probs`` rows of a top-m log under the library's sum rule: non-negative, finite, each
    row's sum at most 1 (the unlogged mass is the rest) up to the rule's tolerance for ``n``
    entries.  A row over 1 within the tolerance is rescaled to 1 (one warning per call for
    float64 input); the message reports the sum as logged."""
    if not np.all(np.isfinite(probs)):
        r, i = np.argwhere(~np.isfinite(probs))[0]
        raise InputError(f"probs: {'NaN' if np.isnan(probs[r, i]) else 'infinite'} entry at row {r}, index {i}")
    if probs.size and probs.min() < 0:
        r, i = np.argwhere(probs < 0)[0]
        raise InputError(f"probs: negative entry at row {r}, index {i} ({plain(probs[r, i])})")
    sums = probs.sum(1)
    if not sums.size:
        return probs
    tol = sum_tolerance(n, dtype if dtype is not None and np.dtype(dtype).kind == "f" else None)
    w = int(np.argmax(sums))
    if sums[w] - 1.0 > tol:
        raise InputError(
            f"probs: row {w} sums to {plain(float(sums[w]))}, above 1 by {float(sums[w]) - 1.0:.3g}, more than float32 "
            f"rounding explains for {n} entries ({tol:.2g}); a row of logged probabilities sums to at most 1"
        )
    over = sums > 1.0
    if np.any(over):
        if float(sums[w]) - 1.0 > SUM_TOL and not _low_precision(dtype):
            _warn(
                f"probs: {int(np.count_nonzero(sums - 1.0 > SUM_TOL))} of {sums.size} rows sum to more than 1 "
                f"by up to {float(sums[w]) - 1.0:.2g} (within the {tol:.2g} allowed for {n} entries); rescaled"
            )
        probs = probs.copy()
        probs[over] /= sums[over, None]
    return probs


def _audit_without_q(
    ids: np.ndarray,
    probs: np.ndarray,
    X: np.ndarray,
    Y: Any,
    declared: str | None,
    n: int | None,
    rng: np.random.Generator,
    false_alarm: float,
    probs_dtype: Any = None,
) -> AuditReport:
    """The audit of a top-m log with no draft laws (see :func:`audit_topm_log`)."""
    Y = np.asarray(Y, dtype=np.int64).reshape(-1)
    T = Y.size
    if ids.ndim != 2 or probs.shape != ids.shape or ids.shape[0] != T or X.ndim != 2 or X.shape[0] != T:
        raise InputError(f"ids, probs, X: must have {T} rows (ids and probs of one shape)")
    if n is None or n < 1:
        raise InputError("n: the vocabulary size is needed when the log has no Q")
    m = ids.shape[1]
    if ids.min() < 0 or ids.max() >= n or Y.min() < 0 or Y.max() >= n or X.min() < 0 or X.max() >= n:
        raise InputError(f"ids, X, Y: token ids must lie in [0, {n})")
    probs = _check_partial_rows(probs, n, probs_dtype)
    if declared not in (None, "target_only"):
        raise InputError(f"declared: without Q only 'target_only' can be bracketed, got {declared!r}")
    rest = np.clip(1.0 - probs.sum(1), 0.0, 1.0)
    Pm = np.concatenate([probs, rest[:, None]], axis=1)
    Pm = Pm / Pm.sum(1, keepdims=True)
    where = ids == Y[:, None]
    Ym = np.where(where.any(1), where.argmax(1), m)
    orders = ("p", "id")  # the orders that need no q
    us = {o: pit_values(Pm, Pm, Ym, o, rng) for o in orders}
    dist = {o: ks_uniform(u) for o, u in us.items()}
    acc = (X == Y[:, None]).any(1).astype(np.float64)
    mean = float(acc.mean())
    se = bernoulli_std_err(mean, T, floor=None)
    expected = exp_interval = None
    if declared == "target_only":
        # P(Y in drafts | drafts) = p(set(X)): known on logged tokens, at most r_t on the others
        lo = np.empty(T)
        hi = np.empty(T)
        for t in range(T):
            xs = np.unique(X[t])
            on = np.isin(ids[t], xs)
            lo[t] = probs[t, on].sum()
            hi[t] = lo[t] + (rest[t] if np.any(~np.isin(xs, ids[t])) else 0.0)
        exp_interval = (float(lo.mean()), float(hi.mean()))
        expected = 0.5 * (exp_interval[0] + exp_interval[1])
    decision = step_decision(dist, T, false_alarm, (mean, se, mean), exp_interval, None)
    return AuditReport(
        lossless=decision.lossless,
        tv_upper=None,
        acceptance=mean,
        std_err=se,
        expected=expected,
        alpha_star=float("nan"),
        steps=T,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        decision=decision,
        declared=declared,
        details={
            "logged_tokens": m,
            "mean_unlogged_mass": float(rest.mean()),
            "alpha_star_interval": (0.0, 1.0),
            "expected_interval": exp_interval,
            "no_q": True,
        },
    )
