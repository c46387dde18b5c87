r"""``assert_lossless`` and ``assert_acceptance``: the audit of :mod:`optaccept.audit` as test
assertions with stated false-alarm rates (docs/engines.md §3).

**Losslessness** is the audit's test (docs/audit.md §1): the randomised probability integral
transforms of the outputs along four token orders, each Kolmogorov distance against the
Dvoretzky–Kiefer–Wolfowitz–Massart threshold, so that a lossless ``fn`` fails with probability at
most ``false_alarm`` at every sample size.

**Acceptance.**  Given one (p, q) and fresh drafts at every step, the indicators Y_t ∈ set(X_t)
of a correct implementation of the declared rule are independent Bernoulli(α) with α the
rule's exact acceptance, so their count C over N steps is Binomial(N, α).  The assertion
rejects when the exact two-sided binomial tail, 2·min(P(C ≤ c), P(C ≥ c)), is at most its share
δ_a = ``ACCEPTANCE_SHARE`` · δ of the false-alarm rate; the losslessness test runs at the rest,
δ − δ_a.  By the union bound a correct implementation fails ``assert_acceptance`` with
probability at most δ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import as_distribution_pair, check_choice, check_rng, check_size
from ..audit import AuditReport, audit_verifier
from ..audit._core import DECLARED, FALSE_ALARM
from ..verifiers import Verifier, batched_acceptance

__all__ = ["assert_lossless", "assert_acceptance", "verifier_fn", "ACCEPTANCE_SHARE"]

#: Share of ``false_alarm`` that :func:`assert_acceptance` spends on the acceptance test.
ACCEPTANCE_SHARE = 0.5
#: Draft law each declared rule runs on when ``drafts`` is not given.
_DEFAULT_DRAFTS = {"greedy": "greedy"}


def _check_false_alarm(false_alarm: Any) -> float:
    if isinstance(false_alarm, bool) or not isinstance(false_alarm, (int, float)) or not 0 < false_alarm < 1:
        raise InputError(f"false_alarm: must lie in (0, 1), got {false_alarm!r}")
    return float(false_alarm)


def assert_lossless(
    fn: Callable[..., Any],
    p: Any,
    q: Any,
    k: int = 2,
    drafts: Any = "iid",
    rng: Any = 0,
    *,
    samples: int = 100_000,
    false_alarm: float = FALSE_ALARM,
) -> AuditReport:
    """Assert that the verifier ``fn`` outputs tokens with law exactly p.

    Parameters
    ----------
    fn : callable
        ``fn(P, Q, X, rng) -> Y`` as in :func:`optaccept.audit.audit_verifier`: ``P``, ``Q``
        float (B, n), ``X`` int (B, k) the drafted tokens, ``rng`` a numpy Generator; returns
        the emitted tokens, int (B,).
    p, q : array_like, shape (n,)
        Target and draft distributions.
    k : int
        Number of drafts, drawn from ``drafts`` ("iid", "swor", "greedy" or a draft-law object).
    rng : numpy.random.Generator or int
        All randomness (a fixed seed makes the assertion repeatable).
    samples : int
        Steps to run (default 100,000: 0.22 s beyond ``fn`` at n = 1,000, k = 1, on a 2-core CPU).
    false_alarm : float
        Probability, over the seed, that a lossless ``fn`` fails (default 1e-6).

    Returns
    -------
    AuditReport
        The audit's report, when the assertion holds.

    Raises
    ------
    AssertionError
        With the report, when the test finds the output law differs from p.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> rep = testing.assert_lossless(testing.verifier_fn(verifiers.RRS()), p, q, k=2, samples=2000)
    >>> rep.lossless, round(rep.alpha_star, 4)
    (True, 0.9075)
    """
    false_alarm = _check_false_alarm(false_alarm)
    rep = audit_verifier(
        fn,
        p,
        q,
        k=k,
        drafts=drafts,
        samples=check_size(samples, "samples"),
        rng=check_rng(rng),
        false_alarm=false_alarm,
    )
    if not rep.lossless:
        raise AssertionError(f"fn is not lossless: its outputs do not have the law p\n{rep}")
    return rep


def _binomial_two_sided(count: int, trials: int, prob: float) -> float:
    """2·min(P(C ≤ count), P(C ≥ count)) for C ~ Binomial(trials, prob), capped at 1."""
    from scipy.stats import binom

    lo = float(binom.cdf(count, trials, prob))
    hi = float(binom.sf(count - 1, trials, prob))
    return min(1.0, 2.0 * min(lo, hi))


def assert_acceptance(
    fn: Callable[..., Any],
    p: Any,
    q: Any,
    k: int = 2,
    declared: str = "rrs",
    rng: Any = 0,
    *,
    drafts: Any = None,
    samples: int = 100_000,
    false_alarm: float = FALSE_ALARM,
) -> AuditReport:
    """Assert that ``fn`` is lossless **and** accepts exactly as often as the rule it declares.

    Parameters
    ----------
    fn, p, q, k, rng, samples :
        As in :func:`assert_lossless`.
    declared : str
        The rule ``fn`` implements, one of the audit's declared rules (``"sd"``, ``"rrs"``,
        ``"kseq"``, ``"nss"``, ``"target_only"``, ...: ``optaccept.audit._core.DECLARED``); its
        exact acceptance P(Y ∈ set(X)) is the reference.
    drafts : str or DraftLaw, optional
        The draft law (default: "greedy" for ``declared="greedy"``, "iid" otherwise).
    false_alarm : float
        Probability, over the seed, that a correct implementation fails (default 1e-6): half
        for the losslessness test, half for the exact binomial test of the acceptance count.

    Returns
    -------
    AuditReport
        The audit's report, with the binomial test's ``acceptance_p_value`` and
        ``acceptance_false_alarm`` in ``details``.

    Raises
    ------
    AssertionError
        With the report: not lossless, or an acceptance count the declared rule gives with
        probability below the test's share of ``false_alarm``.
    InputError
        If ``declared`` is not a declared rule, or an input is refused by the audit.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> fn = testing.verifier_fn(verifiers.RRS())
    >>> rep = testing.assert_acceptance(fn, p, q, k=2, declared="rrs", samples=2000)
    >>> round(rep.expected, 4), abs(rep.acceptance - rep.expected) < 5 * rep.std_err  # RRS: 0.824 exactly
    (0.824, True)
    """
    false_alarm = _check_false_alarm(false_alarm)
    check_choice("declared", declared, DECLARED)
    if drafts is None:
        drafts = _DEFAULT_DRAFTS.get(declared, "iid")
    share = ACCEPTANCE_SHARE * false_alarm
    rep = audit_verifier(
        fn,
        p,
        q,
        k=k,
        drafts=drafts,
        samples=check_size(samples, "samples"),
        rng=check_rng(rng),
        declared=declared,
        false_alarm=false_alarm - share,
    )
    if declared == "kseq":  # the audit counts Y ∈ set(X): K-SEQ's output notion
        pf, qf = as_distribution_pair(p, q)
        kk = int(getattr(drafts, "k", k))
        rep.expected = float(batched_acceptance(pf[None, :], qf[None, :], kk, "kseq-output")[0])
    if not rep.lossless:
        raise AssertionError(f"fn is not lossless: its outputs do not have the law p\n{rep}")
    count = int(round(rep.acceptance * rep.steps))
    tail = _binomial_two_sided(count, rep.steps, min(1.0, max(0.0, rep.expected)))
    rep.details["acceptance_p_value"] = tail
    rep.details["acceptance_false_alarm"] = share
    if tail <= share:
        raise AssertionError(
            f"fn accepts {count:,} of {rep.steps:,} steps ({rep.acceptance:.5f}); {declared!r} accepts with "
            f"probability exactly {rep.expected:.5f}: two-sided binomial p-value {tail:.2e} ≤ {share:.1e}\n{rep}"
        )
    return rep


def verifier_fn(verifier: Any) -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.random.Generator], np.ndarray]:
    """A verifier of :mod:`optaccept.verifiers` (e.g. ``verifiers.RRS()``) as the engine-style
    callable ``fn(P, Q, X, rng) -> Y`` the assertions take (rows of P and Q must be equal, as the
    audit makes them).

    Parameters
    ----------
    verifier : Verifier
        A verifier of :mod:`optaccept.verifiers`.

    Returns
    -------
    callable
        ``fn(P, Q, X, rng) -> Y``: P and Q of shape (rows, n) with equal rows, X of shape
        (rows, k), Y of shape (rows,); ``fn`` raises :class:`InputError` on unequal rows.

    Raises
    ------
    InputError
        If ``verifier`` is not a verifier of :mod:`optaccept.verifiers`.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, testing, verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> fn = testing.verifier_fn(verifiers.SD())
    >>> P, Q = np.tile(p, (3, 1)), np.tile(q, (3, 1))
    >>> X = np.array([[0], [2], [4]])  # one draft per row
    >>> fn(P, Q, X, np.random.default_rng(0)).shape
    (3,)
    """

    if not isinstance(verifier, Verifier):
        raise InputError(f"verifier: must be an optaccept.verifiers verifier, got {type(verifier).__name__}")

    def fn(P: np.ndarray, Q: np.ndarray, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p, q = np.asarray(P[0], dtype=np.float64), np.asarray(Q[0], dtype=np.float64)
        if not (np.array_equal(P, np.broadcast_to(p, P.shape)) and np.array_equal(Q, np.broadcast_to(q, Q.shape))):
            raise InputError("P, Q: verifier_fn needs every row equal (one p and one q per call)")
        X = np.asarray(X, dtype=np.int64)
        k = X.shape[1]
        y, _ = verifier._simulate(p, q, k, verifier.drafts(q, k), X, rng)
        return y

    fn.__name__ = f"verifier_fn({verifier!r})"
    return fn
