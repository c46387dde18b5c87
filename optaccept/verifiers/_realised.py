"""The optimal verifier's acceptance measured by running it (Monte Carlo), beside α*.

:func:`realised_acceptance` builds ``optimal_verifier(p, IID(q, k))`` for one position
(or, with ``law="swor"``, for drafts without replacement: ``WithoutReplacement(q, k)``;
docs/optimal_verifier.md), draws ``size`` draft tuples and outputs with it, and reports
the fraction of outputs that are one of their drafts, with its standard error, next to
α* of (★) and the rule's own exact acceptance.  Agreement within a few standard errors is
a check of the construction that does not read its internals.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Tabular, html_table
from .._lib.statistics import bernoulli_std_err
from .._lib.validation import check_rng, check_size
from ..drafts import law_from_name, law_names
from ..optimal import optimal_verifier

__all__ = ["RealisedAcceptance", "realised_acceptance"]


@dataclasses.dataclass(frozen=True)
class RealisedAcceptance(Tabular):
    """Monte Carlo acceptance of the optimal verifier at one position.

    In the results' vocabulary ``value`` is α*, the exact value the run is compared with;
    ``std_err`` (old name ``se``) is the standard error of the measured ``mean``, so that
    ``z`` = (mean − value) / std_err; ``method`` is ``"sampled"``; ``ok`` says the run agrees
    with α* (|z| ≤ 5).  ``to_pandas()`` and ``to_latex()`` give its numbers as one row.

    Attributes
    ----------
    k : int
        Number of drafts.
    value : float
        α* of (★) (``ov.value``) for the draft law.
    acceptance : float
        The rule's exact acceptance, computed from its own rule (``ov.acceptance``).
    mean : float
        Fraction of the ``size`` sampled outputs that equal one of their drafts.
    std_err : float
        Its standard error, sqrt(mean (1 − mean) / size) (old name ``se``).
    size : int
        Number of sampled positions.
    tv : float
        Total-variation distance between the empirical output law and p (lossless: it
        shrinks like 1/sqrt(size)).
    law : str
        The draft law: ``"iid"`` or ``"swor"`` (without replacement).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> r = verifiers.realised_acceptance(p, q, 2, np.random.default_rng(0), samples=2000)
    >>> type(r).__name__, r.size, round(r.value, 4), r.ok  # |mean - alpha*| within 5 standard errors
    ('RealisedAcceptance', 2000, 0.9075, True)
    """

    k: int
    value: float
    acceptance: float
    mean: float
    std_err: float
    size: int
    tv: float
    law: str = "iid"

    #: the run is a Monte Carlo sample
    method = "sampled"
    _caption = "Optimal verifier run at one position: realised acceptance against the exact optimum."

    @property
    def ok(self) -> bool:
        """Whether the realised acceptance agrees with α* within 5 standard errors (|z| ≤ 5)."""
        return abs(self.z) <= 5

    @property
    def z(self) -> float:
        """(mean − value) / std_err; 0 when std_err is 0 and the two agree."""
        d = self.mean - self.value
        if self.std_err > 0:
            return d / self.std_err
        return 0.0 if abs(d) < 1e-12 else math.copysign(math.inf, d)

    def __repr__(self) -> str:
        return (
            f"RealisedAcceptance(k={self.k}, law={self.law!r}, realised={self.mean:.4f} ± {self.std_err:.4f}, "
            f"α*={self.value:.4f}, size={self.size})"
        )

    def _repr_html_(self) -> str:
        return html_table(
            ["k", "α*", "exact acceptance of the rule", "realised ± SE", "z", "TV(output, p)", "samples"],
            [
                [
                    self.k,
                    f"{self.value:.6f}",
                    f"{self.acceptance:.6f}",
                    f"{self.mean:.4f} ± {self.std_err:.4f}",
                    f"{self.z:+.2f}",
                    f"{self.tv:.4f}",
                    self.size,
                ]
            ],
            title="Optimal verifier, run (Monte Carlo)",
        )


#: The laws the run supports: the registry's sequential laws (successive draws from q).
_LAWS = law_names(sequential=True)


def realised_acceptance(
    p: Any, q: Any, k: int, rng: np.random.Generator, samples: int = 20_000, *, drafts: str = "iid"
) -> RealisedAcceptance:
    """Run the optimal verifier at one position and measure its acceptance.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions (float; renormalised if off by ≤ 1e-9).
    k : int
        Number of drafts.
    rng : numpy.random.Generator
        Source of the drafts and of the verifier's randomness.
    samples : int
        Number of positions sampled (draft tuple, then output).
    drafts : {"iid", "swor"}
        i.i.d. drafts, or drafts without replacement (whose verifier lists the draft sets:
        a draft with few tokens of positive mass, e.g. a top-m draft).

    Returns
    -------
    RealisedAcceptance

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> r = verifiers.realised_acceptance(p, q, 2, np.random.default_rng(0), samples=2000)
    >>> round(r.value, 4), abs(r.z) < 5
    (0.9075, True)
    """

    rng, samples = check_rng(rng), check_size(samples)
    if samples < 1:
        raise InputError("samples: must be at least 1")
    ov = optimal_verifier(p, law_from_name(drafts, q, k, allowed=_LAWS, arg="drafts"))
    d, y = ov.sample(rng, samples)
    hit = (d == y[:, None]).any(axis=1)
    m = float(hit.mean())
    se = bernoulli_std_err(m, samples, floor=None)
    pf = np.asarray(ov.p, dtype=np.float64)
    emp = np.bincount(y, minlength=pf.size) / samples
    tv = 0.5 * float(np.abs(emp - pf).sum())
    return RealisedAcceptance(int(k), float(ov.value), float(ov.acceptance), m, se, samples, tv, drafts)
