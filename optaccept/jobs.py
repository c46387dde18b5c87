"""The main job: regenerate every figure and table of optaccept on built-in defaults.

``python -m optaccept.jobs [--quick] [--figures DIR] [--only core verifiers ...]``
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

__all__ = ["PARTS", "run_all", "main"]

#: Parts of the main job, in order: name -> module with ``run(figures_dir, quick=...)``.
PARTS = {
    "core": "optaccept.optimal._job",
    "verifiers": "optaccept.verifiers._job",
    "polyhedra": "optaccept.polyhedra._job",
    "sequence": "optaccept.sequence._job",
    "llm": "optaccept.llm._job",
}


def run_all(figures: str | Path = "figures", *, quick: bool = False, only: list[str] | None = None) -> int:
    figures = Path(figures)
    figures.mkdir(parents=True, exist_ok=True)
    selected = only or list(PARTS)
    unknown = [s for s in selected if s not in PARTS]
    if unknown:
        print(f"optaccept.jobs: unknown part(s) {unknown}; choose from {list(PARTS)}", file=sys.stderr)
        return 2
    failed = []
    for name in selected:
        try:
            mod = importlib.import_module(PARTS[name])
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(PARTS[name].rsplit(".", 1)[0]):
                print(f"== {name}: not available ({exc.name})")
                continue
            raise
        print(f"== {name} ==", flush=True)
        t0 = time.perf_counter()
        try:
            paths = mod.run(figures, quick=quick)
        except Exception as exc:  # report and go on; the exit code says it failed
            failed.append(name)
            print(f"!! {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        for p in paths or []:
            print(f"   wrote {p}")
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    if failed:
        print(f"optaccept.jobs: failed parts: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m optaccept.jobs", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (for tests)")
    ap.add_argument("--figures", default="figures", help="output folder (default figures/)")
    ap.add_argument("--only", nargs="*", default=None, help=f"parts to run, from {list(PARTS)}")
    ns = ap.parse_args(argv)
    return run_all(ns.figures, quick=ns.quick, only=ns.only)


if __name__ == "__main__":
    sys.exit(main())
