#!/usr/bin/env bash
# The package as a user gets it: build the sdist and the wheel, check them with twine, install
# the wheel alone (its core dependencies from the registry, no extras, no editable install, no
# repository on sys.path) into a fresh virtual environment, and smoke-test the library and the
# command line from a temporary folder.  Exits non-zero on any failure; about a minute with a
# warm pip cache.
#   TOOLS_PYTHON  a Python with build and twine (default .venv/bin/python, the dev extra;
#                 without them a throw-away environment gets them)
#   PYTHON        the Python of the clean environment (default python3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
say() { echo "wheel: $*"; }
fail() { echo "wheel: FAILED: $*" >&2; exit 1; }

# 1. build and check
TOOLS=${TOOLS_PYTHON:-.venv/bin/python}
if ! { [ -x "$TOOLS" ] || command -v "$TOOLS" >/dev/null 2>&1; } || ! "$TOOLS" -c 'import build, twine' 2>/dev/null; then
  "$PY" -m venv "$WORK/tools"
  "$WORK/tools/bin/python" -m pip install -q build twine
  TOOLS=$WORK/tools/bin/python
fi
"$TOOLS" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log" >&2; fail "python -m build"; }
"$TOOLS" -m twine check --strict "$WORK"/dist/* || fail "twine check --strict"
WHEEL=$(ls "$WORK"/dist/*.whl)
SDIST=$(ls "$WORK"/dist/*.tar.gz)

# 2. what the wheel carries: the package and its small data files, nothing else
"$TOOLS" - "$WHEEL" "$SDIST" <<'PY' || fail "wheel contents"
import os, sys, tarfile, zipfile
wheel, sdist = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
tops = {n.split("/")[0] for n in names}
bad = sorted(tops - {"optaccept", next(t for t in tops if t.endswith(".dist-info"))})
extended = [n for n in names + tarfile.open(sdist).getnames() if n.endswith("_extended.npz")]
data = sorted(n for n in names if n.startswith("optaccept/data/") and not n.endswith(".py"))
size = os.path.getsize(wheel)
print(f"wheel: {os.path.basename(wheel)} {size / 1e6:.2f} MB, {len(names)} files; data: "
      + ", ".join(os.path.basename(n) for n in data))
assert not bad, f"folders outside the package in the wheel: {bad}"
assert not extended, f"extended tree sets in the distribution: {extended}"
assert size < 6_000_000, f"wheel of {size} bytes (expected about 3.8 MB)"
PY

# 3. a clean environment with the wheel and its core dependencies only
"$PY" -m venv "$WORK/env"
"$WORK/env/bin/python" -m pip install -q --upgrade pip
"$WORK/env/bin/python" -m pip install -q "$WHEEL" || fail "pip install of the wheel"

# 4. smoke tests, from an empty folder, nothing of the repository on sys.path
mkdir "$WORK/run"
cd "$WORK/run"
unset PYTHONPATH
"$WORK/env/bin/python" -I - "$ROOT" <<'PY' || fail "library smoke test"
import sys
from pathlib import Path

import numpy as np

import optaccept as oa
from optaccept import real

root = Path(sys.argv[1]).resolve()
where = Path(oa.__file__).resolve()
assert root not in where.parents, f"optaccept imported from the repository: {where}"
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
r = oa.optimal_acceptance(p, oa.IID(q, k=2))
assert abs(r.value - 0.9075) < 1e-12, r.value
assert oa.verify(p, oa.IID(q, k=2), r).ok
# the shipped data loads (checksums verified); the extended trees are not installed: a clear error
assert len(real.Distributions.load(real.sample_path())) > 0
assert real.DraftTrees.load(real.trees_path("iid")).n_trees > 0
try:
    real.trees_path("iid", "extended")
except FileNotFoundError as exc:
    assert "OPTACCEPT_DATA" in str(exc), exc
else:
    raise AssertionError("the extended trees were found in a clean install")
print(f"wheel: library ok from {where.parent}: alpha* = {r.value}")
PY
"$WORK/env/bin/optaccept" --help >"$WORK/help1" || fail "optaccept --help"
"$WORK/env/bin/python" -I -m optaccept --help >"$WORK/help2" || fail "python -m optaccept --help"
grep -q "usage: optaccept" "$WORK/help1" && cmp -s "$WORK/help1" "$WORK/help2" || fail "the two --help differ"
"$WORK/env/bin/optaccept" alpha --target .4,.25,.15,.12,.08 --draft .3,.1,.35,.05,.2 -k 2 >"$WORK/alpha" \
  || fail "optaccept alpha"
grep -q "alpha\* = 0.907500000000" "$WORK/alpha" || fail "optaccept alpha printed $(head -1 "$WORK/alpha")"
say "ok (python -m build, twine check --strict, clean install, library and command line)"
