"""``optaccept tree``: accepted tokens of a shape, the best tree for a budget or a cost
curve, as text and JSON, with one-line errors (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from optaccept import tree
from optaccept.cli._main import main


def _run(capsys, *argv):
    rc = main(["tree", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_shape_json_is_the_library_value(capsys):
    rc, out, err = _run(capsys, "--shape", "[(0,), (1,), (0, 0)]", "--vocab", "20", "--contexts", "3", "--json")
    assert rc == 0 and err == ""
    got = json.loads(out)
    pairs = [tree.synthetic_pair(20, rng=s) for s in range(3)]
    want = [
        float(tree.accepted_tokens(P, Q, tree.TreeDraftLaw([(0,), (1,), (0, 0)], "topk"), verifier="target_only").value)
        for P, Q in pairs
    ]
    assert got["by_context"] == pytest.approx(want, abs=1e-12)
    assert got["accepted"] == pytest.approx(np.mean(want), abs=1e-12)
    assert got["vllm"] == "[(0,), (1,), (0, 0)]" and got["nodes"] == 3
    assert tree.Shape.from_vllm(got["vllm"]) == tree.Shape.from_choices(got["shape"])


def test_branching_shape_text(capsys):
    rc, out, err = _run(capsys, "--shape", "3,2", "--vocab", "10", "--contexts", "2")
    assert rc == 0 and err == ""
    assert "9 nodes" in out and "accepted tokens per step" in out


def test_budget_and_cost_match_best_tree(capsys):
    pairs = [tree.synthetic_pair(30, rng=s) for s in range(4)]
    rc, out, _ = _run(capsys, "--budget", "8", "--vocab", "30", "--contexts", "4", "--json")
    assert rc == 0
    got = json.loads(out)
    want = tree.best_tree(pairs, budget=8, progress=False)
    assert got["vllm"] == want.to_vllm() and got["accepted"] == pytest.approx(want.meta["value"], abs=1e-12)
    rc, out, _ = _run(capsys, "--cost", "linear:1,0.05", "--budget", "16", "--vocab", "30", "--contexts", "4", "--json")
    assert rc == 0
    got = json.loads(out)
    want = tree.best_tree(pairs, budget=16, cost=lambda n: 1 + 0.05 * n, progress=False)
    assert got["nodes"] == want.size and got["tokens_per_second"] == pytest.approx(want.meta["tokens_per_second"])
    rc, out, _ = _run(capsys, "--cost", "1.1,1.2,1.3", "--vocab", "30", "--contexts", "4")
    assert rc == 0 and "tokens per second" in out


def test_cost_from_a_json_table(tmp_path, capsys):
    table = {str(n): 1.0 + 0.2 * n for n in range(1, 7)}
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(table))
    rc, out, _ = _run(capsys, "--cost", str(path), "--vocab", "12", "--contexts", "2", "--json")
    assert rc == 0
    pairs = [tree.synthetic_pair(12, rng=s) for s in range(2)]
    want = tree.best_tree(pairs, cost={int(k): v for k, v in table.items()}, progress=False)
    assert json.loads(out)["vllm"] == want.to_vllm()


def test_profile_json_is_the_library_profile(capsys):
    argv = ["--profile", "--shape", "2,1", "--vocab", "9", "--contexts", "2", "--positions", "3", "--seed", "4"]
    rc, out, err = _run(capsys, *argv, "--json")
    assert rc == 0 and err == ""
    got = json.loads(out)
    pairs = [tree.synthetic_pair(9, rng=s) for s in (4, 5)]
    want = tree.acceptance_profile(pairs, (2, 1), verifier="target_only", positions=3, rng=4)
    assert got["rates"] == pytest.approx(list(want.rates), abs=1e-12)
    assert got["mean_accepted"] == pytest.approx(sum(got["rates"]), abs=1e-12)
    assert got["al"] == pytest.approx(1 + got["mean_accepted"], abs=1e-12)
    assert got["engines"] == {name: want.to_engine(name) for name in ("vllm", "sglang", "trtllm")}
    assert got["children"] == "topk" and got["positions"] == 3 and got["texts"] == 2
    # at the first position the profile's mean is the exact accepted tokens of the tree
    exact = [
        float(tree.accepted_tokens(P, Q, tree.TreeDraftLaw((2, 1), "topk"), verifier="target_only").value)
        for P, Q in pairs
    ]
    assert sum(got["by_position"][0]) == pytest.approx(np.mean(exact), abs=1e-12)
    rc, out, err = _run(capsys, *argv)
    assert rc == 0 and err == ""
    assert "P(accepted >= d)" in out and "synthetic_acceptance_rates" in out
    assert "SGLANG_SIMULATE_ACC_LEN" in out and "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS" in out


def test_profile_of_a_chain_defaults_to_iid_children_for_token_verification(capsys):
    rc, out, _ = _run(
        capsys,
        "--profile",
        "--chain",
        "3",
        "--verifier",
        "token",
        "--vocab",
        "6",
        "--contexts",
        "1",
        "--positions",
        "1",
        "--samples",
        "4000",
        "--json",
    )
    assert rc == 0
    got = json.loads(out)
    assert got["children"] == "iid" and len(got["rates"]) == 3 and got["vllm"] == "[(0,), (0, 0), (0, 0, 0)]"
    target, draft = tree.synthetic_pair(6, rng=0)
    exact = float(
        tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=3, k=1, children="iid"), verifier="token").value
    )
    # one text: its standard error over texts is unknown (issue 46; it read 0.0 before)
    assert got["std_err"] is None
    assert got["mean_accepted"] == pytest.approx(exact, abs=0.03)


def test_chain_is_the_shape_of_ones(capsys):
    rc, out, _ = _run(capsys, "--chain", "3", "--vocab", "11", "--contexts", "2", "--json")
    rc2, out2, _ = _run(capsys, "--shape", "1,1,1", "--vocab", "11", "--contexts", "2", "--json")
    assert rc == rc2 == 0 and json.loads(out) == json.loads(out2)


def test_engine_parameters_in_the_output(capsys):
    rc, out, _ = _run(capsys, "--budget", "6", "--vocab", "15", "--contexts", "2", "--json")
    assert rc == 0
    got = json.loads(out)
    shape = tree.Shape.from_vllm(got["vllm"])
    for name in ("vllm", "trtllm"):
        assert tree.Shape.from_engine(name, got["engines"][name]) == shape
    sg = got["engines"]["sglang"]
    assert sg["speculative_num_draft_tokens"] == 7 and got["engines"]["sglang_static"] is (
        shape.is_chain or shape.depth == 1 or shape == tree._shape.as_shape((2, 2))
    )
    rc, out, _ = _run(capsys, "--shape", "2,2", "--vocab", "15", "--contexts", "2", "--json")
    got = json.loads(out)
    assert got["engines"]["sglang_static"] is True
    assert tree.Shape.from_engine("sglang", got["engines"]["sglang"]) == tree._shape.as_shape((2, 2))
    rc, out, _ = _run(capsys, "--budget", "6", "--vocab", "15", "--contexts", "2")
    assert rc == 0 and "--speculative-num-draft-tokens 7" in out and "max_draft_len=" in out


def test_dynamic_prints_one_tree_per_context(capsys):
    rc, out, _ = _run(capsys, "--budget", "5", "--strategy", "dynamic", "--contexts", "3", "--json")
    assert rc == 0
    assert [t["context"] for t in json.loads(out)["trees"]] == [0, 1, 2]


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        ([], "--shape, --chain, --budget or --cost"),
        (["--profile", "--budget", "4"], "--profile"),
        (["--profile", "--shape", "2,2", "--verifier", "traversal"], "--verifier"),
        (["--profile", "--chain", "2", "--verifier", "optimal", "--children", "iid"], "--verifier"),
        (["--profile", "--chain", "2", "--positions", "0"], "--positions"),
        (["--chain", "0"], "--chain"),
        (["--chain", "300"], "--chain"),
        (["--chain", "2", "--budget", "3"], "--budget"),
        (["--chain", "2", "--shape", "2"], "not allowed with"),
        (["--cost", "1,1.1", "--budget", "4"], "no cost for sizes 3..4"),
        (["--shape", "0"], "--shape"),
        (["--shape", "[(1,)]"], "--shape"),
        (["--shape", "x,y"], "--shape"),
        (["--shape", "2", "--budget", "3"], "--budget"),
        (["--shape", "2", "--cost", "1"], "not allowed with"),
        (["--shape", "2", "--verifier", "token"], "--verifier"),
        (["--shape", "3,3", "--children", "iid", "--verifier", "token"], "--samples"),
        (["--budget", "0"], "--budget"),
        (["--budget", "5000"], "--budget"),
        (["--budget", "20", "--strategy", "ceiling"], "--strategy"),
        (["--cost", "linear:1"], "--cost"),
        (["--cost", "linear:1,-1"], "--cost"),
        (["--cost", "missing.json"], "--cost"),
        (["--cost", "1,x"], "--cost"),
        (["--budget", "4", "--strategy", "dynamic", "--children", "swor", "--verifier", "token"], "children='topk'"),
        (["--samples", "5", "--budget", "3"], "--samples"),
        (["--vocab", "0"], "--vocab"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, word):
    rc, out, err = _run(capsys, *argv)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error: "), err
    assert word in lines[0], lines[0]


def test_in_a_real_process():
    proc = subprocess.run(
        [sys.executable, "-m", "optaccept", "tree", "--budget", "4", "--contexts", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["nodes"] == 4
    proc = subprocess.run(
        [sys.executable, "-m", "optaccept", "tree", "--shape", "0"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stderr.startswith("optaccept: error: --shape") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("profile", [False, True])
def test_one_context_has_an_unknown_standard_error(capsys, profile):
    """Issue 46: one synthetic context gives no spread over contexts: std_err null, printed as unknown."""
    argv = ["--shape", "2,1", "--vocab", "9", "--contexts", "1", "--seed", "4"]
    argv = (["--profile", "--positions", "3"] if profile else []) + argv
    rc, out, _ = _run(capsys, *argv, "--json")
    assert rc == 0 and json.loads(out)["std_err"] is None
    rc, out, _ = _run(capsys, *argv)
    assert rc == 0 and "± unknown" in out and "± 0" not in out
