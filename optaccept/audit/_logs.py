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
from .._lib.stable import ratio_key
from .._lib.validation import check_rng
from ..drafts import IID
from ..tree import synthetic_pair
from ..verifiers import batched_acceptance
from ..verifiers._target_only import target_only_acceptance
from ._log_rows import _dtype_of, _Rows
from ._pit import ORDERS

__all__ = [
    "step_values",
    "StepValues",
    "SparseChainLog",
    "SPARSE_KEYS",
    "synthetic_chain_log",
    "CHAIN_VERIFIERS",
    "STEP_VERIFIERS",
]

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
    if isinstance(log, SparseChainLog):
        return {"_sparse": log}
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


#: The keys of a sparse chain log (:class:`~optaccept.audit.SparseChainLog`), in the order of its fields.
SPARSE_KEYS = ("X", "px", "qx", "block_mass", "m", "Y", "py", "text_below", "draft_below", "request")


@dataclass(eq=False)
class SparseChainLog:
    r"""A chain log without the probability rows: what the regression gate and the chain audit
    read of each step (docs/engines.md §2), a few numbers per drafted token whatever the
    vocabulary.

    Step t drafted γ_t ≤ γ tokens x_1 … x_{γ_t} (``X[t]``, −1 after them); p_i, q_i are the
    target's and the draft's laws after x_1 … x_{i−1} (rows summing to 1); the verifier
    accepted m_t drafts and emitted Y_t.  Entries past a step's chain are NaN.

    ========================  ===================  ==============================================
    key                       shape                meaning
    ========================  ===================  ==============================================
    ``X``                     (T, γ) int           the drafted tokens, −1 pads shorter chains
    ``px``, ``qx``            (T, γ) float         p_i(x_i), q_i(x_i)
    ``block_mass``            (T, γ) float         S_i = Σ_x (a_i p_{i+1}(x) − q_{i+1}(x))₊ in
                                                   column i − 1 for i < γ_t, a_i = min(1,
                                                   a_{i−1} p_i(x_i)/q_i(x_i)), a_0 = 1
    ``m``, ``Y``              (T,) int             accepted drafts, emitted token
    ``py``                    (T,) float           p_{m+1}(Y) (the bonus row when m = γ_t)
    ``text_below``            (T, γ + 1, 4) float  the target's mass before text token j (x_j for
                                                   j ≤ m, then Y) in each order of
                                                   ``audit._pit.ORDERS``: by p, by q, by p/q, by id
    ``draft_below``           (T, γ, 4) float      the draft's mass before x_j in the orders
                                                   by q, by p, by q/p, by id
    ``request``               (T,) int             the request of each step
    ========================  ===================  ==============================================

    "Before" is in the order's ascending key (−p, −q, p/q with x/0 last, the token id), ties
    broken by the token id: Σ_z r(z) over the tokens z ahead of the token.  Orders and ties
    are those of the full-row transforms (:func:`optaccept.audit._pit.pit_values`).

    **What needs what.**  The gate's token-level ("token") value needs ``px`` and ``qx``;
    "target_only" needs ``px``; "block" (and the chain audit's ``optimum``) also
    ``block_mass``.  The chain audit's losslessness test needs ``py`` and ``text_below``, its
    check that the drafts follow q ``draft_below``: the randomised transform of a token is its
    order's mass before it plus a uniform times its own probability, so two numbers per token
    and order replace the row.  A one-token log's exact value is an expectation over the
    drafts and needs the full rows: it has no sparse form.  A missing key is refused, naming
    it, by the check that needs it.

    **Memory.**  8·(12γ + 8) bytes a step with every key — 4.5 MB for 10,000 steps at γ = 4,
    against 44 GiB of float32 rows (2γ + 1 of them a step) at n = 131,072
    (benchmarks/bench_sparse_log.py).

    Attributes
    ----------
    X, px, qx, block_mass, m, Y, py, text_below, draft_below, request : ndarray or None
        As in the table above; None where not logged.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit
    >>> p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    >>> P, Q = np.tile(p, (2, 3, 1)), np.tile(q, (2, 2, 1))  # 2 steps, γ = 2, the same rows
    >>> log = audit.SparseChainLog.from_rows(P, Q, X=[[0, 2], [2, 1]], m=[2, 0], Y=[1, 0], request=[0, 1])
    >>> log.px.tolist(), log.qx.tolist()
    ([[0.5, 0.2], [0.2, 0.3]], [[0.2, 0.5], [0.5, 0.3]])
    >>> log.text_below[1, 0].tolist()  # Y = 0 at position 1: nothing before it by p, id; 0.3 + 0.2 by q
    [0.0, 0.5, 0.5, 0.0]
    >>> round(audit.regression_gate(log, log).difference, 4), log.nbytes
    (0.0, 512)
    """

    X: np.ndarray
    px: np.ndarray
    qx: np.ndarray | None = None
    block_mass: np.ndarray | None = None
    m: np.ndarray | None = None
    Y: np.ndarray | None = None
    py: np.ndarray | None = None
    text_below: np.ndarray | None = None
    draft_below: np.ndarray | None = None
    request: np.ndarray | None = None

    @classmethod
    def from_rows(
        cls,
        P: Any,
        Q: Any,
        X: Any,
        m: Any = None,
        Y: Any = None,
        *,
        request: Any = None,
    ) -> SparseChainLog:
        """The sparse form of a chain log with full rows: what an engine stores instead of them.

        Rows are cleaned under the library's one sum rule (a row off it is refused naming ``P``
        or ``Q`` and the step) and read a few steps at a time (about 32 MB of float64 rows), so
        a log of many steps can be converted batch by batch (:meth:`concatenate`).

        Parameters
        ----------
        P : array_like (T, γ + 1, n) or list of (γ_t + 1, n)
            The target's laws after X[:i], i = 0 … γ_t (the last row, for the bonus token, may
            be left out when no step accepted all its drafts or ``Y`` is not given).
        Q : array_like (T, γ, n) or list of (γ_t, n)
            The draft's laws after X[:i], i < γ_t.
        X : array_like (T, γ) or list of length-γ_t sequences of int
            The drafted tokens (−1 pads shorter chains).
        m, Y : array_like (T,) of int, optional
            Accepted drafts and emitted token of each step: with both, the transforms' masses
            (``py``, ``text_below``) are stored too.
        request : array_like (T,) of int, optional
            The request of each step.

        Returns
        -------
        SparseChainLog
            All the keys the gate and the chain audit read (the text's only with ``m`` and
            ``Y``).

        Raises
        ------
        InputError
            If the steps disagree in number or shape, a token is out of range, m > γ_t, or a
            row breaks the sum rule.

        Examples
        --------
        >>> import numpy as np
        >>> from optaccept import audit
        >>> P, Q = np.full((1, 2, 4), 0.25), np.array([[[0.5, 0.25, 0.125, 0.125]]])
        >>> log = audit.SparseChainLog.from_rows(P, Q, [[0]])
        >>> log.px.tolist(), log.qx.tolist(), log.text_below is None
        ([[0.25]], [[0.5]], True)
        """
        return _from_rows(P, Q, X, m, Y, request, text=m is not None and Y is not None, block=True)

    @classmethod
    def concatenate(cls, logs: Any) -> SparseChainLog:
        """The steps of several sparse logs, one after the other (chains padded to the longest).

        Parameters
        ----------
        logs : sequence of SparseChainLog
            At least one; each key present in all or in none.

        Returns
        -------
        SparseChainLog
            The steps of ``logs[0]``, then those of ``logs[1]``, and so on.

        Raises
        ------
        InputError
            If ``logs`` is empty or a key is present in some logs only.

        Examples
        --------
        >>> import numpy as np
        >>> from optaccept import audit
        >>> a = audit.SparseChainLog(X=np.array([[1]]), px=np.array([[0.5]]))
        >>> b = audit.SparseChainLog(X=np.array([[2, 0]]), px=np.array([[0.25, 0.5]]))
        >>> audit.SparseChainLog.concatenate([a, b]).X.tolist()
        [[1, -1], [2, 0]]
        """
        logs = list(logs)
        if not logs or not all(isinstance(v, SparseChainLog) for v in logs):
            raise InputError("logs: a non-empty sequence of SparseChainLog")
        g = max(v.X.shape[1] for v in logs)
        out: dict[str, Any] = {}
        for key in SPARSE_KEYS:
            parts = [getattr(v, key) for v in logs]
            if all(a is None for a in parts):
                out[key] = None
                continue
            if any(a is None for a in parts):
                raise InputError(f"logs: {key} is present in some logs only")
            if key in ("X", "px", "qx", "block_mass", "text_below", "draft_below"):
                fill = -1 if key == "X" else np.nan
                width = g + 1 if key == "text_below" else g
                parts = [_pad_to(a, width, fill) for a in parts]
            out[key] = np.concatenate(parts)
        return cls(**out)

    @property
    def nbytes(self) -> int:
        """Bytes held by the log's arrays."""
        return sum(int(getattr(self, k).nbytes) for k in SPARSE_KEYS if getattr(self, k) is not None)

    def save(self, path: Any) -> None:
        """Write the log as a ``.npz`` file of its keys, which the gate and the chain audit read.

        Parameters
        ----------
        path : str or path-like
            The file to write.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from optaccept import audit
        >>> log = audit.SparseChainLog(X=np.array([[1], [0]]), px=np.array([[0.5], [0.2]]), request=np.arange(2))
        >>> path = os.path.join(tempfile.mkdtemp(), "log.npz")
        >>> log.save(path)
        >>> round(audit.regression_gate(path, log, verifier="target_only").difference, 4)
        0.0
        """
        np.savez(path, **{k: getattr(self, k) for k in SPARSE_KEYS if getattr(self, k) is not None})

    @classmethod
    def _from_arrays(cls, arrays: Mapping[str, Any], name: str) -> SparseChainLog:
        """A sparse log from a mapping of its keys, shapes checked."""
        X = np.asarray(arrays["X"])
        if X.ndim != 2 or X.dtype.kind not in "iu":
            raise InputError(f"{name}: X must be a 2-D array of token ids (steps, γ), got shape {X.shape}")
        T, g = X.shape
        shapes = {
            "px": (T, g),
            "qx": (T, g),
            "block_mass": (T, g),
            "m": (T,),
            "Y": (T,),
            "py": (T,),
            "text_below": (T, g + 1, len(ORDERS)),
            "draft_below": (T, g, len(ORDERS)),
            "request": (T,),
        }
        out: dict[str, Any] = {"X": X.astype(np.int64)}
        for key, shape in shapes.items():
            if key not in arrays or arrays[key] is None:
                out[key] = None
                continue
            a = np.asarray(arrays[key])
            if a.shape != shape:
                raise InputError(f"{name}: {key} must have shape {shape}, got {a.shape}")
            if key in ("m", "Y"):
                if a.dtype.kind not in "iu":
                    raise InputError(f"{name}: {key} must hold integers")
                a = a.astype(np.int64)
            elif key != "request":
                a = a.astype(np.float64)
            out[key] = a
        if (X < -1).any() or (np.diff((X >= 0).astype(np.int8), axis=1) > 0).any():
            raise InputError(f"{name}: X holds token ids ≥ 0 with −1 padding only after a chain")
        for key in ("px", "qx", "py"):
            a = out[key]
            if a is not None:
                ok = (a >= 0) & (a <= 1) if key == "py" else np.where(X >= 0, (a >= 0) & (a <= 1), True)
                if not ok.all():
                    raise InputError(f"{name}: {key} must lie in [0, 1] (probabilities of the drafted tokens)")
        return cls(**out)


def _pad_to(a: np.ndarray, width: int, fill: float) -> np.ndarray:
    if a.shape[1] == width:
        return a
    pad = [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2)
    return np.pad(a.astype(np.float64) if fill != -1 else a, pad, constant_values=fill)


def _below(rows: np.ndarray, other: np.ndarray, tok: np.ndarray, order: str) -> np.ndarray:
    """Mass of ``rows`` before each token ``tok`` along ``order`` ("p": by the row, decreasing;
    "q": by ``other``, decreasing; "p/q": by row/other, increasing, x/0 last; "id"), ties broken
    by the token id: the full-row transforms' order (``_pit.pit_values``), in a pass or two over
    the row instead of a sort."""
    B, n = rows.shape
    r = np.arange(B)
    if order == "id":
        return np.array([rows[b, : tok[b]].sum() for b in range(B)])
    if order == "p/q":
        key = _ratio(rows, other)
        ky = key[r, tok][:, None]
        ahead = key < ky
    else:
        key = rows if order == "p" else other
        ky = key[r, tok][:, None]
        ahead = key > ky
    out = np.where(ahead, rows, 0.0).sum(axis=1)
    ties = key == ky
    if np.count_nonzero(ties) > B:  # some token shares its key with another: the lower ids go first
        ties &= np.arange(n)[None, :] < tok[:, None]
        out += np.where(ties, rows, 0.0).sum(axis=1)
    return out


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``_lib.stable.ratio_key(a, b)`` (a/b, +inf where b = 0), computed as the plain quotient
    unless a quotient is near the 2^1000 where ratio_key's overflow guard begins."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = a / np.where(b > 0, b, 1.0)
    if (r > 2.0**990).any():
        return ratio_key(a, b)
    r[~(b > 0)] = np.inf
    return r


def _step_rows(A: Any, lo: int, hi: int, width: int, name: str, lengths: np.ndarray, extra: int) -> tuple:
    """Steps lo:hi of a (T, width, n) array or a list of (γ_t + extra, n) rows, padded to
    ``width`` rows with a uniform law; also the number of rows each step has."""
    if isinstance(A, (list, tuple)):
        blocks = [A[t] for t in range(lo, hi)]
        arrs = []
        for t, b in zip(range(lo, hi), blocks, strict=True):
            if hasattr(b, "detach"):
                b = b.detach().cpu().numpy()
            b = np.asarray(b)
            if b.ndim != 2 or b.shape[0] not in (lengths[t], lengths[t] + extra):
                want = f"{lengths[t]} or {lengths[t] + extra}" if extra else f"{lengths[t]}"
                raise InputError(f"{name}: step {t} must have {want} rows (γ = {lengths[t]}), got shape {b.shape}")
            arrs.append(b)
        n = arrs[0].shape[1]
        out = np.full((hi - lo, width, n), 1.0 / n)
        have = np.empty(hi - lo, dtype=np.int64)
        for j, b in enumerate(arrs):
            if b.shape[1] != n:
                raise InputError(f"{name}: every row must have {n} entries, got {b.shape[1]} at step {lo + j}")
            out[j, : b.shape[0]] = b
            have[j] = min(b.shape[0], width)
        return out, have
    block = A[lo:hi]
    if hasattr(block, "detach"):
        block = block.detach().cpu().numpy()
    block = np.asarray(block)
    if block.ndim != 3:
        raise InputError(f"{name}: must be (steps, rows, n), got shape {block.shape}")
    rows = block.shape[1]
    if rows < width - extra:
        raise InputError(f"{name}: needs at least γ = {width - extra} rows per step, got shape {block.shape}")
    if rows < width:
        pad = np.full((block.shape[0], width - rows, block.shape[2]), 1.0 / block.shape[2])
        block = np.concatenate([block, pad], axis=1)
    return block[:, :width], np.minimum(min(rows, width), lengths[lo:hi] + extra)


def _from_rows(P: Any, Q: Any, X: Any, m: Any, Y: Any, request: Any, *, text: bool, block: bool) -> SparseChainLog:
    """:meth:`~optaccept.audit.SparseChainLog.from_rows`, with the text's masses and the block masses optional
    (the gate reads neither unless its rule needs them)."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        Xa = X.astype(np.int64)
    else:
        chains = [np.asarray(x).reshape(-1) for x in X]
        for t, x in enumerate(chains):
            if x.size and x.dtype.kind not in "iu":
                raise InputError(f"X: step {t} must hold integer token ids")
        g = max((x.size for x in chains), default=0)
        Xa = np.full((len(chains), g), -1, dtype=np.int64)
        for t, x in enumerate(chains):
            Xa[t, : x.size] = x
    T, g = Xa.shape
    if T == 0:
        raise InputError("X: the log has no steps")
    if len(P) != T or len(Q) != T:
        raise InputError(f"P, Q, X: one entry per step, got {len(P)}, {len(Q)}, {T}")
    if (Xa < -1).any() or (np.diff((Xa >= 0).astype(np.int8), axis=1) > 0).any():
        raise InputError("X: token ids ≥ 0, with −1 padding only after a chain")
    gam = (Xa >= 0).sum(axis=1)
    if text:
        m = np.asarray(m).reshape(-1)
        Y = np.asarray(Y).reshape(-1)
        if m.size != T or Y.size != T:
            raise InputError(f"m, Y: one entry per step ({T}), got {m.size} and {Y.size}")
        if m.dtype.kind not in "iu" or Y.dtype.kind not in "iu":
            raise InputError("m, Y: must hold integers")
        m, Y = m.astype(np.int64), Y.astype(np.int64)
        bad = np.flatnonzero((m < 0) | (m > gam))
        if bad.size:
            raise InputError(f"m: step {bad[0]} has m = {m[bad[0]]} outside [0, γ = {gam[bad[0]]}]")
    p0 = P[0] if isinstance(P, (list, tuple)) else None
    n = int(np.shape(p0 if p0 is not None else P[:1])[-1])
    if (Xa >= n).any() or (text and ((Y < 0) | (Y >= n)).any()):
        raise InputError(f"X, Y: token ids must lie in [0, {n})")
    rows_p = _Rows("P", n, _dtype_of(P))
    rows_q = _Rows("Q", n, _dtype_of(Q))
    G = g + 1
    px = np.full((T, g), np.nan)
    qx = np.full((T, g), np.nan)
    bm = np.full((T, g), np.nan) if block else None
    py = np.full(T, np.nan) if text else None
    tb = np.full((T, G, len(ORDERS)), np.nan) if text else None
    db = np.full((T, g, len(ORDERS)), np.nan) if text else None
    chunk = max(1, (1 << 22) // max(1, n * (2 * g + 1)))
    cols = np.arange(g)[None, :]
    for lo in range(0, T, chunk):
        hi = min(T, lo + chunk)
        B = hi - lo
        Pb, haveP = _step_rows(P, lo, hi, G, "P", gam, 1)
        Qb, _ = _step_rows(Q, lo, hi, g, "Q", gam, 0)
        Pb = _clean(rows_p, Pb, haveP, lo)
        Qb = _clean(rows_q, Qb, np.minimum(gam[lo:hi], g), lo)
        Xb = Xa[lo:hi]
        valid = Xb >= 0
        Xc = np.where(valid, Xb, 0)
        r = np.arange(B)[:, None]
        pxb = Pb[r, cols, Xc] if g else np.empty((B, 0))
        qxb = Qb[r, cols, Xc] if g else np.empty((B, 0))
        px[lo:hi] = np.where(valid, pxb, np.nan)
        qx[lo:hi] = np.where(valid, qxb, np.nan)
        if block and g > 1:
            a = _running_weight(pxb, qxb)
            for i in range(1, g):
                use = i < gam[lo:hi]
                s = np.maximum(a[:, i - 1, None] * Pb[:, i] - Qb[:, i], 0.0).sum(axis=1)
                bm[lo:hi, i - 1] = np.where(use, s, np.nan)
        if not text:
            continue
        mb, Yb, gb = m[lo:hi], Y[lo:hi], gam[lo:hi]
        if (mb >= haveP).any():
            t = lo + int(np.flatnonzero(mb >= haveP)[0])
            raise InputError(f"P: step {t} accepted all {gam[t]} drafts and needs the bonus row (γ + 1 rows)")
        py[lo:hi] = Pb[np.arange(B), mb, Yb]
        for i in range(G):
            sel = np.flatnonzero(i <= mb)
            if sel.size == 0:
                continue
            tok = np.where(i < mb[sel], Xc[sel, min(i, g - 1)] if g else 0, Yb[sel])
            rp = Pb[sel, i]
            rq = Qb[sel, i] if i < g else rp
            rq = np.where((i < gb[sel])[:, None], rq, rp)
            for j, o in enumerate(ORDERS):
                tb[lo + sel, i, j] = _below(rp, rq, tok, o)
        for i in range(g):
            sel = np.flatnonzero(valid[:, i])
            for j, o in enumerate(ORDERS):
                db[lo + sel, i, j] = _below(Qb[sel, i], Pb[sel, i], Xc[sel, i], o)
    rows_p.finish()
    rows_q.finish()
    req = None if request is None else np.asarray(request).reshape(-1)
    if req is not None and req.size != T:
        raise InputError(f"request: must have one id per step ({T}), got {req.size}")
    return SparseChainLog(
        X=Xa,
        px=px,
        qx=qx,
        block_mass=bm,
        m=m if text else None,
        Y=Y if text else None,
        py=py,
        text_below=tb,
        draft_below=db,
        request=req,
    )


def _clean(rows: _Rows, block: np.ndarray, have: np.ndarray, lo: int) -> np.ndarray:
    """The logged rows of a block of steps (the first ``have[j]`` of step lo + j) through the sum
    rule, position by position; padding rows are left as they are (uniform laws, never read).
    An error names the step and the row."""
    out = block.astype(np.float64)
    for i in range(block.shape[1]):
        sel = np.flatnonzero(have > i)
        if sel.size == 0:
            continue
        try:
            out[sel, i] = rows.clean(block[sel, i], 0)
        except InputError:
            for j in sel:
                try:
                    _Rows(rows.name, rows.n, rows.src).clean(block[j : j + 1, i], 0)
                except InputError as exc:
                    raise InputError(str(exc).replace("row 0", f"step {lo + j}, row {i}")) from None
            raise
    return out


def _running_weight(px: np.ndarray, qx: np.ndarray) -> np.ndarray:
    """Block verification's weights a_i = min(1, a_{i−1}·p_i(x_i)/q_i(x_i)), a_0 = 1, i = 1 … γ
    (``tree._verifiers.block_rates``; q = 0 is read as 1e-300, so the weight becomes 1)."""
    a = np.empty_like(px)
    prev = np.ones(px.shape[0])
    for i in range(px.shape[1]):
        with np.errstate(invalid="ignore"):
            r = prev * px[:, i] / np.maximum(qx[:, i], 1e-300)
        prev = np.where(r >= 1, 1.0, r)
        a[:, i] = prev
    return a


def _chain_values(log: SparseChainLog, verifier: str, name: str, strict: bool) -> np.ndarray:
    """Expected accepted drafts of each step of a sparse chain log under ``verifier`` ("token",
    "target_only", "block"), given its drafted chain (Rao–Blackwellised; module docstring)."""
    X, px, qx = log.X, log.px, log.qx
    valid = X >= 0
    if verifier != "target_only" and qx is None:
        raise InputError(f"{name}: verifier {verifier!r} needs qx (the draft's probabilities of the drafted tokens)")
    if verifier == "block" and log.block_mass is None:
        raise InputError(f"{name}: verifier 'block' needs block_mass (SparseChainLog.from_rows stores it)")
    if strict and verifier != "target_only" and (valid & ~(qx > 0)).any():
        raise InputError("Q: a drafted token has draft probability 0 in its row (were the drafts drawn from Q?)")
    pxz = np.where(valid, px, 0.0)
    if verifier == "target_only":
        return np.cumprod(pxz, axis=1).sum(axis=1)
    qxz = np.where(valid, qx, 1.0)
    if verifier == "token":
        ratio = np.minimum(1.0, pxz / np.maximum(qxz, 1e-300))
        return np.cumprod(ratio, axis=1).sum(axis=1)
    a = _running_weight(pxz, qxz)
    gam = valid.sum(axis=1)
    T, g = X.shape
    total = np.zeros(T)
    tail = np.ones(T)
    for i in range(g, 0, -1):  # E[τ] = Σ_i i·h_i·Π_{j>i}(1 − h_j), h_γ = a_γ (tree._verifiers.block_value)
        s = np.where(i < gam, log.block_mass[:, i - 1] if i < g else 0.0, 0.0)
        den = s + 1 - a[:, i - 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            h = np.where(i < gam, np.where(den == 0, 1.0, s / np.where(den == 0, 1.0, den)), a[:, i - 1])
        h = np.where(i <= gam, h, 0.0)
        total = total + i * h * tail
        tail = tail * (1 - h)
    return total


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
        * a **sparse chain log** (:class:`~optaccept.audit.SparseChainLog`, or a mapping of its keys): ``X``,
          ``px`` and, as the verifier needs them, ``qx``, ``block_mass``; optionally ``m``;
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
    sparse = arrays.get("_sparse")
    if sparse is None and "px" in arrays:
        sparse = SparseChainLog._from_arrays(arrays, name)
    if sparse is not None:
        verifier = "token" if verifier is None else verifier
        if verifier not in CHAIN_VERIFIERS:
            raise InputError(f"verifier: chain logs are valued for {CHAIN_VERIFIERS}, got {verifier!r}")
        exact = _chain_values(sparse, verifier, name, strict=True)
        counts = sparse.m if sparse.m is not None else arrays.get("accepted", arrays.get("m"))
        return _finish(exact, counts, sparse.request, "chain", verifier, name)
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
            # the full rows are read a few steps at a time into the sparse form: one valuation
            sparse = _from_rows(P, Q, X, None, None, None, text=False, block=verifier == "block")
            exact = _chain_values(sparse, verifier, name, strict=True)
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
    return _finish(exact, counts, request, kind, verifier, name)


def _finish(exact: Any, counts: Any, request: Any, kind: str, verifier: str | None, name: str) -> StepValues:
    """The per-step values with their counts and request ids checked."""
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
