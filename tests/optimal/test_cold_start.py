"""First answers without a compiler (issue 42): small problems take the numpy or plain-Python
forms of the compiled kernels (the size thresholds of optaccept._lib.jit), which give the
compiled kernels' outputs; numba's cache goes to a per-user directory; a compilation is
announced once per family and process.  No timing here: what is checked is what gets compiled, what is
printed, and that the outputs are the same."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import optaccept as oa
from optaccept._lib import jit as _jit
from optaccept.optimal import _line, _line_kernel, _sorted

ROOT = Path(__file__).resolve().parents[2]

TOUR = """
import numpy as np, optaccept as oa
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
res = oa.optimal_acceptance(p, oa.IID(q, k=2)); oa.verify(p, oa.IID(q, k=2), res)
"""

ENTRIES = {
    "tour": TOUR,
    "optimal_verifier": TOUR
    + """
ov = oa.optimal_verifier(p, oa.IID(q, k=4))
ov.conditional((1, 3, 1, 4)); ov.sample(np.random.default_rng(0), size=100)
from optaccept.optimal._line import respond_one
respond_one(p, q, 3, np.array([0, 2, 2]), np.full(11, 0.5))
oa.optimal_acceptance(p, oa.WithoutReplacement(q, 3)); oa.optimal_verifier(p, oa.WithoutReplacement(q, 3))
""",
    "accepted_tokens": """
from optaccept import tree
target, draft = tree.synthetic_pair(5, rng=2)
for v in ("token", "target_only", "optimal", "token_optimal"):
    tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=2, k=2, children="iid"), verifier=v)
tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=2, k=1), verifier="block")
""",
    "audit_verifier": """
import numpy as np
from optaccept import audit
p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
def fn(P, Q, X, rng):
    u = rng.random(P.shape[0])
    return np.minimum((np.cumsum(P, axis=1) < u[:, None]).sum(axis=1), P.shape[1] - 1)
for d in ("iid", "swor"):
    audit.audit_verifier(fn, p, q, k=2, drafts=d, samples=2000, rng=np.random.default_rng(0), declared="target_only")
""",
}

PROBE = """
import sys
{code}
print("NUMBA_IMPORTED", "numba" in sys.modules)
"""


def _run(code: str, cache: Path, **env_extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPTACCEPT_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_small_entry_points_compile_nothing(entry, tmp_path):
    """In a fresh interpreter with an empty cache, the README's tour and the first small
    calls of the entry points never import numba (so nothing is compiled), leave the cache
    empty, and print no notice."""
    cache = tmp_path / "numba"
    cache.mkdir()
    out = _run(PROBE.format(code=ENTRIES[entry]), cache)
    assert out.returncode == 0, out.stderr
    assert "NUMBA_IMPORTED False" in out.stdout
    assert "optaccept: compiling" not in out.stderr
    assert not any(cache.iterdir())


NOTICE_CODE = """
import numpy as np
from optaccept.optimal import _sorted
rng = np.random.default_rng(0)
for n in (50, 3000):
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    _sorted.iid_scan(p, q, 2)
print("SIGNATURES", sum(len(d.signatures) for d in _sorted._scan_kernels()))
"""


def test_compilation_is_announced_once_and_cached(tmp_path):
    """Forced compiled at every size with an empty cache: one notice line (naming the cache
    directory) before the compilation, whatever the number of calls; the next process loads
    the cache silently."""
    cache = tmp_path / "cache dir"
    first = _run(NOTICE_CODE, cache, OPTACCEPT_JIT_MIN_N="0")
    assert first.returncode == 0, first.stderr
    lines = [s for s in first.stderr.splitlines() if s.startswith("optaccept: compiling")]
    assert len(lines) == 1, first.stderr
    assert str(cache) in lines[0] and "once" in lines[0]
    assert "SIGNATURES 3" in first.stdout
    assert any(cache.rglob("*.nbi"))
    second = _run(NOTICE_CODE, cache, OPTACCEPT_JIT_MIN_N="0")
    assert second.returncode == 0, second.stderr
    assert "optaccept: compiling" not in second.stderr


def test_notice_at_most_once_per_family_and_process(monkeypatch, capsys):
    """One line per family that compiles (the first time only), none for a family that is
    cached or compiles in about a second or less."""
    monkeypatch.setattr(_jit, "_announced", set())
    monkeypatch.setattr(_jit, "_cached", lambda d: False)
    for family in ("line", "swor", "line", "swor", "line"):
        _jit.announce(family, [object()])
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert err[0].startswith("optaccept: compiling the optimal verifier's kernels once (about")
    assert err[1].startswith("optaccept: compiling the without-replacement kernels once (about")
    _jit.announce("nothing known", [object()])  # no estimate above a second: silent
    monkeypatch.setattr(_jit, "_announced", set())
    monkeypatch.setattr(_jit, "_cached", lambda d: True)
    _jit.announce("line", [object()])  # in the cache: silent
    _jit.announce("scan", [object()])
    assert capsys.readouterr().err == ""


TWO_FAMILIES = """
import numpy as np
import optaccept as oa
from optaccept.optimal import _sorted
rng = np.random.default_rng(0)
p, q = rng.dirichlet(np.ones(300)), rng.dirichlet(np.ones(300))
for _ in range(2):
    _sorted.iid_scan(p, q, 2)
    oa.optimal_acceptance(p, oa.WithoutReplacement(q, 3))
"""


def test_each_family_compiling_in_a_process_is_announced(tmp_path):
    """Two families compiling in one process (forced compiled, empty cache): one line each,
    naming the family, however many calls; none in the next process (cached)."""
    cache = tmp_path / "numba"
    first = _run(TWO_FAMILIES, cache, OPTACCEPT_JIT_MIN_N="0")
    assert first.returncode == 0, first.stderr
    lines = [s for s in first.stderr.splitlines() if s.startswith("optaccept: compiling")]
    assert len(lines) == 2, first.stderr
    assert "i.i.d. scan" in lines[0] and "without-replacement" in lines[1]
    second = _run(TWO_FAMILIES, cache, OPTACCEPT_JIT_MIN_N="0")
    assert second.returncode == 0, second.stderr
    assert "optaccept: compiling" not in second.stderr


def test_cache_directory(monkeypatch, tmp_path):
    """NUMBA_CACHE_DIR wins; else a per-user directory; numba's own setting is restored after
    optaccept's kernels are decorated (other users of numba keep theirs)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert _jit.cache_dir() == str(tmp_path / "mine")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    numba = pytest.importorskip("numba")
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert _jit.cache_dir() == str(tmp_path / "xdg" / "optaccept" / "numba")
    disp = _jit.njit()(lambda x: x + 1)
    assert numba.config.CACHE_DIR == ""
    assert str(disp._cache._cache_path).startswith(_jit.cache_dir())


def test_thresholds_and_override(monkeypatch):
    monkeypatch.delenv("OPTACCEPT_JIT_MIN_N", raising=False)
    for family, limit in _jit.THRESHOLDS.items():
        assert _jit.small(limit - 1, family) and not _jit.small(limit, family)
    monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
    assert not any(_jit.small(0, f) for f in _jit.THRESHOLDS)
    monkeypatch.setenv("OPTACCEPT_NO_JIT", "1")
    assert not _jit.compiled_for(10**9, "line")


# ---------------------------------------------------------------------------------------
# the same outputs with and without the compiled path
# ---------------------------------------------------------------------------------------
def _nasty(rng: np.random.Generator, n: int):
    """Random rows and the cases that break float code: zeros, ties, p = q, tiny masses,
    near-one-hot rows (1 − 1e-12), disjoint supports."""
    cases = [(rng.dirichlet(np.full(n, a)), rng.dirichlet(np.full(n, b))) for a, b in ((1, 1), (0.2, 0.3), (5, 0.5))]
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    pz, qz = p.copy(), q.copy()
    pz[rng.random(n) < 0.3] = 0.0
    qz[rng.random(n) < 0.3] = 0.0
    qz[0] = max(qz[0], 0.1)
    cases.append((pz / pz.sum() if pz.sum() > 0 else p, qz / qz.sum()))
    ties = np.round(rng.dirichlet(np.ones(n)) * 8) + 1
    cases.append((ties / ties.sum(), np.full(n, 1.0 / n)))
    cases.append((p, p.copy()))
    tiny = rng.dirichlet(np.ones(n))
    tiny[rng.random(n) < 0.4] = 1e-200
    cases.append((tiny / tiny.sum(), q))
    hot = np.full(n, 1e-12 / max(n - 1, 1))
    hot[0] = 1.0 - 1e-12
    cases.append((hot, q))
    cases.append((q, hot.copy()))
    if n >= 4:
        a = np.zeros(n)
        b = np.zeros(n)
        a[: n // 2] = rng.random(n // 2) + 0.1
        b[n // 2 :] = rng.random(n - n // 2) + 0.1
        cases.append((a / a.sum(), b / b.sum()))
    return cases


def _verifier_arrays(ov):
    return [np.asarray(v) for v in (ov.s, ov._ptr, ov._pcell, ov._plen, ov._ell, ov._line, ov._accept, ov._resid)]


@pytest.mark.parametrize("n", [2, 3, 5, 17, 64, 150])
def test_plain_python_line_device_equals_compiled(n, monkeypatch):
    """Below the ``line`` threshold the verifier's kernels run as plain Python on numpy's
    order: every array of the kept verifier, the selection probabilities, the sampled
    outputs and the one-shot answer equal the compiled path's bit for bit (k = 1…20: both
    mass formulas)."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(n)
    checked = 0
    for k in (1, 2, 4, 20):
        for p, q in _nasty(rng, n):
            law = oa.IID(q, k)
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "1000000")
            plain = oa.optimal_verifier(p, law)
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
            fast = oa.optimal_verifier(p, law)
            for a, b in zip(_verifier_arrays(plain), _verifier_arrays(fast)):
                assert np.array_equal(a, b), (n, k)
            drafted = np.flatnonzero(q > 0)
            for _ in range(3):
                x = rng.choice(drafted, size=k)
                u = rng.random(3 * k + 2)
                monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "1000000")
                sel_plain = plain.selection(x)
                one_plain = _line.respond_one(p, q, k, x, u)
                monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
                assert sel_plain == fast.selection(x)
                assert one_plain == _line.respond_one(p, q, k, x, u) == fast._respond_uniform(x, u)
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "1000000")
            y_plain = plain.sample(np.random.default_rng(1), size=50)
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
            y_fast = fast.sample(np.random.default_rng(1), size=50)
            assert all(np.array_equal(a, b) for a, b in zip(y_plain, y_fast))
            checked += 1
    assert checked >= 36
    assert _line_kernel._PURE is not None  # the plain-Python form did run


def test_plain_python_device_against_exact_fractions(monkeypatch):
    """The plain-Python path on small rows attains the exact α* (Fractions) and is lossless."""
    from fractions import Fraction

    monkeypatch.delenv("OPTACCEPT_JIT_MIN_N", raising=False)
    rng = np.random.default_rng(5)
    for n, k in ((3, 2), (5, 2), (6, 3), (7, 5)):
        for p, q in _nasty(rng, n)[:6]:
            ov = oa.optimal_verifier(p, oa.IID(q, k))
            pe = [Fraction(float(v)) for v in p]
            qe = [Fraction(float(v)) for v in q]
            pe = [v / sum(pe) for v in pe]
            qe = [v / sum(qe) for v in qe]
            ex = oa.optimal_verifier(pe, oa.IID(qe, k))
            assert abs(ov.acceptance - float(ex.value)) <= 1e-12
            assert ov.certificate()["ok"]


@pytest.mark.parametrize("n", [1, 2, 5, 40, 500])
def test_numpy_scan_equals_compiled_below_threshold(n, monkeypatch):
    """The i.i.d. α* below the ``scan`` threshold (numpy passes) equals the compiled passes'
    value and minimiser bit for bit."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(100 + n)
    for k in (1, 2, 8, 64):
        for p, q in _nasty(rng, n):
            monkeypatch.delenv("OPTACCEPT_JIT_MIN_N", raising=False)
            v0, s0 = _sorted.iid_scan(p, q, k)
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
            v1, s1 = _sorted.iid_scan(p, q, k)
            assert v0 == v1 and np.array_equal(np.sort(s0()), np.sort(s1()))


@pytest.mark.parametrize("n", [4, 9, 60])
def test_swor_below_threshold_agrees_with_window_search(n, monkeypatch):
    """Without replacement, below the ``swor`` threshold: the quadrature of every prefix in
    numpy instead of the compiled window search — the same α* to 1e-14."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(200 + n)
    for k in (3, 4, 8):
        for p, q in _nasty(rng, n)[:6]:
            if np.count_nonzero(q) <= k:
                continue
            law = oa.WithoutReplacement(q, k)
            monkeypatch.delenv("OPTACCEPT_JIT_MIN_N", raising=False)
            a = oa.optimal_acceptance(p, law).value
            monkeypatch.setenv("OPTACCEPT_JIT_MIN_N", "0")
            b = oa.optimal_acceptance(p, law).value
            assert abs(a - b) <= 1e-14, (n, k, a, b)
