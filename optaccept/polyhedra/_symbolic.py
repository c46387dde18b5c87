r"""Symbolic draft laws and the exact reading of a Farkas ray.

A point ``(u, v)`` of the cone ``C`` (docs/theory.md §4) gives the inequality

.. math::
    E(p, D) = \sum_{\text{cells}} u_{\text{cell}}\, D(\text{cell}) + \sum_y v_y\, p(y) \;\ge\; 0,

where a cell is an ordered tuple (weight ``D(x̄)``) or a draft set ``A`` (weight
``D(set = A)``).  This module substitutes a draft law with sympy symbols
``p0…p{n-1}``, ``q0…q{n-1}`` (``q{i}_{y}`` for draft ``i`` of independent drafts),
applies the simplex constraints (``p_{n-1} = 1 - Σ_{y<n-1} p_y``, likewise for every
``q``) and decides *exactly*, in sympy's polynomial ring (or rational-function field,
for drafting without replacement) over ℚ, whether ``E`` equals ``c·(p(S) - D(set ⊆ S))``
with ``c > 0`` — a *subset* inequality (Khisti et al.'s Theorem 2 for k = 2, their
Remark 2 conjecture for k > 2: ``p(S) >= q(S)^k``) — or is evidently non-negative
(a non-negative combination of probabilities: *trivial*).

Laws (docs/theory.md §1; Khisti et al. call the draft ``p`` and the target ``q``):
* ``iid``: :math:`D(\bar x) = \prod_i q(x_i)`, :math:`D(\mathrm{set} \subseteq S) = q(S)^k`.
* ``swor`` (successive sampling without replacement):
  :math:`D(\bar x) = \prod_i q(x_i) / (1 - \sum_{j<i} q(x_j))` on distinct tuples.
* ``independent``: :math:`D(\bar x) = \prod_i q_i(x_i)`,
  :math:`D(\mathrm{set} \subseteq S) = \prod_i q_i(S)`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from .._errors import InputError, MissingDependencyError
from .._lib.validation import check_choice
from ._result import ExactResult

__all__ = ["DRAFT_LAWS", "SymbolicLaw", "symbolic_law", "RayReading", "read_ray"]

DRAFT_LAWS = ("iid", "swor", "independent")


def _sympy() -> Any:
    try:
        import sympy
    except ImportError as exc:
        raise MissingDependencyError(f"the symbolic reading needs sympy: `pip install sympy` ({exc})") from None
    return sympy


class _Formal:
    """Exact linear combination of ordered-tuple probabilities P(x̄) (distinct tuples,
    successive sampling), of ``p_0…p_{n-2}`` and of the constant 1.

    Canonical form: ``p_{n-1} = 1 - Σ p_y``, and ``Σ_x̄ P(x̄) = 1`` (the law sums to one) is
    used to make the coefficient of the first tuple zero.  Equal canonical forms prove
    the identity of the rational functions (a sufficient test; it avoids the enormous
    common denominators that rational-function arithmetic builds for ``k >= 4``).
    """

    __slots__ = ("terms", "law")

    def __init__(self, law: SymbolicLaw, terms: dict[Any, Fraction] | None = None) -> None:
        self.law = law
        self.terms = terms or {}

    def _combine(self, other: Any, sign: int) -> _Formal:
        out = dict(self.terms)
        if isinstance(other, _Formal):
            items = other.terms.items()
        else:
            items = [("1", Fraction(other))]
        for key, val in items:
            out[key] = out.get(key, Fraction(0)) + sign * val
        return _Formal(self.law, out)

    def __add__(self, other: Any) -> _Formal:
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> _Formal:
        return self._combine(other, -1)

    def __rsub__(self, other: Any) -> _Formal:
        return (-1) * self + other

    def __mul__(self, c: Any) -> _Formal:
        if isinstance(c, _Formal):
            raise TypeError("only scalar multiples of formal sums are formed")
        c = Fraction(c)
        return _Formal(self.law, {key: c * v for key, v in self.terms.items()})

    __rmul__ = __mul__

    def canonical(self) -> dict[Any, Fraction]:
        n = self.law.n
        t = dict(self.terms)
        last = ("p", n - 1)
        if last in t:
            c = t.pop(last)
            t["1"] = t.get("1", Fraction(0)) + c
            for y in range(n - 1):
                t[("p", y)] = t.get(("p", y), Fraction(0)) - c
        ref = tuple(range(self.law.k))
        a = t.get(ref, Fraction(0))
        if a:
            for x in itertools.permutations(range(n), self.law.k):
                t[x] = t.get(x, Fraction(0)) - a
            t["1"] = t.get("1", Fraction(0)) + a
        return {key: v for key, v in t.items() if v != 0}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Formal):
            other = _Formal(self.law) + other  # type: ignore[operator]
        return self.canonical() == other.canonical()

    __hash__ = None  # type: ignore[assignment]


class SymbolicLaw:
    """A draft law with symbolic parameters, evaluated exactly on the simplex.

    Attributes
    ----------
    name : str
        ``"iid"``, ``"swor"`` or ``"independent"``.
    p : tuple of sympy.Symbol
        Target symbols ``p0…p{n-1}``.
    q : tuple of sympy.Symbol, or tuple of tuples (independent: one tuple per draft)
        Draft symbols.
    n : int
        Vocabulary size.
    k : int
        Number of drafts.

    Raises
    ------
    InputError
        If ``name`` is not a symbolic draft law, or swor has k > n.
    """

    def __init__(self, name: str, n: int, k: int) -> None:
        sp = _sympy()
        from sympy.polys.fields import field
        from sympy.polys.rings import ring

        check_choice("drafts", name, DRAFT_LAWS)
        if name == "swor" and k > n:
            raise InputError(f"k: drafting without replacement needs k <= n, got k={k} > n={n}")
        self.name, self.n, self.k = name, n, k
        self.p = tuple(sp.symbols(f"p0:{n}"))
        if name == "independent":
            self.q: tuple[Any, ...] = tuple(tuple(sp.symbols(f"q{i}_0:{n}")) for i in range(1, k + 1))
            qgroups = list(self.q)
        else:
            self.q = tuple(sp.symbols(f"q0:{n}"))
            qgroups = [self.q]
        free = list(self.p[:-1]) + [s for g in qgroups for s in g[:-1]]
        # iid / independent: polynomials over QQ with the simplex substituted.
        # swor: rational functions; the reading uses the formal tuple basis (_Formal),
        # the field only serves canonical() on user expressions.
        if name == "swor":
            self._field, *gens = field(free, sp.QQ)
            self._dom = self._field
        else:
            self._dom, *gens = ring(free, sp.QQ)
        one = self._dom.one
        it = iter(gens)

        def simplex(m: int) -> list[Any]:
            first = [next(it) for _ in range(m - 1)]
            return first + [one - sum(first, self._dom.zero)]

        self._p = simplex(n)
        self._q = [simplex(n) for _ in qgroups]
        self._set_cache: dict[tuple[int, ...], Any] = {}
        self._closed_cache: dict[tuple[int, ...], Any] = {}
        if name == "swor":
            self._p = [_Formal(self, {("p", y): Fraction(1)}) for y in range(n)]

    @property
    def formal(self) -> bool:
        """True when values live in the formal tuple basis (drafting without replacement)."""
        return self.name == "swor"

    def scalar(self, x: Fraction) -> Any:
        """An exact constant of the domain.

        Parameters
        ----------
        x : Fraction
            The constant.

        Returns
        -------
        Fraction or domain element
            ``x`` itself in the formal basis (swor), else ``x`` as an element of the ring.
        """
        if self.formal:
            return Fraction(x)
        return self._dom(_sympy().Rational(x.numerator, x.denominator))

    # -- exact values on the simplex (domain elements) ---------------------------------
    @property
    def zero(self) -> Any:
        return _Formal(self) if self.formal else self._dom.zero

    def p_of(self, S: Iterable[int]) -> Any:
        """p(S) with the simplex constraint applied.

        Parameters
        ----------
        S : iterable of int
            Token ids.

        Returns
        -------
        object
            An element of the law's exact domain: a polynomial over the rationals with the
            simplex substituted (iid, independent), or a formal combination of ordered
            tuples (swor).
        """
        return sum((self._p[y] for y in S), self.zero)

    def _qsum(self, i: int, S: Iterable[int]) -> Any:
        return sum((self._q[i][y] for y in S), self._dom.zero)

    def tuple_prob(self, x: Sequence[int]) -> Any:
        """D(x̄) for an ordered draft tuple.

        Parameters
        ----------
        x : sequence of int
            The ordered draft tuple.

        Returns
        -------
        object
            An element of the law's exact domain: a polynomial over the rationals with the
            simplex substituted (iid, independent), or a formal combination of ordered
            tuples (swor).
        """
        if self.name == "iid":
            out = self._dom.one
            for y in x:
                out *= self._q[0][y]
            return out
        if self.name == "independent":
            out = self._dom.one
            for i, y in enumerate(x):
                out *= self._q[i][y]
            return out
        if len(set(x)) < len(x):
            return self.zero
        return _Formal(self, {tuple(x): Fraction(1)})

    def tuple_prob_field(self, x: Sequence[int]) -> Any:
        """Successive-sampling D(x̄) as a rational function (swor only).

        Parameters
        ----------
        x : sequence of int
            The ordered draft tuple.

        Returns
        -------
        object
            An element of the rational function field (zero for a tuple with a repeat).
        """
        if len(set(x)) < len(x):
            return self._field.zero
        out, used = self._field.one, self._field.zero
        for y in x:
            out *= self._q[0][y] / (self._field.one - used)
            used += self._q[0][y]
        return out

    def set_prob(self, A: Iterable[int]) -> Any:
        """D(set(x̄) = A): inclusion–exclusion over ``D(set ⊆ B)`` (iid, independent), or
        the sum of D(x̄) over the orderings of A (swor).

        Parameters
        ----------
        A : iterable of int
            The draft set, as token ids.

        Returns
        -------
        object
            An element of the law's exact domain: a polynomial over the rationals with the
            simplex substituted (iid, independent), or a formal combination of ordered
            tuples (swor).
        """
        A = tuple(sorted(set(A)))
        if self.name == "swor":
            if len(A) != self.k:
                return self.zero
            return _Formal(self, {x: Fraction(1) for x in itertools.permutations(A)})
        if A in self._set_cache:
            return self._set_cache[A]
        out = self._dom.zero
        for r in range(len(A) + 1):
            sign = -1 if (len(A) - r) % 2 else 1
            for B in itertools.combinations(A, r):
                out += sign * self._subset_prob_closed(B)
        self._set_cache[A] = out
        return out

    def _subset_prob_closed(self, S: Sequence[int]) -> Any:
        key = tuple(S)
        if key not in self._closed_cache:
            self._closed_cache[key] = self._subset_prob_product(key)
        return self._closed_cache[key]

    def _subset_prob_product(self, S: Sequence[int]) -> Any:
        if self.name == "iid":
            return self._qsum(0, S) ** self.k
        if self.name == "independent":
            out = self._dom.one
            for i in range(self.k):
                out *= self._qsum(i, S)
            return out
        raise AssertionError("swor has no product form")

    def subset_prob(self, S: Iterable[int]) -> Any:
        """D(set(x̄) ⊆ S), from the law's own formula: ``q(S)^k``, ``∏ q_i(S)``, or for
        swor the sum of D(x̄) over ordered distinct tuples of S (successive sampling).

        Parameters
        ----------
        S : iterable of int
            Token ids.

        Returns
        -------
        object
            An element of the law's exact domain: a polynomial over the rationals with the
            simplex substituted (iid, independent), or a formal combination of ordered
            tuples (swor).
        """
        S = tuple(sorted(set(S)))
        if self.name != "swor":
            return self._subset_prob_closed(S)
        return _Formal(self, {x: Fraction(1) for x in itertools.permutations(S, self.k)})

    # -- display forms (sympy expressions in all n symbols) ----------------------------
    def p_display(self, S: Sequence[int]) -> Any:
        """p(S) as a sympy expression.

        Parameters
        ----------
        S : sequence of int
            Token ids.

        Returns
        -------
        sympy.Expr
            The sum of the target symbols of S.
        """
        return _sympy().Add(*[self.p[y] for y in S])

    def subset_display(self, S: Sequence[int]) -> Any:
        """D(set ⊆ S) as a compact sympy expression (no simplex substitution).

        Parameters
        ----------
        S : sequence of int
            Token ids.

        Returns
        -------
        sympy.Expr
            ``q(S)**k`` (iid), ``∏ qᵢ(S)`` (independent) or the successive-sampling sum (swor).
        """
        sp = _sympy()
        if self.name == "iid":
            return sp.Add(*[self.q[y] for y in S]) ** self.k
        if self.name == "independent":
            return sp.Mul(*[sp.Add(*[g[y] for y in S]) for g in self.q])
        if len(S) < self.k:
            return sp.Integer(0)
        return self._swor_display_subset(tuple(S), (), self.k)

    def _swor_display_subset(self, S: tuple[int, ...], drawn: tuple[int, ...], left: int) -> Any:
        sp = _sympy()
        if left == 0:
            return sp.Integer(1)
        if self.k == 2 and left == 2 and not drawn:
            # docs/theory.md §2.2: Σ_{i∈S} q_i (q(S) - q_i) / (1 - q_i)
            qS = sp.Add(*[self.q[y] for y in S])
            return sp.Add(*[self.q[i] * (qS - self.q[i]) / (1 - self.q[i]) for i in S])
        denom = 1 - sp.Add(*[self.q[y] for y in drawn])
        return sp.Add(
            *[self.q[a] / denom * self._swor_display_subset(S, (*drawn, a), left - 1) for a in S if a not in drawn]
        )

    def cell_display(self, cell: tuple[int, ...] | frozenset[int]) -> Any:
        """D(x̄) (tuple cell) or D(set = A) (set cell) as a sympy expression.

        Parameters
        ----------
        cell : tuple of int or frozenset of int
            An ordered draft tuple or a draft set.

        Returns
        -------
        sympy.Expr
            Its probability (factored, for a set cell of iid or independent drafts).
        """
        sp = _sympy()
        if isinstance(cell, frozenset):
            A = tuple(sorted(cell))
            if self.name == "swor":
                if len(A) != self.k:
                    return sp.Integer(0)
                return sp.Add(*[self._tuple_display(x) for x in itertools.permutations(A)])
            terms = []
            for r in range(len(A) + 1):
                for B in itertools.combinations(A, r):
                    terms.append((-1) ** (len(A) - r) * self.subset_display(B))
            return sp.factor(sp.expand(sp.Add(*terms)))
        return self._tuple_display(cell)

    def _tuple_display(self, x: Sequence[int]) -> Any:
        sp = _sympy()
        if self.name == "iid":
            return sp.Mul(*[self.q[y] for y in x])
        if self.name == "independent":
            return sp.Mul(*[self.q[i][y] for i, y in enumerate(x)])
        if len(set(x)) < len(x):
            return sp.Integer(0)
        terms, drawn = [], []
        for y in x:
            terms.append(self.q[y] / (1 - sp.Add(*[self.q[z] for z in drawn])))
            drawn.append(y)
        return sp.Mul(*terms)

    def substitute_simplex(self, expr: Any) -> Any:
        """Substitute ``p_{n-1} = 1 - Σ p``, ``q_{n-1} = 1 - Σ q`` (each draft) in ``expr``.

        Parameters
        ----------
        expr : sympy.Expr
            An expression in the law's symbols.

        Returns
        -------
        sympy.Expr
            ``expr`` on the simplex, in the first n − 1 symbols of each law.
        """
        sp = _sympy()
        groups = [self.p] + (list(self.q) if self.name == "independent" else [self.q])
        subs = {g[-1]: 1 - sp.Add(*g[:-1]) for g in groups}
        return expr.subs(subs)


def symbolic_law(name: str, n: int, k: int) -> SymbolicLaw:
    """The symbolic draft law ``name`` (one of :data:`DRAFT_LAWS`) for ``n`` tokens, ``k`` drafts.

    Parameters
    ----------
    name : str
        One of :data:`DRAFT_LAWS` (any case).
    n : int
        Vocabulary size.
    k : int
        Number of drafts.

    Returns
    -------
    SymbolicLaw
        The law, with symbols ``p0…`` and ``q0…`` (``q1_0…`` for independent drafts).

    Raises
    ------
    InputError
        If ``name`` is not a symbolic draft law, or swor has k > n.
    """
    if not isinstance(name, str):
        check_choice("drafts", name, DRAFT_LAWS)
    return SymbolicLaw(name.lower(), n, k)


@dataclass(frozen=True)
class RayReading(ExactResult):
    """The exact reading of one extreme ray.

    It speaks the results' vocabulary: ``value`` is ``scale`` (0 for a ray read as
    ``"other"``), ``std_err`` is None (exact), ``method`` is ``"symbolic"`` when the identity
    was verified for this very ray and ``"transported"`` when it was carried over from its
    orbit representative, and ``ok`` says the ray reads as an inequality of the condition
    (``kind`` is ``"trivial"`` or ``"subset"``).  It has ``to_pandas()`` (one row) and
    ``to_latex()``.

    Attributes
    ----------
    kind : str
        ``"trivial"`` (evidently ≥ 0: a non-negative combination of probabilities),
        ``"subset"`` (equals ``scale·(p(S) - D(set ⊆ S))`` on the simplex), or ``"other"``.
    subset : tuple of int or None
        The set S of a subset ray (also of a trivial ray ``p(S) ≥ 0`` where
        ``D(set ⊆ S) ≡ 0``).
    scale : Fraction
        The positive constant ``c``.
    cells : tuple of int
        For a trivial ray, the cells with positive weight after removing the lineality.
    checked : bool
        True when the identity was verified in the exact domain for this very ray;
        False when it was transported from its orbit representative by a token
        permutation (the laws are permutation-equivariant).
    """

    kind: str
    subset: tuple[int, ...] | None
    scale: Fraction
    cells: tuple[int, ...]
    checked: bool
    display: Any = field(default=None, repr=False, compare=False)

    _caption = "Exact reading of one extreme ray of the Farkas cone."
    _value_of = "scale"

    @property
    def method(self) -> str:
        """``"symbolic"`` (verified for this ray) or ``"transported"`` (from its orbit)."""
        return "symbolic" if self.checked else "transported"

    @property
    def ok(self) -> bool:
        """Whether the ray reads as a trivial or a subset inequality."""
        return self.kind in ("trivial", "subset")

    def _records(self) -> list[dict[str, Any]]:
        subset = None if self.subset is None else " ".join(map(str, self.subset))
        return [
            {**self._vocabulary(), "kind": self.kind, "subset": subset, "scale": self.scale, "checked": self.checked}
        ]

    @cached_property
    def expression(self) -> Any:
        """The sympy expression ``e`` this ray reads as ``e >= 0`` (simplified form;
        built on first access)."""
        return None if self.display is None else self.display()

    def __str__(self) -> str:
        if self.kind == "subset":
            return f"subset {set(self.subset or ())}: {self.expression} >= 0"
        return f"{self.kind}: {self.expression} >= 0"


def _shift(m: int, vec: Sequence[Fraction], a: Fraction) -> tuple[list[Fraction], list[Fraction]]:
    """Remove ``a`` times the lineality direction (-1…-1 | 1…1): u + a, v - a."""
    return [x + a for x in vec[:m]], [x - a for x in vec[m:]]


def candidate(m: int, n: int, vec: Sequence[Fraction]) -> tuple[str, tuple[int, ...] | None, Fraction, list[Fraction]]:
    """Read the ray's combinatorial candidate: ``("trivial", None, c, u')`` when ``v`` is
    constant and ``u' ≥ 0``; ``("subset", S, c, u')`` when ``v`` takes two values (S = where
    it is larger, c = the gap); else ``("other", …)``."""
    vals = sorted(set(vec[m:]))
    if len(vals) == 1:
        u, _ = _shift(m, vec, vals[0])
        if all(x >= 0 for x in u) and any(u):
            return "trivial", None, max(u), u
        return "other", None, Fraction(0), u
    if len(vals) == 2:
        a, b = vals
        u, _ = _shift(m, vec, a)
        S = tuple(y for y in range(n) if vec[m + y] == b)
        return "subset", S, b - a, u
    return "other", None, Fraction(0), list(vec[:m])


def read_ray(law: SymbolicLaw, cells: Sequence[Any], vec: Sequence[Fraction]) -> RayReading:
    """Classify one ray exactly (see the module docstring)."""
    m, n = len(cells), law.n
    kind, S, c, u = candidate(m, n, vec)

    def weight(i: int) -> Any:
        cell = cells[i]
        return law.set_prob(cell) if isinstance(cell, frozenset) else law.tuple_prob(cell)

    E = law.zero
    for i, x in enumerate(vec[:m]):
        if x:
            E += _to_dom(law, x) * weight(i)
    for y in range(n):
        if vec[m + y]:
            E += _to_dom(law, vec[m + y]) * law._p[y]
    if kind == "trivial":
        target = law.zero
        for i, x in enumerate(u):
            if x:
                target += _to_dom(law, x) * weight(i)
        if E == target:
            return RayReading("trivial", None, c, tuple(i for i, x in enumerate(u) if x > 0), True)
    elif kind == "subset" and S is not None:
        DS = law.subset_prob(S)
        if E == _to_dom(law, c) * (law.p_of(S) - DS):
            if DS == law.zero:
                return RayReading("trivial", S, c, (), True)
            return RayReading("subset", S, c, (), True)
    return RayReading("other", None, Fraction(0), (), True)


def lineality_is_zero(law: SymbolicLaw, cells: Sequence[Any], vec: Sequence[Fraction]) -> bool:
    """True when a lineality vector reads ``0`` on the simplex (it gives no equality)."""
    m = len(cells)
    E = law.zero
    for i, x in enumerate(vec[:m]):
        if x:
            cell = cells[i]
            w = law.set_prob(cell) if isinstance(cell, frozenset) else law.tuple_prob(cell)
            E += _to_dom(law, x) * w
    for y in range(law.n):
        if vec[m + y]:
            E += _to_dom(law, vec[m + y]) * law._p[y]
    return E == law.zero


def _to_dom(law: SymbolicLaw, x: Fraction) -> Any:
    return law.scalar(x)
