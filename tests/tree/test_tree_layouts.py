"""Engines' tree layouts through :class:`optaccept.tree.Shape`: EAGLE's ``retrieve_indices``,
SGLang's ``retrieve_next_token`` / ``retrieve_next_sibling``, vLLM's ``speculative_token_tree``
and ``Shape.from_layout``.  The engines' own examples (SGLang's kernel-test trees, EAGLE's
matrices derived by hand from its code), an independent transcription of EAGLE's
``generate_tree_buffers`` loop as the slow reference, round trips on random and all small
trees, refusals of malformed input, and the frozen converters these methods replace (written
out below) agreeing with them on many layouts."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from optaccept import tree
from optaccept._errors import InputError

Shape = tree.Shape


def _random_tree(rng, size):
    """Index paths of a random tree, in the order they were grown (not sorted)."""
    kids = {(): 0}
    paths = []
    for _ in range(size):
        parent = list(kids)[rng.integers(len(kids))]
        child = parent + (kids[parent],)
        kids[parent] += 1
        kids[child] = 0
        paths.append(child)
    return paths


def _bfs(paths):
    return sorted(paths, key=lambda t: (len(t), t))


def _eagle_reference(choices):
    """EAGLE's construction step by step (``generate_tree_buffers``): sort the choices by
    (length, path); walk them from the last, skipping every choice already seen as a prefix;
    each kept choice gives the 0-based positions of its prefixes; pad with −2, add 1 (so the
    padding becomes −1 and node numbers start at 1), put the root 0 in front, sort the rows
    with −1 read as larger than every node."""
    srt = sorted((list(c) for c in choices), key=lambda x: (len(x), x))
    nest, seen = [], []
    for c in reversed(srt):
        if c in seen:
            continue
        nest.append([srt.index(c[: j + 1]) for j in range(len(c))])
        seen.extend(c[: j + 1] for j in range(len(c)))
    width = max(len(r) for r in nest)
    rows = [[0] + [x + 1 for x in r + [-2] * (width - len(r))] for r in nest]
    top = max(max(r) for r in rows) + 5
    return sorted(rows, key=lambda r: [x if x >= 0 else top for x in r])


def _small_trees():
    """All ordered trees of 1–4 nodes below the root within depth 3 and three children."""
    cand = [p for d in (1, 2, 3) for p in itertools.product(range(3), repeat=d)]
    for size in range(1, 5):
        for sub in itertools.combinations(cand, size):
            s = set(sub)
            if any(len(p) > 1 and p[:-1] not in s for p in sub):
                continue
            if any(p[-1] > 0 and p[:-1] + (p[-1] - 1,) not in s for p in sub):
                continue
            yield list(sub)


# --- SGLang -------------------------------------------------------------------------------


def test_sglang_kernel_test_trees():
    # the two trees of SGLang's tree_speculative_sampling_target_only test, read by hand:
    # row 0: root → 1 → 2, root → 3 → 4 → 5; row 1: root → 4 → 5, 4's sibling 1 → 2 → 3
    one = Shape.from_sglang([1, 2, -1, 4, 5, -1], [-1, 3, -1, -1, -1, -1])
    assert one.paths == ((0,), (1,), (0, 0), (1, 0), (1, 0, 0))
    two = Shape.from_sglang([4, 2, 3, -1, 5, -1], [-1, -1, -1, -1, 1, -1])
    assert two.paths == ((0,), (1,), (0, 0), (1, 0), (1, 0, 0))
    # written back, the nodes are numbered in the shape's order
    assert [a.tolist() for a in one.to_sglang()] == [[1, 3, 4, -1, 5, -1], [-1, 2, -1, -1, -1, -1]]


@pytest.mark.parametrize("seed", range(20))
def test_round_trips(seed):
    rng = np.random.default_rng(seed)
    paths = _random_tree(rng, int(rng.integers(1, 15)))
    shuffled = [paths[i] for i in rng.permutation(len(paths))]
    shape = Shape.from_choices(shuffled)
    assert Shape.from_sglang(*shape.to_sglang()) == shape
    assert Shape.from_eagle(shape.to_eagle()) == shape
    s = shape.to_vllm()
    assert list(Shape.from_vllm(s).paths) == _bfs(paths)
    assert Shape.from_vllm(s).to_vllm() == s


def test_vllm_string_is_sorted_breadth_first():
    assert Shape.from_vllm("[(1,), (0, 0), (0,)]").paths == ((0,), (1,), (0, 0))
    assert Shape.from_choices([[0], [0, 0], [1]]).to_vllm() == "[(0,), (1,), (0, 0)]"
    for bad, match in (
        ("[(0, 1)]", "no parent"),
        ("[(0,), (0,)]", "twice"),
        ("(", "not a Python literal list"),
        ("[(-1,)]", ">= 0"),
    ):
        with pytest.raises(InputError, match=match):
            Shape.from_vllm(bad)


def test_sglang_refusals():
    with pytest.raises(InputError, match="not reached"):
        Shape.from_sglang([1, -1, -1], [-1, -1, -1])
    with pytest.raises(InputError, match="twice"):
        Shape.from_sglang([1, 1, -1], [-1, -1, -1])
    with pytest.raises(InputError, match="one entry per node"):
        Shape.from_sglang([1, -1], [-1])
    with pytest.raises(InputError, match="node indices"):
        Shape.from_sglang([2, -1], [-1, -1])
    with pytest.raises(InputError, match="^next_token, next_sibling: must have at least one node"):
        Shape.from_sglang([-1], [-1])
    with pytest.raises(InputError, match="indexed 0"):  # a tree with a gap among siblings has no shape
        Shape.from_choices([[0], [2]])


def test_every_small_tree_round_trips():
    count = 0
    for sub in _small_trees():
        shape = Shape.from_choices(sub)
        assert Shape.from_sglang(*shape.to_sglang()) == shape
        count += 1
    # ordered trees with 1–4 nodes below the root: Catalan 1 + 2 + 5 + 14, less the two of 4 nodes
    # that need depth 4 or 4 children
    assert count == 20


# --- EAGLE --------------------------------------------------------------------------------


def test_eagle_hand_derived_examples():
    # choices [0], [1], [0,0], [0,1], [1,0] are nodes 1..5; leaves 3, 4, 5
    assert Shape.from_choices([[0], [1], [0, 0], [0, 1], [1, 0]]).to_eagle().tolist() == [
        [0, 1, 3],
        [0, 1, 4],
        [0, 2, 5],
    ]
    # a shorter leaf is padded with −1 and sorted last
    assert Shape.from_choices([[1], [0, 0], [0]]).to_eagle().tolist() == [[0, 1, 3], [0, 2, -1]]
    assert Shape.from_eagle([[0, 1, 3], [0, 2, -1]]).paths == ((0,), (1,), (0, 0))
    assert Shape.from_choices([[0]]).to_eagle().tolist() == [[0, 1]]


@pytest.mark.parametrize("seed", range(25))
def test_eagle_against_its_construction_and_round_trips(seed):
    rng = np.random.default_rng(seed)
    paths = _random_tree(rng, int(rng.integers(1, 40)))
    shuffled = [list(paths[i]) for i in rng.permutation(len(paths))]
    shape = Shape.from_choices(shuffled)
    R = shape.to_eagle()
    assert R.dtype == np.int64 and R.tolist() == _eagle_reference(shuffled)
    assert Shape.from_eagle(R) == shape
    assert Shape.from_layout({"retrieve_indices": R}) == shape
    nt, ns = shape.to_sglang()
    assert Shape.from_layout({"retrieve_next_token": nt, "retrieve_next_sibling": ns}) == shape
    assert Shape.from_layout(shape.to_vllm()) == shape
    assert Shape.from_layout(shape.to_choices()) == shape
    assert Shape.from_layout(shape) is shape


def test_every_small_tree_matches_eagle():
    count = 0
    for sub in _small_trees():
        shape = Shape.from_choices(sub)
        assert shape.to_eagle().tolist() == _eagle_reference(sub)
        assert Shape.from_eagle(shape.to_eagle()) == shape
        count += 1
    assert count == 20  # the ordered trees of 1–4 nodes, less the 4-chain (depth 4) and the 4-star


def test_eagle_refusals():
    for bad, match in (
        ([[1, 2]], "start at the root"),
        ([[0, 1, -1, 2]], "padding"),
        ([[0, 1, 2], [0, 3, 2]], "two parents"),
        ([[0, 1, 3]], "on no row"),
        ([[0, 2, 1]], "before its parent"),
        ([[0, 1, 3], [0, 2, -1], [0, 1, 4]], None),  # fine: leaves in any row order
        ([[0, 1, 2, -1], [0, 3, -1, -1], [0, 1, 4, -1]], "depth, path"),
        ([[0]], "shape"),
        ([[0, "a"]], "integer matrix"),
    ):
        if match is None:
            Shape.from_eagle(bad)
            continue
        with pytest.raises(InputError, match=f"^retrieve_indices: .*{match}"):
            Shape.from_eagle(bad)
    with pytest.raises(InputError, match="on no row"):  # a huge node number is refused at once
        Shape.from_eagle([[0, 10**15]])


def test_from_layout_refusals():
    with pytest.raises(InputError, match="retrieve_indices"):
        Shape.from_layout({"retrieve_indices": [[0, 2, 1]]})
    with pytest.raises(InputError, match="^layout: a mapping"):
        Shape.from_layout({"retrieve_index": [[0, 1]]})
    with pytest.raises(InputError, match="^layout: .*no parent"):
        Shape.from_layout("[(0, 1)]")
    with pytest.raises(InputError, match="^layout: .*no parent"):
        Shape.from_layout([[0, 1]])
    with pytest.raises(InputError, match="^layout: "):
        Shape.from_layout(3)


# --- the converters these methods replace, frozen as they were ------------------------------


def _old_as_paths(choices: Any, name: str = "choices") -> list[tuple[int, ...]]:
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


def _old_paths_from_vllm(tree_string: str) -> list[tuple[int, ...]]:
    if not isinstance(tree_string, str):
        raise InputError(f"tree: must be a string such as '[(0,), (1,), (0, 0)]', got {type(tree_string).__name__}")
    try:
        return list(Shape.from_vllm(tree_string).paths)
    except InputError as e:
        raise InputError("tree" + str(e)[len("s") :]) from None


def _old_paths_to_vllm(choices: Any) -> str:
    return Shape(tuple(_old_as_paths(choices))).to_vllm()


def _old_paths_from_sglang(next_token: Any, next_sibling: Any) -> list[tuple[int, ...]]:
    nt = np.asarray(next_token, dtype=np.int64).reshape(-1)
    ns = np.asarray(next_sibling, dtype=np.int64).reshape(-1)
    N = nt.size
    if ns.size != N or N == 0:
        raise InputError(f"next_token, next_sibling: must have one entry per node, got {nt.size} and {ns.size}")
    if nt.min() < -1 or nt.max() >= N or ns.min() < -1 or ns.max() >= N:
        raise InputError(f"next_token, next_sibling: entries must be −1 or node indices in [0, {N})")
    out: list = [None] * N
    out[0] = ()
    stack = [0]
    while stack:
        v = stack.pop()
        c, j = int(nt[v]), 0
        while c != -1:
            if out[c] is not None or c == 0:
                raise InputError(f"next_token, next_sibling: node {c} is reached twice (not a tree)")
            out[c] = out[v] + (j,)
            stack.append(c)
            c, j = int(ns[c]), j + 1
    missing = [i for i, p in enumerate(out) if p is None]
    if missing:
        raise InputError(f"next_token, next_sibling: node {missing[0]} is not reached from the root")
    return out


def _old_paths_to_sglang(choices: Any) -> tuple[np.ndarray, np.ndarray]:
    paths = _old_as_paths(choices)
    index = {(): 0} | {p: i + 1 for i, p in enumerate(paths)}
    N = len(paths) + 1
    nt = np.full(N, -1, dtype=np.int64)
    ns = np.full(N, -1, dtype=np.int64)
    kids: dict = {}
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


def _old_paths_from_eagle(retrieve_indices: Any) -> list[tuple[int, ...]]:
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
    parent: dict = {}
    for row in R:
        path = [int(x) for x in row if x != -1]
        for a, b in zip(path, path[1:]):
            if b == 0 or parent.setdefault(b, a) != a:
                raise InputError(f"{name}: node {b} has two parents (not a tree)")
    missing = sorted(set(range(1, N + 1)) - set(parent))
    if missing:
        raise InputError(f"{name}: node {missing[0]} is on no row")
    out: list = [None] * (N + 1)
    out[0] = ()
    kids: dict = {}
    for v in range(1, N + 1):
        u = parent[v]
        if out[u] is None:
            raise InputError(f"{name}: node {v} is numbered before its parent {u} (not EAGLE's order)")
        out[v] = out[u] + (kids.get(u, 0),)
        kids[u] = kids.get(u, 0) + 1
    paths = [p for p in out[1:] if p is not None]
    if paths != sorted(paths, key=lambda t: (len(t), t)):
        raise InputError(f"{name}: nodes are not numbered by (depth, path) as EAGLE sorts its tree choices")
    return out


def _old_paths_to_eagle(choices: Any) -> np.ndarray:
    shp = Shape.from_choices(_old_as_paths(choices))
    paths = list(shp.paths)
    index = {p: i + 1 for i, p in enumerate(paths)}
    inner = {p[:-1] for p in paths}
    L = shp.depth
    rows = [[0] + [index[p[:d]] for d in range(1, len(p) + 1)] + [-1] * (L - len(p)) for p in paths if p not in inner]
    big = len(paths) + 1
    rows.sort(key=lambda r: [x if x >= 0 else big for x in r])
    return np.array(rows, dtype=np.int64)


def _old_shape_from_layout(layout: Any) -> Shape:
    if isinstance(layout, str):
        return Shape(tuple(_old_paths_from_vllm(layout)))
    if isinstance(layout, Mapping):
        keys = set(layout)
        if keys == {"retrieve_indices"}:
            return Shape.from_choices(_old_paths_from_eagle(layout["retrieve_indices"])[1:])
        if keys == {"retrieve_next_token", "retrieve_next_sibling"}:
            return Shape.from_choices(
                _old_paths_from_sglang(layout["retrieve_next_token"], layout["retrieve_next_sibling"])[1:]
            )
        raise InputError("shape: a mapping must hold 'retrieve_indices' or 'retrieve_next_token' and ...")
    return tree._shape.as_shape(layout)


def _layouts():
    """Trees of every kind, as index paths in the order grown: random ones, chains, a single
    node, wide stars, deep chains, full trees."""
    rng = np.random.default_rng(20261202)
    out = [[(0,)]]
    out += [_random_tree(rng, int(n)) for n in rng.integers(1, 80, size=60)]
    out += [[(0,) * d for d in range(1, n + 1)] for n in (2, 3, 7, 20)]
    out += [[(j,) for j in range(n)] for n in (2, 5, 64, 300)]  # wide
    out.append([(0,) * d for d in range(1, 400)])  # deep
    out.append([(j,) for j in range(30)] + [(j, 0) for j in range(30)] + [(29, 0, i) for i in range(10)])
    out += [list(tree._shape.as_shape(b).paths) for b in ((3, 2, 1), (4, 4), (2,) * 8, (1, 5, 1))]
    return out


def test_shape_methods_match_the_frozen_converters():
    rng = np.random.default_rng(7)
    for paths in _layouts():
        shuffled = [list(paths[i]) for i in rng.permutation(len(paths))]
        shape = Shape.from_choices(shuffled)
        # writers
        R = shape.to_eagle()
        old_R = _old_paths_to_eagle(shuffled)
        assert R.dtype == old_R.dtype and R.tolist() == old_R.tolist()
        nt, ns = shape.to_sglang()
        old_nt, old_ns = _old_paths_to_sglang(shape.to_choices())
        assert nt.tolist() == old_nt.tolist() and ns.tolist() == old_ns.tolist()
        assert shape.to_vllm() == _old_paths_to_vllm(shuffled)
        # readers, on the engines' numbering and on SGLang's any numbering
        assert list(Shape.from_eagle(old_R).paths) == _old_paths_from_eagle(old_R)[1:]
        any_nt, any_ns = _old_paths_to_sglang(shuffled)  # nodes numbered in a random order
        assert list(Shape.from_sglang(any_nt, any_ns).paths) == _bfs(_old_paths_from_sglang(any_nt, any_ns)[1:])
        assert list(Shape.from_vllm(shape.to_vllm()).paths) == _old_paths_from_vllm(shape.to_vllm())
        # one shape of any layout
        for lay in (
            shuffled,
            shape.to_vllm(),
            {"retrieve_indices": old_R},
            {"retrieve_next_token": any_nt, "retrieve_next_sibling": any_ns},
            shape,
        ):
            assert Shape.from_layout(lay) == _old_shape_from_layout(lay) == shape
    for b in ((3, 2, 1), (1,), (2, 2)):
        assert Shape.from_layout(b) == _old_shape_from_layout(b) == tree._shape.as_shape(b)


@pytest.mark.parametrize(
    "layout",
    [
        "[(0, 1)]",
        "[(0,), (0,)]",
        "(",
        "",
        {"retrieve_indices": [[1, 2]]},
        {"retrieve_indices": [[0, 1, -1, 2]]},
        {"retrieve_indices": [[0, 2, 1]]},
        {"retrieve_indices": [[0, 1, 3]]},
        {"retrieve_indices": [[0]]},
        {"retrieve_next_token": [1, -1, -1], "retrieve_next_sibling": [-1, -1, -1]},
        {"retrieve_next_token": [1, 1, -1], "retrieve_next_sibling": [-1, -1, -1]},
        {"retrieve_next_token": [-1], "retrieve_next_sibling": [-1]},
        {"retrieve_index": [[0, 1]]},
        [[0], [2]],
        [],
        (0, 2),
    ],
)
def test_malformed_layouts_refused_as_before(layout):
    with pytest.raises(InputError):
        _old_shape_from_layout(layout)
    with pytest.raises(InputError):
        Shape.from_layout(layout)
