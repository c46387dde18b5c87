r"""Optimal acceptance α* for a batch of (target, draft) rows, numpy or torch.

:func:`batched_optimal_acceptance` takes rows ``p`` and ``q`` of shape (B, n) — numpy
arrays (torch is then never imported) or torch tensors on any device — and returns the
B values of

.. math::

    α^* = \min_{S ⊆ Ω}\; p(S) + 1 - D(\mathrm{set}(\bar x) ⊆ S)

(Hu et al., *Towards Optimal Multi-draft Speculative Decoding*, ICLR 2025, the
subset-selection dual; their n is our k).  The formulas are the numpy core's, in one
place each:

* ``"iid"`` — on a CPU every row goes through :func:`optaccept.optimal._sorted.iid_scan`,
  the core's bucketed prefix scan (no full sort); on a GPU the rows are sorted by p/q and
  ``P_j + 1 − Q_jᵏ`` is minimised over the n + 1 prefixes, with 1 − Q_jᵏ from the suffix
  mass λ_j (:func:`optaccept._lib.stable.one_minus_pow1m`) in both cases.
* ``"swor"`` — the same prefixes with 1 − D(S_j) from
  :func:`optaccept.drafts._swor.prefix_complements` (closed forms for k = 1, 2; the
  exponential-clock integral for k ≥ 3, accurate to ~1e-13 for k up to the support),
  k = 2 batched through :func:`optaccept._lib.stable.swor2_prefix_complement` on any device.
  For k ≥ 3 each row goes through the core's window search
  (:func:`optaccept.drafts._swor.best_prefix`): only the prefixes whose lower bound
  ``P_j + 1 − min(Q_jᵏ, B_j)`` (D_swor(S) ≤ q(S)ᵏ, and that bound after an exact first draw,
  docs/theory.md Lemmas 2.4 and 2.4b) reaches an upper bound of the minimum are integrated;
  the tokens after the window enter only through λ_j (D(S_j) depends only on the masses
  inside S_j and on λ_j), those before it through power sums.  GPU rows are integrated on
  the CPU.
* ``"greedy"`` — Hu et al.'s greedy drafts (§5): p(T) + Σ_{y∉T} min(p(y), q̃(y)), T the
  k − 1 most likely draft tokens (ties by lower index), q̃ = q off T renormalised; one
  expression for numpy and torch.
* ``"topk"`` — the k most likely tokens of q, drafted with probability 1 (ties by lower
  index): α* = p(T) for that set T, the minimiser (:class:`optaccept.drafts.TopK`).

``return_subset=True`` also returns a boolean (B, n) mask of a minimising S per row, the
certificate (re-check it with :func:`optaccept.verify`, row by row).

Letters: p is the target, q the draft, k the number of drafts, n the vocabulary.
Khisti et al. and Yin et al. call the target q and the draft p.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._lib import stable as _stable
from .._lib.rows import check_k, greedy_split, iter_rows, row_min, sorted_by_ratio, top_mask
from .._lib.stable import array_namespace, is_torch, one_minus_pow1m
from .._lib.validation import check_choice
from ..drafts import _swor, law_names
from ._sorted import iid_scan, ratio_order

__all__ = ["DRAFT_LAWS", "batched_optimal_acceptance", "greedy_rows"]

#: Draft laws accepted by :func:`batched_optimal_acceptance`: the registry's laws flagged ``batched``.
DRAFT_LAWS = law_names(batched=True)


def _numpy_rows(x: Any) -> np.ndarray:
    """A float64 numpy view (CPU tensors share memory) or copy (GPU tensors) of rows."""
    if is_torch(x):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _prefix_mask(order: Any, j: Any, n: int) -> np.ndarray:
    """Mask of the first j[b] tokens of order[b] for every row."""
    order = order.cpu().numpy() if is_torch(order) else np.asarray(order)
    j = j.cpu().numpy() if is_torch(j) else np.asarray(j)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n)[None, :].repeat(order.shape[0], 0), axis=1)
    return rank < j[:, None]


# --------------------------------------------------------------------------- IID


def _iid_cpu(p: np.ndarray, q: np.ndarray, k: int, want_subset: bool) -> tuple[np.ndarray, Any]:
    vals = np.empty(p.shape[0])
    masks = np.zeros(p.shape, dtype=bool) if want_subset else None
    for b in range(p.shape[0]):
        vals[b], subset = iid_scan(p[b], q[b], k)
        if want_subset:
            masks[b, subset()] = True
    return vals, masks


def _iid_sorted_rows(p: Any, q: Any, k: int, want_subset: bool) -> tuple[Any, Any]:
    """The full prefix scan on rows sorted by p/q (any namespace; used on GPUs)."""
    order, ps, qs = sorted_by_ratio(p, q)
    h = _stable.prefix_sums(ps, axis=1) + one_minus_pow1m(_clip01(_stable.suffix_sums(qs, axis=1)), k)
    val, j = row_min(h)
    xp = array_namespace(val)
    val = xp.minimum(val, xp.ones_like(val))
    return val, (_prefix_mask(order, j, p.shape[1]) if want_subset else None)


def _clip01(x: Any) -> Any:
    return x.clamp(0.0, 1.0) if is_torch(x) else np.clip(x, 0.0, 1.0)


# --------------------------------------------------------------------------- without replacement


def _check_support(q: Any, k: int, offset: int = 0, drafts: str = "swor") -> None:
    if q.shape[0] == 0:
        return
    support = (q > 0).sum(1)
    low = int(support.min())
    if low < k:
        row = int(support.argmin()) + offset
        what = f"drawing k={k} tokens without replacement" if drafts == "swor" else f"drafting the top k={k} tokens"
        raise InputError(f"k: {what} needs k <= |supp q|, but row {row} of q has {low} positive entries")


def _swor_k2_rows(p: Any, q: Any, want_subset: bool) -> tuple[Any, Any]:
    order, ps, qs = sorted_by_ratio(p, q)
    h = _stable.prefix_sums(ps, axis=1) + _stable.swor2_prefix_complement(qs, axis=1)
    val, j = row_min(h)
    xp = array_namespace(val)
    val = xp.minimum(val, xp.ones_like(val))
    return val, (_prefix_mask(order, j, p.shape[1]) if want_subset else None)


def _swor_row(p: np.ndarray, q: np.ndarray, k: int) -> tuple[float, np.ndarray, int]:
    """(α*, order, j*) of one row, k ≥ 3: the core's window search (:func:`optaccept.drafts._swor.best_prefix`)."""
    order = ratio_order(p, q)
    value, j = _swor.best_prefix(_stable.prefix_sums(p[order]), q[order], k)
    return min(1.0, value), order, j


def _swor_cpu(p: np.ndarray, q: np.ndarray, k: int, want_subset: bool) -> tuple[np.ndarray, Any]:
    vals = np.empty(p.shape[0])
    masks = np.zeros(p.shape, dtype=bool) if want_subset else None
    for b in range(p.shape[0]):
        vals[b], order, j = _swor_row(p[b], q[b], k)
        if want_subset:
            masks[b, order[:j]] = True
    return vals, masks


# --------------------------------------------------------------------------- greedy


def greedy_rows(p: Any, q: Any, k: int, want_subset: bool, offset: int = 0) -> tuple[Any, Any]:
    """α* of greedy drafts, batched: p(T) + Σ_{y∉T} min(p(y), q̃(y)) — also the acceptance of
    Hu et al.'s greedy verifier, which attains it (:mod:`optaccept.verifiers` calls this);
    and the minimiser T ∪ {y ∉ T : p < q̃} when ``want_subset``."""
    xp = array_namespace(p)
    if k == 1:
        val = xp.minimum(p, q).sum(1)
        return val, ((p < q) if want_subset else None)
    in_t, q_tilde = greedy_split(q, k, offset)
    zero = xp.zeros_like(q)
    val = xp.where(in_t, p, zero).sum(1) + xp.where(in_t, zero, xp.minimum(p, q_tilde)).sum(1)
    val = xp.minimum(val, xp.ones_like(val))
    return val, ((in_t | (~in_t & (p < q_tilde))) if want_subset else None)


# --------------------------------------------------------------------------- entry point


def batched_optimal_acceptance(
    p: Any,
    q: Any,
    k: int,
    drafts: str = "iid",
    *,
    device: Any = None,
    batch_size: int | None = None,
    return_subset: bool = False,
) -> Any:
    r"""Optimal acceptance α*(p, D) for a batch of (target, draft) rows.

    Parameters
    ----------
    p, q : array_like or torch.Tensor, shape (B, n)
        Target and draft rows, each summing to 1 (the library's sum rule; a 1-D pair is
        one row).  numpy input is computed in numpy (torch is not needed).
    k : int
        Number of drafts.
    drafts : {"iid", "swor", "greedy", "topk"}
        i.i.d. drafts from q; k drafts without replacement (k ≤ |supp q| in every row);
        Hu et al.'s greedy drafts; the k most likely tokens of q (k ≤ |supp q| in every
        row).  See the module docstring for the formulas.
    device : str or torch.device, optional
        Compute on this torch device (``"auto"``: cuda when available); numpy input then
        goes through torch and comes back as numpy.  Default: where the input is.
    batch_size : int, optional
        Rows per chunk (default: about 2^17 entries per chunk on a CPU — the chunk's work then
        runs in cache — and 4096 rows on a GPU).  Validation also runs chunk by chunk.
    return_subset : bool
        Also return a boolean mask (B, n) of a minimising subset S per row.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape (B,)
        α* per row — numpy for numpy input, a tensor on the compute device for tensor
        input; float32 only when both inputs are float32 tensors or arrays.  With
        ``return_subset``: ``(values, mask)``.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import batched_optimal_acceptance
    >>> p = np.array([[.40, .25, .15, .12, .08]]); q = np.array([[.30, .10, .35, .05, .20]])
    >>> batched_optimal_acceptance(p, q, 2).round(6)
    array([0.9075])
    """
    k = check_k(k)
    check_choice("drafts", drafts, DRAFT_LAWS)
    vals, masks, rows, done = [], [], None, 0
    for rows in iter_rows(p, q, device, batch_size):
        if drafts in ("swor", "topk"):
            _check_support(rows.q, k, done, drafts)
        v, m = _solve_chunk(rows.p, rows.q, k, drafts, rows.on_cpu, return_subset, done)
        vals.append(rows.out(_cast(v, rows.p)))
        masks.append(m)
        done += int(rows.p.shape[0])
    value = _concat(vals, rows)
    if not return_subset:
        return value
    mask = np.concatenate(masks) if masks else np.zeros(tuple(rows.p.shape), dtype=bool)
    return value, rows.out(mask)


def _solve_chunk(
    p: Any, q: Any, k: int, drafts: str, on_cpu: bool, want_subset: bool, offset: int = 0
) -> tuple[Any, Any]:
    if drafts == "greedy":
        v, m = greedy_rows(p, q, k, want_subset, offset)
        return v, (None if m is None else _numpy_mask(m))
    if drafts == "topk":  # α* = p(T), T the k most likely draft tokens (TopK)
        in_t = top_mask(q, k)
        xp = array_namespace(p)
        v = xp.where(in_t, p, xp.zeros_like(p)).sum(1)
        return xp.minimum(v, xp.ones_like(v)), (_numpy_mask(in_t) if want_subset else None)
    if drafts == "swor" and k == 2:
        pd, qd = _float64(p), _float64(q)
        return _swor_k2_rows(pd, qd, want_subset)
    if drafts == "iid" and not on_cpu:
        return _iid_sorted_rows(_float64(p), _float64(q), k, want_subset)
    pn, qn = _numpy_rows(p), _numpy_rows(q)
    if drafts == "iid" or k == 1:
        return _iid_cpu(pn, qn, k, want_subset)
    return _swor_cpu(pn, qn, k, want_subset)


def _float64(x: Any) -> Any:
    return x.double() if is_torch(x) else np.asarray(x, dtype=np.float64)


def _numpy_mask(m: Any) -> np.ndarray:
    return m.cpu().numpy() if is_torch(m) else np.asarray(m)


def _cast(v: Any, like: Any) -> Any:
    """Values in the rows' dtype (float32 stays float32) and kind."""
    if is_torch(like):
        import torch

        return torch.as_tensor(v).to(device=like.device, dtype=like.dtype)
    return np.asarray(v).astype(like.dtype, copy=False)


def _concat(parts: list, rows: Any) -> Any:
    if len(parts) == 1:
        return parts[0]
    if parts and is_torch(parts[0]):
        import torch

        return torch.cat(parts)
    return np.concatenate(parts)
