"""The common shape of a verifier: draft law, exact acceptance, vectorised sampler.

A *verifier* sees the ordered draft tuple x̄ (drawn from its own draft law, built
from the draft distribution q and the number of drafts k) and outputs a token Y
with law exactly p (lossless).  Two acceptance notions exist (docs/theory.md §5):

``"output"``  P(Y ∈ set(x̄)) — the optimal-transport notion, bounded by α*;
``"rule"``    P(the rule itself accepts a draft) — what an implementation that does
              not check whether a residual sample happens to equal a draft sees.

Letters: p target, q draft, k drafts (Khisti et al. and Yin et al. swap p and q).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._errors import MethodError
from .._lib.validation import as_distribution, as_distribution_pair, check_choice, check_k, check_rng, check_size
from ..drafts import DraftLaw

__all__ = ["Verifier", "Draws", "NOTIONS"]

#: The two acceptance notions.
NOTIONS = ("output", "rule")


@dataclass(frozen=True)
class Draws:
    """One simulated batch: drafts (size, k), output tokens y (size,), and the two
    acceptance indicators.

    Attributes
    ----------
    drafts : ndarray of int, shape (size, k)
        The ordered draft tuples.
    y : ndarray of int, shape (size,)
        The verifier's output tokens.
    rule_accepted : ndarray of bool, shape (size,)
        Whether the rule accepted a draft (the "rule" notion); ``in_drafts`` gives the
        "output" notion.
    """

    drafts: np.ndarray
    y: np.ndarray
    rule_accepted: np.ndarray

    @property
    def in_drafts(self) -> np.ndarray:
        """Y ∈ set(x̄), row by row (the "output" notion)."""
        return (self.drafts == self.y[:, None]).any(axis=1)


def check_notion(notion: Any) -> str:
    return check_choice("notion", notion, NOTIONS)


def normalised(v: np.ndarray) -> np.ndarray:
    """v / sum(v), clipped at 0; a zero vector stays zero (it is then never sampled)."""
    v = np.clip(v, 0.0, None)
    s = v.sum()
    return v / s if s > 0 else v


def sample_from(rng: np.random.Generator, dist: np.ndarray, size: int) -> np.ndarray:
    """``size`` i.i.d. tokens from one distribution (renormalised against round-off)."""
    if size == 0:
        return np.empty(0, dtype=np.int64)
    d = normalised(np.asarray(dist, dtype=np.float64))
    if d.sum() <= 0:
        raise RuntimeError("internal: sampling from an empty residual (a zero-probability branch was reached)")
    return rng.choice(d.size, size=size, p=d).astype(np.int64)


class Verifier:
    """Base class of the verifiers.  Subclasses set ``name``, ``min_k``/``max_k`` and
    implement ``_law``, ``_acceptance`` and ``_simulate``.

    Public methods
    --------------
    drafts(q, k)                           its draft law (an ``optaccept.drafts`` object)
    acceptance(p, q, k, notion="output")   its exact acceptance
    sample(p, q, k, rng, size)             (y, accepted) with accepted = Y ∈ set(x̄)
    simulate(p, q, k, rng, size)           :class:`Draws` (drafts, y, both indicators)

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.RRS()
    >>> isinstance(v, verifiers.Verifier), v.name, v.supports(3)
    (True, 'rrs', True)
    >>> v.drafts(q, 2)
    IID(n=5, k=2)
    >>> round(v.acceptance(p, q, 2), 4)
    0.824
    >>> y, accepted = v.sample(p, q, 2, np.random.default_rng(0), 5)
    >>> y.shape, accepted.dtype
    ((5,), dtype('bool'))
    """

    name: ClassVar[str] = "verifier"
    #: One-line description used in tables.
    title: ClassVar[str] = ""
    min_k: ClassVar[int] = 1
    max_k: ClassVar[int | None] = None

    # -- input cleaning ------------------------------------------------------
    def supports(self, k: int) -> bool:
        """True when this verifier is defined for k drafts.

        Parameters
        ----------
        k : int
            Number of drafts.

        Returns
        -------
        bool
            Whether ``min_k`` ≤ k ≤ ``max_k`` (no upper limit when ``max_k`` is None).
        """
        return k >= self.min_k and (self.max_k is None or k <= self.max_k)

    def _check_k(self, k: Any) -> int:
        k = check_k(k)
        if not self.supports(k):
            hi = "" if self.max_k is None else f" and at most {self.max_k}"
            raise MethodError(f"k: the {self.name} verifier needs k at least {self.min_k}{hi}, got {k}")
        return k

    def _inputs(self, p: Any, q: Any, k: Any) -> tuple[np.ndarray, np.ndarray, int]:
        pf, qf = as_distribution_pair(p, q)
        return pf, qf, self._check_k(k)

    # -- public API ----------------------------------------------------------
    def drafts(self, q: Any, k: Any) -> DraftLaw:
        """The draft law this verifier runs on, for draft distribution q and k drafts.

        Parameters
        ----------
        q : array_like, shape (n,)
            Draft distribution.
        k : int
            Number of drafts.

        Returns
        -------
        DraftLaw
            The law of the ordered draft tuple (an :mod:`optaccept.drafts` object).

        Raises
        ------
        InputError
            If q is not a distribution or k is not a positive integer.
        MethodError
            If the verifier is not defined for k drafts.
        """
        qf = as_distribution(q, "q")
        return self._law(qf, self._check_k(k))

    def acceptance(self, p: Any, q: Any, k: Any, *, notion: str = "output") -> float:
        """Exact acceptance of this verifier on its own draft law.

        Parameters
        ----------
        p, q : array_like, shape (n,)
            Target and draft distributions.
        k : int
            Number of drafts.
        notion : {"output", "rule"}
            ``"output"``: P(Y ∈ set(x̄)); ``"rule"``: P(the rule accepts a draft).

        Returns
        -------
        float
            The acceptance probability under the chosen notion.

        Raises
        ------
        InputError
            If p or q is not a distribution, they differ in length, or ``notion`` is unknown.
        MethodError
            If the verifier is not defined for k drafts.
        """
        notion = check_notion(notion)
        pf, qf, k = self._inputs(p, q, k)
        return float(self._acceptance(pf, qf, k, notion))

    def sample(self, p: Any, q: Any, k: Any, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Run the verifier ``size`` times on fresh drafts.

        Parameters
        ----------
        p, q : array_like, shape (n,)
            Target and draft distributions.
        k : int
            Number of drafts.
        rng : numpy.random.Generator or int
            Source of randomness (an integer is a seed).
        size : int
            Number of runs, ≥ 0.

        Returns
        -------
        y : ndarray of int, shape (size,)
            Output tokens (law p).
        accepted : ndarray of bool, shape (size,)
            Y ∈ set(x̄) (the "output" notion, whose mean is ``acceptance(p, q, k)``).
        """
        d = self.simulate(p, q, k, rng, size)
        return d.y, d.in_drafts

    def simulate(self, p: Any, q: Any, k: Any, rng: np.random.Generator, size: int) -> Draws:
        """Like :meth:`sample`, returning the drafts and both acceptance indicators.

        Parameters
        ----------
        p, q : array_like, shape (n,)
            Target and draft distributions.
        k : int
            Number of drafts.
        rng : numpy.random.Generator or int
            Source of randomness (an integer is a seed).
        size : int
            Number of runs, ≥ 0.

        Returns
        -------
        Draws
            The drafts, the outputs and both acceptance indicators.

        Raises
        ------
        InputError
            If p or q is not a distribution, ``rng`` is neither a Generator nor a seed, or
            ``size`` is not a non-negative integer.
        MethodError
            If the verifier is not defined for k drafts.
        """
        pf, qf, k = self._inputs(p, q, k)
        rng, size = check_rng(rng), check_size(size)
        law = self._law(qf, k)
        drafts = np.asarray(law.sample(rng, size), dtype=np.int64).reshape(size, k)
        y, rule = self._simulate(pf, qf, k, law, drafts, rng)
        return Draws(drafts, y, rule)

    # -- hooks ---------------------------------------------------------------
    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        raise NotImplementedError

    def _acceptance(self, p: np.ndarray, q: np.ndarray, k: int, notion: str) -> float:
        raise NotImplementedError

    def _simulate(
        self, p: np.ndarray, q: np.ndarray, k: int, law: DraftLaw, drafts: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
