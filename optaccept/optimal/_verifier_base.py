"""The optimal verifiers' base class and the helpers they share (docs/optimal_verifier.md)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.stable import residual
from .._lib.validation import check_rng, check_size
from ..drafts import DraftLaw

#: Largest number of draft sets the flow-plan verifier (non-IID laws) enumerates.
MAX_PLAN_SETS = 200_000


class OptimalVerifier:
    """Base class of the optimal verifiers (see :func:`optimal_verifier`).

    Attributes
    ----------
    value : float or Fraction
        α* of (★), from ``optimal_acceptance``.
    acceptance : float or Fraction
        The acceptance of this verifier, computed from its own rule (a lower bound on
        P(Y ∈ set(x̄)) that the certificate compares with the dual bound).
    subset : tuple of int
        The minimising S of (★) used by the construction.
    law : DraftLaw
    p : ndarray or tuple of Fractions
    exact : bool

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> from optaccept import optimal
    >>> ov = oa.optimal_verifier(p, oa.WithoutReplacement(q, k=2))
    >>> isinstance(ov, optimal.OptimalVerifier), round(ov.value, 4), ov.subset
    (True, 0.9626, (0, 2, 4))
    >>> ov.conditional((2, 4)).round(4)  # the law of the output given the drafts (2, 4)
    array([0.    , 0.118 , 0.7685, 0.0738, 0.0397])
    >>> tokens, out = ov.sample(np.random.default_rng(0), 4)
    >>> tokens.shape, out.shape
    ((4, 2), (4,))
    """

    kind = "base"

    law: DraftLaw
    exact: bool
    value: Any
    acceptance: Any
    subset: tuple[int, ...]

    # -- the rule --------------------------------------------------------------------
    def conditional(self, tokens: Any) -> Any:
        """π(· | x̄) for one ordered draft tuple: a length-n array (float64, or an object
        array of Fractions in exact mode), non-negative, summing to 1.

        Parameters
        ----------
        tokens : sequence of int
            One ordered draft tuple x̄ of k token ids.

        Returns
        -------
        ndarray, shape (n,)
            The law of the output Y given x̄ (float64, or Fractions in exact mode).

        Raises
        ------
        InputError
            If ``tokens`` is not k token ids in [0, n).
        """
        x = self._check_tuple(tokens)
        return self._conditional(x)

    def sample(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``size`` positions: drafts (size, k) from the law and outputs y (size,).

        Parameters
        ----------
        rng : numpy.random.Generator or int
            Source of randomness for the drafts and the outputs (an integer is a seed).
        size : int
            Number of positions drawn, ≥ 0.

        Returns
        -------
        drafts : ndarray of int, shape (size, k)
            The ordered draft tuples, drawn from the verifier's draft law.
        y : ndarray of int, shape (size,)
            The verifier's output for each row.

        Raises
        ------
        InputError
            If ``rng`` is neither a Generator nor a seed, or ``size`` is not a non-negative integer.
        """
        rng, size = check_rng(rng), check_size(size)
        d = np.asarray(self.law.sample(rng, size), dtype=np.int64).reshape(size, -1)
        return d, self.respond(d, rng)

    def respond(self, tokens: Any, rng: np.random.Generator) -> np.ndarray:
        """Outputs for given draft tuples (rows), one per row, randomness from ``rng``.

        Parameters
        ----------
        tokens : array_like of int, shape (rows, k)
            Ordered draft tuples, token ids in [0, n).
        rng : numpy.random.Generator or int
            Source of randomness (an integer is a seed).

        Returns
        -------
        ndarray of int, shape (rows,)
            The output token Y for each row.

        Raises
        ------
        InputError
            If ``tokens`` has not shape (rows, k), holds a token id outside [0, n), or
            ``rng`` is neither a Generator nor a seed.
        """
        rng = check_rng(rng)
        d = np.asarray(tokens, dtype=np.int64)
        if d.ndim != 2 or d.shape[1] != self.law.k:
            raise InputError(f"tokens: must have shape (rows, {self.law.k}), got {d.shape}")
        if d.size and (d.min() < 0 or d.max() >= self.law.n):
            raise InputError(f"tokens: token ids must lie in [0, {self.law.n})")
        return self._respond(d, rng)

    # -- certificate -----------------------------------------------------------------
    def certificate(self) -> dict[str, Any]:
        """The rule's own acceptance against the dual bound (★) at its subset.

        Returns
        -------
        dict
            ``acceptance``, ``dual_bound`` ((★) at ``subset``), ``gap`` (their difference),
            ``value``, ``subset_size``, ``layout_violation`` and ``ok`` (gap and violation
            zero: exactly in exact mode, within 1e-9 otherwise).
        """
        dual = _dual_bound(self.p, self.law, self.subset, self.exact)
        gap = dual - self.acceptance
        viol = self._layout_violation()
        return {
            "acceptance": self.acceptance,
            "dual_bound": dual,
            "gap": gap,
            "value": self.value,
            "subset_size": len(self.subset),
            "layout_violation": viol,
            "ok": (gap == 0 and viol == 0) if self.exact else (abs(float(gap)) <= 1e-9 and float(viol) <= 1e-9),
        }

    def _layout_violation(self) -> Any:
        return 0

    # -- internals -------------------------------------------------------------------
    def _check_tuple(self, drafts: Any) -> tuple[int, ...]:
        try:
            x = tuple(int(v) for v in np.asarray(drafts).reshape(-1).tolist())
        except (TypeError, ValueError):
            raise InputError("tokens: must be a sequence of token ids") from None
        if len(x) != self.law.k:
            raise InputError(f"tokens: expected a tuple of k = {self.law.k} token ids, got {len(x)}")
        if any(v < 0 or v >= self.law.n for v in x):
            raise InputError(f"tokens: token ids must lie in [0, {self.law.n})")
        return x

    def _zeros(self):
        if self.exact:
            return np.array([Fraction(0)] * self.law.n, dtype=object)
        return np.zeros(self.law.n)

    def _repr_html_(self) -> str:
        c = self.certificate()
        return (
            f"<b>OptimalVerifier</b> ({self.kind}, {self.law!r})<br>"
            f"α* = {_fmt(self.value)}, acceptance of the rule = {_fmt(self.acceptance)}, "
            f"dual bound = {_fmt(c['dual_bound'])}, certified: {c['ok']}"
        )

    def __repr__(self) -> str:
        return f"OptimalVerifier(kind={self.kind!r}, value={_fmt(self.value)}, law={self.law!r})"


def _fmt(v: Any) -> str:
    return str(v) if isinstance(v, Fraction) else f"{float(v):.12g}"


def _dual_bound(p, law: DraftLaw, subset, exact: bool):
    mask = np.zeros(law.n, dtype=bool)
    mask[list(subset)] = True
    if exact:
        return sum((p[i] for i in subset), Fraction(0)) + 1 - law.subset_prob(mask)
    return float(np.asarray(p)[mask].sum()) + 1.0 - float(law.subset_prob(mask))


# ---------------------------------------------------------------------------------------
# IID: the line device
# ---------------------------------------------------------------------------------------
def _ratio_desc(p, q, idx: list[int]) -> list[int]:
    """Token ids ``idx`` ordered by p/q descending (q = 0 first), ties by id, in exact
    arithmetic (the float layout sorts with :func:`optaccept.optimal._sorted.line_order`)."""
    return sorted(idx, key=lambda i: (0, Fraction(0), i) if q[i] == 0 else (1, -(p[i] / q[i]), i))


def _speculative_step(y: np.ndarray, accept, resid, rng: np.random.Generator) -> np.ndarray:
    """The second half of the canonical decomposition, for selected tokens y: keep y with
    probability accept[y], else draw from the residual law."""
    ok = rng.random(y.size) < np.asarray(accept, dtype=np.float64)[y]
    out = y.copy()
    rej = np.flatnonzero(~ok)
    if rej.size:
        res = np.asarray(resid, dtype=np.float64)
        out[rej] = rng.choice(res.size, size=rej.size, p=res / res.sum())
    return out


def _residual(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The residual law (p − s)₊ / Σ (p − s)₊ of speculative sampling against s
    (:func:`optaccept._lib.stable.residual`).

    In exact arithmetic its total equals the rejection mass Σ_y s_y (1 − min(1, p_y/s_y)) =
    Σ (s − p)₊.  In floats a realised s can exceed p on a token by a relative amount (its
    own rounding) while p − s rounds to 0 everywhere else; the rejection mass — of the order
    of the rounding — then still needs a law to go to, and the convention gives p itself, so
    that every conditional sums to 1 and the output law stays p to the rounding of s."""
    return residual(p, s)[0]


def _subset_ids(res) -> np.ndarray:
    """The ids of a result's certificate S without building the tuple of ints."""
    if res._subset is None and res._subset_fn is not None:
        return np.asarray(res._subset_fn(), dtype=np.int64)
    return np.asarray(res.subset, dtype=np.int64)
