r"""K-SEQ (Sun et al., *SpecTr: Fast Speculative Decoding via Optimal Transport*, NeurIPS 2023).

k i.i.d. drafts from q.  With :math:`\beta(\rho) = \sum_y \min(q(y), p(y)/\rho)` and
:math:`p_{acc}(\rho) = 1 - (1 - \beta(\rho))^k`, take the smallest :math:`\rho \in [1, k]`
with :math:`p_{acc}(\rho) \le \rho\,\beta(\rho)` (the root ρ* of
:math:`h(\rho) = \rho\beta(\rho) - p_{acc}(\rho)`, which increases in ρ, with h(1) ≤ 0 ≤ h(k)).
Accept the first draft with :math:`\rho U_i \le p(x_i)/q(x_i)`; if none, sample from
:math:`(p - \gamma \min(q, p/\rho))_+` with :math:`\gamma = p_{acc}/\beta` (SpecTr letters:
target q, draft p).

ρ is found by bisection to an absolute tolerance :data:`RHO_XTOL`, always keeping the
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

from .. import _stable
from ..drafts import IID, DraftLaw
from ._base import Verifier, sample_from

__all__ = ["KSeq", "kseq_rho", "RHO_XTOL"]

#: Absolute tolerance of the bisection for ρ*.
RHO_XTOL = 1e-13


def _beta(p: np.ndarray, q: np.ndarray, rho: float) -> float:
    return float(np.minimum(q, p / rho).sum())


def _one_minus_beta(p: np.ndarray, q: np.ndarray, rho: float) -> float:
    """1 − β(ρ) = Σ (q − p/ρ)₊, summed directly (1.0 - β cancels when β ≈ 1)."""
    return float(np.clip(q - p / rho, 0.0, None).sum())


def _h(p: np.ndarray, q: np.ndarray, k: int, rho: float) -> float:
    b = _beta(p, q, rho)
    return rho * b - (1.0 - _one_minus_beta(p, q, rho) ** k)


def kseq_rho(p: np.ndarray, q: np.ndarray, k: int, xtol: float = RHO_XTOL) -> float:
    """The K-SEQ division factor: smallest ρ ∈ [1, k] with h(ρ) = ρβ(ρ) − p_acc(ρ) ≥ 0,
    to within ``xtol`` from above."""
    lo, hi = 1.0, float(k)
    if _h(p, q, k, lo) >= 0:
        return lo
    while hi - lo > xtol:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _h(p, q, k, mid) >= 0:
            hi = mid
        else:
            lo = mid
    return hi


class KSeq(Verifier):
    """K-SEQ of SpecTr with ρ* found by bisection (tolerance :data:`RHO_XTOL`)."""

    name = "kseq"
    title = "K-SEQ (SpecTr)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    @staticmethod
    def _params(p, q, k):
        rho = kseq_rho(p, q, k)
        beta = _beta(p, q, rho)
        pacc = 1.0 - _one_minus_beta(p, q, rho) ** k
        gamma = pacc / beta if beta > 0 else 0.0
        residual = np.clip(p - gamma * np.minimum(q, p / rho), 0.0, None)
        return rho, beta, pacc, gamma, residual

    def _acceptance(self, p, q, k, notion):
        rho, beta, pacc, gamma, residual = self._params(p, q, k)
        if notion == "rule" or beta >= 1.0:
            return pacc
        rest = np.clip(q - p / rho, 0.0, None)
        s = rest / rest.sum()  # the law of a rejected draft; its total is 1 − β, summed directly
        return pacc + float((residual * _stable.one_minus_pow1m(s, k)).sum())

    def _simulate(self, p, q, k, law, drafts, rng):
        rho, beta, pacc, gamma, residual = self._params(p, q, k)
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
