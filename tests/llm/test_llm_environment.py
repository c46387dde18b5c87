"""Loading a model leaves the process environment exactly as it was (torch's compiler,
imported by transformers on the way, used to leave TORCHINDUCTOR_CACHE_DIR set)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import needs_smollm2

from optaccept.llm._models import _environment_kept


def test_environment_kept_undoes_additions_changes_and_removals(monkeypatch):
    monkeypatch.setenv("OPTACCEPT_TEST_KEEP", "a")
    monkeypatch.setenv("OPTACCEPT_TEST_GONE", "b")
    monkeypatch.delenv("OPTACCEPT_TEST_NEW", raising=False)
    before = dict(os.environ)

    @_environment_kept()
    def load():
        os.environ["OPTACCEPT_TEST_NEW"] = "c"
        os.environ["OPTACCEPT_TEST_KEEP"] = "changed"
        del os.environ["OPTACCEPT_TEST_GONE"]
        return 1

    assert load() == 1
    assert dict(os.environ) == before


@needs_smollm2
def test_loading_smollm2_leaves_environment():
    # a fresh process: torch's compiler must not have been imported before the load
    code = (
        "import os; before = dict(os.environ)\n"
        "from optaccept import llm\n"
        "llm.smollm2_layerskip()\n"
        "extra = sorted(set(os.environ) ^ set(before)) + [k for k in before if os.environ.get(k) != before[k]]\n"
        "print('DIFF', extra)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "DIFF []" in r.stdout, r.stdout
