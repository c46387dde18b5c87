"""The main job: regenerate every figure and table of optaccept on built-in defaults.

``python -m optaccept.jobs [--quick] [--figures DIR] [--only core verifiers ...]``

A full run writes to ``figures/`` (the committed figures and tables); a ``--quick`` run writes
to ``figures/local/quick/`` (ignored by git) unless ``--figures`` names another folder, so a
quick try never overwrites committed files.

Each part is a module with ``run(figures_dir, *, quick=False) -> list[Path]``; register a new
part with one line in :data:`PARTS`.  Parts show tqdm progress bars (on stderr) for their
long steps; what they print goes to the run log ``<figures>/local/main-job.log`` (not
tracked by git; a quick run's ``figures/local/quick/main-job.log``), together with the timings
and the machine.  The files a part writes are
reproducible: a re-run on the same machine rewrites the same bytes, so committed figures
and tables do not change (timings and other machine-dependent numbers live only in the
log).  The run ends with a summary of what was written where.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import sys
import time
from pathlib import Path

from .._lib.lazy import resolve
from ..plots import paper_style

__all__ = ["PARTS", "LOG_DIR", "QUICK_DIR", "run_all", "main"]

#: Parts of the main job, in order: name -> module of this package (``optaccept.jobs.<module>``)
#: with ``run(figures_dir, quick=...)``; imported only when the part runs.
PARTS = {
    "core": "core",
    "verifiers": "verifiers",
    "polyhedra": "polyhedra",
    "sequence": "sequence",
    "llm": "llm",
    "trees": "trees",
    "engines": "engines",
}

#: Sub-folder of the figures folder for the run log and other machine-dependent output
#: (ignored by git).
LOG_DIR = "local"

#: Where a quick run writes by default (ignored by git: smaller sizes, never the committed files).
QUICK_DIR = Path("figures") / LOG_DIR / "quick"


class _Tee(io.TextIOBase):
    """Write to the log; keep nothing on the console (progress bars use stderr)."""

    def __init__(self, log) -> None:
        self._log = log

    def write(self, s: str) -> int:
        self._log.write(s)
        return len(s)

    def flush(self) -> None:
        self._log.flush()


def _machine() -> str:
    try:
        cores = os.cpu_count()
    except Exception:  # pragma: no cover
        cores = "?"
    return f"{platform.platform()}, Python {platform.python_version()}, {cores} CPU cores"


def _log_dir(figures: Path) -> Path:
    """``<figures>/local/``, or ``figures`` itself when it already lies in the ignored
    ``figures/local/`` folder (a quick run's default), so the log never lands in
    ``figures/local/quick/local/``."""
    ignored = (Path("figures") / LOG_DIR).resolve()
    inside = figures.resolve() == ignored or ignored in figures.resolve().parents
    return figures if inside else figures / LOG_DIR


def run_all(
    figures: str | Path | None = None, *, quick: bool = False, only: list[str] | None = None, verbose: bool = False
) -> int:
    """Run the selected parts (default: all) into ``figures``; return 0, 1 (a part failed)
    or 2 (unknown part).  ``figures=None`` is ``figures/``, or :data:`QUICK_DIR` for a quick
    run.  ``verbose`` echoes the parts' printed output to the console."""

    figures = Path(figures) if figures is not None else (QUICK_DIR if quick else Path("figures"))
    figures.mkdir(parents=True, exist_ok=True)
    selected = only or list(PARTS)
    unknown = [s for s in selected if s not in PARTS]
    if unknown:
        print(f"optaccept.jobs: unknown part(s) {unknown}; choose from {list(PARTS)}", file=sys.stderr)
        return 2
    log_dir = _log_dir(figures)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "main-job.log"
    t_start = time.perf_counter()
    summary: list[tuple[str, str, float, list[Path]]] = []
    failed = []
    with log_path.open("w", encoding="utf-8") as log:
        log.write(f"optaccept main job, {time.strftime('%Y-%m-%d %H:%M:%S')}, quick={quick}\n{_machine()}\n\n")
        for name in selected:
            try:
                mod = resolve(f".{PARTS[name]}", __package__)
            except ModuleNotFoundError as exc:
                if exc.name == f"{__package__}.{PARTS[name]}":
                    print(f"== {name}: not available ({exc.name})", flush=True)
                    summary.append((name, f"not available ({exc.name})", 0.0, []))
                    continue
                raise
            print(f"== {name} ==", flush=True)
            log.write(f"== {name} ==\n")
            t0 = time.perf_counter()
            out = sys.stdout if verbose else _Tee(log)
            try:
                # every figure of every part in the paper style (sizes, fonts, TrueType)
                with contextlib.redirect_stdout(out), paper_style():
                    paths = list(mod.run(figures, quick=quick) or [])
            except Exception as exc:  # report and go on; the exit code says it failed
                failed.append(name)
                msg = f"{type(exc).__name__}: {exc}"
                print(f"!! {name} failed: {msg}", file=sys.stderr, flush=True)
                log.write(f"!! failed: {msg}\n")
                summary.append((name, "FAILED", time.perf_counter() - t0, []))
                continue
            dt = time.perf_counter() - t0
            log.write(f"-- {name}: {dt:.1f} s\n\n")
            log.flush()
            summary.append((name, "ok", dt, paths))
        total = time.perf_counter() - t_start
        log.write(f"total {total:.1f} s\n")
    print(_summary(summary, figures, log_path, total), flush=True)
    if failed:
        print(f"optaccept.jobs: failed parts: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _summary(rows: list[tuple[str, str, float, list[Path]]], figures: Path, log_path: Path, total: float) -> str:
    lines = ["", f"Summary (files under {figures}/):"]
    for name, status, dt, paths in rows:
        rel = []
        for p in paths:
            try:
                rel.append(str(Path(p).relative_to(figures)))
            except ValueError:
                rel.append(str(p))
        shown = ", ".join(rel[:8]) + (f", … ({len(rel)} files)" if len(rel) > 8 else "")
        lines.append(f"  {name:10s} {status:4s} {dt:7.1f} s  {shown}")
    lines.append(f"Log (timings, machine, printed output): {log_path}")
    lines.append(f"Total {total:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m optaccept.jobs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help=f"smaller sizes, written to {QUICK_DIR}/ (ignored by git)")
    ap.add_argument("--figures", default=None, help=f"output folder (default figures/, or {QUICK_DIR}/ with --quick)")
    ap.add_argument("--only", nargs="*", default=None, help=f"parts to run, from {list(PARTS)}")
    ap.add_argument("--verbose", action="store_true", help="also print the parts' output (normally only in the log)")
    ns = ap.parse_args(argv)
    return run_all(ns.figures, quick=ns.quick, only=ns.only, verbose=ns.verbose)
