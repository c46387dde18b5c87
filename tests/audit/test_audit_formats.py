"""Converters between engines' tree and batch layouts and index paths: the engines' own
examples (SGLang's kernel test trees, vLLM's sorting of its tree string, vLLM's −1 padded
outputs), round trips on random trees, and refusals of malformed input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit


def test_sglang_kernel_test_trees():
    # the two trees of SGLang's tree_speculative_sampling_target_only test, read by hand:
    # row 0: root → 1 → 2, root → 3 → 4 → 5; row 1: root → 4 → 5, 4's sibling 1 → 2 → 3
    assert audit._formats.paths_from_sglang([1, 2, -1, 4, 5, -1], [-1, 3, -1, -1, -1, -1]) == [
        (),
        (0,),
        (0, 0),
        (1,),
        (1, 0),
        (1, 0, 0),
    ]
    assert audit._formats.paths_from_sglang([4, 2, 3, -1, 5, -1], [-1, -1, -1, -1, 1, -1]) == [
        (),
        (1,),
        (1, 0),
        (1, 0, 0),
        (0,),
        (0, 0),
    ]


def _random_tree(rng, size):
    paths = []
    kids = {(): 0}
    for _ in range(size):
        parent = list(kids)[rng.integers(len(kids))]
        child = parent + (kids[parent],)
        kids[parent] += 1
        kids[child] = 0
        paths.append(child)
    return paths


@pytest.mark.parametrize("seed", range(20))
def test_round_trips(seed):
    rng = np.random.default_rng(seed)
    paths = _random_tree(rng, int(rng.integers(1, 15)))
    order = rng.permutation(len(paths))
    shuffled = [paths[i] for i in order]
    nt, ns = audit._formats.paths_to_sglang(paths)
    assert audit._formats.paths_from_sglang(nt, ns) == [()] + paths
    s = audit._formats.paths_to_vllm(shuffled)
    assert audit._formats.paths_from_vllm(s) == sorted(paths, key=lambda t: (len(t), t))
    assert audit._formats.paths_to_vllm(audit._formats.paths_from_vllm(s)) == s


def test_vllm_string_is_sorted_breadth_first_and_used_by_audit_tree():
    assert audit._formats.paths_from_vllm("[(1,), (0, 0), (0,)]") == [(0,), (1,), (0, 0)]
    assert audit._formats.paths_to_vllm([[0], [0, 0], [1]]) == "[(0,), (1,), (0, 0)]"
    for bad, match in (
        ("[(0, 1)]", "no parent"),
        ("[(0,), (0,)]", "twice"),
        ("(", "not a Python literal list"),
        ("[(-1,)]", ">= 0"),
    ):
        with pytest.raises(oa.InputError, match=match):
            audit._formats.paths_from_vllm(bad)


def test_sglang_refusals():
    with pytest.raises(oa.InputError, match="not reached"):
        audit._formats.paths_from_sglang([1, -1, -1], [-1, -1, -1])
    with pytest.raises(oa.InputError, match="twice"):
        audit._formats.paths_from_sglang([1, 1, -1], [-1, -1, -1])
    with pytest.raises(oa.InputError, match="without gaps"):
        audit._formats.paths_to_sglang([[0], [2]])


def test_flattened_chain_batches():
    X = audit._formats.split_flat_drafts([5, 6, 7, 8, 9, 1], [3, 3, 6])
    assert [x.tolist() for x in X] == [[5, 6, 7], [], [8, 9, 1]]
    out = np.array([[5, 6, 2, -1], [4, -1, -1, -1], [8, 9, 1, 3]])
    m, Y = audit.chain_outputs(out, [3, 0, 3])
    assert m.tolist() == [2, 0, 3] and Y.tolist() == [2, 4, 3]
    with pytest.raises(oa.InputError, match="cu_num_draft_tokens"):
        audit._formats.split_flat_drafts([1, 2], [3, 2])
    with pytest.raises(oa.InputError, match="padding"):
        audit.chain_outputs([[1, -1, 2]])
    with pytest.raises(oa.InputError, match="num_draft_tokens"):
        audit.chain_outputs(out, [1, 0, 3])


def test_every_small_tree_round_trips():
    """All trees of up to 4 nodes below the root (each node's children numbered 0, 1, …)."""
    count = 0
    candidates = [p for L in (1, 2, 3) for p in itertools.product(range(3), repeat=L)]
    for size in range(1, 5):
        for combo in itertools.combinations(candidates, size):
            s = set(combo)
            if any(len(p) > 1 and p[:-1] not in s for p in combo):
                continue
            if any(p[-1] > 0 and p[:-1] + (p[-1] - 1,) not in s for p in combo):
                continue
            nt, ns = audit._formats.paths_to_sglang(list(combo))
            assert audit._formats.paths_from_sglang(nt, ns) == [()] + list(combo)
            count += 1
    # ordered trees with 1–4 nodes below the root: Catalan 1 + 2 + 5 + 14, less the two of 4 nodes
    # that need depth 4 or 4 children
    assert count == 20
