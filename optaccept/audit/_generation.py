r"""Audit a whole decoding loop as it is: it drafts, verifies and samples for itself; the audit
sees only the text it generates (docs/audit.md §11).

**The test.**  Let t₁, t₂, … be the tokens a loop appends to a prompt, and p(· | prefix) the
target's law.  For a token order σ, the randomised probability integral transform

    U_i = F_σ(t_i⁻ | prompt, t_<i) + V_i · p(t_i | prompt, t_<i),   V_i ~ Uniform(0, 1),

is Uniform(0, 1) given everything before it when t_i ~ p(· | prompt, t_<i); so, when the loop
is lossless, U₁, U₂, … along one text are **independent** Uniform(0, 1) (Rosenblatt's
transform, Ann. Math. Statist. 23, 1952), and so are the texts of independent runs.  The audit
reads the first ``new_tokens`` tokens of each text; a text that stops earlier (end of text, a
length limit: a stopping rule that reads only the past) is padded with fresh uniforms, so
every text gives exactly ``new_tokens`` values and the count is fixed in advance — the
fixed-count bounds below hold for variable-length output.

Two families of tests run on these values, each along the token orders by p and by id (and
by q and p/q when the draft is known):
* **pooled law:** the Kolmogorov distance of all the U's from Uniform(0, 1);
* **dependence along the text:** for the pairs (U_i, U_{i+1}) with i even (one family) and i
  odd (another), and for the pairs (U_i, U_{i+ℓ}), ⌊i/ℓ⌋ even, at each lag ℓ = 2, …,
  ``max_lag``, W = ⌊b·U_i⌋/b + U_{i+ℓ}/b is exactly Uniform(0, 1) when U_i, U_{i+1} are
  independent uniforms, and the pairs of one family are disjoint, hence independent; the
  Kolmogorov distance of W from uniform is b⁻¹·max over the b bins of U_i of the distance of
  U_{i+ℓ}'s conditional law from uniform.  A loop that reuses its random numbers from step to
  step moves U_{i+1} with U_i even when each step's law looks right.

Each of the m tests rejects when its distance exceeds ε = √(ln(2m/δ)/(2N)) for its N values
(Dvoretzky–Kiefer–Wolfowitz with Massart's constant, exact for every N); by Bonferroni the
probability that a lossless loop is declared lossy is at most δ = ``false_alarm``.  A
departure whose distance along one tested statistic is at least 2ε is flagged with probability
at least 1 − δ: the report states that resolution.

**Tokens per call** (with ``draft`` and ``gamma``): ``generate`` also returns the number of
drafted tokens each verifier call accepted, m_c; the call emits m_c + 1 tokens.  The measured
mean of m_c + 1 is a ratio over texts (its standard error clusters the calls of one text).  The
declared rule's value and the best lossless rule's (block verification, optimal for one
drafted chain: Sun et al., arXiv 2403.10444, among rules that read the chain's probabilities;
over every lossless rule: Thomas & Pal, arXiv 2602.16961) are computed at each call's own
prefix from one chain the audit drafts there, with the verifier's coins summed out
(Rao–Blackwell): unbiased estimates of the mean over the calls made, reported with their
standard errors, never as exact values.  A loop whose calls emit more than accepted + 1 tokens
reports (accepted, emitted) per call: the calls' prefixes advance by the emitted tokens, the
tokens per call compared with the rules stay accepted + 1.

**Batches** (``GenerationOptions(batch=B)``): the texts, ``samples`` per prompt in order, are
dealt out B per call of ``generate``, each call with a fresh generator shared by its rows.  The
tests above need every text independent of the others given its prompt; for a batch that is
part of what lossless means (the rows' joint law is the product of the target's laws), and it
is tested: the rows of one call with the same prompt are paired (disjoint pairs), and the U's of
a pair at the same position give W as above, exactly uniform when the rows are independent
("rows/…" tests, in the Bonferroni split; rows of one prompt sharing their random numbers give
the most alike tokens, hence the pairing).  Rows that share their random numbers are flagged when the dependence reaches the
stated resolution.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Report
from .._lib.limits import show_progress
from .._lib.sampling import draw
from .._lib.statistics import ks_threshold, ks_uniform, ratio_mean
from .._lib.validation import check_choice, check_rng, check_size, one_renormalization_warning
from ..tree._draft import DraftTree
from ..tree._models import as_model
from ..tree._sampling import tree_value
from ._generation_args import ChainDrafting, GenerationOptions
from ._pit import FALSE_ALARM, pit_values
from ._torch_lm import torch_lm
from ._verdict import Verdict, Verdicted, decide, mean_check

__all__ = [
    "GenerationAuditReport",
    "ChainDrafting",
    "GenerationOptions",
    "audit_generation",
    "torch_lm",
    "serial_values",
]

#: Rules a chain loop may declare: their expected tokens per call are estimated at the calls' prefixes.
DECLARED_GENERATION = ("sd", "token", "block", "exact_match", "target_only")
#: Probabilities kept in the cache of laws read (about 128 MB of float64).
_CACHE_ENTRIES = 1 << 24


@dataclass
class GenerationAuditReport(Verdicted, Report):
    """What :func:`audit_generation` found.

    In the results' vocabulary ``value`` is ``tokens_per_call`` ± ``std_err``
    (``tokens_per_call_se`` is its old name; both None without a draft), ``method``
    ``"sampled"``, ``ok`` no alarm (lossless and the declared rule); ``to_pandas()`` and
    ``to_latex()`` give its numbers as one row.

    ``verdict`` ("lossless" within the margin, "not lossless", "inconclusive") comes from the
    audits' one verdict function (docs/audit.md §1b; ``decision`` holds every check): the joint
    test (pooled law and dependence along the text) and, with counts, the tokens per call
    against the best lossless rule's and the declared rule's, all at false-alarm rate
    ``false_alarm``; ``lossless`` is False exactly when the verdict is "not lossless";
    ``ks_distance`` / ``ks_threshold`` hold each test's
    Kolmogorov distance and rejection threshold, keyed ``"pooled/p"``, ``"lag1-even/id"``, ….
    With a draft: ``tokens_per_call`` ± ``std_err`` measured over ``calls`` verifier
    calls; ``expected`` ± ``expected_se`` the declared rule's estimated value at the same
    prefixes; ``optimum`` ± ``optimum_se`` the best lossless rule's (block verification).

    Attributes
    ----------
    lossless : bool
        False exactly when the verdict is "not lossless".
    false_alarm : float
        Its false-alarm rate.
    texts : int
        Number of texts generated.
    new_tokens : int
        Tokens read per text.
    transforms : int
        Number of transforms tested.
    padded : int
        Uniforms added after early stops.
    ks_distance, ks_threshold : dict of str to float
        Each test's Kolmogorov distance and rejection threshold.
    tokens_per_call, std_err : float or None
        Measured tokens per verifier call and its standard error (with a draft).
    calls : int
        Verifier calls counted.
    expected, expected_se : float or None
        The declared rule's estimated tokens per call and its standard error.
    optimum, optimum_se : float or None
        Block verification's estimated tokens per call and its standard error.
    declared : str or None
        The rule the loop claims.
    length : int or None
        Drafted tokens per call.
    details : dict
        Further facts of the run.
    decision : Verdict
        The verdict and every check.

    Examples
    --------
    >>> from optaccept import audit, tree
    >>> target = tree.synthetic_pair(6, rng=0)[0]
    >>> def generate(prompt, rng):  # a plain sampler: one token from the target at a time
    ...     text = list(prompt)
    ...     for _ in range(4):
    ...         text.append(int(rng.choice(6, p=target(tuple(text)))))
    ...     return text[len(prompt):]
    >>> prompts = [(1,), (2, 3)]
    >>> rep = audit.audit_generation(generate, target, prompts=prompts, samples=100, new_tokens=4, rng=0, progress=False)
    >>> type(rep).__name__, rep.lossless, rep.new_tokens, rep.padded
    ('GenerationAuditReport', True, 4, 0)
    >>> rep.tokens_per_call is None  # no draft: no counts
    True
    >>> sorted(rep.ks_distance)[:3]  # the pooled test and the dependence tests, along two orders
    ['lag1-even/id', 'lag1-even/p', 'lag1-odd/id']
    """

    _title = "Generation audit report"

    lossless: bool
    false_alarm: float
    texts: int
    new_tokens: int
    transforms: int
    padded: int
    ks_distance: dict[str, float]
    ks_threshold: dict[str, float]
    tokens_per_call: float | None = None
    std_err: float | None = None
    calls: int = 0
    expected: float | None = None
    expected_se: float | None = None
    optimum: float | None = None
    optimum_se: float | None = None
    declared: str | None = None
    length: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    decision: Verdict | None = field(default=None, repr=False)

    #: the value is a sample mean
    method = "sampled"
    _means = ("tokens_per_call", "std_err", "expected", "optimum")
    _unit = "calls"

    @property
    def value(self) -> float | None:
        """``tokens_per_call``, the results' name for it (None without a draft)."""
        return self.tokens_per_call

    _caption = "Audit of a decoding loop: the joint test of the text's law and the tokens per call."

    @property
    def detectable(self) -> float:
        """The resolution of this run: a departure at Kolmogorov distance ≥ this value along
        the pooled test (hence a total variation at least this large between the text's law
        and the target's) is flagged with probability ≥ 1 − ``false_alarm``."""
        return 2.0 * self.ks_threshold[min(self.ks_threshold, key=self.ks_threshold.get)]

    @property
    def worst(self) -> str:
        """The test closest to (or furthest beyond) its threshold."""
        return max(self.ks_distance, key=lambda k: self.ks_distance[k] / self.ks_threshold[k])

    def _rows(self) -> list[tuple[str, str]]:
        rows = self.decision.rows() + [
            (
                "text",
                f"{self.texts:,} texts × {self.new_tokens} tokens = {self.transforms:,} transforms "
                f"({self.padded:,} padded after early stops)",
            ),
        ]
        if self.tokens_per_call is not None:
            rows.append(
                (
                    "tokens / call",
                    f"{self.tokens_per_call:.4f} ± {self.std_err:.4f} (measured, γ = {self.length}, "
                    f"{self.calls:,} calls)",
                )
            )
            n_est = self.details.get("chains_drafted", 0)
            if self.expected is not None:
                z = self.expected_z
                rows.append(
                    (
                        "declared rule",
                        f"{self.declared}: {self.expected:.4f} ± {self.expected_se:.4f} (estimate from {n_est:,} "
                        f"chains at the calls' prefixes" + ("" if z is None else f"; z = {z:+.2f}") + ")",
                    )
                )
            opt = f"{self.optimum:.4f} ± {self.optimum_se:.4f} (block verification, estimate from {n_est:,} chains)"
            if self.above_optimum:
                opt += "; measured ABOVE the lossless optimum: the loop is not lossless"
            rows.append(("best lossless rule", opt))
        return rows

    def to_json(self) -> str:
        """The report as JSON, with the derived quantities.

        Returns
        -------
        str
            The fields, plus ``detectable``, ``above_optimum``, ``verdict``, ``not_declared``
            and ``decision`` (every check with its details).
        """
        d = asdict(self)
        d["detectable"] = self.detectable
        d["above_optimum"] = self.above_optimum
        d["verdict"] = self.verdict
        d["not_declared"] = self.not_declared
        d["decision"] = self.decision.to_dict()
        return json.dumps(d, indent=2, default=float)


def serial_values(U: np.ndarray, bins: int = 4, lag: int = 1, phase: int = 0) -> np.ndarray:
    """W = ⌊b·U_i⌋/b + U_{i+lag}/b for the disjoint pairs (i, i + lag) with ⌊i / lag⌋ ≡ phase
    (mod 2) of each row of ``U`` (texts × positions): exactly Uniform(0, 1) and independent when
    the U's are independent uniforms (module docstring).  With lag 1, phase 0 pairs positions
    (0, 1), (2, 3), … and phase 1 pairs (1, 2), (3, 4), …

    Parameters
    ----------
    U : array_like of float, shape (texts, positions)
        Uniforms, one row per text.
    bins : int
        b, the number of bins of the first member of each pair.
    lag : int
        Distance between the members of a pair.
    phase : {0, 1}
        Which of the two interleaved sets of disjoint pairs is used.

    Returns
    -------
    ndarray of float64
        The values W, row by row.
    """
    U = np.asarray(U, dtype=np.float64)
    L = U.shape[1]
    i = np.arange(max(L - lag, 0))
    i = i[(i // lag) % 2 == phase]
    a, b = U[:, i], U[:, i + lag]
    return ((np.minimum(np.floor(bins * a), bins - 1) + b) / bins).reshape(-1)


def _as_tokens(x: Any, what: str) -> tuple[int, ...]:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):  # ragged, e.g. (tokens, accepted_per_call) without drafting=
        raise InputError(
            f"{what}: must return a 1-D sequence of integer token ids (a pair (tokens, accepted_per_call) "
            "needs drafting=audit.ChainDrafting(draft, length))"
        ) from None
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InputError(
            f"{what}: must be a 1-D sequence of integer token ids, got {arr.dtype} of shape {arr.shape} "
            "(a pair (tokens, accepted_per_call) needs drafting=audit.ChainDrafting(draft, length))"
        )
    return tuple(int(t) for t in arr)


def _chain_values(P: Any, Q: Any, start: tuple[int, ...], gamma: int, declared: str | None, rng: np.random.Generator):
    """(declared rule's E[m | chain], block verification's E[m | chain]) for one chain of
    ``gamma`` tokens drafted from Q at ``start``."""

    chain: list[int] = []
    rows_p, rows_q = {}, {}
    for _ in range(gamma):
        u = tuple(chain)
        rows_q[u] = np.asarray(Q(start + u), dtype=np.float64)
        rows_p[u] = np.asarray(P(start + u), dtype=np.float64)
        chain.append(draw(rows_q[u], rng))
    rows_p[tuple(chain)] = np.asarray(P(start + tuple(chain)), dtype=np.float64)
    pr = np.array([rows_p[tuple(chain[:i])][chain[i]] for i in range(gamma)])
    qr = np.array([rows_q[tuple(chain[:i])][chain[i]] for i in range(gamma)])
    block = float(
        tree_value(
            DraftTree((tuple(chain),), gamma, "iid"), lambda u: rows_p[tuple(u)], lambda u: rows_q[tuple(u)], "block"
        )
    )
    if declared in ("sd", "token"):
        dec = float(np.cumprod(np.minimum(1.0, pr / np.maximum(qr, 1e-300))).sum())
    elif declared in ("exact_match", "target_only"):  # one child per node: accepted with probability p(x)
        dec = float(np.cumprod(pr).sum())
    elif declared == "block":
        dec = block
    else:
        dec = float("nan")
    return dec, block


def _counts(counts: Any, gamma: int) -> tuple[list[int], list[int]]:
    """(accepted, emitted) per call from a loop's counts: accepted counts (each call emits
    accepted + 1 tokens), or (accepted, emitted) pairs for loops that emit more."""
    arr = np.asarray(counts)
    if arr.ndim == 2 and arr.shape[1] == 2:
        ms, em = [int(c) for c in arr[:, 0]], [int(e) for e in arr[:, 1]]
        if any(e < max(m, 1) for m, e in zip(ms, em)):
            raise InputError("generate: a call's emitted tokens must be at least its accepted ones and at least 1")
    elif arr.ndim <= 1:
        ms = [int(c) for c in arr.reshape(-1)]
        em = [m + 1 for m in ms]
    else:
        raise InputError(
            f"generate: counts must be accepted per call or (accepted, emitted) pairs, got shape {arr.shape}"
        )
    if any(c < 0 or c > gamma for c in ms):
        raise InputError(f"generate: accepted counts must lie in [0, {gamma}]")
    return ms, em


def _batch_rows(out: Any, prs: list[tuple[int, ...]], pad: int | None) -> list[tuple[int, ...]]:
    """The new tokens of each row of a batched run's output (``GenerationOptions.batch``)."""
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    if isinstance(out, np.ndarray) and out.ndim == 2:  # each row: its prompt, then its new tokens
        if out.shape[0] != len(prs):
            raise InputError(f"generate: returned {out.shape[0]} rows for a batch of {len(prs)} prompts")
        rows = []
        for b, (row, pr) in enumerate(zip(out, prs)):
            toks = _as_tokens(row if pad is None else row[row != pad], f"generate: row {b}")
            if toks[: len(pr)] != pr:
                raise InputError(
                    f"generate: row {b} of a 2-D batch does not start with its prompt once options.pad is "
                    "removed (a 2-D batch holds each row's prompt and new tokens; a list of rows, the new tokens)"
                )
            rows.append(toks[len(pr) :])
        return rows
    if isinstance(out, (str, bytes)) or not hasattr(out, "__len__") or len(out) != len(prs):
        got = len(out) if hasattr(out, "__len__") else type(out).__name__
        raise InputError(f"generate: must return one row per prompt of the batch ({len(prs)}), got {got}")
    rows = []
    for b, row in enumerate(out):
        if hasattr(row, "detach"):
            row = row.detach().cpu().numpy()
        if pad is not None:
            row = [t for t in np.asarray(row).reshape(-1).tolist() if t != pad]
        rows.append(_as_tokens(row, f"generate: row {b}"))
    return rows


def _counts_from_calls(
    texts: list[tuple[int, ...]], pr: tuple[int, ...], toks: tuple[int, ...], gamma: int
) -> list[int]:
    """Accepted counts of one text read from the target's forwards (``ChainDrafting.counter``):
    each forward is one verifier call whose text ends with the chain's γ drafts, so the call
    starts γ tokens before its end; each call emits the tokens up to the next call's start."""
    starts = []
    for x in texts:
        st = len(x) - len(pr) - gamma
        if st < 0 or tuple(x[: len(pr)]) != pr:
            raise InputError(
                "drafting.counter: a target forward does not hold the prompt and a chain of "
                f"{gamma} drafts (counts are read from forwards that score one chain each)"
            )
        if st >= len(toks):  # a row already finished, carried along in its batch
            continue
        if tuple(x[len(pr) : len(pr) + st]) != toks[:st]:
            raise InputError("drafting.counter: a target forward's text is not a prefix of the text returned")
        starts.append(st)
    ms = []
    for a, b in zip(starts, starts[1:] + [len(toks)]):
        if not 1 <= b - a <= gamma + 1:
            raise InputError(
                "drafting.counter: consecutive target forwards advance by "
                f"{b - a} tokens, not 1 to {gamma + 1}: not one forward per verifier call"
            )
        ms.append(b - a - 1)
    return ms


def _runs(
    generate: Callable,
    prompts: list[tuple[int, ...]],
    samples: int,
    batch: int,
    pad: int | None,
    with_counts: bool,
    rng: np.random.Generator,
    torch: Any,
    counter: Any = None,
):
    """Run the loop: yield (prompt, tokens, counts, forwards) per text, ``samples`` texts per
    prompt in order, ``batch`` texts per call of ``generate``; each call gets a fresh
    generator.  ``forwards``: the row's texts at the counter's forwards (None without one)."""
    order = [pr for _ in range(samples) for pr in prompts]
    for lo in range(0, len(order), batch):
        prs = order[lo : lo + batch]
        child = np.random.default_rng(rng.integers(2**63))
        if torch is not None:
            torch.manual_seed(int(rng.integers(2**63)))
        if counter is not None:
            counter.calls.clear()
        out = generate(prs[0] if batch == 1 else prs, child)
        counts = None
        if with_counts and counter is None:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise InputError(
                    "generate: with drafting it must return (tokens, accepted_per_call)"
                    + (" — for a batch, (rows, counts per row)" if batch > 1 else "")
                    + ", or drafting.counter must be the target module it runs on"
                )
            out, counts = out
        forwards: list[list[tuple[int, ...]]] = [[] for _ in prs]
        if counter is not None:
            for rec in counter.calls:
                if len(rec) != len(prs):
                    raise InputError(
                        f"drafting.counter: a target forward holds {len(rec)} rows for a batch of {len(prs)} prompts"
                    )
                for b, x in enumerate(rec):
                    forwards[b].append(x)
        if batch == 1:
            yield prs[0], out, counts, forwards[0] if counter is not None else None
            continue
        rows = _batch_rows(out, prs, pad)
        if counts is not None and (not hasattr(counts, "__len__") or len(counts) != len(prs)):
            raise InputError(f"generate: counts must hold one entry per row of the batch ({len(prs)})")
        for b, pr in enumerate(prs):
            yield pr, rows[b], None if counts is None else counts[b], forwards[b] if counter is not None else None


@one_renormalization_warning
def audit_generation(
    generate: Callable[..., Any],
    target: Any,
    *,
    prompts: Sequence[Sequence[int]],
    samples: int,
    new_tokens: int = 8,
    rng: Any = 0,
    drafting: ChainDrafting | None = None,
    false_alarm: float = FALSE_ALARM,
    options: GenerationOptions | None = None,
    progress: bool | None = None,
) -> GenerationAuditReport:
    """Audit a decoding loop from the text it generates (module docstring).

    Parameters
    ----------
    generate : callable
        ``generate(prompt, rng)`` runs the loop under audit once: ``prompt`` a tuple of token
        ids, ``rng`` a fresh ``numpy.random.Generator`` for this run (seed a torch generator
        from it, e.g. ``torch.manual_seed(int(rng.integers(2**63)))``).  Returns the token ids
        generated after the prompt — or, with ``drafting``, ``(tokens, accepted_per_call)``, the
        second the number of drafted tokens each verifier call accepted, in order (each call
        emits accepted + 1 tokens), or ``(accepted, emitted)`` pairs for loops whose calls emit
        more (e.g. every position after a rejection resampled).  With
        ``options.batch`` > 1 it is called with a list of prompts and returns one row per
        prompt (:class:`GenerationOptions`); the rows of one call must be independent given
        their prompts (a pairwise test across rows of one prompt checks it).
    target : sequence model
        ``prefix -> next-token probabilities``, the prefix being the whole text (prompt
        included), as :func:`optaccept.tree.synthetic_pair` returns; the law the loop claims
        to sample.  :func:`torch_lm` wraps one as a Hugging Face-style module.
    prompts : sequence of token-id sequences
        The prompts; each is run ``samples`` times.
    samples : int
        Runs per prompt.
    new_tokens : int
        Tokens read per text (a shorter text is padded with fresh uniforms).
    rng : numpy.random.Generator or int
        All randomness: the runs' generators, the transforms' tie-breaking, the pads, the
        chains drafted for the estimates.
    drafting : ChainDrafting, optional
        The draft model, chain length and declared rule ("sd", "token", "block",
        "exact_match", "target_only") of a loop that returns accepted counts — or whose counts
        are read from the forwards of its target module (``counter``).
    false_alarm : float
        Probability that a lossless loop is declared lossy (all tests together).
    options : GenerationOptions, optional
        The dependence tests' ``bins`` and ``max_lag``, and ``seed_torch`` (default:
        ``GenerationOptions()``, 4 bins, lags up to 8, torch seeded).
    progress : bool, optional
        Show a progress bar (unit: run); default: in a terminal or notebook.

    Returns
    -------
    GenerationAuditReport

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, tree
    >>> target = tree.synthetic_pair(6, rng=0)[0]
    >>> def generate(prompt, rng):  # a plain sampler: one token from the target at a time
    ...     text = list(prompt)
    ...     for _ in range(4):
    ...         text.append(int(rng.choice(6, p=target(tuple(text)))))
    ...     return text[len(prompt):]
    >>> prompts = [(1,), (2, 3)]
    >>> rep = audit.audit_generation(generate, target, prompts=prompts, samples=100, new_tokens=4, rng=0, progress=False)
    >>> rep.lossless, rep.texts, rep.transforms
    (True, 200, 800)
    >>> def reseeded(prompt, rng):  # a fresh stream with the same seed at every step
    ...     text = list(prompt)
    ...     for _ in range(4):
    ...         text.append(int(np.random.default_rng(0).choice(6, p=target(tuple(text)))))
    ...     return text[len(prompt):]
    >>> bad = audit.audit_generation(reseeded, target, prompts=prompts, samples=100, new_tokens=4, rng=0, progress=False)
    >>> bad.lossless
    False
    """
    if drafting is not None and not isinstance(drafting, ChainDrafting):
        raise InputError(f"drafting: an audit.ChainDrafting(draft, length, declared), got {drafting!r}")
    if options is not None and not isinstance(options, GenerationOptions):
        raise InputError(f"options: an audit.GenerationOptions(bins, max_lag, seed_torch), got {options!r}")
    if drafting is None:
        draft, gamma, declared = None, None, None
    else:  # (the fields themselves: a draft model is not copied)
        draft, gamma, declared = drafting.draft, drafting.length, drafting.declared
    counter = None if drafting is None else drafting.counter
    if counter is not None and not isinstance(getattr(counter, "calls", None), list):
        raise InputError("drafting.counter: must be the audit.torch_lm module the loop runs as its target")
    options = GenerationOptions() if options is None else options
    bins, max_lag, seed_torch = options.bins, options.max_lag, options.seed_torch
    batch, pad = check_size(options.batch, "options.batch"), options.pad
    if batch < 1:
        raise InputError(f"options.batch: must be at least 1, got {batch}")
    if pad is not None and (isinstance(pad, bool) or not isinstance(pad, (int, np.integer))):
        raise InputError(f"options.pad: must be an integer token id or None, got {pad!r}")

    rng = check_rng(rng)
    samples = check_size(samples, "samples")
    new_tokens = check_size(new_tokens, "new_tokens")
    bins = check_size(bins, "options.bins")
    max_lag = check_size(max_lag, "options.max_lag")
    for name, value, least in (("samples", samples, 1), ("new_tokens", new_tokens, 1), ("options.bins", bins, 2)):
        if value < least:
            raise InputError(f"{name}: must be at least {least}, got {value}")
    if not 0 < false_alarm < 1:
        raise InputError(f"false_alarm: must lie in (0, 1), got {false_alarm!r}")
    if not callable(generate):
        raise InputError(f"generate: must be a callable generate(prompt, rng), got {type(generate).__name__}")
    if isinstance(prompts, (str, bytes)) or not len(prompts):
        raise InputError("prompts: must be a non-empty list of token-id sequences")
    prompts_t = [_as_tokens(pr, f"prompts[{i}]") for i, pr in enumerate(prompts)]
    with_counts = draft is not None
    if with_counts:
        if gamma is None:
            raise InputError("drafting: the chain length is needed with draft")
        gamma = check_size(gamma, "drafting.length")
        if gamma < 1:
            raise InputError("drafting.length: must be at least 1")
    elif gamma is not None or declared is not None:
        raise InputError("drafting: length and declared need the draft model")
    check_choice("declared", declared, DECLARED_GENERATION, allow_none=True)
    P = as_model(target, "target").cached()
    Q = as_model(draft, "draft").cached() if with_counts else None
    n = np.asarray(P(prompts_t[0])).size
    for i, pr in enumerate(prompts_t):
        if any(t < 0 or t >= n for t in pr):
            raise InputError(f"prompts[{i}]: token ids must lie in [0, {n})")
    orders = ("p", "id") + (("q", "p/q") if with_counts else ())
    torch = sys.modules.get("torch") if seed_torch else None
    from tqdm.auto import tqdm

    texts = samples * len(prompts_t)
    U = {o: np.empty((texts, new_tokens)) for o in orders}
    padded = 0
    per_text_tokens = np.zeros(texts)
    per_text_calls = np.zeros(texts)
    dec_vals: list[float] = []
    opt_vals: list[float] = []
    dec_text, opt_text = np.zeros(texts), np.zeros(texts)
    emitted_total = 0
    est_rng = np.random.default_rng(rng.integers(2**63))
    bar = tqdm(
        total=texts,
        desc="audit_generation: runs of the loop",
        unit="run",
        disable=not show_progress(progress),
        leave=False,
    )
    j = 0
    for pr, out, counts, forwards in _runs(generate, prompts_t, samples, batch, pad, with_counts, rng, torch, counter):
        toks = _as_tokens(out, "generate")
        if forwards is not None:
            counts = _counts_from_calls(forwards, pr, toks, gamma)
        if any(t < 0 or t >= n for t in toks):
            raise InputError(f"generate: returned token ids outside [0, {n})")
        L = min(len(toks), new_tokens)
        rowsP = np.empty((L, n))
        rowsQ = np.empty((L, n))
        for i in range(L):
            rowsP[i] = np.asarray(P(pr + toks[:i]), dtype=np.float64)
            rowsQ[i] = np.asarray(Q(pr + toks[:i]), dtype=np.float64) if Q is not None else rowsP[i]
        y = np.asarray(toks[:L], dtype=np.int64)
        for o in orders:
            if L:
                U[o][j, :L] = pit_values(rowsP, rowsQ, y, o, rng)
            U[o][j, L:] = rng.random(new_tokens - L)
        padded += new_tokens - L
        if counts is not None:
            ms, emitted = _counts(counts, gamma)
            start = 0
            for e_c in emitted:
                if start > len(toks):
                    raise InputError("generate: the accepted counts describe more tokens than were returned")
                d, b = _chain_values(P, Q, pr + toks[:start], gamma, declared, est_rng)
                dec_vals.append(d + 1.0)
                opt_vals.append(b + 1.0)
                dec_text[j] += d + 1.0
                opt_text[j] += b + 1.0
                start += e_c
            per_text_tokens[j] = sum(m + 1 for m in ms)
            per_text_calls[j] = len(ms)
            emitted_total += sum(emitted)
        if (len(P.memo) + (len(Q.memo) if Q is not None else 0)) * n > _CACHE_ENTRIES:
            P.memo.clear()  # the laws read are cached up to a bounded size
            if Q is not None:
                Q.memo.clear()
        j += 1
        bar.update(1)
    bar.close()
    N = texts * new_tokens
    tests: dict[str, np.ndarray] = {}
    for o in orders:
        tests[f"pooled/{o}"] = U[o].reshape(-1)
        for lag in range(1, min(max_lag, new_tokens - 1) + 1):
            for phase in (0, 1) if lag == 1 else (0,):
                w = serial_values(U[o], bins, lag, phase)
                if w.size:
                    tests[f"lag{lag}{('-even', '-odd')[phase] if lag == 1 else ''}/{o}"] = w
    if batch > 1:  # rows of one call with one prompt, paired: (U of one, U of the other) at each position
        order = [pr for _ in range(samples) for pr in prompts_t]
        first, second = [], []
        for lo in range(0, texts, batch):
            by_prompt: dict[tuple[int, ...], list[int]] = {}
            for i in range(lo, min(lo + batch, texts)):
                by_prompt.setdefault(order[i], []).append(i)
            for rows in by_prompt.values():
                first += rows[0 : len(rows) - 1 : 2]
                second += rows[1 : len(rows) : 2]
        if first:
            for o in orders:
                a, b2 = U[o][first], U[o][second]
                tests[f"rows/{o}"] = ((np.minimum(np.floor(bins * a), bins - 1) + b2) / bins).reshape(-1)
    m_tests = len(tests)
    dist = {k: ks_uniform(v) for k, v in tests.items()}
    thr = {k: ks_threshold(v.size, false_alarm, m_tests) for k, v in tests.items()}
    rep = GenerationAuditReport(
        lossless=all(dist[k] <= thr[k] for k in dist),
        false_alarm=false_alarm,
        texts=texts,
        new_tokens=new_tokens,
        transforms=N,
        padded=padded,
        ks_distance=dist,
        ks_threshold=thr,
        declared=declared,
        length=gamma,
        details={"orders": orders, "bins": bins, "vocabulary": n},
    )
    if with_counts:
        calls = int(per_text_calls.sum())
        if calls == 0:
            raise InputError("generate: no verifier calls were reported")
        rep.calls = calls
        rep.tokens_per_call, rep.std_err = ratio_mean(per_text_tokens, per_text_calls)
        rep.optimum, rep.optimum_se = ratio_mean(opt_text, per_text_calls)
        if declared is not None:
            rep.expected, rep.expected_se = ratio_mean(dec_text, per_text_calls)
        rep.details["chains_drafted"] = calls
        rep.details["emitted_per_call"] = emitted_total / calls
    generation_decision(rep, {k: int(v.size) for k, v in tests.items()})
    return rep


def generation_decision(rep: GenerationAuditReport, sizes: dict[str, int]) -> None:
    """Set the report's verdict (the audits' one verdict function) from its tests' distances
    (``sizes``: the values each read) and, with counts, its tokens per call against the best
    lossless rule's and the declared rule's estimates (standard errors combined): its
    ``decision``, ``lossless`` and ``ks_threshold``."""
    means = declared = optimum = None
    no_power: list[str] = []
    if rep.tokens_per_call is not None:
        means = rep.tokens_per_call, rep.std_err or 0.0
        optimum = mean_check(means[0], math.hypot(means[1], rep.optimum_se or 0.0), (0.0, rep.optimum), rep.calls)
        if rep.expected is not None:
            declared = mean_check(means[0], math.hypot(means[1], rep.expected_se or 0.0), rep.expected, rep.calls)
        if rep.length and means[0] >= rep.length + 1:
            no_power.append("every call accepted all its drafted tokens: the rejection path was never exercised")
        elif means[0] <= 1.0:
            no_power.append("no call accepted a drafted token (or nothing was drafted): the drafts were never used")
    rep.decision = decide(
        {k: (rep.ks_distance[k], n) for k, n in sizes.items()},
        rep.false_alarm,
        declared=declared,
        optimum=optimum,
        samples=rep.texts,
        unit="texts",
        no_power=no_power,
    )
    rep.lossless = rep.decision.lossless
    rep.ks_threshold = {c.name: c.threshold for c in rep.decision.checks if c.kind == "law"}
