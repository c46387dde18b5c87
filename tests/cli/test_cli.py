"""The command line: answers, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import optaccept as oa
from optaccept.cli._main import main

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
        (["--draft", "{d}/missing.npy"], "no such file"),
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


# ---------------------------------------------------------------------------
# One contract for every sub-command


@pytest.fixture
def bad_files(tmp_path):
    np.save(tmp_path / "p.npy", np.array(P))
    np.save(tmp_path / "m.npy", np.ones((2, 2)))
    np.save(tmp_path / "c.npy", np.array(P, dtype=complex))
    (tmp_path / "q.json").write_text(json.dumps(Q))
    (tmp_path / "obj.json").write_text('{"a": 1}')
    (tmp_path / "nested.json").write_text("[[0.5, 0.5]]")
    (tmp_path / "broken.json").write_text("[0.5, ")
    (tmp_path / "corrupt.npz").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "corrupt.npy").write_bytes(b"\x93NUMPY garbage")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    np.savez(tmp_path / "other.npz", x=np.ones(3))
    (tmp_path / "folder").mkdir()
    (tmp_path / "prompts.txt").write_text("")
    return tmp_path


def _pq(d):
    return ["--target", f"{d}/p.npy", "--draft", f"{d}/q.json"]


# (argv, a word the one-line message must contain); {d} is the folder of bad_files
BAD = [
    (["alpha", "--target", "{d}/missing.npy", "--draft", "{d}/q.json"], "no such file"),
    (["alpha", "--target", "{d}/folder", "--draft", "{d}/q.json"], "folder"),
    (["alpha", "--target", "{d}/corrupt.npy", "--draft", "{d}/q.json"], "corrupt.npy"),
    (["alpha", "--target", "{d}/corrupt.npz", "--draft", "{d}/q.json"], ".npz archive"),
    (["alpha", "--target", "{d}/q.json", "--draft", "{d}/obj.json"], "probs"),
    (["alpha", "--target", "{d}/q.json", "--draft", "{d}/nested.json"], "list of numbers"),
    (["alpha", "--target", "{d}/q.json", "--draft", "{d}/broken.json"], "not valid JSON"),
    (["alpha", "--target", "{d}/binary.txt", "--draft", "{d}/q.json"], "binary.txt"),
    (["alpha", "--target", "{d}/m.npy", "--draft", "{d}/q.json"], "1-D"),
    (["alpha", "--target", "{d}/c.npy", "--draft", "{d}/q.json"], "real numbers"),
    (["alpha", "--target", "0.5,0.5", "--draft", "{d}/q.json"], "lengths differ"),
    (["alpha", "--target", "0.5,0.6,0,0,0", "--draft", "{d}/q.json"], "--normalize"),
    (["alpha", *_pq("{d}"), "-k", "0"], "-k"),
    (["alpha", *_pq("{d}"), "-k", "two"], "-k"),
    (["alpha", *_pq("{d}"), "--drafts", "spechub", "-k", "7"], "SpecHub"),
    (["alpha", *_pq("{d}"), "--drafts", "swor", "-k", "9"], "k"),
    (["alpha", *_pq("{d}"), "--drafts", "bogus"], "invalid choice"),
    (["alpha", *_pq("{d}"), "--method", "closed_form", "-k", "3"], "closed_form"),
    (["alpha", "--draft", "{d}/q.json"], "--target"),
    (["gap", "--target", "{d}/p.npy", "--draft", "{d}/missing.json"], "no such file"),
    (["gap", *_pq("{d}"), "-k", "0"], "-k"),
    (["gap", *_pq("{d}"), "--verifiers", "nope"], "--verifiers"),
    (["gap", "--target", "0.5,0.5", "--draft", "0.2,0.3"], "--normalize"),
    (["conjecture", "-n", "0"], "-n"),
    (["conjecture", "-k", "x"], "-k"),
    (["sequence"], "rejections"),
    (["sequence", "rejections", "--states", "0"], "--states"),
    (["sequence", "rejections", "--runs", "-1"], "--runs"),
    (["sequence", "rejections", "-k", "0"], "-k"),
    (["sequence", "pareto", "--target", "0.5,0.5", "--draft", "0.2,0.3"], "--normalize"),
    (["sequence", "pareto", "--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "a,b"], "--eps"),
    (["sequence", "pareto", "--target", "{d}/corrupt.npz", "--draft", "0.5,0.5"], ".npz"),
    (["extract", "--limit", "0"], "--limit"),
    (["extract", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["extract", "--target-temperature", "0"], "--target-temperature"),
    (["extract", "--top-p", "1.5"], "--top-p: must lie in (0, 1]"),
    (["extract", "--prompts", "{d}/missing.txt"], "prompts"),
    (["extract", "--prompts", "{d}/prompts.txt"], "no prompts"),
    (["extract", "--model", "{d}/folder"], "config.json"),
    (["extract", "--model", "{d}/p.npy"], "not a model folder"),
    (["extract", "--model", "no-such-org/no-such-model"], "Hugging Face cache"),
    (["extract", "--draft-model", "{d}/folder"], "--draft-model"),
    (["extract", "-o", "{d}/folder"], "--output"),
    (["extract", "--device", "warp-drive"], "--device"),
    (["gap-table", "{d}/p.npy"], "single array"),
    (["gap-table", "{d}/corrupt.npz"], "corrupt.npz"),
    (["gap-table", "{d}/q.json"], "q.json"),
    (["gap-table", "{d}/other.npz"], "not an optaccept distribution"),
    (["gap-table", "{d}/missing.npz"], "does not exist"),
    (["gap-table", "{d}/folder"], "folder"),
    (["gap-table", "{d}/p.npy", "-k", "0"], "-k"),
    (["main", "--only", "foo"], "--only"),
    (["audit", "{d}/missing.npz"], "No such file"),
    (["audit", "{d}/corrupt.npz"], "not a .npz file"),
    (["audit", "{d}/p.npy", "--declared", "magic"], "invalid choice"),
    (["audit-assisted", "--prompts", "0"], "--prompts"),
    (["audit-assisted", "--tokens", "x"], "--tokens: expected an integer"),
    (["tree", "--shape", "0"], "--shape"),
    (["tree", "--cost", "1,x"], "--cost"),
    (["bogus"], "invalid choice"),
    ([], "no command"),
    (["alpha", *_pq("{d}"), "--no-such-option"], "unrecognized"),
]


@pytest.mark.parametrize(("argv", "word"), BAD, ids=[" ".join(a[:3]) + f"-{i}" for i, (a, _) in enumerate(BAD)])
def test_every_subcommand_refuses_bad_input_in_one_line(bad_files, capsys, monkeypatch, argv, word) -> None:
    # No model may be loaded before the arguments are checked.
    pytest.importorskip("torch")
    from optaccept.llm import _models

    def no_loading(*args, **kwargs):
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(_models.ModelPair, "smollm2", no_loading)
    monkeypatch.setattr(_models.ModelPair, "from_pretrained", no_loading)
    monkeypatch.setattr(_models, "smollm2_path", no_loading)
    rc = main([a.format(d=bad_files) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error: "), err
    assert word in lines[0], lines[0]
    assert "normalize=True" not in lines[0] and "np.float64" not in lines[0]


def test_cli_errors_are_one_line_in_a_real_process(bad_files) -> None:
    argv = [sys.executable, "-m", "optaccept", "gap-table", str(bad_files / "p.npy")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("optaccept: error: ") and proc.stderr.count("\n") == 1


def test_version_agrees_with_the_package() -> None:
    import importlib.metadata

    proc = subprocess.run([sys.executable, "-m", "optaccept", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"optaccept {oa.__version__}"
    assert oa.__version__ == importlib.metadata.version("optaccept")
    # one version everywhere: pyproject, the citation file, the changelog's newest entry
    import pathlib
    import re
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    version = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert oa.__version__ == version
    assert re.search(rf"^version: {re.escape(version)}$", (root / "CITATION.cff").read_text(), re.M)
    newest = re.search(r"^## \[([^\]]+)\]", (root / "CHANGELOG.md").read_text(), re.M)
    assert newest and newest.group(1) == version


def test_broken_pipe_ends_quietly(tmp_path) -> None:
    # a long answer (the certificate of 60,000 tokens) read only for 10 bytes
    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", rng.dirichlet(np.ones(60_000)))
    np.save(tmp_path / "q.npy", rng.dirichlet(np.ones(60_000)))
    cmd = (
        f"{sys.executable} -m optaccept alpha --target {tmp_path}/p.npy --draft {tmp_path}/q.npy "
        "-k 2 --json | head -c 10"
    )
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert len(proc.stdout) == 10
    # nothing on stderr but, on a machine whose compiler cache is empty, the one-line notice
    noise = [line for line in proc.stderr.splitlines() if not line.startswith("optaccept: compiling ")]
    assert noise == [], proc.stderr
    assert proc.returncode == 0


def test_every_option_has_help_with_its_default() -> None:
    import argparse

    from optaccept.cli._main import build_parser

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*path, name])
            elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                yield path, parser, action

    seen = 0
    for path, parser, action in walk(build_parser(), []):
        seen += 1
        assert action.help, (path, action.option_strings)
        text = parser._get_formatter()._get_help_string(action)
        if action.option_strings and action.default not in (None, False):
            assert "default" in text, (path, action.option_strings, text)
    assert seen > 40


def test_one_input_style_everywhere(capsys) -> None:
    p, q = ",".join(map(str, P)), ",".join(map(str, Q))
    assert main(["alpha", "--target", p, "--draft", q, "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["value"]
    assert a == pytest.approx(float(oa.optimal_acceptance(np.array(P), oa.IID(np.array(Q), 2)).value), abs=1e-12)
    assert main(["gap", "--target", p, "--draft", q, "-k", "2", "--json"]) == 0
    capsys.readouterr()
    assert main(["sequence", "pareto", "--target", p, "--draft", q, "--eps", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tv"] == pytest.approx(0.5 * np.abs(np.array(P) - np.array(Q)).sum())
    # --normalize rescales in every one of them
    for argv in (["alpha"], ["gap", "-k", "2"], ["sequence", "pareto"]):
        assert main([*argv, "--target", "4,2.5,1.5,1.2,0.8", "--draft", q, "--normalize"]) == 0
    capsys.readouterr()


def test_spechub_without_k_and_the_renormalised_warning(capsys) -> None:
    p = ",".join(map(str, P))
    assert main(["alpha", "--target", p, "--draft", ",".join(map(str, Q)), "--drafts", "spechub"]) == 0
    capsys.readouterr()
    # 1e-8 off: within float32 rounding for 5 entries (6e-7), rescaled with a one-line warning
    q = "0.30000001,0.1,0.35,0.05,0.2"
    assert main(["alpha", "--target", p, "--draft", q]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optaccept: warning: --draft: entries sum to")


def test_the_bad_input_walk_covers_every_subcommand() -> None:
    import argparse

    from optaccept.cli._main import build_parser

    def commands(parser, prefix=()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield (*prefix, name)
                    yield from commands(sub, (*prefix, name))

    walked = {tuple(argv[:i]) for argv, _ in BAD for i in (1, 2)}
    missing = [c for c in commands(build_parser()) if c not in walked]
    assert not missing, f"add bad-input cases for {missing} to BAD"


def test_packaging_contract() -> None:
    import pathlib
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"  # 3.11 to 3.13 supported, CI runs 3.11
    for minor in (11, 12, 13):
        assert f"Programming Language :: Python :: 3.{minor}" in project["classifiers"]
    torch_req = [r for r in project["optional-dependencies"]["llm"] if r.startswith("torch")]
    assert torch_req and "==" not in torch_req[0]
    # run.sh still installs the local CPU wheel first on Python 3.11
    assert 'pip install -q "torch==2.13.0"' in (root / "run.sh").read_text()
