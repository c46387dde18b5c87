"""Size guards of the exact and exponential computations, and the default of ``progress=``.

Every computation whose size grows exponentially (all 2ⁿ subsets, the n^{k+1} variables of
the transport LP, the double description of a cone) estimates its size from formulas first
— before any allocation or loop, with Python integers, so that no huge array is built —
and refuses beyond a documented limit with one :class:`~optaccept.MethodError` line that
names the argument, the size, the limit and the way out (:func:`refuse`).  A computation
it accepts but that can take more than a few seconds shows a ``tqdm`` bar on stderr when
:func:`show_progress` says so.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from .._errors import MethodError

__all__ = ["show_progress", "refuse", "count", "subsets_bytes", "MAX_ENUMERATION", "capped_pow", "capped_sum"]

#: Largest number of draft sets or ordered tuples enumerated explicitly.
MAX_ENUMERATION = 2_000_000


def show_progress(progress: Any) -> bool:
    """Resolve a ``progress=`` argument: ``True``/``False`` as given; ``None`` (the
    default) shows a bar where someone watches — stderr is a terminal, or the code runs in
    a Jupyter kernel — and none in scripts whose output is redirected, or in tests."""
    if progress is not None:
        return bool(progress)
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    shell = sys.modules.get("IPython")
    if shell is not None:
        ip = getattr(shell, "get_ipython", lambda: None)()
        return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
    return False


def count(x: int | float) -> str:
    """A size for a message: ``13,080`` up to 10¹², else ``1.07e+15``."""
    if isinstance(x, int) and abs(x) < 10**12:
        return f"{x:,}"
    return f"{float(x):.3g}"


def subsets_bytes(n: int, item_bytes: int = 8) -> int:
    """Bytes of one array holding a value for each of the 2ⁿ subsets of n tokens."""
    return (1 << n) * item_bytes


def refuse(where: str, need: str, limit: str, way_out: str) -> MethodError:
    """The one-line refusal ``"<where>: <need>, over the limit of <limit>; <way out>"``
    (returned, for the caller to raise before any work)."""
    return MethodError(f"{where}: {need}, over the limit of {limit}; {way_out}")


def capped_pow(base: int, k: int, cap: int) -> int:
    """base**k, or cap + 1 once it exceeds cap (no huge integers are built)."""
    if base <= 1:
        return base
    if k * math.log(base) > math.log(cap) + 1.0:
        return cap + 1
    return min(base**k, cap + 1)


def capped_sum(terms: Any, cap: int) -> int:
    """Σ terms, stopping (and returning cap + 1) as soon as the partial sum exceeds cap."""
    tot = 0
    for t in terms:
        tot += t
        if tot > cap:
            return cap + 1
    return tot
