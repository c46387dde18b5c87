"""``optaccept tree --distributions FILE``: the tree designed for a stored distribution file,
end to end — a small file written by the library, the command's numbers compared with the
library's functions called on position pairs built here, and one-line errors (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from optaccept import real, sequence, tree
from optaccept.cli._main import main

#: two texts: prompt 0 for six steps, prompt 1 for four
PROMPTS = [0] * 6 + [1] * 4
STEPS = list(range(6)) + list(range(4))


@pytest.fixture
def stored(tmp_path):
    rng = np.random.default_rng(5)
    P = rng.random((10, 12)) ** 3
    Q = rng.random((10, 12)) ** 2
    P[:, 11] = 0.0  # a token the target never emits
    Q[3, :6] = 0.0  # a draft row with half its support
    P /= P.sum(1, keepdims=True)
    Q /= Q.sum(1, keepdims=True)
    data = real.Distributions(P, Q, prompt_index=PROMPTS, step=STEPS)
    path = tmp_path / "mine.npz"
    data.save(path)
    return path, real.Distributions.load(path)


def _pairs(data, depth):
    """Position pairs built here, on the full vocabulary: every position whose text (its
    prompt's positions) has `depth` positions from it on."""
    out, starts = [], []
    prompts = data.prompt_index.tolist()
    for t in range(len(data)):
        same = [u for u in range(t, len(data)) if prompts[u] == prompts[t]]
        if len(same) >= depth:
            rows = slice(t, t + depth)
            out.append(tree.model_pair(sequence.PositionPair(data.target[rows], data.draft[rows])))
            starts.append(t)
    return out, starts


def _json(capsys, *argv):
    rc = main(["tree", *argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    return json.loads(out)


def test_shape_values_are_the_library_values_on_position_pairs(capsys, stored):
    path, data = stored
    got = _json(capsys, "--distributions", str(path), "--shape", "3,2")
    pairs, starts = _pairs(data, 2)
    law = tree.TreeDraftLaw((3, 2), "topk")
    want = [float(tree.accepted_tokens(P, Q, law, verifier="target_only").value) for P, Q in pairs]
    assert got["source"]["positions"] == starts == [0, 1, 2, 3, 4, 6, 7, 8]  # not the last of each text
    assert got["by_context"] == pytest.approx(want, abs=1e-12)
    assert got["accepted"] == pytest.approx(np.mean(want), abs=1e-12)


@pytest.mark.parametrize("strategy", ["sequoia", "ceiling"])
def test_best_tree_for_a_budget_is_the_library_tree(capsys, stored, strategy):
    path, data = stored
    got = _json(capsys, "--distributions", str(path), "--budget", "4", "--strategy", strategy)
    pairs, starts = _pairs(data, 4)
    best = tree.best_tree(pairs, 4, strategy=strategy, progress=False)
    assert got["source"]["positions"] == starts == [0, 1, 2, 6]
    assert got["vllm"] == best.to_vllm()
    assert got["accepted"] == pytest.approx(best.meta["value"], abs=1e-12)
    # the value is the exact accepted tokens of that shape on those contexts
    law = tree.TreeDraftLaw(tree.Shape.from_vllm(got["vllm"]), "topk")
    exact = np.mean([float(tree.accepted_tokens(P, Q, law, verifier="target_only").value) for P, Q in pairs])
    assert got["accepted"] == pytest.approx(exact, abs=1e-12)


def test_best_tree_for_a_cost_and_the_contexts_limit(capsys, stored):
    path, data = stored
    got = _json(capsys, "--distributions", str(path), "--cost", "1,1.1,1.2", "--contexts", "3")
    pairs, _ = _pairs(data, 3)
    best = tree.best_tree(pairs[:3], cost=[1, 1.1, 1.2], progress=False)
    assert got["source"]["contexts"] == 3 and got["source"]["depth"] == 3
    assert got["vllm"] == best.to_vllm()
    assert got["tokens_per_second"] == pytest.approx(best.meta["tokens_per_second"], abs=1e-12)


def test_text_output_names_the_file(capsys, stored):
    path, _ = stored
    assert main(["tree", "--distributions", str(path), "--budget", "2"]) == 0
    out = capsys.readouterr().out
    assert f"positions of {path}" in out and "accepted tokens per step" in out


def _error(capsys, *argv):
    rc = main(["tree", *argv])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error: ")
    return lines[0]


def test_mistakes_exit_2_with_one_line(capsys, stored, tmp_path):
    path, _ = stored
    missing = tmp_path / "absent.npz"
    assert "--distributions: " in _error(capsys, "--distributions", str(missing), "--budget", "2")
    assert "does not exist" in _error(capsys, "--distributions", str(missing), "--budget", "2")
    other = tmp_path / "other.npz"
    np.savez(other, P=np.ones((2, 3)) / 3)  # an archive, but not a distribution file
    assert "is not an optaccept distribution archive" in _error(capsys, "--distributions", str(other), "--budget", "2")
    text = tmp_path / "notes.npz"
    text.write_text("not an archive")
    assert "--distributions: " in _error(capsys, "--distributions", str(text), "--budget", "2")
    trees = _error(capsys, "--distributions", str(real.trees_path("iid")), "--budget", "2")  # another optaccept file
    assert "unknown format: it holds optaccept.llm.DraftTrees/1 (draft trees: real.DraftTrees)" in trees
    folder = tmp_path / "dir.npz"
    folder.mkdir()
    assert "is a folder" in _error(capsys, "--distributions", str(folder), "--budget", "2")
    deep = _error(capsys, "--distributions", str(path), "--budget", "7")  # texts of 6 and 4 positions
    assert "no position of" in deep and "its longest text has 6" in deep
    assert "--profile" in _error(capsys, "--distributions", str(path), "--shape", "2", "--profile")
    assert _error(capsys, "--distributions", str(path), "--budget", "5000").endswith(
        "--budget: an integer in 1..4096, got 5000"
    )


def test_the_command_exits_2_on_a_missing_file(tmp_path):
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "optaccept", "tree", "--distributions", str(tmp_path / "x.npz"), "--budget", "2"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        f"optaccept: error: --distributions: {tmp_path / 'x.npz'} does not exist"
    ]


def _truncated(tmp_path, seed):
    """Rows of a 60-token vocabulary truncated to 2–4 tokens at random ids (p and q apart), so
    that a node may have more children than q has tokens: zero-mass children by lower id."""
    rng = np.random.default_rng(seed)
    T, n = 7, 60
    P, Q = np.zeros((T, n)), np.zeros((T, n))
    for t in range(T):
        for M in (P, Q):
            ids = rng.choice(n, size=rng.integers(2, 5), replace=False)
            M[t, ids] = rng.random(ids.size) + 0.05
    P[:, 1] = np.where(rng.random(T) < 0.5, 0.3, 0.0)  # a low id the draft never proposes
    P /= P.sum(1, keepdims=True)
    Q /= Q.sum(1, keepdims=True)
    data = real.Distributions(P, Q, prompt_index=[0] * T, step=range(T))
    path = tmp_path / f"truncated{seed}.npz"
    data.save(path)
    return path, real.Distributions.load(path)


@pytest.mark.parametrize("seed", range(5))
def test_truncated_rows_give_the_full_vocabulary_values(capsys, tmp_path, seed):
    path, data = _truncated(tmp_path, seed)
    got = _json(capsys, "--distributions", str(path), "--shape", "6,2")  # more children than q has tokens
    pairs, _ = _pairs(data, 2)
    law = tree.TreeDraftLaw((6, 2), "topk")
    want = [float(tree.accepted_tokens(P, Q, law, verifier="target_only").value) for P, Q in pairs]
    assert got["by_context"] == pytest.approx(want, abs=1e-12)
    got = _json(capsys, "--distributions", str(path), "--budget", "5", "--strategy", "ceiling")
    pairs, _ = _pairs(data, 5)
    best = tree.best_tree(pairs, 5, strategy="ceiling", progress=False)
    assert got["vllm"] == best.to_vllm()
    assert got["accepted"] == pytest.approx(best.meta["value"], abs=1e-12)
