"""Real SmolLM2 rows, cast to float64 (as np.load, pandas or any float64 pipeline does),
are accepted by every solver: the core, the verifiers, the batched path and the gap
tables.  Float32 softmax rows over 49,152 tokens sum to 1 only within ~1e-5."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import needs_smollm2

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import optaccept as oa  # noqa: E402
from optaccept import llm, verifiers  # noqa: E402
from optaccept.cli._main import main  # noqa: E402
from optaccept.real import Distributions  # noqa: E402

# about a minute on two CPU cores: SmolLM2 forward passes at vocabulary 49,152
pytestmark = [needs_smollm2, pytest.mark.slow]


@pytest.fixture(scope="module")
def real():
    pair = llm.ModelPair.smollm2(draft_temperature=1.5, target_temperature=1.0)
    data = llm.extract(pair, prompts=llm.builtin_prompts()[:2], max_new_tokens=3, device="cpu", progress=False)
    return data


def test_real_rows_in_float64_pass_every_solver(real, tmp_path, capsys) -> None:
    T = np.asarray(real.target, float)
    D = np.asarray(real.draft, float)
    assert T.shape[1] == 49152 and len(T) >= 2
    # the reproducer's situation: sums visibly off from 1, far beyond 1e-9
    assert np.abs(T.sum(1) - 1).max() > 1e-7 or np.abs(D.sum(1) - 1).max() > 1e-7
    Tn, Dn = T / T.sum(1, keepdims=True), D / D.sum(1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", oa.RenormalizedWarning)
        # core, per row, in every dtype the file could be read in
        for dtype in (np.float64, np.float32, np.float16):
            for i in range(2):
                oa.optimal_acceptance(T[i].astype(dtype), oa.IID(D[i].astype(dtype), 2))
        iid = [float(oa.optimal_acceptance(T[i], oa.IID(D[i], 2)).value) for i in range(len(T))]
        swor = [float(oa.optimal_acceptance(T[i], oa.WithoutReplacement(D[i], 2)).value) for i in range(len(T))]
        ref = [float(oa.optimal_acceptance(Tn[i], oa.IID(Dn[i], 2)).value) for i in range(len(T))]
        # verifiers
        for v in verifiers.ALL:
            k = 2 if v.supports(2) else 1
            notion = "rule" if v.name == "khisti_is" else "output"
            a = v.acceptance(T[0], D[0], k, notion=notion)
            assert 0 <= a <= 1 + 1e-9
        oa.verifiers.gap_table(T[0], D[0], ks=(2,))
        # batched path
        b_iid = oa.batched_optimal_acceptance(T, D, 2, drafts="iid")
        b_swor = oa.batched_optimal_acceptance(T, D, 2, drafts="swor")
        verifiers.batched_acceptance(T, D, 2, verifier="rrs")
        # the gap tables: Python and command line
        table = llm.position_gap_table(Distributions(T, D, meta=real.meta), ks=(2,), device="cpu", progress=False)
    assert table is not None
    np.testing.assert_allclose(iid, ref, atol=1e-12)  # the renormalised rows' values
    np.testing.assert_allclose(b_iid, iid, atol=1e-9)
    np.testing.assert_allclose(b_swor, swor, atol=1e-8)
    path = real.save(tmp_path / "real.npz")
    assert main(["gap-table", str(path), "-k", "2", "--fast", "--quiet", "--device", "cpu"]) == 0
    assert "alpha_iid" in capsys.readouterr().out


def test_real_rows_after_a_float64_file_round_trip_pass_the_command_line(real, tmp_path, capsys) -> None:
    np.save(tmp_path / "p.npy", np.asarray(real.target[0], float))
    np.save(tmp_path / "q.npy", np.asarray(real.draft[0], float))
    rc = main(["alpha", "--target", str(tmp_path / "p.npy"), "--draft", str(tmp_path / "q.npy"), "--drafts", "swor"])
    out, err = capsys.readouterr()
    assert rc == 0 and "alpha* =" in out
    assert all(line.startswith("optaccept: warning:") for line in err.strip().splitlines())
