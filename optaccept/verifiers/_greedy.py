r"""Hu et al.'s greedy verifier (*Towards Optimal Multi-draft Speculative Decoding*,
ICLR 2025, §5), optimal for their greedy draft law.

Drafts (``optaccept.Greedy``): T = the k − 1 most likely tokens of q, fixed; the last
draft X ~ q̃ = q on Ω∖T renormalised.  Accept X w.p. min(1, p(X)/q̃(X)); else sample
from r ∝ p on T and (p − q̃)₊ off T.  Output law p, and

.. math:: \alpha = p(T) + \sum_{y \notin T} \min(p(y), \tilde q(y)) = \alpha^*(\text{Greedy})

(docs/theory.md §2.3).  The residual on T outputs a drafted token by design, so the rule's
acceptance is the same as the output notion.
"""

from __future__ import annotations

import numpy as np

from ..drafts import DraftLaw, Greedy
from ._base import Verifier, sample_from
from ._batched import greedy

__all__ = ["HuGreedy"]


class HuGreedy(Verifier):
    """Hu et al.'s greedy verifier on ``Greedy(q, k)``: α = p(T) + Σ_{y∉T} min(p, q̃).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.HuGreedy()
    >>> v.drafts(q, 2).top  # the most likely draft token, always drafted
    (2,)
    >>> round(v.acceptance(p, q, 2), 4)  # p(T) + sum over y not in T of min(p, q restricted)
    0.8608
    """

    name = "hu_greedy"
    title = "Hu et al. greedy drafts + verifier"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return Greedy(q, k)

    @staticmethod
    def _residual(p: np.ndarray, law: Greedy) -> np.ndarray:
        r = np.clip(p - law.q_rest, 0.0, None)
        top = list(law.top)
        r[top] = p[top]
        return r

    def _acceptance(self, p, q, k, notion):
        self._law(q, k)  # validates k against the support of q
        return float(greedy(p[None], q[None], k)[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        x = drafts[:, -1]
        ok = rng.random(x.size) * law.q_rest[x] < p[x]
        y = x.copy()
        rej = np.flatnonzero(~ok)
        y[rej] = sample_from(rng, self._residual(p, law), rej.size)
        in_top = np.zeros(p.size, dtype=bool)
        in_top[list(law.top)] = True
        return y, ok | in_top[y]
