r"""Single-draft speculative decoding and the two simplest multi-draft baselines.

SD (Leviathan et al. 2023; Chen et al. 2023): accept X ~ q with probability
:math:`\min(1, p(X)/q(X))`, else sample from :math:`(p - q)_+` normalised.
:math:`\alpha = \sum_y \min(p(y), q(y)) = 1 - \mathrm{TV}(p, q)`.

NSS (naive sampling, Hu et al. §6): ignore the drafts and output Y ~ p; the output is a
draft with probability :math:`\sum_y p(y)\,(1 - (1 - q(y))^k)` (i.i.d. drafts).

NaiveTree: SD against the first draft only.  The rule accepts with probability
:math:`\sum_y \min(p, q)`; a residual sample can still equal one of the other k - 1
i.i.d. drafts, so the output is a draft with probability
:math:`\sum_y \min(p, q) + \sum_y (p - q)_+(y)\,(1 - (1 - q(y))^{k-1})`.
"""

from __future__ import annotations

import numpy as np

from .._lib.stable import residual
from ..drafts import IID, DraftLaw
from ._base import Verifier, sample_from
from ._batched import nss, sd

__all__ = ["SD", "NSS", "NaiveTree"]


def sd_step(p: np.ndarray, q: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Speculative sampling of drafts x ~ q against p: (y, accepted)."""
    u = rng.random(x.size)
    acc = u * q[x] < p[x]
    y = x.copy()
    rej = ~acc
    y[rej] = sample_from(rng, residual(p, q)[0], int(rej.sum()))
    return y, acc


class SD(Verifier):
    """Single-draft speculative decoding (k = 1): α = Σ_y min(p(y), q(y)) in both notions.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> round(verifiers.SD().acceptance(p, q, 1), 4)  # sum of min(p, q)
    0.68
    >>> verifiers.SD().supports(2)
    False
    """

    name = "sd"
    title = "speculative decoding (k = 1)"
    min_k = 1
    max_k = 1

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    def _acceptance(self, p: np.ndarray, q: np.ndarray, k: int, notion: str) -> float:
        return float(sd(p[None], q[None])[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        return sd_step(p, q, drafts[:, 0], rng)


class NSS(Verifier):
    """Naive sampling: Y ~ p ignoring the drafts (i.i.d. from q); "accepted" when Y is a
    draft.  α = Σ_y p(y) (1 − (1 − q(y))ᵏ), the same in both notions.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> round(verifiers.NSS().acceptance(p, q, 2), 4)  # sum of p (1 - (1 - q)**2)
    0.3786
    """

    name = "nss"
    title = "naive sampling (ignore drafts)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    def _acceptance(self, p: np.ndarray, q: np.ndarray, k: int, notion: str) -> float:
        return float(nss(p[None], q[None], k)[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        y = sample_from(rng, p, drafts.shape[0])
        return y, (drafts == y[:, None]).any(axis=1)


class NaiveTree(Verifier):
    """SD on the first of k i.i.d. drafts; the others are only used when the residual
    sample happens to equal one of them (which the rule itself does not check).

    rule:   Σ min(p, q)
    output: Σ min(p, q) + Σ_y (p − q)₊(y) (1 − (1 − q(y))^{k−1})

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.NaiveTree()
    >>> round(v.acceptance(p, q, 2, notion="rule"), 4), round(v.acceptance(p, q, 2), 4)
    (0.68, 0.7285)
    """

    name = "naive_tree"
    title = "SD on the first draft"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    def _acceptance(self, p: np.ndarray, q: np.ndarray, k: int, notion: str) -> float:
        base = float(sd(p[None], q[None])[0])
        if notion == "rule" or k == 1:
            return base
        # the residual sample lands on one of the other k − 1 drafts: NSS's hit probability
        return base + float(nss(np.clip(p - q, 0.0, None)[None], q[None], k - 1)[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        return sd_step(p, q, drafts[:, 0], rng)
