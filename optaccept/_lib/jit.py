"""The one switch of the compiled kernels: numba when it is installed (the ``fast`` extra)
and not disabled by the environment variable ``OPTACCEPT_NO_JIT=1`` (for comparisons with
the numpy forms)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["disabled", "njit"]


def disabled() -> bool:
    """Whether ``OPTACCEPT_NO_JIT`` asks for the numpy forms (read at every call)."""
    return os.environ.get("OPTACCEPT_NO_JIT", "") not in ("", "0")


def njit() -> Any:
    """numba's ``njit(cache=True, nogil=True)`` decorator, or None where numba is missing."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)
