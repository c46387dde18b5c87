#!/usr/bin/env bash
# The install path an engine team takes: `pip install -e ".[llm]"` into an environment that
# already has its own torch (here the CPU wheel stands in for a CUDA build), without run.sh's
# pins or extras.  Checks that pip keeps that torch and that the library and its llm layer work.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
ENV=$(mktemp -d)/env
"$PY" -m venv "$ENV"
"$ENV/bin/python" -m pip install -q --upgrade pip
"$ENV/bin/python" -m pip install -q "torch==2.13.0"
before=$("$ENV/bin/python" -c 'import torch; print(torch.__version__)')
"$ENV/bin/python" -m pip install -q -e ".[llm]"
after=$("$ENV/bin/python" -c 'import torch; print(torch.__version__)')
[ "$before" = "$after" ] || { echo "pip path: torch changed from $before to $after" >&2; exit 1; }
"$ENV/bin/python" - <<'PY'
import numpy as np
import optaccept as oa
from optaccept import llm, tree

p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
res = oa.optimal_acceptance(p, oa.IID(q, k=2))
assert abs(res.value - 0.9075) < 1e-12, res.value
assert oa.verify(p, oa.IID(q, k=2), res).ok
target, draft = tree.synthetic_pair(16, rng=0)
print("pip path ok: alpha* =", res.value, "| llm layer:", llm.__name__)
PY
rm -rf "$(dirname "$ENV")"
