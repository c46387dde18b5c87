r"""The exact check of the K-draft condition: cone → extreme rays → symbolic reading.

Khisti et al. (*Multi-Draft Speculative Sampling*, ICLR 2025; their draft ``p`` is our
``q``, their target ``q`` our ``p``, their ``K`` our ``k``) prove for two i.i.d. drafts
that α* = 1 ⇔ p(S) ≥ q(S)² for every S, and conjecture in their Remark 2 that
α* = 1 ⇔ p(S) ≥ q(S)ᵏ for every k, checked by double description for n = 3, k = 3.
:func:`check_k_draft_condition` repeats that check exactly for any (n, k) and for
three draft laws, and says whether the cone's non-trivial inequalities are *exactly*
``{p(S) ≥ D(set ⊆ S)}`` over the nonempty proper S with ``D(set ⊆ S) ≢ 0`` (docs/theory.md §2.1, §4).
"""

from __future__ import annotations

import importlib.metadata
import itertools
import math
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._errors import InputError
from .._lib.display import html_fields, html_table
from .._lib.limits import count, refuse, show_progress
from .._lib.validation import check_choice
from ._cone import (
    AUTO_FULL_CELLS,
    MAX_DD_SECONDS,
    ConeRays,
    FarkasCone,
    _check_nk,
    check_cone_size,
    extreme_rays,
    farkas_cone,
    token_orbits,
    verify_rays,
)
from ._exact import ExactLaw, cell_probs
from ._result import RaysResult
from ._symbolic import DRAFT_LAWS, RayReading, SymbolicLaw, candidate, lineality_is_zero, read_ray, symbolic_law

__all__ = [
    "KDraftReport",
    "check_k_draft_condition",
    "software_versions",
    "AUTO_FULL_CELLS",
    "MAX_SYMBOLIC_TERMS",
    "MAX_K",
    "symbolic_terms",
]

#: Largest estimated size (:func:`symbolic_terms`) of the symbolic reading: about 1–3 s.
MAX_SYMBOLIC_TERMS = 1_000_000
#: Largest number of drafts: the reading's coefficients grow with k (n = 2, k = 1000: 0.3 s).
MAX_K = 1000


def symbolic_terms(drafts: str, n: int, k: int) -> int:
    """Estimated size of the exact reading of the rays, from formulas.

    i.i.d. and independent drafts: the largest polynomial the reading expands, ``q(B)**k``
    with ``C(n - 1 + k, k)`` monomials (i.i.d.) or ``∏ᵢ qᵢ(B)`` with up to ``n**k``
    (independent), times the ``Σ_{r ≤ min(n, k)} C(n, r)·2**r`` terms of the
    inclusion–exclusion over the cells.  Without replacement: the ordered tuples summed in
    the subset probabilities, ``Σ_{r ≥ k} C(n, r)·r!/(r - k)!``.  Measured (CPU seconds on a
    2-core machine): i.i.d. n = 3, k = 200 (527,826) 1.4 s; independent n = 2, k = 14
    (131,072) 0.8 s, n = 5, k = 5 (756,250) 0.9 s; refused: i.i.d. n = 4, k = 50
    (1.9 M) 2.7 s, independent n = 3, k = 10 (1.5 M) 17 s of wall time on the loaded machine.

    Parameters
    ----------
    drafts : {"iid", "swor", "independent"}
        The draft law.
    n : int
        Vocabulary size.
    k : int
        Number of drafts.

    Returns
    -------
    int
        The estimated number of terms (compared with :data:`MAX_SYMBOLIC_TERMS`).
    """
    if drafts == "swor":
        return sum(math.comb(n, r) * math.perm(r, k) for r in range(k, n + 1))
    monomials = math.comb(n - 1 + k, k) if drafts == "iid" else n**k
    return monomials * sum(math.comb(n, r) * 2**r for r in range(1, min(n, k) + 1))


def software_versions() -> dict[str, str]:
    """Versions of the software an exact certificate depends on."""
    out = {"python": platform.python_version()}
    for dist in ("pycddlib", "sympy", "numpy", "optaccept"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


@dataclass(frozen=True)
class KDraftReport(RaysResult):
    """Result of :func:`check_k_draft_condition`.

    It speaks the results' vocabulary: ``value`` is the number of extreme rays of the cone,
    ``std_err`` is None (exact), ``method`` is ``"double_description"`` (cddlib on exact
    rationals, every ray re-checked, then read symbolically), and ``ok`` is ``holds``: the
    condition holds (every ray reads as a trivial or a subset inequality, the lineality gives
    no equality, and the subset rays are exactly the conjectured sets).  It has
    ``to_pandas()`` (one row: the instance, the ray counts, the verdict) and ``to_latex()``.

    Attributes
    ----------
    n, k, drafts, reduced
        The instance: vocabulary size, number of drafts, draft law, and whether the
        symmetry-reduced set cone was used (one ``u`` per draft set instead of per tuple).
    cone : FarkasCone
        The cone ``C`` (coordinates ``u_cell`` then ``v_y``).
    rays : tuple of tuple of Fraction
        Every extreme ray, exactly, as returned by cddlib (``cdd.gmp``).
    lineality : tuple of tuple of Fraction
        A basis of the lineality space (``(-1,…,-1 | 1,…,1)`` up to scale).
    lineality_dim : int
    classification : tuple of RayReading
        One reading per ray (same order as ``rays``).
    inequalities : tuple of sympy.Expr
        The non-trivial inequalities, each ``e`` meaning ``e >= 0``, simplified:
        ``p(S) - D(set ⊆ S)`` with ``D(set ⊆ S)`` in closed form (``q(S)**k`` for i.i.d.),
        one per subset ray, ordered by (|S|, S).
    subsets : tuple of tuple of int
        The sets S of ``inequalities``, in the same order.
    conjectured : tuple of tuple of int
        The conjectured sets: nonempty proper S with ``D(set ⊆ S) ≢ 0``.
    holds : bool
        True iff every ray is trivial or a subset ray, the lineality gives no equality,
        and ``subsets == conjectured``.
    orbits : list of list of int
        Token-permutation orbits of the rays (indices into ``rays``).
    seconds : dict
        Wall-clock seconds of the double description and of the symbolic reading.

    Examples
    --------
    >>> from optaccept import polyhedra
    >>> rep = polyhedra.check_k_draft_condition(2, 2)  # when is alpha* = 1? two tokens, two i.i.d. drafts
    >>> type(rep).__name__, rep.ok, rep.method, rep.value  # six extreme rays
    ('KDraftReport', True, 'double_description', 6)
    >>> rep.inequalities, rep.subsets  # p(S) >= q(S)**2 on each proper subset S
    ((p0 - q0**2, p1 - q1**2), ((0,), (1,)))
    """

    n: int
    k: int
    drafts: str
    reduced: bool
    cone: FarkasCone
    rays: tuple[tuple[Fraction, ...], ...]
    lineality: tuple[tuple[Fraction, ...], ...]
    lineality_dim: int
    classification: tuple[RayReading, ...]
    inequalities: tuple[Any, ...]
    subsets: tuple[tuple[int, ...], ...]
    conjectured: tuple[tuple[int, ...], ...]
    holds: bool
    orbits: list[list[int]]
    law: SymbolicLaw = field(repr=False)
    seconds: dict[str, float] = field(default_factory=dict)

    _caption = "Exact check of the K-draft condition by double description."

    @property
    def ok(self) -> bool:
        """``holds``: whether the K-draft condition was proved for this instance."""
        return self.holds

    def _records(self) -> list[dict[str, Any]]:
        rec = self._vocabulary()
        rec.update(n=self.n, k=self.k, drafts=self.drafts, reduced=self.reduced, dim=self.cone.dim)
        rec.update((f"{kind}_rays", c) for kind, c in self.counts().items())
        rec.update(lineality_dim=self.lineality_dim, inequalities=len(self.inequalities), orbits=len(self.orbits))
        rec.update(conjectured=len(self.conjectured), holds=self.holds)
        return [rec]

    @property
    def relations(self) -> tuple[Any, ...]:
        """``inequalities`` as sympy relations ``p(S) >= D(set ⊆ S)``."""
        import sympy as sp

        return tuple(sp.Ge(self.law.p_display(S), self.law.subset_display(S)) for S in self.subsets)

    def ray_values(self, p: Sequence[Any], q: Sequence[Any]) -> list[Fraction]:
        """Exact values ``Σ u·D + Σ v·p`` of every ray at a numeric instance.

        ``p`` and ``q`` are converted to Fractions exactly (floats keep their binary
        value); for ``drafts="independent"`` ``q`` is a sequence of ``k`` distributions.

        Parameters
        ----------
        p : sequence of numbers, length n
            Target distribution.
        q : sequence of numbers, length n, or sequence of k such sequences
            Draft distribution (one per draft for independent drafts).

        Returns
        -------
        list of Fraction
            The value of each ray, in the order of ``rays``.

        Raises
        ------
        InputError
            If p or q has not length n, or q does not fit the draft law.
        """

        pf = [Fraction(x) for x in p]
        if len(pf) != self.n:
            raise InputError(f"p: length {len(pf)} does not match n={self.n}")
        law = ExactLaw(self.drafts, q, self.k)
        if law.n != self.n:
            raise InputError(f"q: length {law.n} does not match n={self.n}")
        D = cell_probs(self.cone.cells, law)
        m = len(D)
        return [
            sum((r[i] * D[i] for i in range(m) if r[i]), Fraction(0))
            + sum((r[m + y] * pf[y] for y in range(self.n) if r[m + y]), Fraction(0))
            for r in self.rays
        ]

    def decides_alpha_one(self, p: Sequence[Any], q: Sequence[Any]) -> bool:
        """True iff every ray inequality holds at ``(p, q)`` — by Farkas' lemma, iff α* = 1
        (exact arithmetic; ``p`` and ``q`` should sum to exactly 1).

        Parameters
        ----------
        p : sequence of numbers, length n
            Target distribution.
        q : sequence of numbers, length n, or sequence of k such sequences
            Draft distribution (one per draft for independent drafts).

        Returns
        -------
        bool
            Whether every ray's value is ≥ 0.

        Raises
        ------
        InputError
            As :meth:`ray_values`.
        """
        return all(val >= 0 for val in self.ray_values(p, q))

    def counts(self) -> dict[str, int]:
        """Number of rays of each kind.

        Returns
        -------
        dict of str to int
            Counts under ``"trivial"``, ``"subset"`` and ``"other"``.
        """
        out = {"trivial": 0, "subset": 0, "other": 0}
        for r in self.classification:
            out[r.kind] += 1
        return out

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"KDraftReport(n={self.n}, k={self.k}, drafts={self.drafts!r}, holds={self.holds}, "
            f"rays={len(self.rays)} ({c['trivial']} trivial, {c['subset']} subset, {c['other']} other))"
        )

    def _repr_html_(self) -> str:
        c = self.counts()
        head = html_fields(
            f"Exact check of the K-draft condition (n = {self.n}, k = {self.k}, {self.drafts})",
            [
                ("holds", self.holds),
                ("extreme rays", len(self.rays)),
                ("trivial / subset / other", f"{c['trivial']} / {c['subset']} / {c['other']}"),
                ("lineality dimension", self.lineality_dim),
                ("cone", "set cone" if self.reduced else "tuple cone"),
            ],
        )
        rows = [[str(set(S)) if S else "∅", f"{e} ≥ 0"] for S, e in zip(self.subsets, self.inequalities, strict=False)]
        return head + html_table(["S", "inequality"], rows, max_rows=20)

    def summary(self) -> str:
        """One line: instance, ray counts, verdict.

        Returns
        -------
        str
            The line.
        """
        c = self.counts()
        cone = "set cone" if self.reduced else "tuple cone"
        return (
            f"n={self.n} k={self.k} drafts={self.drafts} ({cone}, dim {self.cone.dim}): "
            f"{len(self.rays)} extreme rays ({c['trivial']} trivial, {c['subset']} subset, "
            f"{c['other']} other) in {len(self.orbits)} token orbits, lineality dim "
            f"{self.lineality_dim}; conjectured {len(self.conjectured)} inequalities; "
            f"holds={self.holds}"
        )

    def to_json(self, *, include_rays: bool = True) -> dict[str, Any]:
        """A JSON-serialisable certificate (Fractions as strings).

        Parameters
        ----------
        include_rays : bool
            Also list every ray with its reading (the bulk of the certificate).

        Returns
        -------
        dict
            The instance, the cone's size and coordinates, the lineality, the ray counts,
            the inequalities and sets, the verdict ``holds``, timings and software versions.
        """
        cone = self.cone
        out: dict[str, Any] = {
            "n": self.n,
            "k": self.k,
            "drafts": self.drafts,
            "cone": "set" if self.reduced else "tuple",
            "dimension": cone.dim,
            "constraints": len(cone.edges),
            "coordinates": [cone.cell_label(i) for i in range(len(cone.cells))] + [f"v{y}" for y in range(self.n)],
            "n_rays": len(self.rays),
            "lineality_dim": self.lineality_dim,
            "lineality": [[str(x) for x in v] for v in self.lineality],
            "counts": self.counts(),
            "n_orbits": len(self.orbits),
            "inequalities": [f"{e} >= 0" for e in self.inequalities],
            "subsets": [list(S) for S in self.subsets],
            "conjectured": [list(S) for S in self.conjectured],
            "holds": self.holds,
            "seconds": {key: round(v, 4) for key, v in self.seconds.items()},
            "software": software_versions(),
        }
        if include_rays:
            out["rays"] = [
                {
                    "ray": " ".join(str(x) for x in ray),
                    "kind": r.kind,
                    "subset": None if r.subset is None else list(r.subset),
                    "scale": str(r.scale),
                    "checked_symbolically": r.checked,
                    "reads": f"{r.expression} >= 0",
                }
                for ray, r in zip(self.rays, self.classification)
            ]
        return out


def _transport(cone: FarkasCone, rep: RayReading, vec: Sequence[Fraction]) -> RayReading | None:
    """Reading of ``vec`` from its orbit representative's, if a token permutation maps one
    onto the other and the combinatorial candidate of ``vec`` matches."""
    kind, S, c, u = candidate(len(cone.cells), cone.n, vec)
    expected = "trivial" if rep.kind == "trivial" and rep.subset is None else "subset"
    if rep.kind == "other" or kind != expected:
        return None
    if kind == "trivial":
        return RayReading("trivial", None, c, tuple(i for i, x in enumerate(u) if x > 0), False)
    return RayReading(rep.kind, S, c, (), False)


def _display(law: SymbolicLaw, cone: FarkasCone, vec: Sequence[Fraction], r: RayReading) -> Any:
    def build() -> Any:
        import sympy as sp

        if r.kind == "subset" and r.subset is not None:
            return law.p_display(r.subset) - law.subset_display(r.subset)
        if r.kind == "trivial" and r.subset is not None:
            return law.p_display(r.subset)
        if r.kind == "trivial":
            _, _, c, u = candidate(len(cone.cells), cone.n, vec)
            return sp.Add(
                *[
                    sp.Rational((x / c).numerator, (x / c).denominator) * law.cell_display(cone.cells[i])
                    for i, x in enumerate(u)
                    if x
                ]
            )
        return None

    return build


def check_k_draft_condition(
    n: int = 3,
    k: int = 3,
    drafts: str = "iid",
    *,
    reduce: bool | None = None,
    symmetry: bool = True,
    verify: bool = True,
    max_seconds: float = MAX_DD_SECONDS,
    progress: bool | None = None,
) -> KDraftReport:
    r"""Exact double-description check of the K-draft condition (docs/theory.md §2.1, §4).

    Builds the Farkas cone ``C`` of the "α* = 1" transport system, computes all its
    extreme rays and its lineality space with cddlib in exact rational arithmetic,
    substitutes the draft law into :math:`\sum u\,D + \sum v\,p` with sympy symbols and
    the simplex constraints, and classifies every ray exactly.

    Parameters
    ----------
    n : int
        Vocabulary size (>= 2).
    k : int
        Number of drafts (>= 2; ``swor`` needs ``k <= n``).
    drafts : {"iid", "swor", "independent"}
        Draft law: i.i.d. ``q`` (Khisti et al.'s Remark 2), successive sampling without
        replacement, or independent non-identical ``q1…qk``.
    reduce : bool, optional
        Use the symmetry-reduced set cone (one ``u`` per draft set).  ``None``: the full
        tuple cone when it has at most :data:`AUTO_FULL_CELLS` cells (``n**k``), else
        the set cone.  Both give the same inequalities (tested).
    symmetry : bool
        Verify the symbolic identity only for one ray per token orbit and transport it
        to the others (the laws are equivariant under token permutations); ``False``
        verifies every ray.
    verify : bool
        Re-check that every ray is extreme (rank of its tight constraints), for one ray
        per orbit when ``symmetry`` is set.
    max_seconds : float
        Largest estimated CPU time of the double description (default
        :data:`~optaccept.polyhedra.MAX_DD_SECONDS` = 10 s; the estimate and its measured
        accuracy: :func:`~optaccept.polyhedra.cone_size`).
    progress : bool, optional
        ``tqdm`` bars on stderr: the double description (unit: cone; cddlib reports nothing
        until it ends, so the bar gives its estimated time) and the reading of the rays
        (unit: orbit).  ``None``: where someone watches (a terminal or Jupyter).

    Size limits.  Before anything is built, the instance is refused with one
    :class:`~optaccept.MethodError` line naming the limit and the largest accepted n and k
    when the estimated double description exceeds ``max_seconds``, the symbolic reading
    exceeds :data:`MAX_SYMBOLIC_TERMS` (:func:`symbolic_terms`), or k > :data:`MAX_K`.
    Accepted with the defaults (``reduce=None``):
    ===========  ========  =======  =======  =======  =======  ========  =========
    drafts        n = 2     n = 3    n = 4    n = 5    n = 6    n = 7     n = 8–11
    ===========  ========  =======  =======  =======  =======  ========  =========
    iid          k ≤ 1000  k ≤ 275  k ≤ 40   k ≤ 15   k ≤ 8    k ≤ 3     k = 2
    swor         k ≤ n     k ≤ n    k ≤ n    k ≤ n    k ≤ n    k ≤ 3     k = 2
    independent  k ≤ 16    k ≤ 9    k ≤ 6    k ≤ 5    k ≤ 4    k ≤ 3     k = 2
    ===========  ========  =======  =======  =======  =======  ========  =========

    n ≥ 12 is refused (its 2ⁿ − 2 subset rays alone), and so is ``(n, k) = (30, 3)``, at once.

    Returns
    -------
    KDraftReport
        With ``rays``, ``lineality_dim``, ``classification``, ``inequalities``, ``holds``.

    Raises
    ------
    InputError
        Bad ``n``, ``k`` or ``drafts``.
    MethodError
        The instance exceeds a size limit (above), before any work.
    MissingDependencyError
        pycddlib (with GMP) or sympy is not installed.

    Examples
    --------
    >>> from optaccept.polyhedra import check_k_draft_condition
    >>> rep = check_k_draft_condition(3, 3)  # pycddlib on exact rationals
    >>> rep.holds, len(rep.rays), rep.inequalities[0]
    (True, 33, p0 - q0**3)
    """
    n, k = _check_nk(n, k)
    if not isinstance(drafts, str) or drafts.lower() not in DRAFT_LAWS:
        check_choice("drafts", drafts, DRAFT_LAWS)
    drafts = drafts.lower()
    if drafts == "swor" and k > n:
        raise InputError(f"k: drafting without replacement needs k <= n, got k={k} > n={n}")
    auto = reduce is None
    if reduce is None:
        reduce = n**k > AUTO_FULL_CELLS
    elif not isinstance(reduce, bool):
        raise InputError(f"reduce: must be True, False or None, got {reduce!r}")
    if k > MAX_K:
        raise refuse(
            f"k = {k}", "the symbolic reading's coefficients grow with k", f"k <= {MAX_K}", f"use k <= {MAX_K}"
        )
    size = check_cone_size(n, k, reduced=reduce, max_seconds=max_seconds, auto=auto)
    terms = symbolic_terms(drafts, n, k)
    if terms > MAX_SYMBOLIC_TERMS:
        k_ok = next((j for j in range(k - 1, 1, -1) if symbolic_terms(drafts, n, j) <= MAX_SYMBOLIC_TERMS), None)
        raise refuse(
            f"n = {n}, k = {k}",
            f"reading the rays of {drafts} drafts expands about {count(terms)} polynomial terms",
            f"{count(MAX_SYMBOLIC_TERMS)} terms",
            f"use k <= {k_ok} at n = {n}" if k_ok else "use a smaller n or k",
        )
    from tqdm.auto import tqdm

    show = show_progress(progress)
    law = symbolic_law(drafts, n, k)
    cone = farkas_cone(n, k, reduced=reduce)
    bar = tqdm(
        total=1,
        unit="cone",
        desc=f"double description, n = {n}, k = {k}",
        disable=not show,
        leave=False,
        bar_format="{desc}: {n_fmt}/{total_fmt} {unit} [{elapsed}]{postfix}",
    )
    bar.set_postfix_str(f"cddlib, estimated {size.seconds:.2g} s, no report until it ends")
    try:
        cr: ConeRays = extreme_rays(cone, max_seconds=max_seconds)
        bar.update(1)
    finally:
        bar.close()
    t0 = time.perf_counter()
    orbits = token_orbits(cr) if symmetry else [[j] for j in range(len(cr.rays))]
    if verify:
        verify_rays(cr, extremality=True, indices=[o[0] for o in orbits])
    t_verify = time.perf_counter() - t0

    t0 = time.perf_counter()
    readings: list[RayReading | None] = [None] * len(cr.rays)
    for orbit in tqdm(orbits, desc="reading the rays", unit="orbit", disable=not show, leave=False):
        rep_j = orbit[0]
        rep = read_ray(law, cone.cells, cr.rays[rep_j])
        readings[rep_j] = rep
        for j in orbit[1:]:
            moved = _transport(cone, rep, cr.rays[j])
            readings[j] = moved if moved is not None else read_ray(law, cone.cells, cr.rays[j])
    lin_ok = all(lineality_is_zero(law, cone.cells, v) for v in cr.lineality)
    full: list[RayReading] = [r for r in readings if r is not None]
    # display forms (built lazily): the simplified inequality each ray reads
    classification = [
        RayReading(r.kind, r.subset, r.scale, r.cells, r.checked, _display(law, cone, cr.rays[j], r))
        for j, r in enumerate(full)
    ]
    t_sym = time.perf_counter() - t0

    subsets = sorted({r.subset for r in full if r.kind == "subset" and r.subset is not None}, key=lambda S: (len(S), S))
    n_subset_rays = sum(1 for r in full if r.kind == "subset")
    conjectured = []
    for r in range(1, n):
        for S in itertools.combinations(range(n), r):
            if law.subset_prob(S) != law.zero:
                conjectured.append(S)
    holds = (
        all(r.kind != "other" for r in full)
        and lin_ok
        and n_subset_rays == len(subsets)
        and subsets == sorted(conjectured, key=lambda S: (len(S), S))
    )
    inequalities = tuple(law.p_display(S) - law.subset_display(S) for S in subsets)
    return KDraftReport(
        n=n,
        k=k,
        drafts=law.name,
        reduced=reduce,
        cone=cone,
        rays=cr.rays,
        lineality=cr.lineality,
        lineality_dim=len(cr.lineality),
        classification=tuple(classification),
        inequalities=inequalities,
        subsets=tuple(subsets),
        conjectured=tuple(sorted(conjectured, key=lambda S: (len(S), S))),
        holds=holds,
        orbits=orbits,
        law=law,
        seconds={"double_description": cr.seconds, "verify": t_verify, "symbolic": t_sym},
    )
