"""EAGLE's ``retrieve_indices``, SGLang's ``retrieve_index`` outputs and FlashInfer's chain
outputs: the engines' own examples (derived by hand from their code), an independent
transcription of EAGLE's ``generate_tree_buffers`` loop as the slow reference, round trips
through :class:`optaccept.tree.Shape`, refusals, and ``audit_tree`` / ``audit_chain`` taking
the layouts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, tree


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


def _random_tree(rng, size):
    kids = {(): 0}
    paths = []
    for _ in range(size):
        parent = list(kids)[rng.integers(len(kids))]
        child = parent + (kids[parent],)
        kids[parent] += 1
        kids[child] = 0
        paths.append(child)
    return paths


def test_eagle_hand_derived_examples():
    # choices [0], [1], [0,0], [0,1], [1,0] are nodes 1..5; leaves 3, 4, 5
    assert audit._formats.paths_to_eagle([[0], [1], [0, 0], [0, 1], [1, 0]]).tolist() == [
        [0, 1, 3],
        [0, 1, 4],
        [0, 2, 5],
    ]
    # a shorter leaf is padded with −1 and sorted last
    assert audit._formats.paths_to_eagle([[1], [0, 0], [0]]).tolist() == [[0, 1, 3], [0, 2, -1]]
    assert audit._formats.paths_from_eagle([[0, 1, 3], [0, 2, -1]]) == [(), (0,), (1,), (0, 0)]
    assert audit._formats.paths_to_eagle([[0]]).tolist() == [[0, 1]]


@pytest.mark.parametrize("seed", range(25))
def test_eagle_against_its_construction_and_round_trips(seed):
    rng = np.random.default_rng(seed)
    paths = _random_tree(rng, int(rng.integers(1, 40)))
    shuffled = [list(paths[i]) for i in rng.permutation(len(paths))]
    R = audit._formats.paths_to_eagle(shuffled)
    assert R.tolist() == _eagle_reference(shuffled)
    shape = tree.Shape.from_choices(shuffled)
    back = audit._formats.paths_from_eagle(R)
    assert back[1:] == list(shape.paths)
    assert tree.Shape.from_choices(back[1:]) == shape
    assert audit.shape_from_layout({"retrieve_indices": R}) == shape
    nt, ns = audit._formats.paths_to_sglang(shape.to_choices())
    assert audit.shape_from_layout({"retrieve_next_token": nt, "retrieve_next_sibling": ns}) == shape
    assert audit.shape_from_layout(shape.to_vllm()) == shape


def test_every_small_tree_matches_eagle():
    """All trees of up to 4 nodes below the root, children numbered 0, 1, …"""
    count = 0
    cand = [p for d in (1, 2, 3) for p in itertools.product(range(3), repeat=d)]
    for size in range(1, 5):
        for sub in itertools.combinations(cand, size):
            try:
                shape = tree.Shape.from_choices(sub)
            except oa.InputError:
                continue
            count += 1
            R = audit._formats.paths_to_eagle(sub)
            assert R.tolist() == _eagle_reference(sub)
            assert audit._formats.paths_from_eagle(R)[1:] == list(shape.paths)
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
    ):
        if match is None:
            audit._formats.paths_from_eagle(bad)
            continue
        with pytest.raises(oa.InputError, match=match):
            audit._formats.paths_from_eagle(bad)
    with pytest.raises(oa.InputError, match="retrieve_indices"):
        audit.shape_from_layout({"retrieve_indices": [[0, 2, 1]]})
    with pytest.raises(oa.InputError, match="mapping"):
        audit.shape_from_layout({"retrieve_index": [[0, 1]]})


# SGLang's tree_speculative_sampling_target_only test: two requests of six nodes each
_RETRIEVE_INDEX = [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]
_NEXT_TOKEN = [[1, 2, -1, 4, 5, -1], [4, 2, 3, -1, 5, -1]]
_NEXT_SIBLING = [[-1, 3, -1, -1, -1, -1], [-1, -1, -1, -1, 1, -1]]


@pytest.mark.parametrize(
    "predicts, accept_index, accept_num, nodes, tokens",
    [
        ([3, -1, -1, 4, 5, 18, 11, -1, -1, -1, 12, 18], [[0, 3, 4, 5], [6, 10, 11, -1]], [3, 2], [5, 5], [18, 18]),
        ([1, 2, 18, -1, -1, -1, 11, -1, -1, -1, 12, 18], [[0, 1, 2, -1], [6, 10, 11, -1]], [2, 2], [2, 5], [18, 18]),
    ],
)
def test_sglang_kernel_test_outputs(predicts, accept_index, accept_num, nodes, tokens):
    v, Y = audit.sglang_outputs(predicts, accept_index, _RETRIEVE_INDEX, accept_num)
    assert v.tolist() == nodes and Y.tolist() == tokens
    # the accepted node's path has as many indices as accepted drafted tokens
    for b in range(2):
        paths = audit._formats.paths_from_sglang(_NEXT_TOKEN[b], _NEXT_SIBLING[b])
        assert len(paths[v[b]]) == accept_num[b]
    with pytest.raises(oa.InputError, match="accept_token_num"):
        audit.sglang_outputs(predicts, accept_index, _RETRIEVE_INDEX, [1, 2])
    with pytest.raises(oa.InputError, match="accept_index"):
        audit.sglang_outputs(predicts, [[3, 4, -1, -1], [6, -1, 10, -1]], _RETRIEVE_INDEX)


def test_flashinfer_chain_outputs():
    out = np.array([[5, 6, -1, -1], [4, 7, 8, 9], [2, -1, -1, -1]])
    m, Y = audit.flashinfer_chain_outputs(out, [1, 3, 0], [2, 3, 0])
    assert m.tolist() == [1, 3, 0] and Y.tolist() == [6, 9, 2]
    with pytest.raises(oa.InputError, match="output_emitted_draft_token_num"):
        audit.flashinfer_chain_outputs(out, [2, 4, 1])  # the bonus counted: not FlashInfer's layout
    with pytest.raises(oa.InputError, match="output_accepted_token_num"):
        audit.flashinfer_chain_outputs(out, [1, 3, 0], [0, 3, 0])


PAIR = tree.synthetic_pair(4, rng=2, scale=1.2)


def _sd_chain(P, Q, X, rng):
    """Speculative sampling down a chain (written here): returns (m, Y)."""
    B, g = X.shape
    m = np.empty(B, dtype=np.int64)
    Y = np.empty(B, dtype=np.int64)
    for b in range(B):
        i = 0
        while i < g and rng.random() * Q[b, i, X[b, i]] < P[b, i, X[b, i]]:
            i += 1
        law = P[b, i] if i == g else np.maximum(P[b, i] - Q[b, i], 0.0)
        m[b], Y[b] = i, rng.choice(law.size, p=law / law.sum())
    return m, Y


def _padded(P, Q, X, rng):
    m, Y = _sd_chain(P, Q, X, rng)
    out = np.full((X.shape[0], X.shape[1] + 1), -1, dtype=np.int64)
    for b in range(X.shape[0]):
        out[b, : m[b]] = X[b, : m[b]]
        out[b, m[b]] = Y[b]
    return out


def _flashinfer(P, Q, X, rng, *, emitted_with_bonus=False):
    out = _padded(P, Q, X, rng)
    m = (out != -1).sum(1) - 1
    return out, m.copy(), m + int(emitted_with_bonus)


def test_audit_chain_reads_padded_and_flashinfer_outputs():
    kw = dict(samples=1500, declared="token")
    base = audit.audit_chain(_sd_chain, *PAIR, 3, rng=np.random.default_rng(7), **kw)
    for fn in (_padded, _flashinfer):
        rep = audit.audit_chain(fn, *PAIR, 3, rng=np.random.default_rng(7), **kw)
        assert rep.accepted == base.accepted and rep.ks_distance == base.ks_distance
        assert rep.lossless == base.lossless
    with pytest.raises(oa.InputError, match="output_emitted_draft_token_num"):
        audit.audit_chain(
            lambda *a: _flashinfer(*a, emitted_with_bonus=True), *PAIR, 3, rng=np.random.default_rng(7), **kw
        )
    with pytest.raises(oa.InputError, match="padded output must have shape"):
        audit.audit_chain(lambda *a: _padded(*a)[:, :2], *PAIR, 3, rng=np.random.default_rng(7), **kw)


def _rrs_tree(tokens, parents, P, Q, rng):
    """Recursive rejection sampling without replacement down a token tree (written here)."""
    B, N1 = tokens.shape
    kids = {u: [i for i in range(N1) if parents[i] == u] for u in range(N1)}
    v_out, y_out = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
    for b in range(B):
        u = 0
        while True:
            p, q = P[b, u].copy(), Q[b, u].copy()
            nxt = None
            for c in kids[u]:
                x = tokens[b, c]
                if x < 0:
                    continue
                if rng.random() * q[x] < p[x]:
                    nxt = c
                    break
                r = np.maximum(p - q, 0.0)
                p = r / r.sum()
                q[x] = 0.0
                q = q / q.sum()
            if nxt is None:
                v_out[b], y_out[b] = u, rng.choice(p.size, p=p / p.sum())
                break
            u = nxt
    return v_out, y_out


def test_audit_tree_takes_eagle_and_sglang_layouts():
    choices = [[0], [1], [0, 0], [0, 1]]
    nt, ns = audit._formats.paths_to_sglang(choices)
    layouts = [
        {"retrieve_indices": audit._formats.paths_to_eagle(choices)},
        {"retrieve_next_token": nt, "retrieve_next_sibling": ns},
        audit._formats.paths_to_vllm(choices),
    ]
    base = audit.audit_tree(
        _rrs_tree,
        *PAIR,
        tree.TreeDraftLaw(choices, "swor"),
        samples=800,
        rng=np.random.default_rng(3),
        declared="token",
    )
    assert base.lossless
    for lay in layouts:
        rep = audit.audit_tree(
            _rrs_tree,
            *PAIR,
            tree.TreeDraftLaw(audit.shape_from_layout(lay), "swor"),
            samples=800,
            rng=np.random.default_rng(3),
            declared="token",
        )
        assert rep.accepted == base.accepted and rep.expected == base.expected and rep.ks_distance == base.ks_distance
        assert rep.details["shape"] == base.details["shape"]
