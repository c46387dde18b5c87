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
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import InputError
from ._io import _READ_ERRORS, _first_line

__all__ = ["Distributions"]

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
    path: str | os.PathLike, kind: str, fmt: str, verify: bool
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, Any]]:
    """Read a file written by :func:`_write_archive` in format ``fmt``.

    Returns the dense rows (target, draft), the other arrays and the provenance
    (without its format); raises InputError naming ``kind`` for anything else.
    """
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise InputError(f"path: {path} {what}")
    try:
        obj = np.load(path, allow_pickle=False)
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
        (float32 softmax rows are off by ~1e-7)."""
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
        """
        p, q = self.rows(start, stop)
        mask = (p > 0) | (q > 0)
        width = int(mask.sum(axis=1).max()) if len(p) else 0
        if width >= p.shape[1]:
            return p, q
        order = np.argsort(~mask, axis=1, kind="stable")[:, :width]
        return np.take_along_axis(p, order, 1), np.take_along_axis(q, order, 1)

    def subset(self, index: Any) -> Distributions:
        """The positions selected by ``index`` (slice, integer or boolean array)."""
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
        """Stack the positions of several parts (same vocabulary)."""
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
        """
        arrays = self._arrays(_want_sparse(sparse, self._target, self._draft))
        meta_json = json.dumps({"format": FORMAT, **self.meta}, sort_keys=True)
        return _write_archive(path, arrays, meta_json)

    @classmethod
    def load(cls, path: str | os.PathLike, *, verify: bool = True) -> Distributions:
        """Read a file written by :meth:`save`; checks the checksum unless told not to."""
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
