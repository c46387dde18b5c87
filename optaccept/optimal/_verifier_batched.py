"""The optimal verifier on a batch of positions (torch tensors, CPU or CUDA; one verifier per row)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import SUM_TOL, as_distribution_row_pair, check_choice
from ..drafts import IID, law_from_name, law_names
from ._inputs import _clean_p
from ._line import respond_one
from ._verifier import optimal_verifier

#: Shortest rows for which the default uses one thread per core.
_THREADS_MIN_N = 16_384


def optimal_verifier_batched(
    p: Any,
    q: Any,
    tokens: Any,
    rng: Any = None,
    *,
    drafts: str = "iid",
    threads: int | None = None,
    normalize: bool = False,
):
    """Run the optimal verifier on a batch of positions (torch tensors, CPU or CUDA).

    Parameters
    ----------
    p, q : torch.Tensor, shape (rows, n)
        Target and draft distributions, one position per row.
    tokens : torch.Tensor of int, shape (rows, k)
        The drafted tokens: one draft tuple per row (drawn from the row's law: ``IID(q_row, k)``).
    rng : torch.Generator, optional
        Source of randomness (its device must match the tensors).
    drafts : {"iid", "swor"}
        The draft law of the rows: i.i.d. drafts (the line device, any vocabulary) or
        drafts without replacement (the flow plan over the row's draft sets: rows whose
        draft has few tokens with q > 0, e.g. top-m drafts).
    threads : int, optional
        Rows built in parallel threads (default: one per CPU core for rows of at least
        16,384 tokens, else one: on short rows the threads cost more than they give); the
        result does not depend on it, since every row's uniforms are drawn up front.
    normalize : bool
        Rescale every row with a positive sum instead of applying the sum rule of
        :mod:`optaccept._lib.validation` (a row of n entries must sum to 1 within n·2⁻²³, else
        :class:`InputError` naming ``p`` or ``q``, the row and its sum as given).

    Returns
    -------
    torch.Tensor of int64, shape (rows,)
        One output token per row, on the device of ``p``.  Each row builds its own
        verifier (the construction is per position); the uniforms come from
        ``rng``.

    Examples
    --------
    >>> import torch
    >>> from optaccept import optimal
    >>> p = torch.tensor([[.40, .25, .15, .12, .08], [.2, .2, .2, .2, .2]], dtype=torch.float64)
    >>> q = torch.tensor([[.30, .10, .35, .05, .20], [.2, .2, .2, .2, .2]], dtype=torch.float64)
    >>> tokens = torch.tensor([[2, 4], [1, 3]])  # one pair of i.i.d. drafts per row
    >>> out = optimal.optimal_verifier_batched(p, q, tokens, torch.Generator().manual_seed(0))
    >>> out.shape, out.dtype, out[1].item() in (1, 3)  # p = q on row 1: a draft is always accepted
    (torch.Size([2]), torch.int64, True)
    """
    import torch

    check_choice("drafts", drafts, law_names(sequential=True))
    if not (isinstance(p, torch.Tensor) and isinstance(q, torch.Tensor) and isinstance(tokens, torch.Tensor)):
        raise InputError("p, q, tokens: must be torch tensors")
    if p.ndim != 2 or q.shape != p.shape or tokens.ndim != 2 or tokens.shape[0] != p.shape[0]:
        raise InputError(
            f"p, q, tokens: need shapes (rows, n), (rows, n), (rows, k); got {tuple(p.shape)}, "
            f"{tuple(q.shape)}, {tuple(tokens.shape)}"
        )
    rows, k = tokens.shape
    dn = tokens.detach().to("cpu", torch.int64).numpy()
    # three uniforms per draft and two per row, from the caller's generator
    uni = torch.rand((rows, 3 * k + 2), generator=rng, dtype=torch.float64, device=p.device).cpu().numpy()
    if threads is None:  # short rows: the threads' overhead exceeds their gain (benchmarks/RESULTS.md)
        threads = min(rows, os.cpu_count() or 1) if p.shape[1] >= _THREADS_MIN_N else 1

    if drafts == "iid" and k >= 1 and p.dtype == torch.float64 and q.dtype == torch.float64:
        # float64 i.i.d. rows: each row checked and normalised in its own thread while it is in
        # the caches (finite, non-negative, a positive sum within 1e-9 of 1 unless ``normalize``;
        # the same sum and division as a row's own validation); any row that fails sends the
        # whole batch to the path below, whose errors and warnings name the argument and row
        pr, qr = p.detach().to("cpu").numpy(), q.detach().to("cpu").numpy()

        def fast(r: int) -> int:
            pv, qv = _normalised_row(pr[r], normalize), _normalised_row(qr[r], normalize)
            x = dn[r]
            if pv is None or qv is None or x.min() < 0 or x.max() >= qv.size or (qv[x] <= 0).any():
                raise _SlowPath
            return respond_one(pv, qv, k, x, uni[r])

        try:
            return torch.as_tensor(_map_rows(fast, rows, threads), device=p.device)
        except _SlowPath:
            pass

    # the one sum rule, row by row, on the values as given (errors name p or q, the row and
    # its sum before any rescale); the rows come back rescaled to sum 1
    pc, qc = as_distribution_row_pair(p.detach(), q.detach(), normalize=normalize, names=("p", "q"))
    pn = pc.to("cpu", torch.float64).numpy()
    qn = qc.to("cpu", torch.float64).numpy()

    def one(r: int) -> int:
        # an i.i.d. row normalised in its own thread (the arithmetic of the row's own
        # validation); a bad row takes the row by row path, whose error names the argument
        pv, qv = (
            (_normalised_row(pn[r], True), _normalised_row(qn[r], True)) if drafts == "iid" and k >= 1 else (None, None)
        )
        if pv is not None and qv is not None:
            x = dn[r]
            if x.min() < 0 or x.max() >= qv.size or (qv[x] <= 0).any():
                raise InputError(f"tokens: row {r} holds a token outside the vocabulary or with q = 0")
            return respond_one(pv, qv, k, x, uni[r])
        if drafts == "iid":  # one tuple per row: the layout without keeping a verifier
            drafts_law = IID(qn[r], k, normalize=True)
            pr, _ = _clean_p(pn[r], drafts_law, True)
            x = dn[r]
            if x.min() < 0 or x.max() >= drafts_law.n or (drafts_law.q[x] <= 0).any():
                raise InputError(f"tokens: row {r} holds a token outside the vocabulary or with q = 0")
            return respond_one(pr, drafts_law.q, k, x, uni[r])
        ov = optimal_verifier(pn[r], law_from_name(drafts, qn[r], k, normalize=True), normalize=True)
        return ov._respond_uniform(dn[r], uni[r])

    return torch.as_tensor(_map_rows(one, rows, threads), device=p.device)


class _SlowPath(Exception):
    """A row of the fast path failed its check: the batch takes the validating path."""


def _map_rows(fn, rows: int, threads: int) -> np.ndarray:
    """``fn(r)`` for every row, in ``threads`` threads (the compiled kernel and most numpy
    calls release the GIL)."""
    if threads > 1 and rows > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return np.fromiter(pool.map(fn, range(rows)), dtype=np.int64, count=rows)
    return np.fromiter((fn(r) for r in range(rows)), dtype=np.int64, count=rows)


def _normalised_row(a: np.ndarray, normalize: bool) -> np.ndarray | None:
    """A row of non-negative finite entries with a positive sum (within ``SUM_TOL`` of 1
    unless ``normalize``), divided by its sum (float64, as
    :func:`optaccept._lib.validation.as_distribution` does for one row: the same sum, the same
    division); None if the row fails."""
    tot = a.sum()
    if not (np.isfinite(tot) and tot > 0 and a.min() >= 0):
        return None
    if not normalize and abs(tot - 1.0) > SUM_TOL:
        return None
    return a / tot if tot != 1.0 else a
