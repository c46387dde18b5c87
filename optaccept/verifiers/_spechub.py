r"""SpecHub's verifier (Sun, Zhou, Chen, Sun, *SpecHub: Provable Acceleration to
Multi-Draft Speculative Decoding*, EMNLP 2024), k = 2 on its own draft law.

Draft pairs (``optaccept.SpecHub``): a = argmax q is the hub; the pair is (i, a) with
probability Q(i, a) = q(i) (i ≠ a), or (a, i) with Q(a, i) = q(a) q(i) / (1 − q(a)).
Four stages, each accepting against what is left of p:

1. pair (i, a): accept i w.p. min(1, p(i)/Q(i,a)); left p'(i) = (p(i) − Q(i,a))₊,
   Q'(i,a) = (Q(i,a) − p(i))₊;
2. pair (a, i): accept i w.p. min(1, p'(i)/Q(a,i)); left p''(i) = (p'(i) − Q(a,i))₊,
   Q'(a,i) = (Q(a,i) − p'(i))₊;
3. pair (a, i), i rejected: accept a w.p. min(1, p(a)/A₃), A₃ = Σᵢ Q'(a,i);
   left p'(a) = (p(a) − A₃)₊;
4. pair (i, a), i rejected: accept a w.p. min(1, p'(a)/A₄), A₄ = Σᵢ Q'(i,a);
   left p''(a) = (p'(a) − A₄)₊;

else Y ~ p'' normalised.  Token i ≠ a is output by acceptance with mass
min(p(i), q(i) + Q(a,i)) = min(p(i), q̃(i)), q̃ = q on Ω∖{a} renormalised, and a with
min(p(a), A₃ + A₄), so

.. math:: \alpha = \sum_{i \ne a} \min(p(i), \tilde q(i)) + \min\bigl(p(a),\ \textstyle\sum_{i\ne a} (\tilde q(i) - p(i))_+\bigr),

which equals α* of the SpecHub law (derived in docs/theory.md §5, item 7, with
Proposition 2.5 for T = {a}).
The residual is zero on every draft that can reach it, so both notions agree.
"""

from __future__ import annotations

import numpy as np

from .._lib import stable as _stable
from ..drafts import DraftLaw, SpecHub
from ._base import Verifier, sample_from

__all__ = ["SpecHubVerifier"]


def _stages(p: np.ndarray, q: np.ndarray, a: int):
    n = p.size
    others = np.arange(n) != a
    qa = q[a]
    Q_ia = np.where(others, q, 0.0)
    # 1 − q_a summed over the other tokens (1.0 - qa cancels when q is near one-hot)
    rest = float(_stable.others_sum(q)[a])
    with np.errstate(over="ignore"):  # q_a/rest may overflow; it is masked out (others only)
        Q_ai = np.where(others, qa * (q / rest), 0.0) if rest > 0 else np.zeros(n)
    p1 = np.where(others, np.clip(p - Q_ia, 0.0, None), 0.0)
    Qr_ia = np.clip(Q_ia - np.where(others, p, 0.0), 0.0, None)
    p2 = np.clip(p1 - Q_ai, 0.0, None)
    Qr_ai = np.where(others, np.clip(Q_ai - p1, 0.0, None), 0.0)
    A3, A4 = float(Qr_ai.sum()), float(Qr_ia.sum())
    pa1 = max(p[a] - A3, 0.0)
    pa2 = max(pa1 - A4, 0.0)
    residual = p2.copy()
    residual[a] = pa2
    return Q_ia, Q_ai, p1, A3, A4, pa1, residual


class SpecHubVerifier(Verifier):
    """SpecHub's four-stage verifier (k = 2 only, its own draft law ``SpecHub(q)``).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.SpecHubVerifier()
    >>> v.drafts(q, 2), v.supports(3)
    (SpecHub(n=5), False)
    >>> round(v.acceptance(p, q, 2), 4)
    0.8608
    """

    name = "spechub"
    title = "SpecHub (hub drafts, k = 2)"
    min_k = 2
    max_k = 2

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return SpecHub(q)

    def _acceptance(self, p, q, k, notion):
        a = self._law(q, k).anchor
        _, _, _, _, _, _, residual = _stages(p, q, a)
        return 1.0 - float(residual.sum())

    def _simulate(self, p, q, k, law, drafts, rng):
        a = law.anchor
        Q_ia, Q_ai, p1, A3, A4, pa1, residual = _stages(p, q, a)
        size = drafts.shape[0]
        hub_second = drafts[:, 1] == a  # pair (i, a)
        i = np.where(hub_second, drafts[:, 0], drafts[:, 1])
        u = rng.random(size)
        # stages 1 and 2: accept i
        with np.errstate(divide="ignore", invalid="ignore"):
            acc_i = np.where(hub_second, u * Q_ia[i] < p[i], u * Q_ai[i] < p1[i])
        # stages 3 and 4: accept the hub
        u2 = rng.random(size)
        thr3 = min(1.0, p[a] / A3) if A3 > 0 else 0.0
        thr4 = min(1.0, pa1 / A4) if A4 > 0 else 0.0
        acc_a = ~acc_i & (u2 < np.where(hub_second, thr4, thr3))
        y = np.where(acc_i, i, a)
        rej = np.flatnonzero(~acc_i & ~acc_a)
        y[rej] = sample_from(rng, residual, rej.size)
        return y, acc_i | acc_a
