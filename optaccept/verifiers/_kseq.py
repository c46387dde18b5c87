r"""K-SEQ (Sun et al., *SpecTr: Fast Speculative Decoding via Optimal Transport*, NeurIPS 2023).

k i.i.d. drafts from q.  With :math:`\beta(\rho) = \sum_y \min(q(y), p(y)/\rho)` and
:math:`p_{acc}(\rho) = 1 - (1 - \beta(\rho))^k`, take the smallest :math:`\rho \in [1, k]`
with :math:`p_{acc}(\rho) \le \rho\,\beta(\rho)` (the root ρ* of
:math:`h(\rho) = \rho\beta(\rho) - p_{acc}(\rho)`, which increases in ρ, with h(1) ≤ 0 ≤ h(k)).
Accept the first draft with :math:`\rho U_i \le p(x_i)/q(x_i)`; if none, sample from
:math:`(p - \gamma \min(q, p/\rho))_+` with :math:`\gamma = p_{acc}/\beta` (SpecTr letters:
target q, draft p).

ρ is found by bisection on the segment of sorted p/q ratios that holds it (the batched
formula of :mod:`optaccept.verifiers._batched`, written once for numpy and torch and
called here on one row), with h written without cancellation, always keeping the
feasible end (h ≥ 0), so the residual is non-negative and the output law is exactly p
for the ρ used.  Acceptance (SpecTr, Lemma on K-SEQ):

rule:   :math:`p_{acc}(\rho)`
output: :math:`p_{acc}(\rho) + \sum_y (p - \gamma\min(q, p/\rho))(y)\,
        [1 - (1 - s(y)/(1-\beta))^k]`, :math:`s = (q - p/\rho)_+` the law of a rejected
        draft; the extra term is 0 at the exact root (γ = ρ) and O(tolerance) otherwise.

**(claim, SpecTr)** :math:`\alpha \ge (1 - (1 - 1/k)^k)\,\alpha^*` for i.i.d. drafts.
"""

from __future__ import annotations

import numpy as np

from .._errors import InputError
from ..drafts import IID, DraftLaw
from ._base import Verifier, sample_from
from ._batched import kseq_both, kseq_parts

__all__ = ["KSeq", "kseq_rho", "RHO_XTOL"]

#: Bound on the distance of the returned ρ* from the smallest root (relative to ρ*); the
#: bisection ends at adjacent floats, and on the tested instances ρ* is within 4e-15·ρ*.
RHO_XTOL = 1e-13


def kseq_rho(p: np.ndarray, q: np.ndarray, k: int, xtol: float = RHO_XTOL) -> float:
    """The K-SEQ division factor: the smallest ρ ∈ [1, k] with h(ρ) = ρβ(ρ) − p_acc(ρ) ≥ 0 —
    the batched formula (:func:`optaccept.verifiers._batched.kseq_parts`) on one row.

    h is evaluated without cancellation (as Dᵏ − Z with D = Σ (q − p/ρ)₊ and
    Z = Σ (p − ρq)₊ where Z < 1/2, else as ρβ − p_acc), so its sign is right to rounding
    even where h is flat; the result is within 4e-15·ρ of the smallest root on random,
    near-equal, tied, zero and near-one-hot laws (against bisection in exact Fractions,
    tests/verifiers/test_verifiers_kseq_rho.py).  ρ* = 1 exactly when h(1) ≥ 0: p = q
    (h(ρ) = (1 − 1/ρ)ᵏ), disjoint supports (h ≡ 0) and k = 1.  ``xtol`` is accepted for
    compatibility; the bisection always runs to adjacent floats.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    k : int
        Number of i.i.d. drafts.
    xtol : float
        Must be positive; otherwise unused (see above).

    Returns
    -------
    float
        ρ*, in [1, k].

    Raises
    ------
    InputError
        If ``xtol`` is not positive.
    """
    if not xtol > 0:
        raise InputError(f"xtol: must be positive, got {xtol!r}")
    return float(kseq_parts(np.asarray(p, dtype=np.float64)[None], np.asarray(q, dtype=np.float64)[None], k)[0][0])


class KSeq(Verifier):
    """K-SEQ of SpecTr with ρ* found by bisection (tolerance :data:`RHO_XTOL`).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> round(verifiers.KSeq().acceptance(p, q, 2), 4)
    0.84
    """

    name = "kseq"
    title = "K-SEQ (SpecTr)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    @staticmethod
    def _params(p, q, k):
        rho, _, _, _, residual = kseq_parts(p[None], q[None], k)
        return float(rho[0]), residual[0]

    def _acceptance(self, p, q, k, notion):
        rule, output = kseq_both(p[None], q[None], k, output=notion == "output")
        return float((rule if notion == "rule" else output)[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        rho, residual = self._params(p, q, k)
        size = drafts.shape[0]
        u = rng.random((size, k))
        with np.errstate(divide="ignore", invalid="ignore"):
            ok = rho * u * q[drafts] < p[drafts]
        any_ok = ok.any(axis=1)
        first = np.argmax(ok, axis=1)
        y = drafts[np.arange(size), first]
        rej = np.flatnonzero(~any_ok)
        y[rej] = sample_from(rng, residual, rej.size)
        return y, any_ok
