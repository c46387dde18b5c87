"""The batched verifier values (every tree and every cut at once) against the per-tree
functions they replace (token_value, traversal_value, block_value), on random trees with
shared prefixes and repeated draws and on degenerate laws: zeros, p = q, disjoint supports,
one-hot and near-one-hot (1 − 1e-12) rows, subnormal masses, tokens stored nowhere."""

from __future__ import annotations

import numpy as np
import pytest

from optaccept.tree._batched_verifiers import NodeRows, block_values, token_values, traversal_values
from optaccept.tree._draft import DraftTree
from optaccept.tree._verifiers import block_value, token_value, traversal_value

RTOL = 1e-12


def _law(rng: np.random.Generator, n: int, kind: int, other: np.ndarray | None) -> np.ndarray:
    if kind == 0:  # sparse
        v = rng.random(n) * (rng.random(n) < 0.6)
    elif kind == 1:  # one-hot
        v = np.zeros(n)
        v[rng.integers(n)] = 1.0
    elif kind == 2:  # near-one-hot with a subnormal and a tiny mass
        v = np.zeros(n)
        v[rng.integers(n)] = 1 - 1e-12
        v[rng.integers(n)] += 1e-12
        v[rng.integers(n)] += 5e-320
    elif kind == 3 and other is not None:  # the same law as the other side
        return other.copy()
    elif kind == 4 and other is not None:  # disjoint from the other side where possible
        v = np.where(other > 0, 0.0, rng.random(n))
    else:
        v = rng.dirichlet(np.full(n, 0.3))
    if v.sum() <= 0:
        v = np.zeros(n)
        v[rng.integers(n)] = 1.0
    return v / v.sum()


def _forest(seed: int, trees: int, k: int, length: int, n: int, drafts: str):
    """Random trees as stored node arrays, their laws as NodeRows, and the per-tree pieces."""
    rng = np.random.default_rng(seed)
    token, roots, chains, P, Q, per_tree = [], [], [], [], [], []
    for _ in range(trees):
        vocab = int(rng.integers(1, n + 1))  # few tokens: shared prefixes and repeated draws
        ch = [tuple(int(x) for x in rng.integers(0, vocab, length)) for _ in range(k)]
        if drafts == "swor" and rng.random() < 0.7 and k <= n:  # distinct root children
            first = rng.permutation(n)[:k]
            ch = [(int(first[c]),) + ch[c][1:] for c in range(k)]
        index: dict = {}
        laws: dict = {}
        for w in [()] + [c[: d + 1] for c in ch for d in range(length)]:
            if w in index:
                continue
            index[w] = len(token)
            token.append(w[-1] if w else -1)
            p = _law(rng, n, int(rng.integers(6)), None)
            q = _law(rng, n, int(rng.integers(6)), p)
            laws[w] = (p, q)
            P.append(p)
            Q.append(q)
        roots.append(index[()])
        chains.append([[index[c[: d + 1]] for d in range(length)] for c in ch])
        per_tree.append((ch, laws))
    p, q = np.array(P), np.array(Q)
    stored = (p > 0) | (q > 0)
    width = int(stored.sum(axis=1).max())
    cols = np.full((p.shape[0], width), -1, dtype=np.int64)
    pp, qq = np.zeros((p.shape[0], width)), np.zeros((p.shape[0], width))
    for i in range(p.shape[0]):  # each node keeps only its own support, as the stored rows do
        at = np.flatnonzero(stored[i])
        cols[i, : at.size], pp[i, : at.size], qq[i, : at.size] = at, p[i, at], q[i, at]
    rows = NodeRows(cols, pp, qq)
    return rows, np.array(token), np.array(roots), np.array(chains, dtype=np.int64).reshape(trees, k, length), per_tree


def _reference(fn, ch, laws, k, L, drafts):
    tree = DraftTree(tuple(c[:L] for c in ch[:k]), L, drafts)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # q(x) = 0 on a drawn token
        return float(fn(tree, lambda u: laws[u][0], lambda u: laws[u][1]))


CASES = [(1, 3, 2, 4, "iid"), (2, 4, 3, 3, "iid"), (3, 3, 3, 5, "swor"), (4, 4, 2, 2, "swor"), (5, 5, 2, 3, "iid")]


@pytest.mark.parametrize("seed,k,length,n,drafts", CASES)
def test_token_values_match_token_value(seed, k, length, n, drafts):
    rows, token, roots, chains, per_tree = _forest(seed, 150, k, length, n, drafts)
    cells = [(kk, L) for kk in range(1, k + 1) for L in range(1, length + 1)]
    got = token_values(rows, token, roots, chains, drafts, cells)
    for kk, L in cells:
        want = [_reference(token_value, ch, laws, kk, L, drafts) for ch, laws in per_tree]
        np.testing.assert_allclose(got[(kk, L)], want, rtol=RTOL, atol=0)


@pytest.mark.parametrize("seed,k,length,n,drafts", CASES)
def test_traversal_values_match_traversal_value(seed, k, length, n, drafts):
    rows, token, roots, chains, per_tree = _forest(seed + 10, 150, k, length, n, drafts)
    cells = [(kk, L) for kk in range(1, k + 1) for L in range(1, length + 1)]
    got, left = traversal_values(rows, token, roots, chains, cells)
    some = 0
    for kk, L in cells:
        want = np.array([_reference(traversal_value, ch, laws, kk, L, drafts) for ch, laws in per_tree])
        keep = ~left[(kk, L)]
        assert np.isnan(got[(kk, L)][~keep]).all()
        some += int((~keep).sum())
        np.testing.assert_allclose(got[(kk, L)][keep], want[keep], rtol=RTOL, atol=0)
    assert some < 0.2 * len(per_tree) * len(cells)  # only trees whose draft law runs out are left


def test_traversal_leaves_a_tree_whose_draft_law_runs_out():
    """q(·|root) on one token x, children x and y: after x is rejected q has nothing left
    while y is still a child — the per-tree path empties the node, the batch leaves it."""
    p = np.array([[0.2, 0.8], [0.5, 0.5], [0.5, 0.5]])
    q = np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]])
    rows = NodeRows(np.tile(np.arange(2), (3, 1)), p, q)
    got, left = traversal_values(rows, np.array([-1, 0, 1]), np.array([0]), np.array([[[1], [2]]]), [(2, 1)])
    assert left[(2, 1)].tolist() == [True] and np.isnan(got[(2, 1)][0])


@pytest.mark.parametrize("seed,length,n", [(7, 4, 3), (8, 3, 5), (9, 1, 4)])
def test_block_values_match_block_value(seed, length, n):
    rows, token, roots, chains, per_tree = _forest(seed, 200, 1, length, n, "iid")
    lengths = list(range(1, length + 1))
    got = block_values(rows, token, chains, roots, lengths)
    for L in lengths:
        want = [_reference(block_value, ch, laws, 1, L, "iid") for ch, laws in per_tree]
        np.testing.assert_allclose(got[L], want, rtol=RTOL, atol=0)


def test_equal_laws_accept_every_first_draft():
    """p = q at every node: token-level RRS accepts the first candidate with probability 1,
    so the value is the chain's full length (an answer known without the code)."""
    rng = np.random.default_rng(3)
    rows, token, roots, chains, _ = _forest(3, 20, 3, 3, 4, "iid")
    p = np.array([rng.dirichlet(np.ones(rows.cols.shape[1])) for _ in range(rows.cols.shape[0])])
    p[rows.cols < 0] = 0
    p /= p.sum(axis=1, keepdims=True)
    same = NodeRows(rows.cols, p, p.copy())
    got = token_values(same, token, roots, chains, "iid", [(3, 3), (1, 2)])
    np.testing.assert_array_equal(got[(3, 3)], 3.0)
    np.testing.assert_array_equal(got[(1, 2)], 2.0)
