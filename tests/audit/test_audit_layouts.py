"""SGLang's ``retrieve_index`` outputs and FlashInfer's chain outputs: the engines' own examples
(derived by hand from their code), refusals, and ``audit_tree`` / ``audit_chain`` taking every
layout (the tree layouts themselves are :class:`optaccept.tree.Shape`'s,
tests/tree/test_tree_layouts.py)."""

from __future__ import annotations

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, tree


def _depths(next_token, next_sibling):
    """The depth of each node of one SGLang tree, in SGLang's own numbering (node 0 the root)."""
    depth, stack = {0: 0}, [0]
    while stack:
        v = stack.pop()
        c = next_token[v]
        while c != -1:
            depth[c] = depth[v] + 1
            stack.append(c)
            c = next_sibling[c]
    return [depth[i] for i in range(len(next_token))]


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
        assert _depths(_NEXT_TOKEN[b], _NEXT_SIBLING[b])[v[b]] == accept_num[b]
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
    shape = tree.Shape.from_choices(choices)
    nt, ns = shape.to_sglang()
    layouts = [
        {"retrieve_indices": shape.to_eagle()},
        {"retrieve_next_token": nt, "retrieve_next_sibling": ns},
        shape.to_vllm(),
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
            tree.TreeDraftLaw(tree.Shape.from_layout(lay), "swor"),
            samples=800,
            rng=np.random.default_rng(3),
            declared="token",
        )
        assert rep.accepted == base.accepted and rep.expected == base.expected and rep.ks_distance == base.ks_distance
        assert rep.details["shape"] == base.details["shape"]
