"""tree.budget_curve: the best deterministic tree for a node budget (docs/trees.md §8b),
each strategy checked against a brute force written here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optaccept import tree
from optaccept._errors import InputError
from optaccept.tree._budget import sequoia_shape


def _strings(law, n, depth):
    """Every string of length 1..depth with its path probability under law."""
    out = {}
    for d in range(1, depth + 1):
        for w in itertools.product(range(n), repeat=d):
            v = 1.0
            for i in range(d):
                v *= law(w[:i])[w[i]]
            out[w] = v
    return out


def test_ceiling_and_dynamic_against_brute_force():
    n, budgets = 3, (1, 2, 4, 6)
    pairs = [tree.synthetic_pair(n, rng=s, scale=1.5) for s in range(4)]
    c = tree.budget_curve(pairs, budgets)
    for i, (P, Q) in enumerate(pairs):
        ps, qs = _strings(P, n, max(budgets)), _strings(Q, n, max(budgets))
        by_p = sorted(ps.values(), reverse=True)
        by_q = sorted(qs, key=lambda w: -qs[w])
        for j, N in enumerate(budgets):
            assert c.values["ceiling"][i, j] == pytest.approx(sum(by_p[:N]), abs=1e-12)
            assert c.values["dynamic"][i, j] == pytest.approx(sum(ps[w] for w in by_q[:N]), abs=1e-12)
            for s in ("sequoia", "dynamic"):  # no tree of N nodes beats the N most probable strings
                assert c.values[s][i, j] <= c.values["ceiling"][i, j] + 1e-12


def test_sequoia_values_are_the_topk_shape_values():
    pairs = [tree.synthetic_pair(300, rng=s, scale=2.5) for s in range(3)]
    c = tree.budget_curve(pairs, (4, 16))
    for j, N in enumerate((4, 16)):
        shape = sequoia_shape(c.rates, N)
        for i, (P, Q) in enumerate(pairs):
            r = tree.accepted_tokens(P, Q, tree.TreeDraftLaw(shape, "topk"), verifier="target_only")
            assert c.values["sequoia"][i, j] == pytest.approx(float(r.value), abs=1e-12)
    assert np.all(np.diff(c.mean("ceiling")) >= 0) and np.all(np.diff(c.mean("sequoia")) >= 0)


def _shapes(size, width):
    """Every shape (prefix- and sibling-closed index-path set) of ``size`` nodes, ranks < width."""
    shapes = {frozenset()}
    for _ in range(size):
        nxt = set()
        for s in shapes:
            for cand in [(0,)] + [p + (0,) for p in s] + [p[:-1] + (p[-1] + 1,) for p in s]:
                if cand not in s and cand[-1] < width:
                    nxt.add(s | {cand})
        shapes = nxt
    return shapes


def test_sequoia_shape_is_optimal_under_positional_rates():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = np.sort(rng.random(4))[::-1] * 0.9
        for N in (1, 3, 5):

            def value(s, a=a):
                return sum(np.prod([a[r] for r in path]) for path in s)

            best = max(value(s) for s in _shapes(N, 4))
            assert value(sequoia_shape(a, N)) == pytest.approx(best, abs=1e-12)


def test_budget_curve_errors_and_display():
    pair = tree.synthetic_pair(20, rng=1)
    with pytest.raises(InputError, match="budgets"):
        tree.budget_curve([pair], (8, 4))
    with pytest.raises(InputError, match="strategies"):
        tree.budget_curve([pair], (4,), strategies=("beam",))
    c = tree.budget_curve([pair, tree.synthetic_pair(20, rng=2)], (2, 4))
    assert "(ceiling)" in c.to_markdown() and "<table" in c._repr_html_()
    from optaccept.plots import plot_budget_curve

    ax = plot_budget_curve(c)
    assert ax.get_xlabel() == "node budget N"
