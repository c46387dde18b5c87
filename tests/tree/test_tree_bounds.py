"""tree.upper_bound: a bound on every lossless verifier that holds at vocabulary scale
(docs/trees.md §4b), checked against the sequence-level LP solved exactly on small cases."""

from __future__ import annotations

import numpy as np
import pytest
from test_tree_lossless import frac_table

from optaccept import tree

#: (the tree's draft law, the vocabulary size of its instances)
SPECS = [
    (tree.TreeDraftLaw((2, 1), "swor"), 3),
    (tree.TreeDraftLaw((2, 1), "iid"), 3),
    (tree.TreeDraftLaw((1, 2), "iid"), 3),
    (tree.TreeDraftLaw((2, 2), "swor"), 2),
    (tree.TreeDraftLaw([(0,), (1,), (0, 0)], "swor"), 3),
    (tree.TreeDraftLaw((2, 1), "topk"), 3),
    (tree.TreeDraftLaw(length=2, k=2, children="iid"), 3),
    (tree.TreeDraftLaw(length=2, k=2, children="swor"), 3),
    (tree.TreeDraftLaw(length=2, k=1, children="iid"), 3),
]


def _laws(seed, n=3, L=2, den=6):
    rng = np.random.default_rng(seed)
    P, Q = frac_table(n, L, rng, den=den), frac_table(n, L, rng, den=den)
    if seed % 7 == 0:
        Q = P
    return (
        {w: v.astype(float) for w, v in P.items()}.__getitem__,
        {w: v.astype(float) for w, v in Q.items()}.__getitem__,
    )


@pytest.mark.parametrize("law,n", SPECS, ids=str)
def test_bound_holds_against_the_lp(law, n):
    """On 15 random instances per tree law (zeros, p = q): bound ≥ LP optimum ≥ the best
    practical verifier; equality on top-k trees (Proposition 1.1)."""
    for seed in range(15):
        P, Q = _laws(seed, n=n)
        opt = tree.accepted_tokens(P, Q, drafts=law, verifier="optimal")
        ub = tree.upper_bound(P, Q, drafts=law)
        assert opt.certificate is None or opt.certificate.ok  # top-k: exact, no LP
        assert ub.value >= float(opt.value) - 1e-9
        if law.children == "topk":
            assert ub.value == pytest.approx(opt.value, abs=1e-7)


@pytest.mark.parametrize("children,b", [("iid", 3), ("swor", 3), ("topk", 3), ("iid", 1)])
def test_one_token_bound_is_alpha_star(children, b):
    from optaccept import IID, WithoutReplacement, optimal_acceptance

    for seed in range(5):
        rng = np.random.default_rng(seed)
        p, q = rng.dirichlet(np.ones(6) * 0.5), rng.dirichlet(np.ones(6) * 0.5)
        ub = tree.upper_bound(lambda u, p=p: p, lambda u, q=q: q, drafts=tree.TreeDraftLaw((b,), children)).value
        if children == "topk":
            want = p[np.argsort(-q, kind="stable")[:b]].sum()
        else:
            want = optimal_acceptance(p, (IID if children == "iid" else WithoutReplacement)(q, b)).value
        assert ub == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "law",
    [
        tree.TreeDraftLaw((2, 2), "swor"),
        tree.TreeDraftLaw((3, 1), "iid"),
        tree.TreeDraftLaw(length=2, k=3, children="swor"),
    ],
    ids=str,
)
def test_sampled_bound_is_unbiased(law):
    """The Rao-Blackwellised bound (laws at the sampled trees' nodes only) agrees with
    the exact bound within 5σ (the exact one caps each depth by the one above, which
    can only lower it)."""
    t, d = tree.synthetic_pair(10, rng=5, scale=1.5)
    ex = tree.upper_bound(t, d, drafts=law)
    sa = tree.upper_bound(t, d, drafts=law, samples=600, rng=np.random.default_rng(1))
    uncapped = ex.details["per_depth"]
    assert sa.method == "sampled" and sa.std_err > 0
    assert abs(sa.value - ex.value) < 5 * sa.std_err or sa.value > ex.value
    assert sa.details["per_depth"][0] == pytest.approx(uncapped[0], abs=1e-12)


def test_topk_bound_at_vocabulary_scale_is_the_optimum():
    t, d = tree.synthetic_pair(5000, rng=1, scale=3.0)
    shape = [(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]
    ub = tree.upper_bound(t, d, drafts=tree.TreeDraftLaw(shape, "topk"))
    to = tree.accepted_tokens(t, d, tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
    assert ub.method == "exact" and ub.value == pytest.approx(float(to.value), abs=1e-12)


def test_heterogeneous_swor_shapes_rank_law():
    """Swor shapes whose siblings carry different subtrees: π(w) from the law of each draw's
    rank (P(x is the j-th draw) = incl(j) − incl(j − 1)) equals π from the enumerated trees'
    node probabilities (an independent computation) for every string, and the bound runs
    sampled at vocabulary scale (it was refused before)."""
    from collections import defaultdict

    from optaccept.tree._api import resolve_models
    from optaccept.tree._bounds import _Pi
    from optaccept.tree._shape import as_shape
    from optaccept.tree._shaped_tree import enumerate_shaped

    for shape in ([(0,), (1,), (0, 0)], [(0,), (1,), (2,), (1, 0), (1, 1)], [(0,), (1,), (1, 0), (1, 0, 0)]):
        for seed in (1, 2):
            t, d = tree.synthetic_pair(5, rng=seed)
            _, Q = resolve_models(t, d, None, None)
            shp = as_shape(shape)
            pi = _Pi(Q, shp, "swor", shp.depth, 0)
            sums: dict = defaultdict(float)
            for tr, pr in enumerate_shaped(Q, shp, "swor", max_trees=200_000):
                for w in tr.nodes():
                    sums[w] += float(pr)
            for w, v in sums.items():
                if w:
                    assert pi(w) == pytest.approx(v, abs=1e-12), (shape, w)
    t, d = tree.synthetic_pair(2000, rng=1)
    ub = tree.upper_bound(
        t, d, drafts=tree.TreeDraftLaw([(0,), (1,), (0, 0)], "swor"), samples=20, rng=np.random.default_rng(0)
    )
    ex1 = tree.upper_bound(t, d, drafts=tree.TreeDraftLaw([(0,), (1,)], "swor"))  # depth 1: α* of 2 draws
    assert ub.method == "sampled" and ub.value >= ex1.value - 1e-12
