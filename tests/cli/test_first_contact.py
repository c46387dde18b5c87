"""First contact with the command line (issue 44): each wrong first try ends in one line
``optaccept: error: ...`` naming what is wrong (exit 2), never a traceback, and the help says
what the commands do in plain text."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from optaccept.cli._main import main

P = "0.40,0.25,0.15,0.12,0.08"
Q = "0.30,0.10,0.35,0.05,0.20"


def _one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error: "), err
    return lines[0]


def test_audit_of_a_plain_array_is_one_line_in_a_real_process(tmp_path):
    """A .npy array (not an .npz log) ended in a TypeError traceback and exit 1."""
    np.save(tmp_path / "p.npy", np.array([0.5, 0.5]))
    proc = subprocess.run(
        [sys.executable, "-m", "optaccept", "audit", str(tmp_path / "p.npy")], capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("optaccept: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "single array" in proc.stderr and "np.savez" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_audit_blames_the_array_of_the_wrong_length(tmp_path, capsys):
    """Y one short: the error named X (the library took the step count from Y)."""
    P_ = np.full((3, 4), 0.25)
    X = np.zeros((3, 2), dtype=np.int64)
    np.savez(tmp_path / "log.npz", P=P_, Q=P_, X=X, Y=np.zeros(2, dtype=np.int64))
    assert main(["audit", str(tmp_path / "log.npz")]) == 2
    line = _one_error_line(capsys)
    assert "Y must hold one emitted token per step" in line and "(2,)" in line
    np.savez(tmp_path / "log2.npz", P=P_, Q=P_, X=X[:2], Y=np.zeros(3, dtype=np.int64))
    assert main(["audit", str(tmp_path / "log2.npz")]) == 2
    assert "X must have one row" in _one_error_line(capsys)


@pytest.mark.parametrize("option", ["--target", "--draft"])
@pytest.mark.parametrize("command", [["alpha"], ["gap", "-k", "2"], ["sequence", "pareto"]])
def test_an_empty_vector_is_called_empty(capsys, command, option):
    """--target '' said "`.` is a folder" (the empty path resolves to the current folder)."""
    values = {"--target": P, "--draft": Q, option: ""}
    assert main([*command, "--target", values["--target"], "--draft", values["--draft"]]) == 2
    line = _one_error_line(capsys)
    assert f"{option}: is empty" in line and "folder" not in line


def test_audit_assisted_names_only_the_bad_option(capsys):
    """--tokens -5 was refused as "--tokens, --top-k: must be positive" (before any model)."""
    assert main(["audit-assisted", "--tokens", "-5"]) == 2
    line = _one_error_line(capsys)
    assert "--tokens" in line and "--top-k" not in line
    assert main(["audit-assisted", "--top-k", "0"]) == 2
    line = _one_error_line(capsys)
    assert "--top-k" in line and "--tokens" not in line


def test_pareto_names_the_option(capsys):
    """--eps -1 was reported as `eps:` (the library's argument), not the option given."""
    assert main(["sequence", "pareto", "--target", P, "--draft", Q, "--eps", "-1"]) == 2
    line = _one_error_line(capsys)
    assert "optaccept: error: --eps:" in line and ">= 0" in line


@pytest.mark.parametrize("children", [[], ["--children", "topk"]])
def test_tree_samples_with_top_k_children_is_refused(capsys, children):
    """--samples was silently ignored with top-k children (one deterministic tree)."""
    assert main(["tree", "--shape", "2,1", "--contexts", "2", "--vocab", "8", "--samples", "8", *children]) == 2
    line = _one_error_line(capsys)
    assert "--samples" in line and "top-k" in line and "--children iid or swor" in line
    # with children drawn from q it estimates, as before
    argv = ["tree", "--shape", "2,1", "--contexts", "2", "--vocab", "8", "--samples", "8", "--children", "iid"]
    assert main(argv) == 0
    capsys.readouterr()


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_main_help_lists_every_part(capsys):
    """main --help listed five of the seven parts of the main job."""
    from optaccept.jobs._main import PARTS

    text = " ".join(_help(["main"], capsys).split())
    assert f"run only these parts: {' '.join(PARTS)}" in text
    assert {"trees", "engines"} <= set(PARTS)


def test_help_has_no_rest_markup(capsys):
    """audit --help printed the docstring's ``P`` and :func:`...` markup."""
    import argparse

    from optaccept.cli._main import build_parser

    def commands(parser, prefix=()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield (*prefix, name)
                    yield from commands(sub, (*prefix, name))

    for argv in [(), *commands(build_parser())]:
        text = _help(list(argv), capsys)
        assert "``" not in text and ":func:`" not in text and ":class:`" not in text, argv
    audit = _help(["audit"], capsys)
    assert "One step per row: P and Q" in " ".join(audit.split())


def test_plain_text_strips_roles_and_literals():
    from optaccept.cli._args import plain_text

    assert plain_text("see :func:`optaccept.audit_log` and :class:`~a.B`, ``X`` (steps)") == (
        "see optaccept.audit_log and a.B, X (steps)"
    )
