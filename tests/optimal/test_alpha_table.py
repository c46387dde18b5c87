"""optimal.alpha_table: α* by k and draft law with each certificate's status, against the dual
(★) enumerated over all 2ⁿ subsets independently of the solvers; and plots.plot_alpha_vs_k
drawn from a computed table."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept import plots


def _iid_by_enumeration(p, q, k):
    """min over every S of p(S) + 1 − q(S)^k (Theorem 2.2 with D(set ⊆ S) = q(S)^k)."""
    n = len(p)
    return min(
        sum(p[i] for i in S) + 1 - sum(q[i] for i in S) ** k
        for r in range(n + 1)
        for S in itertools.combinations(range(n), r)
    )


@pytest.mark.parametrize("seed", range(6))
def test_values_equal_the_dual_enumerated_and_are_certified(seed):
    rng = np.random.default_rng(seed)
    n = 5
    p, q = rng.dirichlet(np.ones(n) * 0.7), rng.dirichlet(np.ones(n) * 0.7)
    if seed == 0:
        q[rng.integers(n)] = 0.0  # a zero in q: distinct drafts stop at |supp q| = 4
        q /= q.sum()
    table = oa.optimal.alpha_table(p, q, ks=range(1, 7))
    assert table.ok is True
    for k in range(1, 7):
        assert table.values["iid"][k] == pytest.approx(_iid_by_enumeration(p, q, k), abs=1e-12)
    support = int(np.count_nonzero(q))
    for law in ("swor", "greedy"):
        for k in range(1, 7):
            if k > support:
                assert table.values[law][k] is None and table.certified[law][k] is None
            else:
                want = oa.optimal_acceptance(p, oa.drafts.law_from_name(law, q, k), method="subsets").value
                assert table.values[law][k] == pytest.approx(want, abs=1e-12)
    # k = 1: every law is one draft from q, α* = Σ min(p, q)
    one = float(np.minimum(p, q).sum())
    assert all(table.values[law][1] == pytest.approx(one, abs=1e-12) for law in table.drafts)


def test_exact_fractions_of_the_readme_pair():
    p = [Fraction(v) for v in ("0.40", "0.25", "0.15", "0.12", "0.08")]
    q = [Fraction(v) for v in ("0.30", "0.10", "0.35", "0.05", "0.20")]
    want = _iid_by_enumeration(p, q, 2)
    assert want == Fraction(363, 400)  # 0.9075
    table = oa.optimal.alpha_table([float(v) for v in p], [float(v) for v in q], ks=(2,), drafts=("iid",))
    assert table.values["iid"][2] == pytest.approx(float(want), abs=1e-15)


def test_forms_and_refusals():
    table = oa.optimal.alpha_table([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], ks=(1, 2, 4), drafts=("iid", "swor"))
    frame = table.to_pandas()
    assert len(frame) == 6 and set(frame.columns) >= {"drafts", "k", "alpha_star", "certified"}
    assert frame.loc[(frame.drafts == "swor") & (frame.k == 4), "alpha_star"].isna().all()
    latex = table.to_latex()
    assert "--" in latex and r"$k=4$" in latex
    assert "—" in str(table) and "every value certified" in str(table)
    unverified = oa.optimal.alpha_table([0.5, 0.5], [0.5, 0.5], ks=(1,), verify_each=False)
    assert unverified.ok is None and unverified.certified["iid"][1] is None
    with pytest.raises(oa.InputError, match="^drafts: must be one of"):
        oa.optimal.alpha_table([0.5, 0.5], [0.5, 0.5], ks=(1,), drafts=("spechub",))
    with pytest.raises(oa.InputError, match="^k:"):
        oa.optimal.alpha_table([0.5, 0.5], [0.5, 0.5], ks=(0,))


def test_plot_from_a_computed_table_draws_the_same_curves():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p, q = [0.40, 0.25, 0.15, 0.12, 0.08], [0.30, 0.10, 0.35, 0.05, 0.20]
    table = oa.optimal.alpha_table(p, q, ks=range(1, 7))
    a = plots.plot_alpha_vs_k(table)
    b = plots.plot_alpha_vs_k(p, q, ks=range(1, 7))
    for la, lb in zip(a.get_lines(), b.get_lines(), strict=True):
        assert np.array_equal(la.get_xydata(), lb.get_xydata())
    assert [t.get_text() for t in a.texts] == [t.get_text() for t in b.texts]
    plt.close("all")
