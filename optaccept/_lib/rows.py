"""Row-wise array operations shared by the batched solvers, on numpy arrays or torch tensors.

The batched α* (:mod:`optaccept.optimal._batched`) and the batched verifier acceptances
(:mod:`optaccept.verifiers._batched`) write each formula once against the namespace of
their input — numpy for numpy arrays, torch for tensors (CPU or GPU) — in the style of
the array API (scipy, POT).  The complements 1 − Q, 1 − qᵢ, 1 − (1 − c)ᵏ come from
:mod:`optaccept._lib.stable`; this module adds what the two libraries spell differently:
sorting rows, gathering along rows, row minima, the top-m mask, and the input/output
conversions.  torch is imported only when a tensor (or a torch device) is passed.

Conventions: arrays have shape (B, n), one (target, draft) pair per row; p is the
target, q the draft, k the number of drafts.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._errors import InputError, RenormalizedWarning
from .stable import array_namespace, is_torch, ratio_key
from .validation import as_distribution_row_pair, check_k

__all__ = [
    "sample_rows",
    "Rows",
    "as_rows",
    "iter_rows",
    "cpu_chunk_rows",
    "resolve_device",
    "shared_sort",
    "sorted_by_ratio",
    "take_rows",
    "row_min",
    "top_mask",
    "check_k",
]


def resolve_device(device: Any = "auto") -> Any:
    """``"auto"`` gives ``cuda`` when available, else ``cpu``; anything else goes to
    :class:`torch.device` (needs torch)."""
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InputError(f"device: not a torch device ({exc})") from None


class Rows:
    """Validated (p, q) rows and how to hand results back.

    ``p``, ``q``: float64 (or float32 when both inputs are float32 tensors) numpy arrays
    or torch tensors on the compute device, each row summing to 1.  ``numpy_out``: the
    caller passed numpy/list input and gets numpy back.
    """

    __slots__ = ("p", "q", "numpy_out")

    def __init__(self, p: Any, q: Any, numpy_out: bool) -> None:
        self.p, self.q, self.numpy_out = p, q, numpy_out

    @property
    def on_cpu(self) -> bool:
        return not is_torch(self.p) or self.p.device.type == "cpu"

    def out(self, x: Any) -> Any:
        """Results in the caller's kind: numpy for numpy input, else a tensor on the device."""
        if self.numpy_out:
            return x.cpu().numpy() if is_torch(x) else np.asarray(x)
        if is_torch(x):
            return x
        import torch

        return torch.as_tensor(np.asarray(x), device=self.p.device)


def as_rows(p: Any, q: Any, device: Any = None) -> Rows:
    """Validate target and draft rows (shape (B, n), a 1-D pair is one row) with the
    library's sum rule and move them to ``device`` (``None``: stay where they are —
    numpy stays numpy; ``"auto"``: cuda when available)."""
    numpy_out = not (is_torch(p) or is_torch(q))
    if not numpy_out and (is_torch(p) != is_torch(q)):
        import torch

        p = p if is_torch(p) else torch.as_tensor(np.asarray(p, dtype=np.float64))
        q = q if is_torch(q) else torch.as_tensor(np.asarray(q, dtype=np.float64))
        if p.device != q.device:
            q = q.to(p.device)
    pr, qr = as_distribution_row_pair(p, q, keep_float32=True)
    if device is not None:
        dev = resolve_device(device)
        import torch

        pr = torch.as_tensor(pr).to(dev)
        qr = torch.as_tensor(qr).to(dev)
    elif is_torch(pr) and pr.device != qr.device:
        raise InputError(f"p and q: on different devices ({pr.device} vs {qr.device})")
    return Rows(pr, qr, numpy_out)


def cpu_chunk_rows(n: int) -> int:
    """Rows per chunk on a CPU: about 2^17 entries (1 MiB of float64 per array), so that a
    chunk's passes run in cache, as the numpy core's row-at-a-time work does."""
    return max(1, (1 << 17) // max(1, n))


def iter_rows(p: Any, q: Any, device: Any = None, batch_size: int | None = None) -> Iterator[Rows]:
    """Validate and yield (p, q) rows chunk by chunk (chunks of ``batch_size`` rows; default
    :func:`cpu_chunk_rows` on a CPU, 4096 rows on a GPU).

    Validation runs per chunk, in cache.  An error is re-raised from the whole batch (so
    that it names the right row), and a chunk that was rescaled with a
    :class:`~optaccept.RenormalizedWarning` gives one warning for the whole batch.
    """

    if not (is_torch(p) or isinstance(p, np.ndarray)):
        p = np.asarray(p, dtype=object) if _ragged(p) else np.asarray(p)
    if not (is_torch(q) or isinstance(q, np.ndarray)):
        q = np.asarray(q, dtype=object) if _ragged(q) else np.asarray(q)
    if getattr(p, "ndim", 0) != 2 or getattr(q, "ndim", 0) != 2 or tuple(p.shape) != tuple(q.shape):
        rows = as_rows(p, q, device)  # shapes: the whole-batch messages
        yield rows
        return
    if batch_size is None:
        on_gpu = device not in (None, "cpu") and str(resolve_device(device)) != "cpu"
        on_gpu = on_gpu or (is_torch(p) and p.device.type != "cpu")
        batch_size = 4096 if on_gpu else cpu_chunk_rows(int(p.shape[1]))
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size: must be a positive integer, got {batch_size!r}")
    B = int(p.shape[0])
    warned = False
    for lo in range(0, max(B, 1), int(batch_size)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RenormalizedWarning)
            try:
                rows = as_rows(p[lo : lo + batch_size], q[lo : lo + batch_size], device)
            except InputError:
                as_rows(p, q, device)
                raise
        for w in caught:
            if issubclass(w.category, RenormalizedWarning):
                warned = True
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        yield rows
    if warned:
        as_rows(p, q, device)  # the whole-batch warning, once


def _ragged(x: Any) -> bool:
    try:
        np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return True
    return False


def take_rows(x: Any, index: Any) -> Any:
    """x[b, index[b, j]] for every row b (numpy ``take_along_axis`` / torch ``gather``)."""
    if is_torch(x):
        return x.gather(1, index)
    return np.take_along_axis(x, index, axis=1)


def row_min(x: Any) -> tuple[Any, Any]:
    """(minimum, first index of the minimum) of every row."""
    if is_torch(x):
        j = x.argmin(dim=1)
        return x.gather(1, j[:, None])[:, 0], j
    j = np.argmin(x, axis=1)
    return np.take_along_axis(x, j[:, None], axis=1)[:, 0], j


def _argsort_rows(key: Any) -> Any:
    """Row-wise stable argsort (numpy's sort is several times faster than torch's on a CPU)."""
    if is_torch(key):
        if key.device.type == "cpu":
            import torch

            return torch.from_numpy(np.argsort(key.numpy(), axis=1, kind="stable"))
        return key.argsort(dim=1, stable=True)
    return np.argsort(key, axis=1, kind="stable")


_SORT_MEMO: dict | None = None


@contextlib.contextmanager
def shared_sort() -> Iterator[None]:
    """Within this block, rows sorted by p/q are computed once per (p, q) batch and reused
    by every solver (the batch arrays must stay alive and unchanged)."""
    global _SORT_MEMO
    outer = _SORT_MEMO
    _SORT_MEMO = {} if outer is None else outer
    try:
        yield
    finally:
        _SORT_MEMO = outer


def sorted_by_ratio(p: Any, q: Any) -> tuple[Any, Any, Any]:
    """(order, p sorted, q sorted): every row in p/q ascending order, q = 0 last."""
    if _SORT_MEMO is not None:
        if is_torch(p):
            key = (p.data_ptr(), q.data_ptr(), tuple(p.shape), str(p.dtype), str(p.device))
        else:
            key = (p.__array_interface__["data"][0], q.__array_interface__["data"][0], p.shape, str(p.dtype))
        if key not in _SORT_MEMO:
            _SORT_MEMO.clear()  # one batch at a time
            _SORT_MEMO[key] = _sort_rows(p, q)
        return _SORT_MEMO[key]
    return _sort_rows(p, q)


def _sort_rows(p: Any, q: Any) -> tuple[Any, Any, Any]:
    order = _argsort_rows(ratio_key(p, q))  # the library's one array key (optaccept._lib.stable)
    return order, take_rows(p, order), take_rows(q, order)


def top_mask(q: Any, m: int) -> Any:
    """Mask of the m largest entries of every row, ties broken by lower index."""
    xp = array_namespace(q)
    B, n = q.shape
    if m == 0:
        return xp.zeros_like(q, dtype=xp.bool)
    if is_torch(q):
        v = q.topk(m, dim=1).values[:, -1:]
    else:
        v = np.partition(q, n - m, axis=1)[:, n - m : n - m + 1]
    above = q > v
    tied = q == v
    need = m - above.sum(1, keepdims=True) if not is_torch(q) else m - above.sum(1, keepdim=True)
    if is_torch(q):
        if bool((tied.sum(1, keepdim=True) <= need).all()):
            return above | tied
        return above | (tied & (tied.to(xp.int64).cumsum(1) <= need))
    if bool((tied.sum(1, keepdims=True) <= need).all()):
        return above | tied
    return above | (tied & (np.cumsum(tied, axis=1) <= need))


def greedy_split(q: Any, k: int, offset: int = 0) -> tuple[Any, Any]:
    """Greedy's (Hu et al.) deterministic set T (each row's k-1 most likely tokens) as a
    mask, and q̃ = q off T renormalised; InputError for k > n or a row with no mass off T
    (``offset`` is added to the row number in the message)."""
    xp = array_namespace(q)
    n = q.shape[1]
    if k > n:
        raise InputError(f"k: Greedy needs k <= n, got k={k}, n={n}")
    in_t = top_mask(q, k - 1)
    rest = xp.where(in_t, xp.zeros_like(q), q)
    mass = rest.sum(1)
    if bool((mass <= 0).any()):
        row = int(mass.argmin()) + offset
        raise InputError(
            f"q: row {row} puts all its mass on its k-1 = {k - 1} most likely tokens; Greedy needs mass outside them"
        )
    return in_t, rest / mass[:, None]


#: Cells (rows × tokens) sampled per block by :func:`sample_rows`.
_CHUNK_CELLS = 4_000_000


def sample_rows(rng: np.random.Generator, dists: np.ndarray, index: np.ndarray | None = None) -> np.ndarray:
    """One token per row of a (rows, n) array of non-negative weights (inverse CDF);
    with ``index``, one token per entry of index from row ``dists[index[i]]``."""
    rows = dists.shape[0] if index is None else index.size
    out = np.empty(rows, dtype=np.int64)
    if rows == 0:
        return out
    step = max(1, _CHUNK_CELLS // max(dists.shape[1], 1))
    for lo in range(0, rows, step):
        block = dists[lo : lo + step] if index is None else dists[index[lo : lo + step]]
        d = np.clip(block, 0.0, None)
        cum = np.cumsum(d, axis=1)
        u = rng.random(d.shape[0]) * cum[:, -1]
        idx = (cum <= u[:, None]).sum(axis=1)
        out[lo : lo + step] = np.minimum(idx, d.shape[1] - 1)
    return out
