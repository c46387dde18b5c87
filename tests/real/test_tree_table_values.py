"""tree_table computes every per-tree value of the stored trees at once (one pass over the
trees for the sampled verifiers, the bound's terms for all trees and lengths from the sparse
rows, the one-token values on each root's support).  Each is checked here against the
per-tree functions it replaces, fed from dense rows: tree_bound_terms, rao_blackwell over
DraftTrees.items, and the one-token closed forms on the full-vocabulary rows."""

from __future__ import annotations

import numpy as np
import pytest

from optaccept import InputError, real, tree
from optaccept.drafts._swor import inclusions as _swor_inclusions
from optaccept.real import _tree_values as _real
from optaccept.real._storage import SparseRows
from optaccept.real._stored import StoredModel
from optaccept.tree._bounds import tree_bound_terms
from optaccept.tree._verifiers import token_value, traversal_value

RTOL = 1e-12


def _dense_models(f, i):
    """Tree i's compact (target, draft) models built from the dense rows (DraftTrees.rows)."""
    index = f.prefixes(i)
    keep = f.vocabulary(i)
    new = {int(t): j for j, t in enumerate(keep)}
    p, q = f.rows(list(index.values()))
    keys = [tuple(new[t] for t in key) for key in index]
    return StoredModel(dict(zip(keys, p[:, keep], strict=True))), StoredModel(dict(zip(keys, q[:, keep], strict=True)))


def _cut(f, i, k, L):
    keep = f.vocabulary(i)
    new = {int(t): j for j, t in enumerate(keep)}
    return tree._draft.DraftTree(tuple(tuple(new[t] for t in c[:L]) for c in f.chains(i)[:k]), L, f.drafts)


@pytest.fixture(scope="module")
def shipped():
    return {d: real.DraftTrees.load(real.trees_path(d)) for d in ("iid", "swor")}


@pytest.fixture(scope="module")
def extended():
    """60 trees (5 prompts) of each large shipped set."""
    return {d: real.DraftTrees.load(real.trees_path(d, "extended")).select(slice(0, 60)) for d in ("iid", "swor")}


@pytest.mark.parametrize("which", ["shipped", "extended"])
@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_bound_terms_of_all_trees_match_tree_bound_terms(which, drafts, request):
    f = request.getfixturevalue(which)[drafts]
    cache: dict = {}
    for k in range(1 if drafts == "iid" else 2, f.k + 1):
        got = _real._bound_terms_all(f, k, cache)
        assert got.shape == (f.n_trees, f.length + 1) and not got[:, :2].any()
        for i in range(0, f.n_trees, 3 if which == "shipped" else 7):
            P, Q = _dense_models(f, i)
            want = tree_bound_terms(_cut(f, i, k, f.length), P, Q, drafts, k)
            np.testing.assert_allclose(got[i, 2:], want[2:], rtol=RTOL, atol=0)
            # a shorter cut holds the same nodes up to its length
            short = tree_bound_terms(_cut(f, i, k, 2), P, Q, drafts, k)
            np.testing.assert_allclose(got[i, 2], short[2], rtol=RTOL, atol=0)


@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_sampled_values_match_rao_blackwell(shipped, drafts):
    f = shipped[drafts].select(slice(0, 24))
    cells = [(k, L) for k in range(1 if drafts == "iid" else 2, f.k + 1) for L in (2, 4)]

    class Bar:
        n = 0

        def update(self, n=1):
            self.n += n

    bar = Bar()
    got = _real._sampled_values(f, cells, bar)
    assert bar.n == f.n_trees
    for k, L in cells:
        verifiers = _real._cell_verifiers(drafts, k)
        items = [(_cut(f, i, k, L), *_dense_models(f, i)) for i in range(f.n_trees)]
        ref = tree._sampling.rao_blackwell(items, verifiers=verifiers, groups=f.prompt_index, progress=False)
        assert set(got[(k, L)]) == set(verifiers)
        for v in verifiers:
            np.testing.assert_allclose(got[(k, L)][v], ref[v].details["values"], rtol=RTOL, atol=0)


@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_root_values_on_supports_match_full_rows(shipped, drafts):
    f = shipped[drafts]
    roots = _real._prompt_roots(f)
    first = [int(np.flatnonzero(f.prompt_index == g)[0]) for g in roots["prompts"]]
    p, q = f.rows(np.flatnonzero(f.parent < 0)[first])  # 49,152 tokens per row
    full = {"p": p, "q": q, "of_tree": roots["of_tree"], "prompts": roots["prompts"]}
    assert max(r.size for r in roots["p"]) < 200
    for k in (2, 4):
        got, want = _real._root_values(roots, drafts, k), _real._root_values(full, drafts, k)
        assert set(got) == set(want)
        for v in want:
            np.testing.assert_allclose(got[v], want[v], rtol=RTOL, atol=1e-15)


def test_table_cells_match_the_per_tree_path(shipped):
    """Rows and paired differences of a sampled cell, recomputed from rao_blackwell and
    tree_bound_terms on dense rows."""
    files = {d: f.select(slice(0, 30)) for d, f in shipped.items()}
    table = real.tree_table(files, ks=(1, 3), lengths=(3,), progress=False)
    f = files["swor"]
    items = [(_cut(f, i, 3, 3), *_dense_models(f, i)) for i in range(f.n_trees)]
    ref = tree._sampling.rao_blackwell(items, verifiers=("token", "traversal"), groups=f.prompt_index, progress=False)
    for v in ("token", "traversal"):
        row = table.get(v, "swor", 3, 3)
        assert row["value"] == pytest.approx(ref[v].value, rel=RTOL)
        assert row["std_err"] == pytest.approx(ref[v].std_err, rel=1e-10)
    first = [int(np.flatnonzero(f.prompt_index == g)[0]) for g in np.unique(f.prompt_index)]
    p, q = f.rows(np.flatnonzero(f.parent < 0)[first])
    from optaccept.drafts import WithoutReplacement
    from optaccept.optimal import optimal_acceptance

    alpha = {g: float(optimal_acceptance(a, WithoutReplacement(b, 3)).value) for g, a, b in zip(first, p, q)}
    of = {int(f.prompt_index[g]): a for g, a in alpha.items()}
    bound = np.array(
        [
            of[int(f.prompt_index[i])] + tree_bound_terms(t, P, Q, "swor", 3)[2:].sum()
            for i, (t, P, Q) in enumerate(items)
        ]
    )
    assert table.get("bound", "swor", 3, 3)["value"] == pytest.approx(bound.mean(), rel=RTOL)
    d = [r for r in table.differences if (r["drafts"], r["k"], r["length"], r["a"]) == ("swor", 3, 3, "bound")]
    best = max(("token", "traversal"), key=lambda v: ref[v].value)
    assert len(d) == 1 and d[0]["b"] == best
    want = bound - np.asarray(ref[best].details["values"])
    assert d[0]["value"] == pytest.approx(want.mean(), rel=1e-10)


def test_sparse_row_lookups_match_dense():
    rng = np.random.default_rng(11)
    m, n = 12, 30
    t = rng.random((m, n)) * (rng.random((m, n)) < 0.3)
    d = rng.random((m, n)) * (rng.random((m, n)) < 0.3)
    t[:, 3] += 1e-300  # subnormal-scale and tiny masses next to ordinary ones
    d[:, 5] = 1 - 1e-12
    t[7] = d[7] = 0
    t[7, 0] = 1.0  # p and q disjoint on a row
    d[7, n - 1] = 1.0
    t, d = t.astype(np.float32), d.astype(np.float32)
    s = SparseRows.from_dense(t, d)
    rows = rng.integers(0, m, 200)
    cols = rng.integers(0, n, 200)
    a, b = s.values_at(rows, cols)
    np.testing.assert_array_equal(a, t[rows, cols])
    np.testing.assert_array_equal(b, d[rows, cols])
    st, sd = s.row_sums()
    np.testing.assert_allclose(st, t.astype(np.float64).sum(1), rtol=1e-15)
    np.testing.assert_allclose(sd, d.astype(np.float64).sum(1), rtol=1e-15)
    sel = [2, 7, 2]
    keep = s.support(sel)
    cp, cq = s.compact(sel, keep)
    dense = t[sel].astype(np.float64)
    np.testing.assert_allclose(cp, dense[:, keep] / dense.sum(1, keepdims=True), rtol=1e-15)
    assert cq.shape == (3, keep.size) and np.allclose(cq.sum(1), 1)
    empty = SparseRows.from_dense(np.zeros((2, 4)), np.zeros((2, 4)))
    np.testing.assert_array_equal(empty.values_at([0, 1], [3, 0])[0], [0, 0])


def test_broken_rows_are_refused():
    t = np.array([[0.5, 0.5, 0.0], [0.6, 0.4, 0.0], [0.7, 0.3, 0.0]], dtype=np.float32)
    d = np.array([[0.4, 0.6, 0.0], [0.5, 0.5, 0.0], [-0.2, 1.2, 0.0]], dtype=np.float32)
    f = real.DraftTrees(
        t,
        d,
        tree=[0, 0, 0],
        parent=[-1, 0, 0],
        depth=[0, 1, 1],
        token=[-1, 0, 1],
        prompt_index=[0],
        chains=[[[1], [2]]],
        meta={"drafts": "iid"},
    )
    with pytest.raises(InputError, match="draft rows of tree 0 hold a negative"):
        _real._tree_laws(f, 0)


def _small(draft_rows, drafts):
    t = np.array([[0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [0.7, 0.3, 0.0]], dtype=np.float32)
    return real.DraftTrees(
        t,
        np.asarray(draft_rows, dtype=np.float32),
        tree=[0, 0, 0],
        parent=[-1, 0, 0],
        depth=[0, 1, 1],
        token=[-1, 0, 1],
        prompt_index=[0],
        chains=[[[1], [2]]],
        meta={"drafts": drafts},
    )


class _Bar:
    n = 0

    def update(self, n=1):
        self.n += n


def test_broken_rows_are_refused_by_the_batched_pass():
    f = _small([[0.4, 0.6, 0.0], [0.5, 0.5, 0.0], [-0.2, 1.2, 0.0]], "iid")
    with pytest.raises(InputError, match="draft rows of tree 0 hold a negative"):
        _real._sampled_values(f, [(2, 1)], _Bar())


def test_trees_the_batched_traversal_leaves_take_the_per_tree_path():
    """q(·|root) on token 0 only, children 0 and 1: the draft law runs out with a child
    left, so the batched traversal leaves the tree; the value is the per-tree function's."""
    f = _small([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0]], "swor")
    got = _real._sampled_values(f, [(2, 1)], _Bar())[(2, 1)]
    P, Q, new = _real._tree_laws(f, 0)
    tree_ = tree._draft.DraftTree(((new[0],), (new[1],)), 1, "swor")
    assert got["traversal"][0] == traversal_value(tree_, P, Q)
    assert got["token"][0] == token_value(tree_, P, Q)


def test_bound_terms_by_one_integral_per_token_match(shipped, monkeypatch):
    """The path for rows too wide to expand (or whose floats overflow): one quadrature per token."""
    monkeypatch.setattr(_swor_inclusions, "EXPANDED", 0)
    f = shipped["swor"]
    for k in (3, f.k):
        got = _real._bound_terms_all(f, k, {})
        for i in range(0, f.n_trees, 5):
            P, Q = _dense_models(f, i)
            want = tree_bound_terms(_cut(f, i, k, f.length), P, Q, "swor", k)
            np.testing.assert_allclose(got[i, 2:], want[2:], rtol=RTOL, atol=0)
