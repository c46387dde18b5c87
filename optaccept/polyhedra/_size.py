r"""The size of a Farkas cone, estimated before it is built, and the refusal of one too large.

The double description is one call into cddlib that reports nothing while
it runs, and its time grows steeply: at (n, k) = (30, 3) its answer alone would hold over 10⁹
rays of dimension 4,555.  :func:`cone_size` therefore estimates, from formulas and before anything is built,
the number of constraints e (cone rows), the dimension, a count of extreme rays R and the
CPU time, and :func:`~optaccept.polyhedra.extreme_rays` refuses a cone whose estimate exceeds
:data:`MAX_DD_SECONDS` (10 s; the ``max_seconds`` argument raises it).  R = 2ⁿ − 2 + (cells)
counts one subset ray per nonempty proper S and one trivial ray per cell (one less for the set
cone of n = 2, whose cell {0, 1} alone joins the two tokens); it is a lower bound
(each of those vectors is a ray by the graph description of the rays that
``tests/polyhedra/test_polyhedra.py`` checks) and the exact count for every cone in
``proofs/certificates`` (tested in ``tests/foundations/test_size_limits.py``).  The time model 0.6 µs·e³ + 0.15 µs·e²·R was fitted to
the cones below, measured on a 2-core machine (CPU seconds; each within a factor 2.1 of the model):
========================  =====  ====  =====  ========  ==========
cone                        e     dim    R     model s  measured s
========================  =====  ====  =====  ========  ==========
set, n = 6, k = 6          192    69    125      4.9       2.4
set, n = 7, k = 3          154    70    189      2.9       2.0
set, n = 10, k = 2         100    65   1077      2.2       2.0
set, n = 11, k = 2         121    77   2112      5.7       7.3
full, n = 3, k = 4         195    84     87      4.9       3.3
full, n = 9, k = 2         153    90    591      4.2       5.6
full, n = 4, k = 3         148    68     78      2.2       1.3
full, n = 8, k = 2         120    72    318      1.7       1.7
full, n = 2, k = 6         126    66     66      1.4       0.9
set, n = 8, k = 3 (*)      232   100    346     10.3       9.6
full, n = 2, k = 7 (*)     254   130    130     11.1      13.0
full, n = 10, k = 2 (*)    190   110   1122     10.2      20.3
full, n = 5, k = 3 (*)     305   130    155     19.2      18.9
========================  =====  ====  =====  ========  ==========

(*) refused at the default limit.  Peak memory of each measured run: at most 83 MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._lib.limits import count, refuse
from ._result import ExactResult

__all__ = ["MAX_DD_SECONDS", "AUTO_FULL_CELLS", "ConeSize", "cone_size", "check_cone_size"]

#: Largest estimated CPU time (seconds) of a double description accepted by default.
MAX_DD_SECONDS = 10.0
_MAX_FORMULA_N = 64
_MAX_FORMULA_K = 1000


@dataclass(frozen=True)
class ConeSize(ExactResult):
    """The size of a Farkas cone, from formulas (nothing is built).

    It speaks the results' vocabulary: ``value`` is ``rays`` (the formulas' count of extreme
    rays: a lower bound, exact for every cone in ``proofs/certificates``), ``std_err`` is None (exact),
    ``method`` is ``"formula"``, and ``ok`` says that the double description would be run at
    the default limit (``seconds <= MAX_DD_SECONDS``; a refused cone reads False).  It has
    ``to_pandas()`` (one row) and ``to_latex()``.

    Attributes
    ----------
    n, k, reduced
        The cone (``reduced``: the set cone).
    cells : int
        Ordered tuples ``n**k`` (full cone) or nonempty sets of at most ``k`` tokens.
    dim : int
        ``cells + n``.
    constraints : int
        Cone rows ``u_cell + v_y >= 0``, one per cell and token ``y`` in it.
    rays : int
        ``2**n - 2 + cells``: the number of extreme rays when the condition holds, a lower
        bound in general (module docstring).
    seconds : float
        The model 0.6 µs·e³ + 0.15 µs·e²·R of the double description's CPU time.
    """

    n: int
    k: int
    reduced: bool
    cells: int
    dim: int
    constraints: int
    rays: int
    seconds: float

    _caption = "Size of the Farkas cone of the K-draft condition, from closed formulas."
    _method = "formula"
    _value_of = "rays"

    @property
    def ok(self) -> bool:
        """Whether the double description is accepted at the default limit :data:`MAX_DD_SECONDS`."""
        return self.seconds <= MAX_DD_SECONDS

    def describe(self) -> str:
        """One phrase: the cone and its size.

        Returns
        -------
        str
            The cone's rows, dimension, extreme rays (a lower bound) and estimated time.
        """
        cone = "set cone" if self.reduced else "full tuple cone"
        return (
            f"the {cone} has {count(self.constraints)} rows, dimension {count(self.dim)} and at least "
            f"{count(self.rays)} extreme rays, estimated at {self.seconds:.3g} s of double description"
        )


def cone_size(n: int, k: int, *, reduced: bool) -> ConeSize:
    """The size of ``farkas_cone(n, k, reduced=reduced)`` and the estimated CPU time of its
    double description, from closed formulas (Python integers; nothing is built).

    Full cone: ``n**k`` cells; each token lies in ``n**k - (n-1)**k`` tuples, so there are
    ``n·(n**k - (n-1)**k)`` rows.  Set cone: ``Σ_{r ≤ k} C(n, r)`` cells and
    ``Σ_{r ≤ k} r·C(n, r)`` rows.

    Parameters
    ----------
    n : int
        Vocabulary size.
    k : int
        Number of drafts.
    reduced : bool
        The set cone (True) or the full tuple cone (False).

    Returns
    -------
    ConeSize
        Cells, dimension, rows, a lower bound on the extreme rays and the estimated seconds.

    Raises
    ------
    MethodError
        If n or k is beyond the range of the formulas (n > 64 or k > 1000).
    """
    n, k = int(n), int(k)
    if n > _MAX_FORMULA_N or k > _MAX_FORMULA_K:  # far beyond any limit: no big-number formulas
        raise refuse(
            f"n = {n}, k = {k}",
            f"the cone has at least 2^{n} - 2 extreme rays" if n > _MAX_FORMULA_N else "so many drafts",
            f"n <= {_MAX_FORMULA_N} and k <= {_MAX_FORMULA_K} for any estimate (about n <= 11 to compute)",
            "use a smaller n or k",
        )
    if reduced:
        rs = range(1, min(n, k) + 1)
        cells = sum(math.comb(n, r) for r in rs)
        rows = sum(r * math.comb(n, r) for r in rs)
    else:
        cells = n**k
        rows = n * (n**k - (n - 1) ** k)
    rays = 2**n - 2 + cells
    if reduced and n == 2:
        rays -= 1  # without the cell {0, 1} the tokens are disconnected: it gives no trivial ray
    # floats overflow for astronomically large cones: cap the estimate
    e, R = min(rows, 10**100), min(rays, 10**100)
    seconds = 0.6e-6 * float(e) ** 3 + 0.15e-6 * float(e) ** 2 * float(R)
    return ConeSize(n, k, bool(reduced), cells, cells + n, rows, rays, seconds)


#: With ``reduce=None`` the full tuple cone is used when it has at most this many cells.
AUTO_FULL_CELLS = 64


def _auto_reduced(n: int, k: int) -> bool:
    return n**k > AUTO_FULL_CELLS


def _largest_accepted(size: ConeSize, max_seconds: float, auto: bool) -> str:
    """Way out of a refusal: the largest n at this k, and the largest k at this n, that the
    limit admits (same cone, or the automatic choice when ``auto``)."""

    def ok(n: int, k: int) -> bool:
        red = _auto_reduced(n, k) if auto else size.reduced
        return cone_size(n, k, reduced=red).seconds <= max_seconds

    tips = []
    n_ok = next((m for m in range(min(size.n - 1, _MAX_FORMULA_N), 1, -1) if ok(m, size.k)), None)
    if n_ok is not None:
        tips.append(f"n <= {n_ok} at k = {size.k}")
    if size.k > 2:
        k_ok = next((j for j in range(min(size.k - 1, 64), 1, -1) if ok(size.n, j)), None)
        if k_ok is not None:
            tips.append(f"k <= {k_ok} at n = {size.n}")
    if not size.reduced and not auto and ok(size.n, size.k) is False:
        if cone_size(size.n, size.k, reduced=True).seconds <= max_seconds:
            tips.insert(0, "the set cone (reduce=True)")
    return " or ".join(tips) if tips else "a smaller n or k"


def check_cone_size(
    n: int, k: int, *, reduced: bool, max_seconds: float = MAX_DD_SECONDS, auto: bool = False
) -> ConeSize:
    """Return :func:`cone_size`, or refuse (:class:`~optaccept.MethodError`, one line: the
    size, the limit and the largest accepted n and k) when its estimated double description
    takes more than ``max_seconds``."""
    size = cone_size(n, k, reduced=reduced)
    if size.seconds > max_seconds:
        raise refuse(
            f"n = {size.n}, k = {size.k}",
            size.describe(),
            f"{max_seconds:g} s (max_seconds)",
            f"use {_largest_accepted(size, max_seconds, auto)}",
        )
    return size
