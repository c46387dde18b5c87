"""Shared timing for the benchmark scripts: best of n wall-clock runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["best_time", "best_time_and_result"]


def best_time_and_result(fn: Callable[[], Any], repeat: int = 3, *, warmup: bool = False) -> tuple[float, Any]:
    """Smallest wall-clock time of ``repeat`` calls of ``fn`` (after one untimed call when
    ``warmup``), and the value of the last call."""
    out = fn() if warmup else None
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def best_time(fn: Callable[[], Any], repeat: int = 3, *, warmup: bool = False) -> float:
    """Smallest wall-clock time of ``repeat`` calls of ``fn``."""
    return best_time_and_result(fn, repeat, warmup=warmup)[0]
