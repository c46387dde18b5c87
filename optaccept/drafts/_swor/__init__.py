"""P(first k draws without replacement all land in S), for every prefix S of an order.

Sampling without replacement from q is the order in which independent exponential
clocks T_i ~ Exp(q_i) ring (docs/theory.md §2.2).  With λ = q(Ω∖S) the first ring outside S
comes at an Exp(λ) time, so

.. math::

    1 - D(\\text{set} \\subseteq S) = \\lambda \\int_0^\\infty e^{-\\lambda t}\\,
    P\\bigl(N_S(t) \\le k-1\\bigr)\\,dt,

where N_S(t) is Poisson-binomial over i ∈ S with success probabilities
1 − e^{−q_i t}.  For the prefixes S_j = {o_1, …, o_j} of a token order, the laws
π_m(j, t) = P(N_{S_j}(t) = m), m < k, obey

    π_m(j) = e^{−q_j t} π_m(j−1) + (1 − e^{−q_j t}) π_{m−1}(j−1),

which, after the rescaling s_m(j) = e^{(Q_j − Q_{b})t} π_m(j) inside a block of
tokens starting at b, becomes a plain cumulative sum
s_m = s_m(b) + cumsum(expm1(q_j t) · s_{m−1}(j−1)).  Blocks are cut so that the
rescaling never exceeds e^{600}; one shared quadrature grid then serves all n+1
prefixes in O(n · k · #nodes) vectorised work.

Quadrature (adaptive Gauss–Kronrod).  Time is first rescaled by an exact power of two
so that no rate is subnormal (masses down to 2^-1074 work; the integral is scale-free).
The half-line is cut into panels [a, b]: b = 2a while some rate r (a token of q or a
live λ_j) has r·a ≤ 50, else the panel jumps to a + 1/r_max of the largest such rate, so
a mass of 1e-300 outside S costs a few dozen panels, not 10^3.  Each panel is integrated
by the 21-point Kronrod rule; where it differs from the embedded 10-point Gauss rule by
more than 1e-13 (in D, over every live prefix) the panel is bisected — this is what
resolves the sharp step of P(N ≤ k−1) at large k (width ~ t/√k).  Integration stops
at the first panel end T where the rigorous tail bound max_j e^{−λ_j T} P(N_{S_j}(T) ≤ k−1)
(the integrand is decreasing in t) is below ``tail_tol``.

k = 1 and k = 2 use closed forms: 1 − D₁(S_j) = λ_j and
1 − D₂(S_j) = λ_j (1 + Σ_{i∈S_j} q_i/(1 − q_i)) (:func:`optaccept._lib.stable.swor2_prefix_complement`),
both free of cancellation.

Cost: O(n · k · G) for G quadrature nodes (G ≈ 21 × #panels; #panels grows like
log(1/λ_min) + O(√k) bisections near the step), memory O(k · 21 + n).  Measured accuracy:
1e-13 or better for k up to the support size (uniform q against C(|S|, k)/C(n, k)).
With numba the recursion is one compiled pass over the tokens, the nodes of a panel as vector
lanes (:func:`_dp_lanes_py`).

α* itself needs only the prefixes that can attain the minimum: :func:`best_prefix`
integrates a window of them (:func:`window_complements`, docs/theory.md §2.2), with the
tokens before the window aggregated through power sums — O(window · k · G) plus
O(G · (heavy · k + 36 · k + k²)) instead of O(n · k · G).

The work is split by concept: :mod:`optaccept.drafts._swor.prefixes` (every prefix: the closed
forms for k ≤ 2, the quadrature for k ≥ 3), :mod:`optaccept.drafts._swor.quadrature` (the
Gauss–Kronrod panels and the integrand), :mod:`optaccept.drafts._swor.kernels` (the compiled
kernels), :mod:`optaccept.drafts._swor.window` (the window search for α*) and
:mod:`optaccept.drafts._swor.inclusions` (every token's inclusion probability, many rows at
once: the batched form behind ``WithoutReplacement.inclusion``).  This module gathers
their public functions.
"""

from __future__ import annotations

from .kernels import _dp_kernel as _dp_kernel  # whether the compiled kernels are in use
from .prefixes import prefix_complements, prefix_subset_probs, subset_prob_k2
from .window import best_prefix, window_complements

__all__ = ["best_prefix", "prefix_complements", "prefix_subset_probs", "subset_prob_k2", "window_complements"]
