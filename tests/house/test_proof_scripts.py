"""The proof scripts never modify committed files unless asked (--update), and refuse a
Python without optaccept's dependencies with one line, not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "proofs").glob("*.py"))


def _run(*args, **kw):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, **kw)


def test_default_run_writes_only_ignored_files():
    committed = ROOT / "proofs" / "certificates" / "two_draft_condition.json"
    before = committed.read_bytes()
    r = _run("proofs/two_draft_condition.py", "--quick")
    assert r.returncode == 0, r.stderr
    out = ROOT / "proofs" / "local" / "certificates" / "two_draft_condition.json"
    assert f"certificate: {out}" in r.stdout
    assert json.loads(out.read_text())["holds"] is True
    assert committed.read_bytes() == before
    assert subprocess.run(["git", "check-ignore", "-q", str(out)], cwd=ROOT).returncode == 0


def test_out_and_update_are_exclusive(tmp_path):
    r = _run("proofs/two_draft_condition.py", "--quick", "--out", str(tmp_path))
    assert r.returncode == 0 and (tmp_path / "two_draft_condition.json").is_file()
    r = _run("proofs/two_draft_condition.py", "--quick", "--out", str(tmp_path), "--update")
    assert r.returncode == 2 and "--update and --out" in r.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_python_without_the_environment_gets_one_line(script):
    # -S: no site-packages, so numpy (and optaccept's other dependencies) cannot be imported
    r = _run("-S", str(script.relative_to(ROOT)), "--quick")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: cannot import optaccept" in lines[0] and "./run.sh setup" in lines[0]
    assert "Traceback" not in r.stderr
