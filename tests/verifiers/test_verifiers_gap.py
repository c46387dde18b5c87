"""The gap table at vocabulary scale: refused cells say why, progress bars, and the
command line's one-line errors."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import optaccept as oa
from optaccept import verifiers as V
from optaccept._lib.limits import show_progress as progress_default
from optaccept.cli._main import main
from optaccept.verifiers._gap import NOT_DEFINED


def _vocabulary_pair(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """float32 rows as a model gives them: p = softmax of N(0, 3²) logits, q = p
    perturbed by N(0, 1) in log space."""
    rng = np.random.default_rng(seed)
    lp = rng.normal(0, 3, n)
    p = np.exp(lp - lp.max())
    q = np.exp(lp + rng.normal(0, 1, n) - lp.max())
    return (p / p.sum()).astype(np.float32), (q / q.sum()).astype(np.float32)


def test_vocabulary_scale_with_default_arguments():
    """The README's call on 131,072-token float32 rows: every cell has a value or a
    one-line reason, well within 2 GB (traced numpy/Python allocations)."""
    p, q = _vocabulary_pair(131_072)
    tracemalloc.start()
    tab = oa.verifiers.gap_table(p, q, ks=(2, 3, 4, 8))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**30
    for name in tab.names:
        for k in tab.ks:
            a, why = tab.alpha[name][k], tab.why(name, k)
            assert (a is None) == (why is not None)
            if a is not None:
                assert 0 <= a <= tab.alpha_star[name][k] + 1e-9
            else:
                assert "\n" not in why
    assert tab.alpha["rrs_wor"][2] is not None  # O(n log n) at k = 2
    for k in (3, 4, 8):
        assert "rejection paths" in tab.why("rrs_wor", k) and "top tokens" in tab.why("rrs_wor", k)
    assert tab.why("sd", 2) == NOT_DEFINED and tab.why("spechub", 3) == NOT_DEFINED
    text = str(tab)
    assert "refused [1]" in text and "[1] rrs_wor, k=3: " in text
    assert text.count("\n[") == len(tab._refusals())


def test_reasons_in_every_format():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(200)), rng.dirichlet(np.ones(200))
    tab = oa.verifiers.gap_table(
        p, q, ks=(2, 5), verifiers=[V.RRSWithoutReplacement(), V.SD(), V.RRS()], progress=False
    )
    why = tab.why("rrs_wor", 5)
    assert why is not None and "rrs_wor exact acceptance at k = 5" in why
    d = tab.to_dict()
    assert d["rows"]["rrs_wor"][5]["why"] == why and d["rows"]["rrs_wor"][2]["why"] is None
    assert d["rows"]["sd"][2]["why"] == NOT_DEFINED
    md = tab.to_markdown()
    assert "refused [1]" in md and f"[1] rrs_wor, k=5: {why}" in md
    assert "refused [1]" in tab._repr_html_()
    pd = pytest.importorskip("pandas")
    df = tab.to_pandas()
    assert isinstance(df, pd.DataFrame) and df.set_index(["verifier", "k"]).loc[("rrs_wor", 5), "why"] == why


def test_progress_bar_counts_cells(capsys):
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    oa.verifiers.gap_table(p, q, ks=(2, 3), progress=True)
    err = capsys.readouterr().err
    assert "gap table" in err and "20/20" in err and "cell" in err
    oa.verifiers.gap_table(p, q, ks=(2, 3))  # default: off when stderr is not a terminal
    assert capsys.readouterr().err == ""
    oa.verifiers.gap_table(p, q, ks=(2, 3), progress=False)
    assert capsys.readouterr().err == ""


def test_progress_default():
    assert progress_default(True) is True and progress_default(False) is False
    assert progress_default(None) is False  # pytest captures stderr: not a terminal


def test_cli_gap_at_vocabulary_scale(tmp_path, capsys):
    p, q = _vocabulary_pair(20_000, seed=3)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    argv = ["gap", "--target", str(tmp_path / "p.npy"), "--draft", str(tmp_path / "q.npy"), "-k", "2", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rrs_wor" in out and "refused [" in out and "rejection paths" in out
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows["rrs_wor"]["2"]["alpha"] is not None and "rejection paths" in rows["rrs_wor"]["3"]["why"]


def test_cli_gap_out_of_memory_is_one_line(tmp_path, capsys, monkeypatch):
    import optaccept.verifiers as ver

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(ver, "gap_table", boom)
    rc = main(["gap", "--target", "0.5,0.5", "--draft", "0.2,0.8", "-k", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("optaccept: error: gap: out of memory") and err.count("\n") == 1
    assert "Traceback" not in err
