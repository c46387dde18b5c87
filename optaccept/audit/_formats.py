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
* **SGLang** ``retrieve_index`` ([B, N], the position of each request's node in the flattened
  batch) with the kernel's outputs ``predicts``, ``accept_index``, ``accept_token_num``
  (:func:`sglang_outputs`).
* **EAGLE** ``retrieve_indices`` ([leaves, depth + 1]: one root-to-leaf path of node numbers
  per row, −1 padded; :func:`paths_from_eagle`, :func:`paths_to_eagle`).
* **Flattened chain batches** (vLLM v1 ``rejection_sample``): drafted tokens of all requests
  in one vector cut by ``cu_num_draft_tokens`` (cumulative counts), outputs ``[B, max + 1]``
  with −1 padding (:func:`split_flat_drafts`, :func:`chain_outputs`); FlashInfer's
  ``chain_speculative_sampling`` outputs (:func:`flashinfer_chain_outputs`).
* Any of the tree layouts as one shape (:func:`shape_from_layout`), as :func:`audit_tree`
  takes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._errors import InputError
from ..tree import Shape
from ..tree._shape import as_shape

__all__ = [
    "as_paths",
    "paths_from_vllm",
    "paths_to_vllm",
    "paths_from_sglang",
    "paths_to_sglang",
    "split_flat_drafts",
    "chain_outputs",
    "paths_from_eagle",
    "paths_to_eagle",
    "sglang_outputs",
    "flashinfer_chain_outputs",
    "shape_from_layout",
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
    f19b16d95e4395790661f4835e4436bc3dd5d9c7).

    Parameters
    ----------
    tree : str
        The option's value, e.g. ``"[(0,), (1,), (0, 0)]"``.

    Returns
    -------
    list of tuple of int
        The index paths, by (length, path).

    Raises
    ------
    InputError
        If ``tree`` is not a string of index paths of a tree.
    """
    if not isinstance(tree, str):
        raise InputError(f"tree: must be a string such as '[(0,), (1,), (0, 0)]', got {type(tree).__name__}")
    try:
        return list(Shape.from_vllm(tree).paths)
    except InputError as e:
        raise InputError("tree" + str(e)[len("s") :]) from None


def paths_to_vllm(choices: Any) -> str:
    """The vLLM ``speculative_token_tree`` string of index paths (breadth-first, as vLLM
    stores it; :meth:`optaccept.tree.Shape.to_vllm`).

    Parameters
    ----------
    choices : sequence of sequence of int
        The index paths of a tree.

    Returns
    -------
    str
        The ``speculative_token_tree`` string.

    Raises
    ------
    InputError
        If ``choices`` are not the index paths of a tree.
    """
    return Shape(tuple(as_paths(choices))).to_vllm()


def paths_from_sglang(next_token: Any, next_sibling: Any) -> list[tuple[int, ...]]:
    """The index path of every node of one SGLang tree: ``out[i]`` for node i (``out[0] ==
    ()``, the root).  Layout of sgl-project/sglang's ``tree_speculative_sampling_target_only``
    (``sgl-kernel/csrc/speculative/speculative_sampling.cuh``), as its test builds it:
    ``sgl-kernel/tests/speculative/test_speculative_sampling.py``, commit
    120affb9613cc3f5bcd055ec09c7621d3ced0ebc — e.g. next_token ``[1, 2, -1, 4, 5, -1]``,
    next_sibling ``[-1, 3, -1, -1, -1, -1]``: the root's children are nodes 1 and 3, node 1's
    child is 2, node 3's is 4, whose child is 5.

    Parameters
    ----------
    next_token : array_like of int, shape (N,)
        First child of each node, or −1.
    next_sibling : array_like of int, shape (N,)
        Next sibling of each node, or −1.

    Returns
    -------
    list of tuple of int
        The index path of each node.

    Raises
    ------
    InputError
        If the arrays differ in length, hold entries other than −1 or node indices, or do
        not describe a tree rooted at node 0.
    """
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
    :func:`paths_from_sglang`); siblings are linked in index order.

    Parameters
    ----------
    choices : sequence of sequence of int
        The index paths of a tree.

    Returns
    -------
    next_token, next_sibling : ndarray of int64, shape (len(choices) + 1,)
        First child and next sibling of each node (−1: none).

    Raises
    ------
    InputError
        If ``choices`` are not the index paths of a tree, or some children are not numbered
        0, 1, … without gaps.
    """
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


def paths_from_eagle(retrieve_indices: Any) -> list[tuple[int, ...]]:
    """The index path of every node numbered in EAGLE's ``retrieve_indices``: ``out[i]`` for
    node i (``out[0] == ()``, the root).

    Layout of SafeAILab/EAGLE ``eagle/model/utils.py`` (``generate_tree_buffers``), commit
    08dc06ccb428f2d3cf8380933ea50ed3e4178168: the tree choices are sorted by (length, path)
    and node i ≥ 1 is the i-th of them; each row of the [leaves, depth + 1] matrix is the
    path of node numbers from the root (0) to one leaf, padded with −1, rows sorted
    lexicographically with −1 read as larger than every node.  The matrix keeps the tree,
    not the choices' indices, so siblings are numbered 0, 1, … in node order — the choices
    themselves when they have no gaps (as :class:`optaccept.tree.Shape` requires).

    Parameters
    ----------
    retrieve_indices : array_like of int, shape (leaves, depth + 1)
        EAGLE's matrix.

    Returns
    -------
    list of tuple of int
        The index path of each node.

    Raises
    ------
    InputError
        Naming ``retrieve_indices`` when it is not such a matrix of some tree."""
    name = "retrieve_indices"
    try:
        R = np.asarray(retrieve_indices, dtype=np.int64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be an integer matrix [leaves, depth + 1]") from None
    if R.ndim != 2 or R.shape[0] < 1 or R.shape[1] < 2:
        raise InputError(f"{name}: must be an integer matrix [leaves, depth + 1], got shape {R.shape}")
    if np.any(R[:, 0] != 0):
        raise InputError(f"{name}: every row must start at the root, node 0")
    valid = R != -1
    if np.any(R < -1) or np.any(valid[:, 1:] & ~valid[:, :-1]):
        raise InputError(f"{name}: entries must be node numbers >= 0, then −1 padding")
    N = int(R.max())
    parent: dict[int, int] = {}
    for row in R:
        path = [int(x) for x in row if x != -1]
        for a, b in zip(path, path[1:]):
            if b == 0 or parent.setdefault(b, a) != a:
                raise InputError(f"{name}: node {b} has two parents (not a tree)")
    missing = sorted(set(range(1, N + 1)) - set(parent))
    if missing:
        raise InputError(f"{name}: node {missing[0]} is on no row")
    out: list[tuple[int, ...] | None] = [None] * (N + 1)
    out[0] = ()
    kids: dict[int, int] = {}
    for v in range(1, N + 1):  # EAGLE numbers parents before their children
        u = parent[v]
        if out[u] is None:
            raise InputError(f"{name}: node {v} is numbered before its parent {u} (not EAGLE's order)")
        out[v] = out[u] + (kids.get(u, 0),)  # type: ignore[operator]
        kids[u] = kids.get(u, 0) + 1
    paths = [p for p in out[1:] if p is not None]
    if paths != sorted(paths, key=lambda t: (len(t), t)):
        raise InputError(f"{name}: nodes are not numbered by (depth, path) as EAGLE sorts its tree choices")
    return out  # type: ignore[return-value]


def paths_to_eagle(choices: Any) -> np.ndarray:
    """EAGLE's ``retrieve_indices`` (int64 [leaves, depth + 1]) of the tree whose index paths
    are ``choices`` (EAGLE's ``tree_choices``), as ``generate_tree_buffers`` builds it (same
    source as :func:`paths_from_eagle`): one row per leaf, root 0 first, −1 padding, rows
    sorted with −1 last.

    Parameters
    ----------
    choices : sequence of sequence of int
        The index paths of a tree.

    Returns
    -------
    ndarray of int64, shape (leaves, depth + 1)
        The ``retrieve_indices`` matrix.

    Raises
    ------
    InputError
        If ``choices`` are not the index paths of a tree.
    """
    shp = Shape.from_choices(as_paths(choices))
    paths = list(shp.paths)  # by (length, path): EAGLE's sorted_tree_choices
    index = {p: i + 1 for i, p in enumerate(paths)}
    inner = {p[:-1] for p in paths}
    L = shp.depth
    rows = [[0] + [index[p[:d]] for d in range(1, len(p) + 1)] + [-1] * (L - len(p)) for p in paths if p not in inner]
    big = len(paths) + 1
    rows.sort(key=lambda r: [x if x >= 0 else big for x in r])
    return np.array(rows, dtype=np.int64)


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


def shape_from_layout(layout: Any) -> Shape:
    """One :class:`optaccept.tree.Shape` from any tree layout above: index paths (EAGLE/Medusa
    ``tree_choices``), a vLLM ``speculative_token_tree`` string, or a mapping with
    ``"retrieve_indices"`` (EAGLE) or ``"retrieve_next_token"`` and ``"retrieve_next_sibling"``
    (SGLang).  A branching tuple or a Shape passes through :func:`optaccept.tree.as_shape`.

    Parameters
    ----------
    layout : sequence of paths, str, mapping, tuple of int or Shape
        The tree in any of the layouts above.

    Returns
    -------
    Shape
        The tree's shape.

    Raises
    ------
    InputError
        If ``layout`` is none of these layouts, or not a tree in its own.

    Examples
    --------
    >>> from optaccept import audit
    >>> audit.shape_from_layout([[0], [1], [0, 0]]).paths  # EAGLE / Medusa tree_choices
    ((0,), (1,), (0, 0))
    >>> audit.shape_from_layout("[(0,), (0, 0)]").size  # a vLLM speculative_token_tree
    2
    """

    if isinstance(layout, str):
        return Shape(tuple(paths_from_vllm(layout)))
    if isinstance(layout, Mapping):
        keys = set(layout)
        if keys == {"retrieve_indices"}:
            return Shape.from_choices(paths_from_eagle(layout["retrieve_indices"])[1:])
        if keys == {"retrieve_next_token", "retrieve_next_sibling"}:
            return Shape.from_choices(
                paths_from_sglang(layout["retrieve_next_token"], layout["retrieve_next_sibling"])[1:]
            )
        raise InputError(
            "shape: a mapping must hold 'retrieve_indices' (EAGLE) or 'retrieve_next_token' and "
            f"'retrieve_next_sibling' (SGLang), got keys {sorted(map(str, keys))}"
        )
    return as_shape(layout)
