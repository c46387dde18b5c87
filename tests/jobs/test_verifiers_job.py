"""Gap table, command line, and Khisti et al.'s Figure 2 (main job)."""

from __future__ import annotations

import argparse
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from optaccept import verifiers as V
from optaccept._errors import InputError
from optaccept.cli import verifiers as _cli
from optaccept.jobs import verifiers as _job


def theorem3_plateau(first: Fraction, grid: int) -> tuple[Fraction, Fraction]:
    """Grid points where Khisti et al.'s Theorem 2 condition p(S) ≥ q(S)² holds for all S
    (q uniform on 3 tokens), checked subset by subset."""
    ok = []
    j = 0
    while Fraction(j, grid) <= 1 - first:
        t = Fraction(j, grid)
        p = [first, t, 1 - first - t]
        if all(
            sum(p[i] for i in S) >= Fraction(len(S), 3) ** 2
            for r in (1, 2)
            for S in itertools.combinations(range(3), r)
        ):
            ok.append(t)
        j += 1
    return min(ok), max(ok)


@pytest.mark.parametrize("first", [Fraction(1, 3), Fraction(1, 6)])
def test_figure2_plateau_matches_theorem3(first):
    d = _job.figure2_data(first, grid=90)
    assert d["plateau"] == theorem3_plateau(first, 90)
    star = np.array(d["optimal"])
    assert np.all(star >= np.array(d["K-SEQ"]) - 1e-12)
    assert np.all(star >= np.array(d["RRS"]) - 1e-12)
    # outside the plateau the optimum is below 1
    t = np.array(d["t"])
    lo, hi = (float(x) for x in d["plateau"])
    assert np.all(star[(t < lo - 1e-12) | (t > hi + 1e-12)] < 1)


def test_gap_table_shape_and_dict():
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    tab = V.gap_table(p, q, (1, 2, 3))
    d = tab.to_dict()
    assert d["ks"] == [1, 2, 3]
    assert set(d["rows"]) == {v.name for v in V.ALL}
    assert d["rows"]["sd"][2]["alpha"] is None and d["rows"]["spechub"][3]["alpha"] is None
    for row in d["rows"].values():
        for cell in row.values():
            if cell["alpha"] is not None:
                assert cell["alpha"] <= cell["alpha_star"] + 1e-9
                assert cell["gap"] == pytest.approx(cell["alpha_star"] - cell["alpha"])
    assert d["rows"]["rrs"][2]["alpha"] == pytest.approx(0.76)  # 1 − TV(p,q)·TV((p−q)+/TV, q) = 1 − .3·.8
    text = str(tab)
    assert "rrs" in text and "—" in text
    assert tab.to_markdown().startswith("| verifier")
    with pytest.raises(InputError):
        V.gap_table(p, q, ())


def _parser():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    _cli.register(sub)
    return parser


def test_cli_gap(tmp_path, capsys):
    np.save(tmp_path / "p.npy", np.array([0.5, 0.3, 0.2]))
    (tmp_path / "q.json").write_text(json.dumps([0.2, 0.3, 0.5]))
    args = _parser().parse_args(
        ["gap", "--target", str(tmp_path / "p.npy"), "--draft", str(tmp_path / "q.json"), "-k", "2", "3", "--json"]
    )
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"]["rrs"]["2"]["alpha"] == pytest.approx(0.76)
    (tmp_path / "q.txt").write_text("0.2 0.3")
    args = _parser().parse_args(["gap", "--target", str(tmp_path / "p.npy"), "--draft", str(tmp_path / "q.txt")])
    with pytest.raises(InputError):
        args.func(args)


def test_job_quick(tmp_path):
    paths = _job.run(tmp_path, quick=True)
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    js = json.loads((tmp_path / "verifiers_gap.json").read_text())
    assert js["figure2"][0]["plateau"] == ["1/9", "5/9"]
    assert js["figure2"][1]["plateau"] == ["5/18", "5/9"]
    for name in ("spechub", "hu_greedy", "optimal"):
        for cell in js["rows"][name].values():
            assert abs(cell["mean_gap_own"]) < 1e-9
