r"""Readers of engines' batches as the audits take them: the drafted tokens, and the accepted
tokens and nodes the verifiers output.  Each layout was read in the engine's own code, cited in each function with
project, file and commit.  An engine's tree *layout* (vLLM's ``speculative_token_tree``,
EAGLE's ``retrieve_indices``, SGLang's ``retrieve_next_token`` / ``retrieve_next_sibling``) is
read and written by :class:`optaccept.tree.Shape` (``Shape.from_layout``, ``to_eagle``, …).

* **SGLang** ``retrieve_index`` ([B, N], the position of each request's node in the flattened
  batch) with the kernel's outputs ``predicts``, ``accept_index``, ``accept_token_num``
  (:func:`sglang_outputs`); node numbers are those of ``retrieve_next_token``
  (:meth:`optaccept.tree.Shape.to_sglang` numbers them in the shape's order).
* **Flattened chain batches** (vLLM v1 ``rejection_sample``): drafted tokens of all requests
  in one vector cut by ``cu_num_draft_tokens`` (cumulative counts), outputs ``[B, max + 1]``
  with −1 padding (:func:`split_flat_drafts`, :func:`chain_outputs`); FlashInfer's
  ``chain_speculative_sampling`` outputs (:func:`flashinfer_chain_outputs`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError

__all__ = ["split_flat_drafts", "chain_outputs", "sglang_outputs", "flashinfer_chain_outputs"]


def split_flat_drafts(draft_token_ids: Any, cu_num_draft_tokens: Any) -> list[np.ndarray]:
    """The drafted tokens of each request from vLLM's flattened batch: ``draft_token_ids``
    [T] and ``cu_num_draft_tokens`` [B] (cumulative counts; request b owns entries
    cu[b − 1] … cu[b] − 1, cu[−1] read as 0).  Layout of vllm-project/vllm
    ``vllm/v1/sample/rejection_sampler.py`` (``rejection_sample``; output padded with
    ``PLACEHOLDER_TOKEN_ID = -1``), commit 7f6fc1c5ce8d02f473b1b923debbfef3fa0b7a6a.

    Parameters
    ----------
    draft_token_ids : array_like of int, shape (T,)
        The drafted tokens of the batch, request after request.
    cu_num_draft_tokens : array_like of int, shape (B,)
        Cumulative drafted-token counts.

    Returns
    -------
    list of ndarray of int64
        The drafted tokens of each request.

    Raises
    ------
    InputError
        If the counts are not non-decreasing and ending at T.
    """
    d = np.asarray(draft_token_ids, dtype=np.int64).reshape(-1)
    cu = np.asarray(cu_num_draft_tokens, dtype=np.int64).reshape(-1)
    if cu.size and (np.any(np.diff(cu) < 0) or cu[0] < 0 or cu[-1] != d.size):
        raise InputError(
            f"cu_num_draft_tokens: must be non-decreasing cumulative counts ending at {d.size}, got {cu.tolist()}"
        )
    starts = np.concatenate([[0], cu[:-1]]) if cu.size else cu
    return [d[s:e].copy() for s, e in zip(starts, cu)]


def chain_outputs(output_token_ids: Any, num_draft_tokens: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(m, Y) per request from a chain verifier's padded output ``[B, max + 1]`` (−1 after
    the emitted tokens, as vLLM's ``rejection_sample`` returns it, same source as
    :func:`split_flat_drafts`): m = accepted drafted tokens = valid entries − 1, Y = the last
    valid entry (correction or bonus).  ``num_draft_tokens`` (per request) checks m ≤ γ.

    Parameters
    ----------
    output_token_ids : array_like of int, shape (B, max + 1)
        The padded output.
    num_draft_tokens : array_like of int, shape (B,), optional
        Drafted tokens per request.

    Returns
    -------
    m : ndarray of int64, shape (B,)
        Accepted drafted tokens per request.
    Y : ndarray of int64, shape (B,)
        The last emitted token of each request.

    Raises
    ------
    InputError
        If the output is not 2-D, a request emitted nothing, the padding is out of place,
        or an m exceeds its ``num_draft_tokens``.

    Examples
    --------
    >>> from optaccept import audit
    >>> out = [[5, 7, 2, -1], [3, -1, -1, -1]]  # request 0 accepted 2 drafts then emitted 2; request 1 none
    >>> m, Y = audit.chain_outputs(out, num_draft_tokens=[3, 3])
    >>> m.tolist(), Y.tolist()
    ([2, 0], [2, 3])
    """
    out = np.asarray(output_token_ids, dtype=np.int64)
    if out.ndim != 2 or out.shape[1] < 1:
        raise InputError(f"output_token_ids: must be a 2-D array [B, max + 1], got shape {out.shape}")
    valid = out != -1
    count = valid.sum(1)
    if np.any(count < 1):
        raise InputError(f"output_token_ids: request {int(np.argmin(count))} emitted no token")
    if np.any(valid[:, 1:] & ~valid[:, :-1]):
        raise InputError("output_token_ids: −1 padding must come after the emitted tokens")
    m = count - 1
    if num_draft_tokens is not None:
        g = np.asarray(num_draft_tokens, dtype=np.int64).reshape(-1)
        if g.size != m.size or np.any(m > g):
            raise InputError("num_draft_tokens: one per request, at least the accepted count of each")
    Y = out[np.arange(out.shape[0]), m]
    return m, Y


def sglang_outputs(
    predicts: Any, accept_index: Any, retrieve_index: Any, accept_token_num: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """(v, Y) per request from SGLang's tree verifier: v = the accepted node (its number in the
    request's tree, node 0 the root, as in ``retrieve_next_token``), Y = the emitted token.

    Layout of sgl-project/sglang ``tree_speculative_sampling_target_only``
    (``sgl-kernel/csrc/speculative/speculative_sampling.cuh``), read in its test
    ``sgl-kernel/tests/speculative/test_speculative_sampling.py``, commit
    120affb9613cc3f5bcd055ec09c7621d3ced0ebc: ``retrieve_index`` [B, N] holds the position of
    node i of request b in the flattened batch; ``accept_index`` [B, depth + 1] the positions of
    the accepted nodes from the root, −1 padded; ``predicts`` (flattened) the token chosen after
    each accepted node — after the last one, the correction or bonus token;
    ``accept_token_num`` [B] (optional, checked) the accepted drafted tokens.

    Parameters
    ----------
    predicts : array_like of int
        The chosen tokens, flattened over the batch.
    accept_index : array_like of int, shape (B, depth + 1)
        Positions of the accepted nodes, −1 padded.
    retrieve_index : array_like of int, shape (B, N)
        Position of each node in the flattened batch.
    accept_token_num : array_like of int, shape (B,), optional
        Accepted drafted tokens per request, checked against ``accept_index``.

    Returns
    -------
    v : ndarray of int64, shape (B,)
        The accepted node of each request.
    Y : ndarray of int64, shape (B,)
        The emitted token of each request.

    Raises
    ------
    InputError
        If the arrays' shapes, padding or positions do not fit SGLang's layout, or
        ``accept_token_num`` disagrees.

    Examples
    --------
    >>> from optaccept import audit
    >>> retrieve = [[0, 1, 2]]  # one request, a root and two drafted children, at positions 0, 1, 2
    >>> v, Y = audit.sglang_outputs(predicts=[9, 4, 0], accept_index=[[0, 1]], retrieve_index=retrieve)
    >>> v.tolist(), Y.tolist()  # node 1 accepted, then token 4 emitted
    ([1], [4])
    """
    pr = np.asarray(predicts, dtype=np.int64).reshape(-1)
    ai = np.asarray(accept_index, dtype=np.int64)
    ri = np.asarray(retrieve_index, dtype=np.int64)
    if ai.ndim != 2 or ri.ndim != 2 or ai.shape[0] != ri.shape[0]:
        raise InputError(
            f"accept_index, retrieve_index: must be matrices with one row per request, got shapes {ai.shape}, {ri.shape}"
        )
    valid = ai != -1
    count = valid.sum(1)
    if np.any(count < 1) or np.any(valid[:, 1:] & ~valid[:, :-1]):
        raise InputError("accept_index: each row must hold the root's position, then accepted nodes, then −1 padding")
    B = ai.shape[0]
    v = np.empty(B, dtype=np.int64)
    Y = np.empty(B, dtype=np.int64)
    for b in range(B):
        where = {int(x): i for i, x in enumerate(ri[b])}
        pos = [int(x) for x in ai[b, : count[b]]]
        if any(x not in where for x in pos) or where.get(pos[0]) != 0:
            raise InputError(
                f"accept_index: row {b} must start at its root and name positions of retrieve_index row {b}"
            )
        if pos[-1] < 0 or pos[-1] >= pr.size or pr[pos[-1]] < 0:
            raise InputError(f"predicts: no token emitted after accepted position {pos[-1]} of request {b}")
        v[b] = where[pos[-1]]
        Y[b] = pr[pos[-1]]
    if accept_token_num is not None:
        n = np.asarray(accept_token_num, dtype=np.int64).reshape(-1)
        if n.shape != (B,) or np.any(n != count - 1):
            raise InputError(f"accept_token_num: must equal the accepted nodes below the root, {(count - 1).tolist()}")
    return v, Y


def flashinfer_chain_outputs(
    output_token_ids: Any,
    output_emitted_draft_token_num: Any = None,
    output_accepted_token_num: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(m, Y) per request from FlashInfer's ``chain_speculative_sampling``: m = accepted drafted
    tokens, Y = the correction or bonus token.

    Layout of flashinfer-ai/flashinfer ``python/flashinfer/sampling.py``, commit
    8183b93f8afb5808984ceaf5bcb4b902d028ca06: ``output_token_ids`` [B, γ + 1], rejected
    positions padded with −1 (read as :func:`chain_outputs`);
    ``output_emitted_draft_token_num`` [B] the drafted tokens emitted, bonus excluded (older
    releases call it ``output_emitted_token_num``) — checked to equal m;
    ``output_accepted_token_num`` [B] counts every position whose own test passes, past the
    first rejection too (FlashInfer's alignment metric, not m) — checked to lie in [m, γ].
    FlashInfer *adds* both counts into the tensors passed, so pass zeroed ones per call.

    Parameters
    ----------
    output_token_ids : array_like of int, shape (B, γ + 1)
        The padded output.
    output_emitted_draft_token_num : array_like of int, shape (B,), optional
        Checked to equal m.
    output_accepted_token_num : array_like of int, shape (B,), optional
        Checked to lie in [m, γ].

    Returns
    -------
    m : ndarray of int64, shape (B,)
        Accepted drafted tokens per request.
    Y : ndarray of int64, shape (B,)
        The correction or bonus token of each request.

    Raises
    ------
    InputError
        If the output is malformed or a count fails its check.

    Examples
    --------
    >>> from optaccept import audit
    >>> out = [[5, 7, 2, -1], [3, -1, -1, -1]]
    >>> m, Y = audit.flashinfer_chain_outputs(out, output_emitted_draft_token_num=[2, 0])
    >>> m.tolist(), Y.tolist()
    ([2, 0], [2, 3])
    """
    m, Y = chain_outputs(output_token_ids)
    gamma = np.asarray(output_token_ids).shape[1] - 1
    if output_emitted_draft_token_num is not None:
        e = np.asarray(output_emitted_draft_token_num, dtype=np.int64).reshape(-1)
        if e.shape != m.shape or np.any(e != m):
            raise InputError(
                "output_emitted_draft_token_num: must equal the drafted tokens before the −1 padding "
                f"{m.tolist()}, got {e.tolist()} (counts are added in place: pass zeroed tensors)"
            )
    if output_accepted_token_num is not None:
        a = np.asarray(output_accepted_token_num, dtype=np.int64).reshape(-1)
        if a.shape != m.shape or np.any(a < m) or np.any(a > gamma):
            raise InputError(f"output_accepted_token_num: must lie between the emitted counts and γ = {gamma}")
    return m, Y
