"""The main job: parts registry, summary, run log, PNG + PDF figures, Markdown + CSV + LaTeX
tables, and byte-identical re-runs (so committed figures do not change)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from optaccept import jobs
from optaccept.jobs import _main  # noqa: F401  (jobs._main.run_all)


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and jobs._main.LOG_DIR not in p.relative_to(folder).parts
    }


def test_unknown_part_is_refused(tmp_path, capsys):
    assert jobs._main.run_all(tmp_path, only=["nope"]) == 2
    assert "unknown part" in capsys.readouterr().err


def test_parts_are_importable_modules_with_run():
    import importlib

    for name, mod in jobs._main.PARTS.items():
        m = importlib.import_module(f"optaccept.jobs.{mod}")  # every part loads without its extra
        assert callable(m.run), name


def test_core_rerun_byte_identical(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert jobs._main.run_all(a, quick=True, only=["core"]) == 0
    out = capsys.readouterr().out
    assert "Summary" in out and "Total" in out and "alpha_vs_k.png" in out
    assert jobs._main.run_all(b, quick=True, only=["core"]) == 0
    da, db = _digests(a), _digests(b)
    assert da == db
    assert {"alpha_vs_k.png", "alpha_vs_k.pdf", "alpha_example.md", "alpha_example.csv", "alpha_example.tex"} <= set(da)
    log = (a / jobs._main.LOG_DIR / "main-job.log").read_text(encoding="utf-8")
    assert "== core ==" in log and "total" in log and " ms" in log  # timings live in the log only
    assert " ms" not in (a / "alpha_example.md").read_text(encoding="utf-8")
    tex = (a / "alpha_example.tex").read_text(encoding="utf-8")
    assert "\\begin{table" in tex and "\\toprule" in tex and "α" not in tex


def test_polyhedra_certificates_have_no_timings(tmp_path):
    pytest.importorskip("cdd")
    from optaccept.jobs.polyhedra import strip_timings

    cert = {"seconds": 1.0, "cases": [{"wall_seconds": 2, "n": 3, "seconds": {"dd": 1}}], "holds": True}
    assert strip_timings(cert) == {"cases": [{"n": 3}], "holds": True}


@pytest.mark.slow
def test_quick_main_job_twice_is_byte_identical(tmp_path):
    """The whole quick job, twice: every file outside figures/local/ is identical."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert jobs._main.run_all(a, quick=True) == 0
    assert jobs._main.run_all(b, quick=True) == 0
    assert _digests(a) == _digests(b)


def test_quick_run_defaults_to_an_ignored_folder(tmp_path, monkeypatch):
    """A quick run without --figures never writes the committed figures/ (it used to
    overwrite 38 committed files): it writes under figures/local/quick/, which git ignores."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    assert jobs._main.run_all(quick=True, only=["core"]) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written and all(w.startswith("figures/local/quick/") for w in written), written
    root = Path(__file__).resolve().parents[2]
    ignored = subprocess.run(["git", "check-ignore", "-q", "figures/local/quick/alpha_vs_k.pdf"], cwd=root)
    assert ignored.returncode == 0


def _run_in_subprocess(code: str, threads: int, cwd: Path) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    run = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]


def test_outputs_do_not_depend_on_the_thread_count(tmp_path):
    """The parts whose committed outputs once moved from machine to machine (the verifiers'
    gap table and JSON, the budget curve, the core example) write the same bytes with 1 and
    2 threads: they are computed in float64 from shipped data, written with the tables'
    precision policy."""
    code = (
        "import sys; from pathlib import Path; from optaccept.jobs import _main; "
        "from optaccept.jobs import trees; from optaccept.tree import budget_curve; "
        "out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path('out'); "
        "assert _main.run_all(out, quick=True, only=['core', 'verifiers']) == 0; "
        "trees.budget_report(budget_curve(trees.stored_budget_models(), trees.BUDGETS, progress=False), "
        "out / 'trees_budget', 'stored laws')"
    )
    for threads in (1, 2):
        _run_in_subprocess(
            code, threads, tmp_path / f"t{threads}" if (tmp_path / f"t{threads}").mkdir() is None else None
        )
    a, b = _digests(tmp_path / "t1" / "out"), _digests(tmp_path / "t2" / "out")
    assert a == b
    assert {
        "verifiers_gap.json",
        "verifiers_gap.csv",
        "trees_budget.csv",
        "trees_budget.tex",
        "alpha_example.csv",
    } <= set(a)


def test_quick_run_log_is_not_doubled(tmp_path, monkeypatch):
    """A quick run's log went to figures/local/quick/local/main-job.log (the ignored folder
    inside the ignored folder); it is figures/local/quick/main-job.log, and a run into any
    other folder keeps <figures>/local/main-job.log."""
    monkeypatch.chdir(tmp_path)
    assert jobs._main.run_all(quick=True, only=["core"]) == 0
    assert (tmp_path / jobs._main.QUICK_DIR / "main-job.log").is_file()
    assert not (tmp_path / jobs._main.QUICK_DIR / jobs._main.LOG_DIR).exists()
    assert jobs._main.run_all(tmp_path / "out", quick=True, only=["core"]) == 0
    assert (tmp_path / "out" / jobs._main.LOG_DIR / "main-job.log").is_file()
