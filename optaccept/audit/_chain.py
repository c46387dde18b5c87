r"""Audit a multi-token verifier: one chain of γ drafted tokens per call (docs/audit.md §8).

``fn(P, Q, X, rng) -> (m, Y)`` verifies a batch of drafted chains: ``X`` int (B, γ) the
drafted tokens, ``Q`` float (B, γ, n) the draft's laws they were drawn from (row i after
X[:i]), ``P`` float (B, γ + 1, n) the target's laws after X[:i] for i = 0 … γ (the last one
for the bonus token); it returns the number m of accepted drafted tokens (B,) and the
emitted token Y (B,) (correction, or bonus when m = γ) — the interface of Hugging Face's
``_speculative_sampling`` and of engines' chain verifiers.

**Losslessness.**  Each step's text is X[:m], then Y, then the target's own continuation up to
γ + 1 tokens (drawn by the audit).  The verifier is lossless exactly when these γ + 1 tokens
have the target's joint law, i.e. when each token has the law p(· | its prefix) given the
prefix.  The randomised probability integral transforms of the γ + 1 tokens, each against
p(· | its prefix) (Rosenblatt's transform), are then independent Uniform(0, 1): the test of
:mod:`optaccept.audit._core` runs on them, pooled over steps and positions, along the same
token orders, at the same stated false-alarm rate.

**Accepted tokens.**  The mean of m is compared with the exact expected accepted tokens of the
declared rule ("token": speculative sampling along the chain, "block": Sun et al.'s block
verification) from :mod:`optaccept.tree`, and with the optimum for one chain (block
verification is optimal: Sun et al., arXiv 2403.10444, checked against the sequence LP in
docs/trees.md §7).
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
from .._lib.sampling import draw
from .._lib.statistics import ks_threshold, ks_uniform, mean_std_err, paired_difference, within
from .._lib.validation import check_choice, check_rng, check_size, one_renormalization_warning
from ..tree import TreeDraftLaw, accepted_tokens
from ..tree._models import as_model
from ._formats import chain_outputs, flashinfer_chain_outputs
from ._logs import SPARSE_KEYS, SparseChainLog, _as_arrays, _chain_values, _from_rows
from ._pit import FALSE_ALARM, ORDERS, pit_values
from ._verdict import MARGIN, Verdict, Verdicted, decide, mean_check

__all__ = ["ChainAuditReport", "audit_chain", "audit_chain_log"]

#: Chain rules with an exact expected accepted length (optaccept.tree verifiers).  "exact_match"
#: (accept a drafted token iff it equals the target's own sample) accepts x with probability
#: p(x) and otherwise emits p restricted to the other tokens: the law of "target_only" on a
#: chain, whose value it takes.
DECLARED_CHAIN = ("token", "block", "exact_match", "target_only")
#: The rules whose E[m | chain] a chain log gives exactly from its drafted tokens' probabilities.
DECLARED_LOG = ("token", "target_only", "block")


@dataclass
class ChainAuditReport(Verdicted, Report):
    """What a chain (or tree) audit found: ``verdict`` — "lossless" (every tested law of the
    generated text within the margin, confidence 1 − ``false_alarm``), "not lossless" or
    "inconclusive" — from the audits' one verdict function (``decision`` holds every check:
    the pooled transforms and those of each depth, by order, the optimum and the declared
    rule); ``lossless`` is False exactly when the verdict is "not lossless"; the mean accepted
    drafted tokens with its standard error, the exact value of the declared rule
    (``expected``; ``not_declared`` when the measured mean departs from it), the optimum for
    one chain (``optimum``), and the empirical law of m (``accepted_law[i]`` = fraction of
    steps with m = i).  In the results' vocabulary ``value`` is ``accepted`` ± ``std_err``,
    ``method`` ``"sampled"``, ``ok`` no alarm; ``to_pandas()`` and ``to_latex()`` give its
    numbers as one row.

    Attributes
    ----------
    lossless : bool
        False exactly when the verdict is "not lossless".
    accepted : float
        Mean accepted drafted tokens per call.
    std_err : float
        Its standard error.
    expected : float or None
        Exact (or estimated) value of the declared rule.
    optimum : float
        Expected accepted tokens of the best verifier of one chain (or an upper bound).
    length : int
        Drafted tokens per call (the largest, for a log).
    steps : int
        Number of calls audited.
    false_alarm : float
        The losslessness test's false-alarm rate.
    ks_distance : dict of str to float
        Kolmogorov distance of the transforms from Uniform(0, 1): pooled by token order
        (keys "p", "q", "p/q", "id"), and of each depth's token ("depth 1, p", …).
    ks_threshold : float
        The distance above which the pooled test flags a departure (each check's own in
        ``decision``).
    accepted_law : list of float
        Fraction of calls with m = i, i = 0..γ.
    declared : str or None
        The rule the verifier claims.
    details : dict
        How ``expected`` and ``optimum`` were found, counts of transforms, and for a log the
        check that the drafts follow Q.
    decision : Verdict
        The verdict and every check.

    Examples
    --------
    >>> from optaccept import audit
    >>> rep = audit.ChainAuditReport(
    ...     lossless=True, accepted=1.2, std_err=0.02, expected=1.21, optimum=1.5, length=3, steps=1000,
    ...     false_alarm=1e-6, ks_distance={"p": 0.01, "q": 0.02}, ks_threshold=0.05,
    ...     accepted_law=[0.3, 0.3, 0.3, 0.1], declared="token")
    >>> round(rep.gap, 4), round(rep.expected_z, 4), rep.detectable, rep.above_optimum, rep.ok
    (0.3, -0.5, 0.1, False, True)
    >>> for line in str(rep).splitlines():
    ...     if "declared rule" in line:
    ...         print(line.strip())
    declared rule check     consistent: z = -0.50 vs ±5.16, 1,000 calls
    declared rule           token: 1.2100 (exact; z = -0.50)
    """

    lossless: bool
    accepted: float
    std_err: float
    expected: float | None
    optimum: float
    length: int
    steps: int
    false_alarm: float
    ks_distance: dict[str, float]
    ks_threshold: float
    accepted_law: list[float]
    declared: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    decision: Verdict | None = field(default=None, repr=False)

    #: the value is a sample mean
    method = "sampled"
    _unit = "calls"

    @property
    def value(self) -> float:
        """``accepted``, the results' name for it."""
        return self.accepted

    @property
    def _audited(self) -> str:
        """``"tree"`` for :func:`optaccept.audit.audit_tree`'s report (its ``details`` hold the
        tree's ``"shape"``), ``"chain"`` otherwise: the one rule for the title and caption."""
        return "tree" if "shape" in self.details else "chain"

    @property
    def _title(self) -> str:  # type: ignore[override]
        return "Tree audit report" if self._audited == "tree" else "Chain audit report"

    @property
    def _caption(self) -> str:  # type: ignore[override]
        return f"Audit of a {self._audited} verifier: the measured accepted tokens and the test of its output law."

    @property
    def gap(self) -> float:
        """Optimum − measured accepted tokens: what the best verifier of one chain adds."""
        return self.optimum - self.accepted

    @property
    def detectable(self) -> float:
        """The resolution of this run: a departure whose transforms sit at Kolmogorov distance
        ≥ this value along a tested order (hence a total variation at least this large) is
        flagged with probability ≥ 1 − ``false_alarm``."""
        return 2.0 * self.ks_threshold

    def _rows(self) -> list[tuple[str, str]]:
        how = self.details.get("expected_method", "exact")
        opt_how = self.details.get("optimum_method", "exact")
        bound = opt_how.startswith("upper bound")
        opt_label = "optimum, upper bound" if bound else "optimum"
        opt = f"{self.optimum:.4f} ({opt_how}); "
        opt += f"gap ≤ {self.gap:.4f}" if bound else f"gap = {self.gap:.4f}"
        if self.above_optimum:
            opt += "; measured ABOVE the best lossless value: the verifier is not lossless"
        z = self.expected_z
        return self.decision.rows() + [
            (
                "accepted tokens / call",
                f"{self.accepted:.4f} ± {self.std_err:.4f} (measured; "
                f"{'depth' if self._audited == 'tree' else 'γ'} = {self.length}, {self.steps:,} calls)",
            ),
            (
                "declared rule",
                "—"
                if self.declared is None
                else f"{self.declared}: {self.expected:.4f} ({how}" + ("" if z is None else f"; z = {z:+.2f}") + ")",
            ),
            *(
                [("token by token", f"{self.details['token_value']:.4f} (exact given the logged chains)")]
                if "token_value" in self.details
                else []
            ),
            (opt_label, opt),
            ("law of m", ", ".join(f"{i}: {v:.3f}" for i, v in enumerate(self.accepted_law))),
        ]

    def to_json(self) -> str:
        """The report as JSON, with the derived quantities.

        Returns
        -------
        str
            The fields, plus ``gap``, ``detectable``, ``above_optimum``, ``verdict``,
            ``not_declared`` and ``decision`` (every check with its details).
        """
        d = asdict(self)
        d["gap"] = self.gap
        d["detectable"] = self.detectable
        d["above_optimum"] = self.above_optimum
        d["verdict"] = self.verdict
        d["not_declared"] = self.not_declared
        d["decision"] = self.decision.to_dict()
        return json.dumps(d, indent=2, default=float)


def depth_distances(us: dict[str, list[np.ndarray]], width: int) -> tuple[dict[str, float], dict[str, int]]:
    """Kolmogorov distances of the text's transforms (``us[order]``: arrays of ``width``
    transforms per call, call after call) pooled by order ("p", …) and at each depth of the text
    ("depth 1, p", …: the i-th token of every call, independent Uniform(0, 1) under
    losslessness), so that a departure at one depth is not diluted by the others; with the
    values each read."""
    dist: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for o, parts in us.items():
        U = np.concatenate(parts)
        dist[o], sizes[o] = ks_uniform(U), int(U.size)
    if width > 1:
        for o, parts in us.items():
            U = np.concatenate(parts).reshape(-1, width)
            for i in range(width):
                dist[f"depth {i + 1}, {o}"], sizes[f"depth {i + 1}, {o}"] = ks_uniform(U[:, i]), int(U.shape[0])
    return dist, sizes


def chain_decision(
    dist: dict[str, float],
    sizes: dict[str, int],
    false_alarm: float,
    m: np.ndarray,
    length: int,
    expected: float | None,
    optimum: float | None,
    *,
    margin: float = MARGIN,
    exact: bool = True,
    unit: str = "calls",
    reference_se: tuple[float, float] = (0.0, 0.0),
) -> Verdict:
    """The verdict of a chain or tree audit: the law checks, the accepted tokens ``m`` (per
    call, in [0, ``length``]) against the optimum and the declared rule's value; "no power"
    when every call accepted all its drafts (no rejection ran) or none accepted any.
    ``reference_se``: the standard errors of estimated (not exact) declared and optimum values,
    combined with the measured mean's."""
    mean, se = mean_std_err(m)
    no_power = []
    if m.size and np.all(m >= length):
        no_power.append(
            f"every {unit[:-1]} accepted all {length} drafted tokens: the rejection path was never exercised"
        )
    elif m.size and np.all(m <= 0) and (optimum or 0.0) > 0:
        no_power.append(f"no {unit[:-1]} accepted a drafted token: the acceptance path was never exercised")
    bounds = (0.0, float(length))
    return decide(
        dict((k, (d, sizes[k])) for k, d in dist.items()),
        false_alarm,
        margin=margin,
        declared=None
        if expected is None
        else mean_check(mean, math.hypot(se, reference_se[0]), expected, m.size, bounds if exact else None),
        optimum=None
        if optimum is None
        else mean_check(mean, math.hypot(se, reference_se[1]), (0.0, optimum), m.size, bounds if exact else None),
        samples=int(m.size),
        unit=unit,
        no_power=no_power,
    )


def _no_power_log(m: np.ndarray, gammas: np.ndarray) -> list[str]:
    """Why a chain log could not decide: nothing drafted, nothing accepted, or nothing rejected."""
    if not np.any(gammas > 0):
        return ["nothing was drafted"]
    if np.all(m >= gammas):
        return ["every call accepted all its drafted tokens: the rejection path was never exercised"]
    if np.all(m <= 0):
        return ["no call accepted a drafted token: the acceptance path was never exercised"]
    return []


def _chain_result(out: Any, B: int, gamma: int) -> tuple[np.ndarray, np.ndarray]:
    """(m, Y) from what a chain verifier returns: (m, Y); a padded output [B, γ + 1] with −1
    after the emitted tokens (vLLM); or FlashInfer's (output_token_ids, accepted, emitted)."""

    if isinstance(out, tuple) and len(out) == 3 and np.ndim(out[0]) == 2:
        m, Y = flashinfer_chain_outputs(np.asarray(out[0]), np.asarray(out[2]), np.asarray(out[1]))
    elif not isinstance(out, tuple) and np.ndim(out) == 2:
        if np.shape(out) != (B, gamma + 1):
            raise InputError(f"fn: a padded output must have shape ({B}, {gamma + 1}), got {np.shape(out)}")
        m, Y = chain_outputs(np.asarray(out))
    elif isinstance(out, tuple) and len(out) == 2:
        m = np.asarray(out[0], dtype=np.int64).reshape(-1)
        Y = np.asarray(out[1], dtype=np.int64).reshape(-1)
    else:
        raise InputError(
            "fn: must return (m, Y), a padded output [B, γ + 1] with −1 padding, "
            "or FlashInfer's (output_token_ids, accepted, emitted)"
        )
    return m, Y


@one_renormalization_warning
def audit_chain(
    fn: Callable[..., Any],
    target: Any,
    draft: Any,
    length: int,
    *,
    samples: int = 20_000,
    rng: np.random.Generator | None = None,
    declared: str | None = None,
    false_alarm: float = FALSE_ALARM,
    batch: int = 2_000,
    samples_for_expected: int | None = None,
) -> ChainAuditReport:
    """Audit a chain verifier ``fn(P, Q, X, rng) -> (m, Y)`` (module docstring) on ``samples``
    calls, chains of ``length`` tokens drafted from ``draft``.  ``fn`` may instead return the
    engines' padded output [B, γ + 1] (−1 after the emitted tokens, vLLM's
    ``rejection_sample``) or FlashInfer's triple (output_token_ids, accepted, emitted): read by
    :func:`optaccept.audit.chain_outputs` / :func:`optaccept.audit.flashinfer_chain_outputs`.

    ``target``, ``draft``: sequence models (``prefix -> next-token law``; see
    :func:`optaccept.tree.accepted_tokens`).  ``declared``: "token" or "block" — its exact
    expected accepted tokens are reported (by enumeration of the chains, or from
    ``samples_for_expected`` Rao-Blackwellised chains when the vocabulary is large).

    Parameters
    ----------
    fn : callable
        The chain verifier under audit.
    target, draft : model
        Sequence models, ``prefix -> next-token law``.
    length : int
        Drafted tokens per call, at least 1.
    samples : int
        Calls of the verifier, at least 1.
    rng : numpy.random.Generator or int
        All randomness: drafts, continuations, ``fn``'s own and the transforms'.
    declared : {"token", "block", "exact_match", "target_only"}, optional
        The rule ``fn`` claims.
    false_alarm : float
        The rate at which a correct verifier is declared not lossless.
    batch : int
        Calls per batch.
    samples_for_expected : int, optional
        Estimate the declared rule's value and the optimum from this many sampled chains
        instead of enumerating them.

    Returns
    -------
    ChainAuditReport
        The verdict, the accepted tokens with their standard error, the declared rule's
        value and the optimum for one chain.

    Raises
    ------
    InputError
        If ``length`` or ``samples`` is below 1, ``declared`` is unknown, or ``fn`` returns
        values out of range.
    MethodError
        If the exact values need more chains than the enumeration allows (before any call).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, tree
    >>> target, draft = tree.synthetic_pair(4, rng=0)
    >>> def fn(P, Q, X, rng):  # exact match: the target samples each token, drafts kept while equal
    ...     u = rng.random(P.shape[:2] + (1,))
    ...     T = np.minimum((P.cumsum(-1) < u).sum(-1), P.shape[-1] - 1)  # (B, γ + 1) target tokens
    ...     m = np.cumprod(T[:, :-1] == X, axis=1).sum(1)
    ...     return m, T[np.arange(len(m)), m]
    >>> rep = audit.audit_chain(fn, target, draft, 2, samples=2000, rng=0, declared="exact_match")
    >>> rep.lossless, rep.length, rep.steps
    (True, 2, 2000)
    >>> round(rep.expected, 4), round(rep.optimum, 4)  # exact match against block verification
    (0.4613, 1.3925)
    >>> abs(rep.expected_z) < 3  # the measured accepted tokens agree with the declared rule
    True
    """

    rng = check_rng(rng)
    length = check_size(length, "length")
    samples = check_size(samples, "samples")
    if length < 1 or samples < 1:
        raise InputError("length, samples: must be at least 1")
    check_choice("declared", declared, DECLARED_CHAIN, allow_none=True)
    # the exact values first: a refusal (MethodError: too many chains to enumerate) comes
    # before any call of fn
    kw: dict[str, Any] = {}
    if samples_for_expected is not None:
        kw = dict(samples=samples_for_expected, rng=np.random.default_rng(0))
    optimum_res = accepted_tokens(target, draft, TreeDraftLaw(length=length), verifier="block", **kw)
    optimum = float(optimum_res.value)
    expected = None
    how = "exact"
    exp_se = 0.0
    if declared is not None:
        rule = "target_only" if declared == "exact_match" else declared
        res = accepted_tokens(target, draft, TreeDraftLaw(length=length), verifier=rule, **kw)
        expected = float(res.value)
        exp_se = float(res.std_err or 0.0) if samples_for_expected is not None else 0.0
        if samples_for_expected is not None:
            how = f"estimate ± {res.std_err or 0.0:.4f} from {samples_for_expected:,} sampled chains"
    opt_how = "block verification"
    if samples_for_expected is not None:
        opt_how += f", estimate ± {optimum_res.std_err or 0.0:.4f} from {samples_for_expected:,} sampled chains"
    Pm, Qm = as_model(target, "target").cached(), as_model(draft, "draft").cached()
    n = Pm(()).size
    us: dict[str, list[np.ndarray]] = {o: [] for o in ORDERS}
    ms = []
    for lo in range(0, samples, batch):
        B = min(batch, samples - lo)
        X = np.empty((B, length), dtype=np.int64)
        P = np.empty((B, length + 1, n))
        Q = np.empty((B, length, n))
        for b in range(B):
            u: tuple[int, ...] = ()
            for i in range(length):
                q = np.asarray(Qm(u), dtype=np.float64)
                Q[b, i] = q
                P[b, i] = np.asarray(Pm(u), dtype=np.float64)
                u = u + (draw(q, rng),)
                X[b, i] = u[-1]
            P[b, length] = np.asarray(Pm(u), dtype=np.float64)
        out = fn(P.copy(), Q.copy(), X.copy(), rng)
        m, Y = _chain_result(out, B, length)
        if m.shape != (B,) or Y.shape != (B,) or m.min() < 0 or m.max() > length or Y.min() < 0 or Y.max() >= n:
            raise InputError(f"fn: must return m in [0, {length}] and Y in [0, {n}), {B} of each")
        # the texts: X[:m], Y, then the target's continuation to gamma + 1 tokens
        rowsP = np.empty((B * (length + 1), n))
        rowsQ = np.empty((B * (length + 1), n))
        toks = np.empty(B * (length + 1), dtype=np.int64)
        for b in range(B):
            text = tuple(int(x) for x in X[b, : m[b]]) + (int(Y[b]),)
            while len(text) < length + 1:
                text = text + (draw(np.asarray(Pm(text), dtype=np.float64), rng),)
            for i in range(length + 1):
                r = b * (length + 1) + i
                rowsP[r] = Pm(text[:i])
                rowsQ[r] = Qm(text[:i]) if i < length else rowsP[r]
                toks[r] = text[i]
        for o in ORDERS:
            us[o].append(pit_values(rowsP, rowsQ, toks, o, rng))
        ms.append(m)
    m_all = np.concatenate(ms).astype(np.float64)
    N = sum(v.size for v in us["id"])
    law = np.bincount(m_all.astype(np.int64), minlength=length + 1) / m_all.size
    accepted, accepted_se = mean_std_err(m_all)
    dist, sizes = depth_distances(us, length + 1)
    ref_se = (float(exp_se or 0.0), float(optimum_res.std_err or 0.0) if samples_for_expected else 0.0)
    decision = chain_decision(
        dist,
        sizes,
        false_alarm,
        m_all,
        length,
        expected,
        optimum,
        margin=MARGIN,
        exact=samples_for_expected is None,
        reference_se=ref_se,
    )
    return ChainAuditReport(
        lossless=decision.lossless,
        accepted=accepted,
        std_err=accepted_se,
        expected=expected,
        optimum=optimum,
        length=length,
        steps=int(m_all.size),
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        accepted_law=[float(v) for v in law],
        declared=declared,
        decision=decision,
        details={
            "transforms": N,
            "expected_method": how,
            "optimum_method": opt_how,
        },
    )


def audit_chain_log(
    P: list[Any] | None = None,
    Q: list[Any] | None = None,
    X: list[Any] | None = None,
    m: Any = None,
    Y: Any = None,
    *,
    log: Any = None,
    declared: str = "token",
    rng: np.random.Generator | int | None = 0,
    false_alarm: float = FALSE_ALARM,
) -> ChainAuditReport:
    """Audit logged calls of a chain verifier in a decoding loop (e.g.
    :func:`optaccept.llm.log_assisted_generation`): call c drafted ``X[c]`` (γ_c tokens) from
    the laws ``Q[c]`` (γ_c, n), verified against ``P[c]`` (γ_c + 1, n), accepted ``m[c]`` and
    emitted ``Y[c]``; the calls follow each other in the generated text.  Or the same calls as
    a sparse log (``log=``, :class:`~optaccept.audit.SparseChainLog`): the audit reads nothing else of the rows.

    * The generated text (X[c][:m_c] then Y[c], call after call) must follow P: the
      transforms of all its tokens against their rows are independent Uniform(0, 1) under
      losslessness (no token is left out, so no selection enters).
    * The drafts must follow Q (the law the sampler divided by): transforms of every drafted
      token against its Q row, reported as ``details["drafts_follow_q"]`` with its own KS
      distances at the same rate.
    * ``expected``: the mean over calls of E[m | chain] for the ``declared`` rule, from the
      logged rows — token by token (speculative sampling, the default),
      Σ_i Π_{j≤i} min(1, p_j(x_j)/q_j(x_j)); ``"target_only"``, Σ_i Π_{j≤i} p_j(x_j); or
      ``"block"`` (block verification) — each call's m is paired with its own chain's value
      (the declared-rule check); ``optimum``: the mean of block verification's E[τ | chain]
      (optimal for one chain), from the same rows.  For a rule other than token by token,
      ``details["token_value"]`` gives the token-by-token value beside the declared rule's
      and the optimum.

    The full rows are first reduced to the sparse form (:meth:`~optaccept.audit.SparseChainLog.from_rows`, a
    few calls at a time) and the audit runs on it: a sparse log gives the same report, the
    transforms' masses equal to float rounding (tests/audit/test_sparse_logs.py).

    Parameters
    ----------
    P : list of array_like, shapes (γ_c + 1, n)
        Target rows of each call.
    Q : list of array_like, shapes (γ_c, n)
        Draft rows of each call.
    X : list of array_like of int, lengths γ_c
        Drafted tokens of each call.
    m : array_like of int, shape (C,)
        Accepted drafted tokens of each call.
    Y : array_like of int, shape (C,)
        The token emitted after the accepted ones.
    log : SparseChainLog, mapping of its keys, or path to their ``.npz``, optional
        The calls as a sparse log, instead of ``P``, ``Q``, ``X``, ``m``, ``Y``; it needs every
        key but ``request`` (a missing one is refused, naming the check that needs it).
    declared : {"token", "target_only", "block"}
        The rule the loop claims to run (default: token by token, speculative sampling).
    rng : numpy.random.Generator, int or None
        Source of the tie-breaking uniforms (default: seed 0, a reproducible report;
        None: fresh entropy).
    false_alarm : float
        The rate at which a correct verifier is declared not lossless.

    Returns
    -------
    ChainAuditReport
        The verdict on the text, the accepted tokens, the expected value under the declared
        rule and block verification's optimum, given the logged chains.

    Raises
    ------
    InputError
        If the entries are not one per call, the log is empty, a call's shapes or m do not fit
        its γ, both or neither of ``log`` and the rows are given, ``log`` lacks a key, or
        ``declared`` is not one of the rules above.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> rng = np.random.default_rng(1)  # not the seed of the audit's own uniforms (rng=0)
    >>> p = np.array([.4, .3, .2, .1]); q = np.array([.25, .25, .25, .25])  # the same rows at every token
    >>> C, g = 1000, 2  # calls, drafted tokens per call
    >>> X = rng.choice(4, size=(C, g), p=q)
    >>> keep = rng.random((C, g)) < np.minimum(1, p[X] / q[X])
    >>> m = np.cumprod(keep, axis=1).sum(1)  # speculative sampling along the chain
    >>> residual = np.array([.75, .25, 0, 0])  # (p - q)+ / TV(p, q)
    >>> Y = np.where(m < g, rng.choice(4, C, p=residual), rng.choice(4, C, p=p))
    >>> P, Q = np.tile(p, (C, g + 1, 1)), np.tile(q, (C, g, 1))
    >>> rep = audit.audit_chain_log(P, Q, X, m, Y)
    >>> rep.lossless, rep.details["drafts_follow_q"], rep.steps
    (True, True, 1000)
    >>> round(rep.expected, 4), round(rep.optimum, 4)  # speculative sampling, block verification
    (1.4415, 1.4831)
    >>> abs(rep.expected_z) < 3
    True
    >>> sparse = audit.SparseChainLog.from_rows(P, Q, X, m, Y)  # what an engine would store
    >>> audit.audit_chain_log(log=sparse).ks_distance == rep.ks_distance
    True
    """

    rng = check_rng(rng)
    check_choice("declared", declared, DECLARED_LOG)
    rows = (P, Q, X, m, Y)
    if log is not None:
        if any(v is not None for v in rows):
            raise InputError("log: give either log or P, Q, X, m, Y, not both")
        sp = _sparse_log(log)
    else:
        if any(v is None for v in rows):
            raise InputError("P, Q, X, m, Y: all five are needed (or a sparse log as log=)")
        mm = np.asarray(m).reshape(-1)
        if not (len(P) == len(Q) == len(X) == mm.size == np.size(Y)) or mm.size == 0:
            raise InputError("P, Q, X, m, Y: one entry per call, at least one call")
        sp = _from_rows(P, Q, X, m, Y, None, text=True, block=True)
    return _audit_sparse(sp, rng, false_alarm, declared)


def _sparse_log(log: Any) -> SparseChainLog:
    """A sparse log from what ``audit_chain_log(log=...)`` accepts, with every key it reads."""
    if isinstance(log, SparseChainLog):
        sp = log
    else:
        arrays = _as_arrays(log, "log")
        if "px" not in arrays:
            raise InputError(f"log: a sparse chain log (keys {', '.join(SPARSE_KEYS)}), got keys {sorted(arrays)}")
        sp = SparseChainLog._from_arrays(arrays, "log")
    needs = {
        "qx": "the expected accepted tokens need",
        "block_mass": "the optimum (block verification) needs",
        "m": "the accepted tokens need",
        "Y": "the losslessness test needs",
        "py": "the losslessness test needs",
        "text_below": "the losslessness test needs",
        "draft_below": "the check that the drafts follow q needs",
    }
    for key, what in needs.items():
        if getattr(sp, key) is None:
            raise InputError(f"log: no {key}, which {what} (SparseChainLog.from_rows stores it given m and Y)")
    if sp.X.shape[0] == 0:
        raise InputError("log: at least one call")
    return sp


def _audit_sparse(
    sp: SparseChainLog, rng: np.random.Generator, false_alarm: float, declared: str = "token"
) -> ChainAuditReport:
    """The chain audit of a sparse log: the text's and the drafts' transforms from their masses."""
    X, m = sp.X, sp.m
    C, g = X.shape
    valid = X >= 0
    gammas = valid.sum(axis=1)
    if ((m < 0) | (m > gammas)).any():
        c = int(np.flatnonzero((m < 0) | (m > gammas))[0])
        raise InputError(f"call {c}: 0 ≤ m ≤ γ = {gammas[c]}, got m = {m[c]}")
    pos = np.arange(g + 1)[None, :]
    text = pos <= m[:, None]  # X[:m], then Y: row-major, call after call
    pxp = np.concatenate([sp.px, np.full((C, 1), np.nan)], axis=1)
    own = np.where(pos < m[:, None], pxp, sp.py[:, None])[text]
    below = sp.text_below[text]
    N, ND = own.size, int(valid.sum())
    eps_d = ks_threshold(ND, false_alarm, len(ORDERS))
    if not (np.isfinite(own).all() and np.isfinite(below).all()):
        raise InputError("log: py, px and text_below must be finite at every token of the text")
    dist = {o: ks_uniform(np.clip(below[:, j] + rng.random(N) * own, 0.0, 1.0)) for j, o in enumerate(ORDERS)}
    dq, dbelow = sp.qx[valid], sp.draft_below[valid]
    dist_d = {o: ks_uniform(np.clip(dbelow[:, j] + rng.random(ND) * dq, 0.0, 1.0)) for j, o in enumerate(ORDERS)}
    sd_exp = _chain_values(sp, declared, "log", strict=False)
    block_opt = _chain_values(sp, "block", "log", strict=False)
    mf = m.astype(np.float64)
    law = np.bincount(m, minlength=int(gammas.max()) + 1) / C
    length_max = int(gammas.max())
    accepted, accepted_se = mean_std_err(mf)
    # paired with each call's own chain: m − E[m | chain] of the declared rule, and of the optimum
    d_dec, se_dec = paired_difference(mf, sd_exp)
    d_opt, se_opt = paired_difference(mf, block_opt)
    decision = decide(
        {o: (d, N) for o, d in dist.items()},
        false_alarm,
        declared=mean_check(d_dec, se_dec, 0.0, C, note="paired: m − E[m | the call's chain]"),
        optimum=mean_check(d_opt, se_opt, (-float(length_max), 0.0), C, note="paired with each call's chain"),
        samples=C,
        unit="calls",
        no_power=_no_power_log(m, gammas),
    )
    return ChainAuditReport(
        lossless=decision.lossless,
        accepted=accepted,
        std_err=accepted_se,
        expected=float(sd_exp.mean()),
        optimum=float(block_opt.mean()),
        length=int(gammas.max()),
        steps=C,
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        accepted_law=[float(v) for v in law],
        declared=declared,
        decision=decision,
        details={
            "generated_tokens": N,
            "drafted_tokens": ND,
            "drafts_follow_q": within(dist_d, eps_d),
            "drafts_ks_distance": dist_d,
            "drafts_ks_threshold": eps_d,
            "gamma_per_call": gammas.tolist(),
            "expected_method": "exact given the logged chains",
            "optimum_method": "block verification, exact given the logged chains",
            **(
                {}
                if declared == "token"
                else {"token_value": float(_chain_values(sp, "token", "log", strict=False).mean())}
            ),
        },
    )
