"""The shipped SmolLM2 distributions have real gaps (α* < 1), checked with the numpy core
independently of the batched torch solvers that the README's numbers come from."""

from __future__ import annotations

import numpy as np
import pytest

import optaccept as oa
from optaccept import real

llm = pytest.importorskip("optaccept.llm")


@pytest.fixture(scope="module")
def rows():
    data = real.Distributions.load(real.sample_path())
    return data.compact_rows()


def test_shipped_file_has_gaps_at_k_2_3_4(rows):
    p, q = rows
    assert len(p) == 1091
    # the counts stated in optaccept/data/README.md and the README's claims table
    for k, n_iid in {2: 1088, 3: 1048, 4: 986}.items():
        a_iid = np.asarray(oa.batched_optimal_acceptance(p, q, k, drafts="iid", device="cpu"))
        assert int((a_iid < 1 - 1e-9).sum()) == n_iid
    a_iid = np.asarray(oa.batched_optimal_acceptance(p, q, 2, drafts="iid", device="cpu"))
    a_swor = np.asarray(oa.batched_optimal_acceptance(p, q, 2, drafts="swor", device="cpu"))
    assert int((a_swor < 1 - 1e-9).sum()) == 868
    assert np.all(a_swor >= a_iid - 1e-9)


@pytest.mark.slow
def test_shipped_file_counts_without_replacement(rows):
    p, q = rows
    expected = {2: (1088, 868), 3: (1048, 461), 4: (986, 155)}
    for k, (n_iid, n_swor) in expected.items():
        a_iid = np.asarray(oa.batched_optimal_acceptance(p, q, k, drafts="iid", device="cpu"))
        a_swor = np.asarray(oa.batched_optimal_acceptance(p, q, k, drafts="swor", device="cpu"))
        assert int((a_iid < 1 - 1e-9).sum()) == n_iid
        assert int((a_swor < 1 - 1e-9).sum()) == n_swor
        assert n_iid > 0.5 * len(p)
        # α*_without ≥ α*_iid at every position, in particular where α*_iid < 1 (non-vacuous)
        assert np.all(a_swor >= a_iid - 1e-9)


def test_batched_values_agree_with_numpy_core_on_a_sample(rows):
    p, q = rows
    idx = np.random.default_rng(0).choice(len(p), size=40, replace=False)
    for k in (2, 3, 4):
        a = np.asarray(oa.batched_optimal_acceptance(p[idx], q[idx], k, drafts="iid", device="cpu"))
        for j, i in enumerate(idx):
            ref = oa.optimal_acceptance(p[i], oa.IID(q[i], k), method="lp" if k == 2 else "sorted")
            assert a[j] == pytest.approx(float(ref.value), abs=1e-9)
            # the certificate's subset violates p(S) >= q(S)^k exactly where α* < 1
            S = list(ref.subset)
            if a[j] < 1 - 1e-7:
                assert p[i, S].sum() < q[i, S].sum() ** k


@pytest.mark.slow
def test_job_writes_shipped_table_and_local_fresh_files(tmp_path, monkeypatch):
    from optaccept.jobs import llm as _job

    class _Stop(Exception):
        pass

    def no_model(*args, **kwargs):  # stop before the (slow) fresh extraction
        raise _Stop

    monkeypatch.setattr(llm.ModelPair, "smollm2", no_model)
    with pytest.raises(_Stop):
        _job.run(tmp_path, quick=True)
    for ext in ("md", "csv", "tex", "png", "pdf"):
        assert (tmp_path / f"llm_gap_table.{ext}").stat().st_size > 0
    md = (tmp_path / "llm_gap_table.md").read_text(encoding="utf-8")
    assert "draft T = 0.7" in md and "± " in md
