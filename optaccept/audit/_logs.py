"""The logs a regression gate reads: each step's exact expected accepted drafts and its logged
count (:func:`step_values`), and synthetic chain logs of speculative decoding for tests and
benchmarks (:func:`synthetic_chain_log`).  The exact expectations are the Rao–Blackwellised values
that :mod:`optaccept.audit._gate` describes; tests/audit/test_gate.py checks them against the tree
package's enumeration.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.sampling import draw
from .._lib.validation import check_rng
from ..drafts import IID
from ..tree import synthetic_pair
from ..tree._draft import DraftTree
from ..tree._sampling import tree_value
from ..verifiers import batched_acceptance
from ..verifiers._target_only import target_only_acceptance

__all__ = ["step_values", "StepValues", "synthetic_chain_log", "CHAIN_VERIFIERS", "STEP_VERIFIERS"]

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

    rng = check_rng(rng)
    Ps, Qs, Xs, ms, req, ex = [], [], [], [], [], []
    for r in range(requests):
        target, draft = synthetic_pair(n, rng=seed + r, noise=noise)
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
                xs.append(draw(q, rng, total=q.sum()))
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
            y = draw(res, rng)
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
