"""The optimal verifier run (Monte Carlo) on the shipped real distributions: its acceptance
agrees with α* (solved independently by optimal_acceptance) within 5σ, its output law is p
(chi-square on the top tokens plus a tail bucket), and the measurement separates it from RRS."""

from __future__ import annotations

import numpy as np
import pytest

import optaccept as oa
from optaccept import real, verifiers

llm = pytest.importorskip("optaccept.llm")
scipy_stats = pytest.importorskip("scipy.stats")

ROWS = (17, 608)  # two fixed positions of the shipped file


@pytest.fixture(scope="module")
def data():
    return real.Distributions.load(real.sample_path())


@pytest.mark.parametrize("i", ROWS)
def test_realised_acceptance_matches_alpha_star_on_real_rows(data, i: int) -> None:
    p, q = data.rows(i, i + 1)
    p, q = p[0], q[0]
    assert p.size == 49_152
    rng = np.random.default_rng(1000 + i)
    r = verifiers.realised_acceptance(p, q, 2, rng, samples=20_000)
    ref = oa.optimal_acceptance(p, oa.IID(q, 2)).value  # independent of the verifier
    assert abs(r.value - ref) <= 1e-12
    assert abs(r.acceptance - ref) <= 1e-9
    assert r.std_err > 0
    assert abs(r.mean - ref) <= 5 * r.std_err, (r.mean, ref, r.std_err)
    # a fixed seed gives the same draws
    r2 = verifiers.realised_acceptance(p, q, 2, np.random.default_rng(1000 + i), samples=20_000)
    assert r2.mean == r.mean


def test_output_law_is_p_on_a_real_row(data) -> None:
    p, q = data.rows(ROWS[0], ROWS[0] + 1)
    p, q = p[0], q[0]
    ov = oa.optimal_verifier(p, oa.IID(q, 2))
    size = 40_000
    _, y = ov.sample(np.random.default_rng(7), size)
    top = np.argsort(-p)[:20]
    top = top[p[top] * size >= 5]
    counts = np.bincount(y, minlength=p.size)
    obs = np.append(counts[top], size - counts[top].sum())
    exp = np.append(p[top], max(0.0, 1.0 - p[top].sum())) * size
    keep = exp > 0
    assert obs[~keep].sum() == 0
    stat = float((((obs - exp) ** 2)[keep] / exp[keep]).sum())
    pval = scipy_stats.chi2.sf(stat, int(keep.sum()) - 1)
    assert pval > 1e-6, (stat, pval)


def test_table_on_a_subset(data) -> None:
    tb = real.realised_optimal(
        data, ks=(2,), positions=list(ROWS), rng=np.random.default_rng(3), samples=5_000, progress=False
    )
    assert list(tb.positions) == list(ROWS)
    s = tb.summary(2)
    assert s["positions"] == 2 and s["samples_per_position"] == 5_000
    assert abs(s["z"]) <= 5
    assert abs(s["rule"] - s["alpha_iid"]) <= 1e-9
    # RRS and K-SEQ cannot beat α*; on these rows RRS is far below the realised acceptance,
    # so the Monte Carlo measurement would tell a sub-optimal verifier apart
    assert s["rrs"] <= s["alpha_iid"] + 1e-12 and s["kseq"] <= s["alpha_iid"] + 1e-12
    assert s["rrs"] < s["realised"] - 5 * s["realised_se"]
    html = tb._repr_html_()
    assert "<table" in html and "± " in html
    assert "RealisedTable(2 positions" in repr(tb)
    with pytest.raises(oa.InputError, match="k"):
        tb.summary(4)


def test_random_subset_is_reproducible_and_inputs_checked(data) -> None:
    a = real.realised_optimal(data, ks=(1,), positions=2, rng=np.random.default_rng(5), samples=10, progress=False)
    b = real.realised_optimal(data, ks=(1,), positions=2, rng=np.random.default_rng(5), samples=10, progress=False)
    assert list(a.positions) == list(b.positions) and len(set(a.positions.tolist())) == 2
    assert np.array_equal(a.values[(1, "realised")], b.values[(1, "realised")])
    with pytest.raises(oa.InputError, match="positions"):
        real.realised_optimal(data, positions=0, progress=False)
    with pytest.raises(oa.InputError, match="positions"):
        real.realised_optimal(data, positions=[len(data)], progress=False)
    with pytest.raises(oa.InputError, match="ks"):
        real.realised_optimal(data, ks=(0,), positions=1, progress=False)
    with pytest.raises(oa.InputError, match="^rng: must be a numpy.random.Generator or a non-negative integer seed"):
        verifiers.realised_acceptance([0.5, 0.5], [0.5, 0.5], 2, rng=-1)
    # an integer seed is the library's one other form of passed-in randomness: reproducible
    a = verifiers.realised_acceptance([0.5, 0.5], [0.4, 0.6], 2, rng=3)
    b = verifiers.realised_acceptance([0.5, 0.5], [0.4, 0.6], 2, rng=np.random.default_rng(3))
    assert a == b


def test_without_replacement_on_real_rows(data) -> None:
    """Drafts without replacement (k = 3) from the shipped rows' 50-token drafts, at the full
    vocabulary 49,152: the flow-plan verifier lists the 19,600 draft sets.  On row 17 the LP
    alone fell 2e-11 short of α* (tokens of tiny p it leaves unfilled); the integer polish
    closes that, so the rule's acceptance matches α* of the sorted prefix scan to 1e-13."""
    i = ROWS[0]
    p, q = data.rows(i, i + 1)
    p, q = p[0], q[0]
    ref = oa.optimal_acceptance(p, oa.WithoutReplacement(q, 3)).value  # independent of the verifier
    r = verifiers.realised_acceptance(p, q, 3, np.random.default_rng(5), samples=20_000, drafts="swor")
    assert r.law == "swor" and abs(r.value - ref) <= 1e-12
    assert abs(r.acceptance - ref) <= 1e-13
    assert abs(r.mean - ref) <= 5 * r.std_err, (r.mean, ref, r.std_err)
    tb = real.realised_optimal(
        data,
        ks=(2, 3),
        positions=list(ROWS),
        rng=np.random.default_rng(3),
        samples=5_000,
        progress=False,
        drafts="swor",
    )
    for k in (2, 3):
        s = tb.summary(k)
        assert abs(s["z"]) <= 5 and abs(s["rule"] - s["alpha_swor"]) <= 1e-12
        assert s["rrs_wor"] <= s["alpha_swor"] + 1e-12
    assert "RRS w/o repl." in tb.to_markdown() and "law='swor'" in repr(tb)
    with pytest.raises(oa.InputError, match="^drafts:"):
        real.realised_optimal(data, positions=1, drafts="joint", progress=False)
