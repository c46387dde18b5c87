r"""Converters between the tree and batch layouts engines use and the index paths of
:mod:`optaccept.tree` (a node is the tuple of child indices from the root: ``(1, 0)`` is the
first child of the root's second child; the root is ``()``).  Each layout was read in the
engine's own code, cited in each function with project, file and commit.

* **Index paths** ("tree choices": Medusa, EAGLE, Sequoia static trees): a list of paths,
  ``[[0], [1], [0, 0]]`` — the layer's own form (:func:`as_paths`).
* **vLLM** ``speculative_token_tree``: the string of a list of tuples, parsed with
  ``ast.literal_eval`` and sorted breadth-first by (length, path) (:func:`paths_from_vllm`,
  :func:`paths_to_vllm`).
* **SGLang** per-request ``retrieve_next_token`` (first child, −1 if none) and
  ``retrieve_next_sibling`` (next sibling, −1 if none) over the nodes 0 … N−1, node 0 the root
  (the last verified token) (:func:`paths_from_sglang`, :func:`paths_to_sglang`).
* **Flattened chain batches** (vLLM v1 ``rejection_sample``): drafted tokens of all requests
  in one vector cut by ``cu_num_draft_tokens`` (cumulative counts), outputs ``[B, max + 1]``
  with −1 padding (:func:`split_flat_drafts`, :func:`chain_outputs`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from ..tree._shape import Shape

__all__ = [
    "as_paths",
    "paths_from_vllm",
    "paths_to_vllm",
    "paths_from_sglang",
    "paths_to_sglang",
    "split_flat_drafts",
    "chain_outputs",
]


def as_paths(choices: Any, name: str = "choices") -> list[tuple[int, ...]]:
    """Index paths as tuples, checked: non-negative integers, no duplicate, every proper
    prefix present (a tree), in the given order."""
    try:
        paths = [tuple(int(i) for i in c) for c in choices]
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a list of index paths such as [[0], [1], [0, 0]]") from None
    seen = set()
    for p in paths:
        if not p or min(p) < 0:
            raise InputError(f"{name}: every path must be a non-empty sequence of non-negative indices, got {list(p)}")
        if p in seen:
            raise InputError(f"{name}: path {list(p)} appears twice")
        seen.add(p)
    for p in paths:
        if len(p) > 1 and p[:-1] not in seen:
            raise InputError(f"{name}: path {list(p)} has no parent {list(p[:-1])} in the tree")
    return paths


def paths_from_vllm(tree: str) -> list[tuple[int, ...]]:
    """The index paths of a vLLM ``speculative_token_tree`` string, in vLLM's breadth-first
    order (read by :meth:`optaccept.tree.Shape.from_vllm`, the one parser of the format:
    vLLM parses the option with ``ast.literal_eval`` and sorts it by (length, path),
    vllm-project/vllm, ``vllm/config/speculative.py`` (``SpeculativeConfig``), commit
    f19b16d95e4395790661f4835e4436bc3dd5d9c7)."""
    if not isinstance(tree, str):
        raise InputError(f"tree: must be a string such as '[(0,), (1,), (0, 0)]', got {type(tree).__name__}")
    try:
        return list(Shape.from_vllm(tree).paths)
    except InputError as e:
        raise InputError("tree" + str(e)[len("s") :]) from None


def paths_to_vllm(choices: Any) -> str:
    """The vLLM ``speculative_token_tree`` string of index paths (breadth-first, as vLLM
    stores it; :meth:`optaccept.tree.Shape.to_vllm`)."""
    return Shape(tuple(as_paths(choices))).to_vllm()


def paths_from_sglang(next_token: Any, next_sibling: Any) -> list[tuple[int, ...]]:
    """The index path of every node of one SGLang tree: ``out[i]`` for node i (``out[0] ==
    ()``, the root).  Layout of sgl-project/sglang's ``tree_speculative_sampling_target_only``
    (``sgl-kernel/csrc/speculative/speculative_sampling.cuh``), as its test builds it:
    ``sgl-kernel/tests/speculative/test_speculative_sampling.py``, commit
    120affb9613cc3f5bcd055ec09c7621d3ced0ebc — e.g. next_token ``[1, 2, -1, 4, 5, -1]``,
    next_sibling ``[-1, 3, -1, -1, -1, -1]``: the root's children are nodes 1 and 3, node 1's
    child is 2, node 3's is 4, whose child is 5."""
    nt = np.asarray(next_token, dtype=np.int64).reshape(-1)
    ns = np.asarray(next_sibling, dtype=np.int64).reshape(-1)
    N = nt.size
    if ns.size != N or N == 0:
        raise InputError(f"next_token, next_sibling: must have one entry per node, got {nt.size} and {ns.size}")
    if nt.min() < -1 or nt.max() >= N or ns.min() < -1 or ns.max() >= N:
        raise InputError(f"next_token, next_sibling: entries must be −1 or node indices in [0, {N})")
    out: list[tuple[int, ...] | None] = [None] * N
    out[0] = ()
    stack = [0]
    while stack:
        v = stack.pop()
        c, j = int(nt[v]), 0
        while c != -1:
            if out[c] is not None or c == 0:
                raise InputError(f"next_token, next_sibling: node {c} is reached twice (not a tree)")
            out[c] = out[v] + (j,)  # type: ignore[operator]
            stack.append(c)
            c, j = int(ns[c]), j + 1
    missing = [i for i, p in enumerate(out) if p is None]
    if missing:
        raise InputError(f"next_token, next_sibling: node {missing[0]} is not reached from the root")
    return out  # type: ignore[return-value]


def paths_to_sglang(choices: Any) -> tuple[np.ndarray, np.ndarray]:
    """(next_token, next_sibling) of the tree of index paths ``choices``, its nodes numbered
    0 (the root) then in the order given (SGLang's layout, same source as
    :func:`paths_from_sglang`); siblings are linked in index order."""
    paths = as_paths(choices)
    index = {(): 0} | {p: i + 1 for i, p in enumerate(paths)}
    N = len(paths) + 1
    nt = np.full(N, -1, dtype=np.int64)
    ns = np.full(N, -1, dtype=np.int64)
    kids: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for p in paths:
        kids.setdefault(p[:-1], []).append(p)
    for parent, ch in kids.items():
        ch.sort()
        if [c[-1] for c in ch] != list(range(len(ch))):
            raise InputError(f"choices: the children of {list(parent)} must be numbered 0, 1, … without gaps")
        nt[index[parent]] = index[ch[0]]
        for a, b in zip(ch, ch[1:]):
            ns[index[a]] = index[b]
    return nt, ns


def split_flat_drafts(draft_token_ids: Any, cu_num_draft_tokens: Any) -> list[np.ndarray]:
    """The drafted tokens of each request from vLLM's flattened batch: ``draft_token_ids``
    [T] and ``cu_num_draft_tokens`` [B] (cumulative counts; request b owns entries
    cu[b − 1] … cu[b] − 1, cu[−1] read as 0).  Layout of vllm-project/vllm
    ``vllm/v1/sample/rejection_sampler.py`` (``rejection_sample``; output padded with
    ``PLACEHOLDER_TOKEN_ID = -1``), commit 7f6fc1c5ce8d02f473b1b923debbfef3fa0b7a6a."""
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
    valid entry (correction or bonus).  ``num_draft_tokens`` (per request) checks m ≤ γ."""
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
