"""The one switch of the compiled kernels: numba when it is installed (the ``fast`` extra)
and not disabled by the environment variable ``OPTACCEPT_NO_JIT=1`` (for comparisons with
the numpy forms).

**When a kernel is used.**  A compiled kernel costs once per installation its compilation
(1–12 s a family on the 2-core x86-64 machine of ``benchmarks/RESULTS.md``) and once per
process numba's import and the loading of the cached machine code (≈ 0.7 s of CPU there, the
first family; a few milliseconds each after it).  Small problems do not repay that: each family
of kernels has a size threshold (:data:`THRESHOLDS`, the vocabulary size n of the call), below
which the family's callers take their numpy or pure-Python form — the same outputs (see each
family), no numba import, no compiler.  A threshold is the size at which a process making
1,000 calls of that size breaks even: 1,000 · (t_plain(n) − t_compiled(n)) = 0.7 s, i.e. a
saving of 0.7 ms a call, with t_plain and t_compiled measured per call in one warm process
(``benchmarks/bench_cold_start.py --crossover``; the figures are in ``benchmarks/RESULTS.md``).
``OPTACCEPT_JIT_MIN_N=m`` replaces every threshold by m (0: always compiled; for tests and
measurements).

**Where the machine code is cached.**  In ``NUMBA_CACHE_DIR`` (numba's ``config.CACHE_DIR``)
when the user set it, else in a per-user directory (``$XDG_CACHE_HOME/optaccept/numba``,
``~/.cache/optaccept/numba``; ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows), so
that a wheel installed into a read-only site-packages compiles once per user, not once per
process.  The directory is set on numba's config only while optaccept's own kernels are
decorated: other numba users in the process keep their caches.

**The notice.**  Before a family that is not in the cache compiles, and when its compilation
takes more than a second, one line goes to stderr, once per family and process
(:func:`announce`): a process that compiles several families names each of them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from typing import Any

__all__ = ["THRESHOLDS", "announce", "cache_dir", "compiled_for", "disabled", "njit", "small"]

#: The size thresholds per family of kernels (the vocabulary size n of a call): below them the
#: numpy or pure-Python forms run.  Measured per call in one warm process on the 2-core x86-64
#: machine (load ≈ 2.5; ``benchmarks/bench_cold_start.py --crossover``, softmax rows, k = 4,
#: best of 5 rounds; table in ``benchmarks/RESULTS.md``): the size where the compiled form
#: saves 0.7 ms a call (so 1,000 calls repay the process's ≈ 0.7 s of numba import and cache
#: loading; module docstring), interpolated between the measured sizes.
#:
#: - ``scan``: the i.i.d. α* scan (:func:`optaccept.optimal._sorted.iid_scan`); the numpy
#:   passes give the same value and prefix bit for bit.  Saved per call: 0.06 ms at
#:   n = 16,384, 0.29 ms at 98,304, 0.39 ms at 131,072, 0.97 ms at 262,144.
#: - ``line``: the optimal verifier's line device (order, cell masses, scan, shares, selection;
#:   :mod:`optaccept.optimal._line_kernel`, ``_line_order``, ``_line_oneshot``); below it the
#:   same kernels run as plain Python (bit for bit the compiled outputs) on numpy's order (the
#:   same order).  The kept verifier's build saves 0.46 ms at n = 64, 0.98 ms at 128.
#: - ``swor``: the without-replacement window search (:mod:`optaccept.drafts._swor`); below it
#:   the quadrature of every prefix in numpy (the same α* to ≈ 1e-15, checked to 1e-14).
#:   Saved per α* solve: 0.55 ms at n = 128, 1.0 ms at 256.
THRESHOLDS = {"scan": 200_000, "line": 96, "swor": 160}

#: Compilation time of each family from an empty cache (CPU seconds, the machine above: the
#: forced tour compiles the scan and the line families in 10.3 s), for the notice.
COMPILE_SECONDS = {"scan": 1.5, "line": 9.0, "swor": 4.0}

_LOCK = threading.Lock()
#: The families already announced in this process (at most one line each).
_announced: set[str] = set()


def disabled() -> bool:
    """Whether ``OPTACCEPT_NO_JIT`` asks for the numpy forms (read at every call)."""
    return os.environ.get("OPTACCEPT_NO_JIT", "") not in ("", "0")


def _numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def compiled_for(n: int | None, family: str) -> bool:
    """Whether a call of size n (None: any size) should take ``family``'s compiled kernels:
    numba installed, not disabled, and n at least the family's threshold (or the override
    ``OPTACCEPT_JIT_MIN_N``).  Imports nothing."""
    if disabled() or (n is not None and small(n, family)):
        return False
    return _numba_installed()


def small(n: int, family: str) -> bool:
    """Whether n is below ``family``'s size threshold (or ``OPTACCEPT_JIT_MIN_N``)."""
    env = os.environ.get("OPTACCEPT_JIT_MIN_N", "")
    return n < (int(env) if env.strip() else THRESHOLDS[family])


def cache_dir() -> str:
    """The directory of optaccept's compiled kernels: ``NUMBA_CACHE_DIR`` when set, else a
    per-user cache directory (module docstring)."""
    env = os.environ.get("NUMBA_CACHE_DIR", "")
    if env:
        return env
    if "numba" in sys.modules:
        configured = getattr(getattr(sys.modules["numba"], "config", None), "CACHE_DIR", "")
        if configured:
            return configured
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "optaccept", "numba")


def _usable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def njit() -> Any:
    """A decorator compiling with numba's ``njit(cache=True, nogil=True)`` into
    :func:`cache_dir`, or None where numba is missing."""
    try:
        import numba
    except ImportError:
        return None
    decorate = numba.njit(cache=True, nogil=True)

    def jit(fn):
        # numba picks a function's cache locator when it is decorated, from config.CACHE_DIR
        # (an empty value: next to the source, else a user-wide directory); the user's
        # setting is kept, ours is set only for the time of the decoration
        with _LOCK:
            previous = numba.config.CACHE_DIR
            target = previous or cache_dir()
            if not previous and _usable(target):
                numba.config.CACHE_DIR = target
            try:
                return decorate(fn)
            finally:
                numba.config.CACHE_DIR = previous

    return jit


def _cached(dispatcher) -> bool:
    """Whether numba's cache holds a fresh index for ``dispatcher`` (any signature)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - numba's internals moved: assume it compiles
        return False


def announce(family: str, dispatchers) -> None:
    """Before the first call of ``family``'s ``dispatchers``: when one of them is not in the
    cache and the family compiles for more than a second, print one line to stderr, at most
    once per family and process (``optaccept: compiling the … kernels once (about N s; cached
    in DIR)``); another family compiling later in the process gets its own line."""
    if family in _announced or COMPILE_SECONDS.get(family, 0.0) <= 1.0:
        return
    if all(_cached(d) for d in dispatchers):
        return
    with _LOCK:
        if family in _announced:
            return
        _announced.add(family)
    names = {"scan": "i.i.d. scan", "line": "optimal verifier's", "swor": "without-replacement"}
    where = cache_dir()
    if not _usable(where) and dispatchers and hasattr(dispatchers[0], "_cache"):
        where = dispatchers[0]._cache._cache_path  # numba's own fallback
    print(
        f"optaccept: compiling the {names.get(family, family)} kernels once "
        f"(about {COMPILE_SECONDS[family]:.0f} s; cached in {where})",
        file=sys.stderr,
        flush=True,
    )
