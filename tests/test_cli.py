"""The command line: answers, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import optaccept as oa
from optaccept.cli import main

P = [0.40, 0.25, 0.15, 0.12, 0.08]
Q = [0.30, 0.10, 0.35, 0.05, 0.20]


@pytest.fixture
def files(tmp_path):
    np.save(tmp_path / "p.npy", np.array(P))
    (tmp_path / "q.json").write_text(json.dumps(Q))
    (tmp_path / "q.txt").write_text(" ".join(map(str, Q)))
    (tmp_path / "bad.txt").write_text("0.5 -0.2 0.7 0 0")
    return tmp_path


@pytest.mark.parametrize("drafts", ["iid", "swor", "greedy"])
def test_alpha_json(files, capsys, drafts) -> None:
    rc = main(
        [
            "alpha",
            "--target",
            str(files / "p.npy"),
            "--draft",
            str(files / "q.json"),
            "-k",
            "2",
            "--drafts",
            drafts,
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    law = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}[drafts](np.array(Q), 2)
    ref = oa.optimal_acceptance(np.array(P), law, "lp")
    assert abs(out["value"] - ref.value) <= 1e-9
    assert out["verification"]["ok"] is True


def test_alpha_text_with_method(files, capsys) -> None:
    rc = main(["alpha", "--target", str(files / "p.npy"), "--draft", str(files / "q.txt"), "-k", "3", "--method", "lp"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "alpha* =" in out and "certificate S" in out and "method = lp" in out


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--draft", "{d}/bad.txt"], "negative"),
        (["--draft", "{d}/missing.npy"], "not found"),
        (["--draft", "{d}/q.json", "-k", "0"], "k"),
        (["--draft", "{d}/q.json", "--drafts", "swor", "-k", "9"], "k"),
    ],
)
def test_alpha_errors_one_line_exit_2(files, args, word) -> None:
    argv = [sys.executable, "-m", "optaccept", "alpha", "--target", str(files / "p.npy")]
    argv += [a.format(d=files) for a in args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error:"), proc.stderr
    assert word in lines[0]
