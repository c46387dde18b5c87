"""Next-token distributions of a target and a draft model, with provenance.

Row i of :attr:`Distributions.target` is the target's distribution p at one
generated position, row i of :attr:`Distributions.draft` the draft's q at the
same position.  Files are compressed ``.npz`` archives holding the rows (dense,
or, when most entries are zero because both sides were truncated, the union
of the two supports per row), per-row origin (prompt, step, sampled token), a
JSON provenance record and a SHA-256 checksum of everything else.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.io import _READ_ERRORS, _first_line

__all__ = ["Distributions", "SparseRows", "load_source"]

FORMAT = "optaccept.llm.Distributions/1"


def _checksum(arrays: dict[str, np.ndarray], meta_json: str) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    h.update(meta_json.encode())
    return h.hexdigest()


def _want_sparse(sparse: bool | None, target: np.ndarray, draft: np.ndarray) -> bool:
    """``sparse``, or when it is None: under half of the entries are nonzero in p or q."""
    if sparse is None:
        return int(np.count_nonzero((target > 0) | (draft > 0))) < 0.5 * target.size
    return bool(sparse)


def _write_archive(path: str | os.PathLike, arrays: dict[str, np.ndarray], meta_json: str) -> Path:
    """Write ``arrays``, ``meta_json`` and their checksum to a compressed ``.npz``, atomically."""
    path = Path(path)
    checksum = _checksum(arrays, meta_json)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays, meta=np.array(meta_json), checksum=np.array(checksum))
    os.replace(tmp, path)
    return path


def _read_archive(
    path: str | os.PathLike, kind: str, fmt: str, verify: bool, dense: bool = True
) -> tuple[Any, Any, dict[str, np.ndarray], dict[str, Any]]:
    """Read a file written by :func:`_write_archive` in format ``fmt``.

    Returns the rows (target, draft), the other arrays and the provenance (without its
    format); raises InputError naming ``kind`` for anything else.  ``dense=False``:
    the rows come back as one :class:`SparseRows` (target) and ``None`` (draft).
    """
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise InputError(f"path: {path} {what}")
    # the file is opened here, so that it is closed even when numpy's reader fails on it
    with path.open("rb") as handle:
        try:
            obj = np.load(handle, allow_pickle=False)
        except _READ_ERRORS as exc:
            detail = "" if "pickled" in str(exc) else f" ({_first_line(exc)})"
            raise InputError(f"path: {path} is not {kind}{detail}") from None
        if not isinstance(obj, np.lib.npyio.NpzFile):
            raise InputError(f"path: {path} holds a single array, not {kind}")
        try:
            with obj as z:
                data = {name: z[name] for name in z.files}
        except _READ_ERRORS as exc:
            raise InputError(f"path: {path} is damaged ({_first_line(exc)})") from None
    if "meta" not in data or "checksum" not in data:
        raise InputError(f"path: {path} is not {kind}")
    try:
        meta_json = str(data.pop("meta"))
        checksum = str(data.pop("checksum"))
        if verify and _checksum(data, meta_json) != checksum:
            raise InputError(f"path: {path} fails its checksum (corrupted or edited)")
        meta = json.loads(meta_json)
        if not isinstance(meta, dict) or meta.pop("format", None) != fmt:
            raise InputError(f"path: {path} has an unknown format")
        if not dense:
            if "indptr" in data:
                m, n = (int(x) for x in data["shape"])
                rows_ = SparseRows(data["indptr"], data["indices"], data["target_values"], data["draft_values"], n)
                if rows_.n_rows != m:
                    raise ValueError("indptr does not match the shape")
            else:
                rows_ = SparseRows.from_dense(data["target"], data["draft"])
            return rows_, None, data, meta
        if "indptr" in data:
            m, n = (int(x) for x in data["shape"])
            rows = np.repeat(np.arange(m), np.diff(data["indptr"]))
            target = np.zeros((m, n), dtype=np.float32)
            draft = np.zeros((m, n), dtype=np.float32)
            target[rows, data["indices"]] = data["target_values"]
            draft[rows, data["indices"]] = data["draft_values"]
        else:
            target, draft = data["target"], data["draft"]
    except InputError:
        raise
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise InputError(f"path: {path} is malformed ({_first_line(exc)})") from None
    return target, draft, data, meta


class SparseRows:
    """Rows of p and q kept on each row's union of supports (CSR, float32).

    For truncated (top-k / top-p) rows over a large vocabulary: a row of a 49,152-token
    vocabulary with top-50 laws holds ~70 entries instead of 2 × 49,152.  ``indices``
    are sorted within a row; an entry may be zero on one side, never on both.
    """

    def __init__(self, indptr: Any, indices: Any, target_values: Any, draft_values: Any, vocab_size: int) -> None:
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.target_values = np.asarray(target_values, dtype=np.float32)
        self.draft_values = np.asarray(draft_values, dtype=np.float32)
        self.vocab_size = int(vocab_size)
        nnz = self.indices.size
        if (
            self.indptr.ndim != 1
            or self.indptr.size < 1
            or self.indptr[0] != 0
            or self.indptr[-1] != nnz
            or np.any(np.diff(self.indptr) < 0)
            or self.target_values.shape != (nnz,)
            or self.draft_values.shape != (nnz,)
            or (nnz and (self.indices.min() < 0 or self.indices.max() >= self.vocab_size))
        ):
            raise InputError("rows: malformed sparse rows (indptr, indices and values disagree)")
        for a in (self.indptr, self.indices, self.target_values, self.draft_values):
            a.setflags(write=False)

    @classmethod
    def from_dense(cls, target: Any, draft: Any) -> SparseRows:
        t = np.asarray(target, dtype=np.float32)
        d = np.asarray(draft, dtype=np.float32)
        if t.ndim != 2 or t.shape != d.shape:
            raise InputError(f"target, draft: must be 2-D arrays of equal shape, got {t.shape} and {d.shape}")
        rows, cols = np.nonzero((t != 0) | (d != 0))
        counts = np.bincount(rows, minlength=t.shape[0])
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return cls(indptr, cols, t[rows, cols], d[rows, cols], t.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.indptr.size - 1)

    @property
    def nnz(self) -> int:
        return int(self.indices.size)

    def _entries(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """(output row, entry position) of every stored entry of ``rows``, in order."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        lo, hi = self.indptr[rows], self.indptr[rows + 1]
        counts = hi - lo
        out_row = np.repeat(np.arange(rows.size), counts)
        pos = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(lo, counts)
        return out_row, pos

    def dense(self, rows: Any = None, dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray]:
        """Dense (len(rows), vocab) arrays of p and q (default: every row)."""
        rows = np.arange(self.n_rows) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
        r, pos = self._entries(rows)
        t = np.zeros((rows.size, self.vocab_size), dtype=dtype)
        d = np.zeros((rows.size, self.vocab_size), dtype=dtype)
        t[r, self.indices[pos]] = self.target_values[pos]
        d[r, self.indices[pos]] = self.draft_values[pos]
        return t, d

    def row_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Float64 sums of every row of p and of q (the renormalising constants)."""
        row = np.repeat(np.arange(self.n_rows), np.diff(self.indptr))
        t = np.bincount(row, weights=self.target_values.astype(np.float64), minlength=self.n_rows)
        d = np.bincount(row, weights=self.draft_values.astype(np.float64), minlength=self.n_rows)
        return t, d

    def values_at(self, rows: Any, cols: Any) -> tuple[np.ndarray, np.ndarray]:
        """Stored p and q (float32) at the pairs (``rows[i]``, ``cols[i]``); 0 where no
        entry is stored.  One binary search over the (row, column) keys, no dense row."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        n = max(self.vocab_size, 1)
        keys = np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.indptr)) * n + self.indices
        want = rows * n + cols
        pos = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
        hit = (keys[pos] == want) if keys.size else np.zeros(want.size, dtype=bool)
        t = np.where(hit, self.target_values[pos] if keys.size else 0, 0).astype(np.float32)
        d = np.where(hit, self.draft_values[pos] if keys.size else 0, 0).astype(np.float32)
        return t, d

    def compact(self, rows: Any, columns: Any) -> tuple[np.ndarray, np.ndarray]:
        """Rows of p and q as float64 restricted to the sorted ``columns`` (which must hold
        every stored column of ``rows``), each renormalised by its full row sum."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        columns = np.asarray(columns, dtype=np.int64)
        r, pos = self._entries(rows)
        where = np.searchsorted(columns, self.indices[pos])
        t = np.zeros((rows.size, columns.size))
        d = np.zeros((rows.size, columns.size))
        t[r, where] = self.target_values[pos]
        d[r, where] = self.draft_values[pos]
        t /= t.sum(axis=1, keepdims=True)
        d /= d.sum(axis=1, keepdims=True)
        return t, d

    def take(self, rows: Any) -> SparseRows:
        """The given rows, in the given order."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        _, pos = self._entries(rows)
        counts = self.indptr[rows + 1] - self.indptr[rows]
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return SparseRows(indptr, self.indices[pos], self.target_values[pos], self.draft_values[pos], self.vocab_size)

    def support(self, rows: Any) -> np.ndarray:
        """Sorted tokens with p > 0 or q > 0 in at least one of ``rows``."""
        _, pos = self._entries(rows)
        live = (self.target_values[pos] > 0) | (self.draft_values[pos] > 0)
        return np.unique(self.indices[pos][live]).astype(np.int64)

    @classmethod
    def concatenate(cls, parts: Sequence[SparseRows]) -> SparseRows:
        off = np.cumsum([0] + [p.nnz for p in parts])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(parts, off, strict=False)])
        return cls(
            indptr,
            np.concatenate([p.indices for p in parts]),
            np.concatenate([p.target_values for p in parts]),
            np.concatenate([p.draft_values for p in parts]),
            parts[0].vocab_size,
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """The storage arrays of a sparse archive."""
        return {
            "indptr": self.indptr,
            "indices": self.indices,
            "target_values": self.target_values,
            "draft_values": self.draft_values,
            "shape": np.array([self.n_rows, self.vocab_size], dtype=np.int64),
        }


class Distributions:
    """Target and draft next-token distributions at a set of positions.

    Parameters
    ----------
    target, draft : numpy.ndarray, shape (positions, vocab)
        Rows are distributions (stored as float32).
    prompt_index, step, token : numpy.ndarray of int, shape (positions,)
        The prompt each row comes from, the generated step (0 = first
        generated token) and the token the target sampled there.
    meta : dict
        Provenance (JSON-serialisable).

    Examples
    --------
    >>> from optaccept import real
    >>> data = real.Distributions.load(real.sample_path())
    >>> data.target.shape == data.draft.shape, data.target.shape[0] > 100
    (True, True)
    >>> round(float(data.target[0].sum()), 4)  # each row is a next-token law
    1.0
    """

    def __init__(
        self,
        target: Any,
        draft: Any,
        *,
        prompt_index: Any = None,
        step: Any = None,
        token: Any = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        t = np.array(target, dtype=np.float32)
        d = np.array(draft, dtype=np.float32)
        if t.ndim != 2 or t.shape != d.shape:
            raise InputError(f"target, draft: must be 2-D arrays of equal shape, got {t.shape} and {d.shape}")
        m = t.shape[0]
        self._target = t
        self._draft = d
        self.prompt_index = self._ints(prompt_index, m, "prompt_index")
        self.step = self._ints(step, m, "step")
        self.token = self._ints(token, m, "token")
        self.meta = dict(meta or {})
        for a in (self._target, self._draft, self.prompt_index, self.step, self.token):
            a.setflags(write=False)

    @staticmethod
    def _ints(x: Any, m: int, name: str) -> np.ndarray:
        if x is None:
            return np.full(m, -1, dtype=np.int64)
        a = np.array(x, dtype=np.int64).reshape(-1)
        if a.shape != (m,):
            raise InputError(f"{name}: must have one entry per position ({m}), got {a.shape}")
        return a

    # ---------------------------------------------------------------- access

    @property
    def target(self) -> np.ndarray:
        """(positions, vocab) float32 target distributions p (read-only)."""
        return self._target

    @property
    def draft(self) -> np.ndarray:
        """(positions, vocab) float32 draft distributions q (read-only)."""
        return self._draft

    @property
    def n_positions(self) -> int:
        return int(self._target.shape[0])

    @property
    def vocab_size(self) -> int:
        return int(self._target.shape[1])

    def __len__(self) -> int:
        return self.n_positions

    def __repr__(self) -> str:
        return (
            f"Distributions({self.n_positions} positions, vocab {self.vocab_size}, "
            f"target={self.meta.get('target_model', '?')!r}, "
            f"draft={self.meta.get('draft_model', '?')!r})"
        )

    def rows(self, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``start:stop`` of p and q as float64, each renormalised to sum 1
        (float32 softmax rows are off by ~1e-7).

        Parameters
        ----------
        start : int
            First row.
        stop : int or None
            End of the rows (None: the last).

        Returns
        -------
        p, q : ndarray of float64, shape (rows, vocab)
            Target and draft rows.
        """
        p = self._target[start:stop].astype(np.float64)
        q = self._draft[start:stop].astype(np.float64)
        p /= p.sum(axis=1, keepdims=True)
        q /= q.sum(axis=1, keepdims=True)
        return p, q

    def compact_rows(self, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`rows`, without the tokens where both p and q are 0.

        Each row keeps its tokens with p > 0 or q > 0 in vocabulary order,
        zero-padded to the batch's largest support.  α* and every verifier's
        acceptance ignore tokens with p = q = 0, so truncated (top-k / top-p)
        data can be processed at the size of its support.

        Parameters
        ----------
        start : int
            First row.
        stop : int or None
            End of the rows (None: the last).

        Returns
        -------
        p, q : ndarray of float64, shape (rows, width)
            Target and draft rows on the union of their supports, zero-padded.
        """
        p, q = self.rows(start, stop)
        mask = (p > 0) | (q > 0)
        width = int(mask.sum(axis=1).max()) if len(p) else 0
        if width >= p.shape[1]:
            return p, q
        order = np.argsort(~mask, axis=1, kind="stable")[:, :width]
        return np.take_along_axis(p, order, 1), np.take_along_axis(q, order, 1)

    def subset(self, index: Any) -> Distributions:
        """The positions selected by ``index`` (slice, integer or boolean array).

        Parameters
        ----------
        index : slice, int array or bool array
            The positions kept (a numpy index of the rows).

        Returns
        -------
        Distributions
            The selected positions, with the same provenance.
        """
        return Distributions(
            self._target[index],
            self._draft[index],
            prompt_index=self.prompt_index[index],
            step=self.step[index],
            token=self.token[index],
            meta=self.meta,
        )

    @classmethod
    def concatenate(cls, parts: list[Distributions], meta: dict[str, Any] | None = None) -> Distributions:
        """Stack the positions of several parts (same vocabulary).

        Parameters
        ----------
        parts : list of Distributions
            The parts, in order.
        meta : dict, optional
            Provenance of the result (default: the first part's).

        Returns
        -------
        Distributions
            All positions of the parts.

        Raises
        ------
        InputError
            If ``parts`` is empty or the vocabulary sizes differ.
        """
        if not parts:
            raise InputError("parts: nothing to concatenate")
        vocab = {p.vocab_size for p in parts}
        if len(vocab) != 1:
            raise InputError(f"parts: vocabulary sizes differ ({sorted(vocab)})")
        return cls(
            np.concatenate([p.target for p in parts]),
            np.concatenate([p.draft for p in parts]),
            prompt_index=np.concatenate([p.prompt_index for p in parts]),
            step=np.concatenate([p.step for p in parts]),
            token=np.concatenate([p.token for p in parts]),
            meta=parts[0].meta if meta is None else meta,
        )

    # --------------------------------------------------------------- storage

    def _arrays(self, sparse: bool) -> dict[str, np.ndarray]:
        out = {"prompt_index": self.prompt_index, "step": self.step, "token": self.token}
        if sparse:
            mask = (self._target > 0) | (self._draft > 0)
            rows, cols = np.nonzero(mask)
            counts = np.bincount(rows, minlength=self.n_positions)
            out["indptr"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            out["indices"] = cols.astype(np.int32)
            out["target_values"] = self._target[rows, cols]
            out["draft_values"] = self._draft[rows, cols]
            out["shape"] = np.array(self._target.shape, dtype=np.int64)
        else:
            out["target"] = self._target
            out["draft"] = self._draft
        return out

    def save(self, path: str | os.PathLike, *, sparse: bool | None = None) -> Path:
        """Write a compressed ``.npz`` with provenance and a checksum.

        ``sparse=None`` stores the union of supports when under half of the
        entries are nonzero (truncated distributions), else dense rows.

        Parameters
        ----------
        path : str or os.PathLike
            The file written.
        sparse : bool or None
            Store the union of supports (True), dense rows (False), or choose (None).

        Returns
        -------
        pathlib.Path
            The path written.
        """
        arrays = self._arrays(_want_sparse(sparse, self._target, self._draft))
        meta_json = json.dumps({"format": FORMAT, **self.meta}, sort_keys=True)
        return _write_archive(path, arrays, meta_json)

    @classmethod
    def load(cls, path: str | os.PathLike, *, verify: bool = True) -> Distributions:
        """Read a file written by :meth:`save`; checks the checksum unless told not to.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        verify : bool
            Check the checksum.

        Returns
        -------
        Distributions
            The positions and their provenance.

        Raises
        ------
        InputError
            If the file is missing, damaged, of another format, or fails its checksum.
        """
        kind = "an optaccept distribution archive (.npz written by 'optaccept extract')"
        target, draft, data, meta = _read_archive(path, kind, FORMAT, verify)
        return cls(
            target,
            draft,
            prompt_index=data["prompt_index"],
            step=data["step"],
            token=data["token"],
            meta=meta,
        )


def check_data_and_ks(data: Any, ks: Any) -> list[int]:
    """The checks every table over a :class:`Distributions` starts with: ``data`` is a
    non-empty Distributions and ``ks`` a non-empty sequence of positive integers (returned
    as a list)."""
    if not isinstance(data, Distributions):
        raise InputError("data: must be a Distributions (see optaccept.llm.extract)")
    if len(data) == 0:
        raise InputError("data: holds no positions")
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise InputError(f"ks: must be positive integers, got {ks}")
    return ks


def load_source(source: str | os.PathLike, *, start: int = 0, positions: int | None = None) -> Any:
    """A distribution file as a sweep source (``tree.sweep(..., loader=load_source)``).

    Parameters
    ----------
    source : str or os.PathLike
        Path of a distribution file written by :meth:`Distributions.save`.
    start : int
        First row (position) to read.
    positions : int, optional
        Number of rows from ``start``; all the rest when None.

    Returns
    -------
    tuple
        ``(PositionPair, None)``: the rows ``start`` .. ``start + positions`` as a
        :class:`~optaccept.sequence.PositionPair`, and no separate draft model.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from optaccept import real, sequence
    >>> data = real.Distributions(np.array([[.5, .5, 0], [.2, .3, .5]]), np.array([[.8, .2, 0], [.2, .3, .5]]))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "toy.npz"
    ...     _ = data.save(path)
    ...     pair, _ = real.load_source(path, start=0, positions=2)
    ...     print(type(pair).__name__, round(sequence.expected_rejections(pair), 4))  # TV 0.3 + 0
    PositionPair 0.3
    """

    d = Distributions.load(Path(source))
    stop = None if positions is None else start + positions
    from ..sequence import PositionPair  # (tqdm): optaccept.real loads without it

    return (PositionPair(np.asarray(d.target)[start:stop], np.asarray(d.draft)[start:stop]), None)
