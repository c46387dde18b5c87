"""Solver output never reaches standard output, and the transport LP refuses sizes it
cannot finish in a few minutes (with the way out), before doing any work."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import optaccept as oa

P, Q = ".4,.25,.15,.12,.08", ".3,.1,.35,.05,.2"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "optaccept", *args], capture_output=True, text=True, timeout=120)


def test_transport_json_is_the_whole_stdout():
    r = _cli("alpha", "--target", P, "--draft", Q, "--method", "transport", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)  # fails if HiGHS's banner precedes the JSON
    assert out["method"] == "transport"
    assert abs(out["value"] - 0.9075) < 1e-9
    assert "HiGHS" not in r.stdout


def test_transport_in_process_prints_nothing(capfd):
    p = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    q = np.array([0.3, 0.1, 0.35, 0.05, 0.2])
    res = oa.optimal_acceptance(p, oa.IID(q, 3), method="transport")
    assert abs(res.value - oa.optimal_acceptance(p, oa.IID(q, 3), method="lp").value) < 1e-9
    assert capfd.readouterr().out == ""


def test_transport_size_guard_refuses_at_once():
    r = _cli("alpha", "--target", P, "--draft", Q, "--method", "transport", "-k", "8")
    assert r.returncode == 2
    assert r.stderr.startswith("optaccept: error: method 'transport'") and "--method" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("k", [7, 8])
def test_transport_guard_in_library(k):
    with pytest.raises(oa.MethodError, match="limit"):
        oa.optimal_acceptance(np.full(5, 0.2), oa.IID(np.full(5, 0.2), k), method="transport")
