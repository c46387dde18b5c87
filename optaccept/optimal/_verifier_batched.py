"""The optimal verifier on a batch of positions (torch tensors, CPU or CUDA; one verifier per row)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._errors import InputError
from .._validation import as_distribution_row_pair
from ..drafts import IID, WithoutReplacement
from ._inputs import _clean_p
from ._line import respond_one
from ._verifier import optimal_verifier

#: Shortest rows for which the default uses one thread per core.
_THREADS_MIN_N = 16_384


def optimal_verifier_batched(
    p: Any,
    q: Any,
    drafts: Any,
    generator: Any = None,
    *,
    law: str = "iid",
    threads: int | None = None,
    normalize: bool = False,
):
    """Run the optimal verifier on a batch of positions (torch tensors, CPU or CUDA).

    Parameters
    ----------
    p, q : torch.Tensor, shape (rows, n)
        Target and draft distributions, one position per row.
    drafts : torch.Tensor of int, shape (rows, k)
        One draft tuple per row (drawn from the row's law: ``IID(q_row, k)``).
    generator : torch.Generator, optional
        Source of randomness (its device must match the tensors).
    law : {"iid", "swor"}
        The draft law of the rows: i.i.d. drafts (the line device, any vocabulary) or
        drafts without replacement (the flow plan over the row's draft sets: rows whose
        draft has few tokens with q > 0, e.g. top-m drafts).
    threads : int, optional
        Rows built in parallel threads (default: one per CPU core for rows of at least
        16,384 tokens, else one: on short rows the threads cost more than they give); the
        result does not depend on it, since every row's uniforms are drawn up front.
    normalize : bool
        Rescale every row with a positive sum instead of applying the sum rule of
        :mod:`optaccept._validation` (a row of n entries must sum to 1 within n·2⁻²³, else
        :class:`InputError` naming ``p`` or ``q``, the row and its sum as given).

    Returns
    -------
    torch.Tensor of int64, shape (rows,)
        One output token per row, on the device of ``p``.  Each row builds its own
        verifier (the construction is per position); the uniforms come from
        ``generator``.
    """
    import torch

    if law not in ("iid", "swor"):
        raise InputError(f"law: must be 'iid' or 'swor' in the batched form, got {law!r}")
    if not (isinstance(p, torch.Tensor) and isinstance(q, torch.Tensor) and isinstance(drafts, torch.Tensor)):
        raise InputError("p, q, drafts: must be torch tensors")
    if p.ndim != 2 or q.shape != p.shape or drafts.ndim != 2 or drafts.shape[0] != p.shape[0]:
        raise InputError(
            f"p, q, drafts: need shapes (rows, n), (rows, n), (rows, k); got {tuple(p.shape)}, "
            f"{tuple(q.shape)}, {tuple(drafts.shape)}"
        )
    rows, k = drafts.shape
    # the one sum rule, row by row, on the values as given (errors name p or q, the row and
    # its sum before any rescale); the rows come back rescaled to sum 1
    pc, qc = as_distribution_row_pair(p.detach(), q.detach(), normalize=normalize, names=("p", "q"))
    pn = pc.to("cpu", torch.float64).numpy()
    qn = qc.to("cpu", torch.float64).numpy()
    dn = drafts.detach().to("cpu", torch.int64).numpy()
    # three uniforms per draft and two per row, from the caller's generator
    uni = torch.rand((rows, 3 * k + 2), generator=generator, dtype=torch.float64, device=p.device).cpu().numpy()

    # i.i.d. rows validated and normalised once for the whole batch (the same checks and the
    # same arithmetic as each row's own validation); a batch with a bad row takes the row by
    # row path, whose error names the argument
    pv, qv = (_normalised_rows(pn), _normalised_rows(qn)) if law == "iid" and k >= 1 else (None, None)

    def one(r: int) -> int:
        if law == "iid" and pv is not None and qv is not None:
            x = dn[r]
            if x.min() < 0 or x.max() >= qv.shape[1] or (qv[r][x] <= 0).any():
                raise InputError(f"drafts: row {r} holds a token outside the vocabulary or with q = 0")
            return respond_one(pv[r], qv[r], k, x, uni[r])
        if law == "iid":  # one tuple per row: the layout without keeping a verifier
            drafts_law = IID(qn[r], k, normalize=True)
            pr, _ = _clean_p(pn[r], drafts_law, True)
            x = dn[r]
            if x.min() < 0 or x.max() >= drafts_law.n or (drafts_law.q[x] <= 0).any():
                raise InputError(f"drafts: row {r} holds a token outside the vocabulary or with q = 0")
            return respond_one(pr, drafts_law.q, k, x, uni[r])
        ov = optimal_verifier(pn[r], WithoutReplacement(qn[r], k, normalize=True), normalize=True)
        return ov._respond_uniform(dn[r], uni[r])

    if threads is None:  # short rows: the threads' overhead exceeds their gain (benchmarks/RESULTS.md)
        threads = min(rows, os.cpu_count() or 1) if p.shape[1] >= _THREADS_MIN_N else 1
    if threads > 1 and rows > 1:  # the compiled kernel and most numpy calls release the GIL
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads) as pool:
            out = np.fromiter(pool.map(one, range(rows)), dtype=np.int64, count=rows)
    else:
        out = np.fromiter((one(r) for r in range(rows)), dtype=np.int64, count=rows)
    return torch.as_tensor(out, device=p.device)


def _normalised_rows(a: np.ndarray) -> np.ndarray | None:
    """Rows of non-negative finite entries with a positive sum, each divided by its sum
    (float64, as :func:`optaccept._validation.as_distribution` with ``normalize`` does for
    one row: the same sum along the row, the same division); None if a row fails."""
    tot = a.sum(axis=1)
    if not (np.isfinite(tot).all() and (tot > 0).all() and (a >= 0).all()):
        return None
    return a / np.where(tot != 1.0, tot, 1.0)[:, None]
