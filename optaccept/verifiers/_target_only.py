r"""Target-only verification: the rule of engines that verify without draft probabilities
(SGLang's tree kernel, vLLM with ``draft_probs=None``, TRT-LLM, llama.cpp).

The rule (docs/theory.md §5, item 11).  Walk the distinct drafted tokens a₁, a₂, … in draw
order; accept aᵢ with probability p(aᵢ) / (1 − p(a₁) − … − p(aᵢ₋₁)) (its target mass
renormalised after removing the siblings already rejected); if all are rejected, draw Y from
p without the drafted tokens, renormalised.  Then P(Y = aᵢ | x̄) = p(aᵢ) and
P(Y = y | x̄) = p(y) for every undrafted y: **Y ~ p independently of the drafts**, so the rule
is lossless for every draft law, it accepts exactly when Y ∈ set(x̄), and

.. math:: \alpha_{\mathrm{target}}(p, D) = \mathbb{E}_D\, p(\mathrm{set}(\bar x))
          = \sum_y p(y)\,\bigl(1 - D(\mathrm{set}(\bar x) \subseteq \Omega \setminus \{y\})\bigr),

in both notions (a rejection never outputs a drafted token).  It is optimal (= α*) for a
deterministic draft set (top-k), and Σ_y p(y) q(y) for one sampled draft.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.sampling import draws
from .._lib.validation import as_distribution, check_choice
from ..drafts import DraftLaw, law_from_name, law_names
from ._base import Verifier

__all__ = ["TargetOnly", "target_only_acceptance", "target_only_respond"]

_LAWS = law_names(takes_k=True)  # the verifier builds its law from (q, k)


def target_only_acceptance(p: Any, drafts: DraftLaw) -> Any:
    """Exact acceptance E_D[p(set(x̄))] of target-only verification for any draft law.

    Exact (a Fraction) when both ``p`` and the law are given in Fractions.  Closed forms for
    i.i.d. (1 − (1 − q(y))ᵏ), greedy/SpecHub and independent drafts, the recursion on the first
    draw without replacement: the law's own :meth:`~optaccept.DraftLaw.inclusion`.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution (Fractions, with an exact law, for the exact answer).
    drafts : DraftLaw
        Any draft law of :mod:`optaccept.drafts` on the same n tokens.

    Returns
    -------
    float or Fraction
        Σ_y p(y)·P(y ∈ set(x̄)).

    Raises
    ------
    InputError
        If ``drafts`` is not a draft law, or p is not a distribution of length n.
    """
    if not isinstance(drafts, DraftLaw):
        raise InputError(f"drafts: must be a draft law (IID, WithoutReplacement, ...), got {type(drafts).__name__}")
    exact = drafts.exact and all(isinstance(v, Fraction | int) for v in np.asarray(p, dtype=object).ravel())
    if exact:
        pv = [Fraction(v) for v in np.asarray(p, dtype=object).ravel()]
        if len(pv) != drafts.n or sum(pv) != 1:
            raise InputError(f"p: must be an exact distribution of length {drafts.n}")
        return sum((py * iy for py, iy in zip(pv, drafts.inclusion()) if py), Fraction(0))
    pf = as_distribution(p, "p")
    if pf.size != drafts.n:
        raise InputError(f"p: has {pf.size} entries, the draft law {drafts.n}")
    return float(pf @ drafts.inclusion())


def target_only_respond(p: Any, tokens: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Outputs of target-only verification for given draft tuples (rows): (y, accepted).

    The sequential coins over the drafted siblings and the final draw from p without them
    are, together, an inverse-CDF draw of p that visits the drafted tokens first; the output
    is therefore Y ~ p independently of the drafts (module docstring), and the rule accepts
    exactly when Y ∈ set(x̄).  This samples that joint law directly: one uniform per row,
    Y by the inverse CDF of p, accepted = Y ∈ the row's drafts.

    Parameters
    ----------
    p : array_like, shape (n,)
        Target distribution.
    tokens : array_like of int, shape (rows, k)
        The drafted tokens: ordered draft tuples, token ids in [0, n).
    rng : numpy.random.Generator
        Source of the one uniform per row.

    Returns
    -------
    y : ndarray of int, shape (rows,)
        Output tokens, each ~ p.
    accepted : ndarray of bool, shape (rows,)
        Whether Y is one of the row's drafts.

    Raises
    ------
    InputError
        If p is not a distribution or ``tokens`` is not a 2-D array of token ids in [0, n).
    """
    pf = as_distribution(p, "p")
    d = np.asarray(tokens, dtype=np.int64)
    if d.ndim != 2 or (d.size and (d.min() < 0 or d.max() >= pf.size)):
        raise InputError(f"tokens: must be a 2-D array of token ids in [0, {pf.size})")
    y = draws(pf, rng, d.shape[0]).astype(np.int64)
    return y, (d == y[:, None]).any(axis=1)


class TargetOnly(Verifier):
    """Target-only verification on i.i.d. drafts (``drafts="iid"``), drafts without
    replacement (``"swor"``) or greedy drafts (``"greedy"``); see the module docstring.
    For any other draft law, :func:`target_only_acceptance` gives its exact acceptance.

    Parameters
    ----------
    drafts : {"iid", "swor", "greedy"}
        The draft law the verifier runs on.

    Raises
    ------
    InputError
        If ``drafts`` is not one of the three names.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.TargetOnly("iid")  # Y ~ p whatever the drafts: accepted when Y is drafted
    >>> round(v.acceptance(p, q, 2), 4)  # sum of p (1 - (1 - q)**2), as naive sampling
    0.3786
    >>> round(verifiers.TargetOnly("greedy").acceptance(p, q, 2), 4)
    0.4069
    """

    name = "target_only"
    title = "target-only (accept x w.p. p(x), siblings renormalised)"

    def __init__(self, drafts: str = "iid") -> None:
        check_choice("drafts", drafts, _LAWS)
        self.law_name = drafts

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return law_from_name(self.law_name, q, k, allowed=_LAWS)

    def _acceptance(self, p, q, k, notion):
        return target_only_acceptance(p, self._law(q, k))

    def _simulate(self, p, q, k, law, drafts, rng):
        return target_only_respond(p, drafts, rng)

    def __repr__(self) -> str:
        return f"TargetOnly(drafts={self.law_name!r})"
