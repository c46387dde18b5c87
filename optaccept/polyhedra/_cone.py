r"""The Farkas cone of the K-draft condition and its extreme rays.

docs/theory.md §4 (Khisti et al., *Multi-Draft Speculative Sampling*, ICLR 2025, Appendix D;
their target is our ``p``, their draft our ``q``).  α*(p, D) = 1 exactly when
the transport system

.. math::
    \pi \ge 0,\quad \pi(\bar x, y) = 0 \text{ for } y \notin \mathrm{set}(\bar x),\quad
    \textstyle\sum_y \pi(\bar x, y) = D(\bar x),\quad \sum_{\bar x} \pi(\bar x, y) = p(y)

is feasible.  By Farkas' lemma this holds iff
:math:`\sum_{\bar x} u_{\bar x} D(\bar x) + \sum_y v_y p(y) \ge 0` for every
:math:`(u, v)` in the cone

.. math::
    C = \{(u, v) : u_{\bar x} + v_y \ge 0 \text{ for every } \bar x \in \Omega^k,\ y \in \mathrm{set}(\bar x)\},

which depends on ``n`` and ``k`` only.  Its extreme rays and lineality space
(computed here exactly, by the double-description method of cddlib through
``cdd.gmp``) give a finite list of inequalities valid for every ``p`` and ``D``.

Symmetry reduction.  Tuples with the same set have identical constraints, and the
transport system only sees the law of :math:`\mathrm{set}(\bar x)`; merging them
gives the *set cone* with one ``u_A`` per nonempty ``A ⊆ Ω`` with ``|A| ≤ k``
(weight ``D(set = A)``).  Tokens are exchangeable: a permutation of Ω maps
``C`` onto itself, so rays fall into token orbits (:func:`token_orbits`).

Size limits: :mod:`._size` (:func:`cone_size` estimates every cone before it is built, and
:func:`extreme_rays` refuses one beyond :data:`MAX_DD_SECONDS`).

pycddlib is imported lazily; without it these functions raise
:class:`~optaccept.MissingDependencyError` naming the install step.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError, MissingDependencyError, SolverError
from .._lib.limits import count, refuse
from .._lib.validation import check_k
from ._result import ExactResult, RaysResult
from ._size import AUTO_FULL_CELLS, MAX_DD_SECONDS, ConeSize, check_cone_size, cone_size

__all__ = [
    "CDD_INSTALL_HINT",
    "AUTO_FULL_CELLS",
    "MAX_DD_SECONDS",
    "MAX_CONE_CELLS",
    "ConeSize",
    "cone_size",
    "check_cone_size",
    "FarkasCone",
    "ConeRays",
    "farkas_cone",
    "extreme_rays",
    "verify_rays",
    "token_orbits",
    "normalize_ray",
    "require_cdd",
]

CDD_INSTALL_HINT = (
    "the exact polyhedral checks need pycddlib with GMP (cdd.gmp): "
    "run `apt-get install libcdd-dev libgmp-dev` and then `pip install pycddlib`"
)

Cell = tuple[int, ...] | frozenset[int]

#: Largest number of cells :func:`farkas_cone` lists (about 1 s to build).
MAX_CONE_CELLS = 200_000


def require_cdd() -> Any:
    """Import and return ``cdd.gmp`` (exact rational cddlib), or raise
    :class:`~optaccept.MissingDependencyError` naming the install step."""
    try:
        import cdd.gmp as cdd_gmp
    except ImportError as exc:  # pycddlib missing, or built without GMP
        raise MissingDependencyError(f"{CDD_INSTALL_HINT} ({exc})") from None
    return cdd_gmp


@dataclass(frozen=True)
class FarkasCone(ExactResult):
    """The cone ``C`` of docs/theory.md §4 in H-representation.

    Coordinates are ``(u_cell for cell in cells) + (v_0, ..., v_{n-1})``.  A cell is an
    ordered draft tuple (full cone) or a frozenset of tokens (set cone, ``reduced``).
    ``edges`` lists the pairs ``(cell index, y)``, one constraint ``u_cell + v_y >= 0`` each.

    It speaks the results' vocabulary: ``value`` is ``dim``, ``std_err`` is None (exact),
    ``method`` is ``"enumeration"`` (the cells are listed one by one), and ``ok`` re-checks
    the construction against the closed formulas of :func:`cone_size`: as many cells and
    constraints as they count, and every constraint's token in its cell.  It has
    ``to_pandas()`` (one row) and ``to_latex()``.

    Attributes
    ----------
    n : int
        Vocabulary size.
    k : int
        Number of drafts.
    reduced : bool
        Whether the cells are draft sets (the set cone) or ordered tuples.
    cells : tuple
        The cells, in coordinate order.
    edges : tuple of (int, int)
        ``(cell index, y)`` for each constraint, y a token of the cell.
    """

    n: int
    k: int
    reduced: bool
    cells: tuple[Cell, ...]
    edges: tuple[tuple[int, int], ...]

    @property
    def dim(self) -> int:
        """Ambient dimension ``len(cells) + n``."""
        return len(self.cells) + self.n

    _caption = "Farkas cone of the K-draft condition."
    _method = "enumeration"
    _value_of = "dim"

    @property
    def ok(self) -> bool:
        """Whether cells and constraints agree with :func:`cone_size`'s formulas and every
        constraint ``(i, y)`` has ``y`` in cell ``i``."""
        size = cone_size(self.n, self.k, reduced=self.reduced)
        return (
            len(self.cells) == size.cells
            and len(self.edges) == size.constraints
            and all(0 <= i < len(self.cells) and y in self.cells[i] for i, y in self.edges)
        )

    def _records(self) -> list[dict[str, Any]]:
        extra = {"n": self.n, "k": self.k, "reduced": self.reduced, "cells": len(self.cells)}
        return [{**self._vocabulary(), **extra, "constraints": len(self.edges)}]

    def constraint_rows(self) -> list[list[int]]:
        """cdd rows ``[0, a_1..a_d]`` meaning ``a·z >= 0`` (a cone: no constant term).

        Returns
        -------
        list of list of int
            One row per edge, with 1 at the cell's ``u`` and at the token's ``v``.
        """
        m, d = len(self.cells), self.dim
        rows = []
        for i, y in self.edges:
            row = [0] * (d + 1)
            row[1 + i] = 1
            row[1 + m + y] = 1
            rows.append(row)
        return rows

    def cell_label(self, i: int) -> str:
        """Readable label: ``x(0,1,1)`` for a tuple, ``A{0,1}`` for a set.

        Parameters
        ----------
        i : int
            Index of the cell.

        Returns
        -------
        str
            The label.
        """
        c = self.cells[i]
        if isinstance(c, frozenset):
            return "A{" + ",".join(map(str, sorted(c))) + "}"
        return "x(" + ",".join(map(str, c)) + ")"


def _check_nk(n: Any, k: Any) -> tuple[int, int]:
    n = check_k(n, "n")
    k = check_k(k, "k")
    if n < 2:
        raise InputError(f"n: the vocabulary needs at least 2 tokens, got {n}")
    if k < 2:
        raise InputError(
            f"k: the K-draft condition needs k >= 2 drafts, got {k} (for k = 1, alpha* = 1 exactly when p = q)"
        )
    return n, k


def farkas_cone(n: int, k: int, *, reduced: bool = False) -> FarkasCone:
    """Build the Farkas cone ``C`` for vocabulary ``n`` and ``k`` drafts.

    Parameters
    ----------
    n, k : int
        Vocabulary size (>= 2) and number of drafts (>= 2).
    reduced : bool
        ``False``: one ``u`` per ordered tuple in Ωᵏ (``n**k`` cells, Khisti et al.'s
        system).  ``True``: one ``u`` per possible draft set (nonempty, at most ``k``
        tokens) — the symmetry-reduced cone.

    Returns
    -------
    FarkasCone
        The cone's cells and constraints (no double description is run).

    Raises
    ------
    InputError
        If n or k is not an integer of at least 2.
    MethodError
        If the cone has more than :data:`MAX_CONE_CELLS` cells.
    """
    n, k = _check_nk(n, k)
    size = cone_size(n, k, reduced=reduced)
    if size.cells > MAX_CONE_CELLS:
        raise refuse(
            f"n = {n}, k = {k}",
            f"the {'set' if reduced else 'full tuple'} cone has {count(size.cells)} cells",
            f"{count(MAX_CONE_CELLS)} cells",
            "use a smaller n or k" + ("" if reduced else ", or the set cone (reduced=True)"),
        )
    if reduced:
        cells: list[Cell] = [frozenset(c) for r in range(1, min(n, k) + 1) for c in itertools.combinations(range(n), r)]
    else:
        cells = list(itertools.product(range(n), repeat=k))
    edges = tuple((i, y) for i, c in enumerate(cells) for y in sorted(set(c)))
    return FarkasCone(n=n, k=k, reduced=reduced, cells=tuple(cells), edges=edges)


@dataclass(frozen=True)
class ConeRays(RaysResult):
    """Exact V-representation of a cone: extreme rays and a lineality basis (Fractions).

    It speaks the results' vocabulary: ``value`` is the number of extreme rays, ``std_err``
    is None (exact), ``method`` is ``"double_description"`` (cddlib, exact rationals), and
    ``ok`` re-checks the answer independently (:func:`verify_rays` without the rank test:
    every ray in the cone and outside its lineality space, every lineality vector tight on
    every constraint).  It has ``to_pandas()`` (one row) and ``to_latex()``.

    Attributes
    ----------
    cone : FarkasCone
        The cone described.
    rays : tuple of tuple of Fraction
        Its extreme rays, in the cone's coordinates.
    lineality : tuple of tuple of Fraction
        A basis of its lineality space.
    seconds : float
        Wall time of the double description.
    extra : dict
        Further data a caller attaches.
    """

    cone: FarkasCone
    rays: tuple[tuple[Fraction, ...], ...]
    lineality: tuple[tuple[Fraction, ...], ...]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    _caption = "Extreme rays of the Farkas cone of the K-draft condition (exact double description)."

    @property
    def ok(self) -> bool:
        """Whether :func:`verify_rays` (without the rank test) passes."""
        try:
            verify_rays(self, extremality=False)
        except SolverError:
            return False
        return True

    def _records(self) -> list[dict[str, Any]]:
        cone = self.cone
        rec = {**self._vocabulary(), "n": cone.n, "k": cone.k, "reduced": cone.reduced, "dim": cone.dim}
        return [{**rec, "lineality_dim": len(self.lineality), "seconds": self.seconds}]


_CACHE: dict[tuple[int, int, bool], ConeRays] = {}


def extreme_rays(cone: FarkasCone, *, cache: bool = True, max_seconds: float = MAX_DD_SECONDS) -> ConeRays:
    """Extreme rays and lineality space of ``cone`` by exact double description.

    Runs cddlib's double-description method on rationals (``cdd.gmp``).  Every
    returned generator is re-checked by :func:`verify_rays` (membership; lineality
    tight everywhere); a failure raises :class:`~optaccept.SolverError`.

    Parameters
    ----------
    cone : FarkasCone
    cache : bool
        Keep the answer for the next call with the same (n, k, reduced).
    max_seconds : float
        Refuse (:class:`~optaccept.MethodError`, before cddlib runs) a cone whose estimated
        double description (:func:`cone_size`) takes longer: default
        :data:`MAX_DD_SECONDS`.

    Returns
    -------
    ConeRays
        The extreme rays and a lineality basis, each generator re-checked.

    Raises
    ------
    MethodError
        If the estimated double description takes longer than ``max_seconds``.
    MissingDependencyError
        If pycddlib with GMP is not installed.
    SolverError
        If cddlib's answer fails the independent re-check.
    """
    key = (cone.n, cone.k, cone.reduced)
    if cache and key in _CACHE:
        return _CACHE[key]
    check_cone_size(cone.n, cone.k, reduced=cone.reduced, max_seconds=max_seconds)
    cdd_gmp = require_cdd()
    t0 = time.perf_counter()
    mat = cdd_gmp.matrix_from_array(cone.constraint_rows(), rep_type=cdd_gmp.RepType.INEQUALITY)
    poly = cdd_gmp.polyhedron_from_matrix(mat)
    gen = cdd_gmp.copy_generators(poly)
    seconds = time.perf_counter() - t0
    lin_set = set(gen.lin_set)
    rays: list[tuple[Fraction, ...]] = []
    lineality: list[tuple[Fraction, ...]] = []
    for i, row in enumerate(gen.array):
        vec = tuple(Fraction(x) for x in row[1:])
        if i in lin_set:
            lineality.append(vec)
        elif Fraction(row[0]) == 0:
            rays.append(vec)
        elif any(vec):  # a vertex other than the apex cannot occur for a cone
            raise SolverError(f"cddlib returned a non-apex vertex {vec} for a cone")
    out = ConeRays(cone=cone, rays=tuple(rays), lineality=tuple(lineality), seconds=seconds)
    verify_rays(out, extremality=False)
    if cache:
        _CACHE[key] = out
    return out


def _slack(cone: FarkasCone, vec: Sequence[Fraction]) -> list[Fraction]:
    m = len(cone.cells)
    return [vec[i] + vec[m + y] for i, y in cone.edges]


def _rank_mod_p(rows: np.ndarray, prime: int = 2_147_483_647) -> int:
    """Rank of an integer matrix over GF(prime) (a lower bound of its rational rank)."""
    a = np.array(rows, dtype=np.int64) % prime
    r = 0
    nrows, ncols = a.shape
    for c in range(ncols):
        piv = np.flatnonzero(a[r:, c])
        if piv.size == 0:
            continue
        p = r + int(piv[0])
        a[[r, p]] = a[[p, r]]
        inv = pow(int(a[r, c]), prime - 2, prime)
        a[r] = (a[r] * inv) % prime
        nz = np.flatnonzero(a[:, c])
        nz = nz[nz != r]
        if nz.size:
            # (x - f*y) mod p without int64 overflow: f, y < 2^31 so f*y < 2^62.
            a[nz] = (a[nz] - (a[nz, c][:, None] * a[r][None, :]) % prime) % prime
        r += 1
        if r == nrows:
            break
    return r


def verify_rays(rays: ConeRays, *, extremality: bool = True, indices: Sequence[int] | None = None) -> None:
    """Re-check cddlib's answer independently; raise :class:`~optaccept.SolverError` if wrong.

    Every ray satisfies all constraints and is not in the lineality space; every
    lineality vector makes every constraint tight.  With ``extremality``, each ray
    (or those in ``indices``) has tight constraints of rank ``dim - lineality_dim - 1``
    (rank over GF(p) — a lower bound of the rational rank, so reaching the maximum
    proves the ray extreme).

    Parameters
    ----------
    rays : ConeRays
        The double description to re-check.
    extremality : bool
        Also prove each ray extreme by the rank of its tight constraints.
    indices : sequence of int, optional
        The rays whose extremality is checked (default: all).

    Raises
    ------
    SolverError
        If a generator fails a check; the message names it.
    """
    cone = rays.cone
    for j, vec in enumerate(rays.lineality):
        if any(s != 0 for s in _slack(cone, vec)):
            raise SolverError(f"lineality vector {j} is not tight on every constraint")
    m = len(cone.cells)
    target = cone.dim - len(rays.lineality) - 1
    check = range(len(rays.rays)) if indices is None else indices
    for j, vec in enumerate(rays.rays):
        sl = _slack(cone, vec)
        if any(s < 0 for s in sl):
            raise SolverError(f"ray {j} violates a constraint of the cone")
        if all(s == 0 for s in sl):
            raise SolverError(f"ray {j} lies in the lineality space")
    if not extremality:
        return
    for j in check:
        sl = _slack(cone, rays.rays[j])
        tight = np.zeros((sum(1 for s in sl if s == 0) + len(rays.lineality), cone.dim), dtype=np.int64)
        r = 0
        for (i, y), s in zip(cone.edges, sl):
            if s == 0:
                tight[r, i] = 1
                tight[r, m + y] = 1
                r += 1
        if _rank_mod_p(tight[:r]) != target:
            raise SolverError(f"ray {j} is not extreme: its tight constraints have too small a rank")


def normalize_ray(cone: FarkasCone, vec: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """Canonical representative of a ray modulo the lineality ``(-1,…,-1 | 1,…,1)`` and
    positive scaling: shift so that ``min v = 0``, then scale the largest |entry| to 1."""
    m = len(cone.cells)
    a = min(vec[m:])
    shifted = [x + a for x in vec[:m]] + [x - a for x in vec[m:]]
    s = max(abs(x) for x in shifted)
    if s == 0:
        raise InputError("vec: the zero vector (or a lineality vector) is not a ray")
    return tuple(x / s for x in shifted)


def _permute(cone: FarkasCone, vec: Sequence[Fraction], perm: Sequence[int]) -> tuple[Fraction, ...]:
    """Image of a point of C under the token permutation ``y -> perm[y]``."""
    m = len(cone.cells)
    index = {c: i for i, c in enumerate(cone.cells)}
    out = [Fraction(0)] * cone.dim
    for i, c in enumerate(cone.cells):
        if isinstance(c, frozenset):
            img: Cell = frozenset(perm[y] for y in c)
        else:
            img = tuple(perm[y] for y in c)
        out[index[img]] = vec[i]
    for y in range(cone.n):
        out[m + perm[y]] = vec[m + y]
    return tuple(out)


def token_orbits(rays: ConeRays) -> list[list[int]]:
    """Group the rays into orbits of the token permutations (S_n acting on Ω).

    Uses the two generators of S_n (a transposition and an n-cycle).  Raises
    :class:`~optaccept.SolverError` if an image is not among the rays (the ray set
    must be invariant, since the cone is).

    Parameters
    ----------
    rays : ConeRays
        The extreme rays of a cone.

    Returns
    -------
    list of list of int
        Indices of the rays, one sorted list per orbit, the orbits by their smallest index.

    Raises
    ------
    SolverError
        If two rays coincide up to scaling and lineality, or the ray set is not invariant.
    """
    cone = rays.cone
    norm = [normalize_ray(cone, r) for r in rays.rays]
    where = {v: j for j, v in enumerate(norm)}
    if len(where) != len(norm):
        raise SolverError("cddlib returned two rays that differ only by scaling or lineality")
    n = cone.n
    gens = [[1, 0, *range(2, n)], [*range(1, n), 0]]
    parent = list(range(len(norm)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for j, v in enumerate(norm):
        for g in gens:
            img = normalize_ray(cone, _permute(cone, v, g))
            if img not in where:
                raise SolverError("the ray set is not invariant under token permutations")
            a, b = find(j), find(where[img])
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for j in range(len(norm)):
        groups.setdefault(find(j), []).append(j)
    return sorted(groups.values())
