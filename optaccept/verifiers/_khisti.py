r"""Importance-weighted selection with a truncated LP, then speculative sampling
(Khisti et al., *Multi-Draft Speculative Sampling: Canonical Decomposition and
Theoretical Limits*, ICLR 2025, §4; their target is q and their drafts p₁, p₂).

Two steps (the canonical decomposition, docs/theory.md §3):

1. *Selection.*  k i.i.d. drafts from q are reduced to one token by a pairwise
   tournament: stage m = 1..k−1 chooses between the current winner W (law πₘ, π₁ = q)
   and the next draft x (law q, independent of W).  For a pair (W = i, x = j), i ≠ j,
   W is kept with probability w(i, j).  Tokens are ranked by the score p − πₘ q
   (ties by index); S = the s highest.  For i, j ∈ S the weights solve the LP

   .. math:: \max_{w} \sum_{y \in S} \min\bigl(p(y), \pi_{m+1}(y)\bigr),\quad
             \pi_{m+1}(y) = \pi(y)q(y) + \sum_{j \ne y} \bigl[\pi(y) q(j) w(y,j)
                          + \pi(j) q(y) (1 - w(j,y))\bigr],

   (the "truncated LP": s(s − 1) weights); every other pair selects the higher-ranked
   token (fixed weights 0/1).  For k = 2 this is Khisti et al.'s two-draft scheme with
   the LP restricted to s tokens.
2. *Speculative sampling* of the selected token Y_I ~ π_k against p: accept w.p.
   min(1, p/π_k), else Y ~ (p − π_k)₊ normalised.

Exact acceptance: rule notion Σ_y min(p(y), π_k(y)) in O(k (n log n + LP(s))).  The
output notion adds the chance that the residual sample equals an unselected draft; it
is computed by enumerating the nᵏ draft tuples (limit :data:`MAX_TUPLES`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, lil_matrix
from scipy.sparse import vstack as sp_vstack

from .._errors import InputError, MethodError, SolverError
from .._lib.stable import residual
from ..drafts import IID, DraftLaw
from ._base import Verifier, sample_from

__all__ = ["KhistiIS", "MAX_TUPLES"]

#: Largest number of ordered draft tuples enumerated for the output notion.
MAX_TUPLES = 2_000_000
#: Largest number of tournament stages (k − 1), each one (two) small LP solves.
MAX_STAGES = 2_000
#: Slack on the stage LP's optimum when the tie-breaking objective picks among optima.
_LEX_TOL = 1e-13
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass(frozen=True)
class _Stage:
    rank: np.ndarray  # rank[token] = position in the order (0 = highest)
    top: np.ndarray  # the s tokens of the LP, by rank
    pos: np.ndarray  # pos[token] = index in top, or -1
    W: np.ndarray  # (s, s) weights w(i, j) for i, j in top (diagonal unused)

    def keep_prob(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(keep the winner i against the new draft j), vectorised."""
        pi, pj = self.pos[i], self.pos[j]
        both = (pi >= 0) & (pj >= 0)
        w = (self.rank[i] < self.rank[j]).astype(np.float64)
        w[both] = self.W[pi[both], pj[both]]
        w[i == j] = 1.0
        return w


def _fixed_part(pi: np.ndarray, q: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """π'(y) from pairs decided by the ranking: π(y)q(y) + π(y) q(below y) + q(y) π(below y)."""
    order = np.argsort(rank)
    q_below = np.empty_like(q)
    pi_below = np.empty_like(pi)
    qs, ps = q[order], pi[order]
    q_below[order] = np.concatenate([np.cumsum(qs[::-1])[::-1][1:], [0.0]])
    pi_below[order] = np.concatenate([np.cumsum(ps[::-1])[::-1][1:], [0.0]])
    return pi * q + pi * q_below + q * pi_below


def _stage(p: np.ndarray, pi: np.ndarray, q: np.ndarray, s: int) -> tuple[_Stage, np.ndarray]:
    n = p.size
    score = p - pi * q
    order = np.lexsort((np.arange(n), -score))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    s = min(s, n)
    top = order[:s]
    pos = np.full(n, -1, dtype=np.int64)
    pos[top] = np.arange(s)
    new = _fixed_part(pi, q, rank)  # correct for tokens outside top
    W = np.zeros((s, s))
    if s >= 2:
        # π'(y) for y in top = π(y)q(y) + π(y) q(outside) + q(y) π(outside) + LP part
        out = np.ones(n, dtype=bool)
        out[top] = False
        base = pi[top] * q[top] + pi[top] * q[out].sum() + q[top] * pi[out].sum()
        pairs = [(a, b) for a in range(s) for b in range(s) if a != b]
        nv = len(pairs) + s
        # maximise Σ t_y  <=>  minimise -Σ t_y
        c = np.zeros(nv)
        c[len(pairs) :] = -1.0
        A = lil_matrix((s, nv))
        b = base.copy()
        pt, qt = pi[top], q[top]
        for v, (a, bb) in enumerate(pairs):
            # w(a, bb): keep winner a against new bb -> adds π(a) q(bb) to a, removes π(a) q(bb) from bb
            A[a, v] -= pt[a] * qt[bb]
            A[bb, v] += pt[a] * qt[bb]
            b[bb] += pt[a] * qt[bb]  # the constant part (1 - w) π(a) q(bb) goes to bb
        for y in range(s):
            A[y, len(pairs) + y] = 1.0
        bounds = [(0.0, 1.0)] * len(pairs) + [(0.0, float(p[top[y]])) for y in range(s)]
        A = A.tocsr()
        res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs", options=_HIGHS)
        if res.status != 0:
            raise SolverError(f"truncated LP failed: {res.message}")
        # The stage LP has many optimal w in general (HiGHS versions and platforms return
        # different vertices, and later stages depend on which).  Take a canonical one:
        # among the optima, the w closest (in a rank-weighted L1 sense) to the fixed
        # tournament "the higher-ranked token wins", i.e. maximise Σ_{a<b} c_ab w(a,b) −
        # Σ_{a>b} c_ab w(a,b) with distinct positive c_ab that depend only on the ranks.
        # This deviates from the ranking only as far as optimality needs, and depends on
        # nothing but the ranks — so permuting the tokens permutes the answer.
        opt = -float(res.fun)
        tie = np.zeros(nv)
        for v, (a, bb) in enumerate(pairs):
            weight = 1.0 + (a * s + bb) / (s * s)  # distinct, rank-based
            tie[v] = -weight if a < bb else weight
        A2 = sp_vstack([A, csr_matrix(c[None, :])]).tocsr()
        b2 = np.concatenate([b, [-(opt - _LEX_TOL * max(1.0, opt))]])
        res2 = linprog(tie, A_ub=A2, b_ub=b2, bounds=bounds, method="highs", options=_HIGHS)
        if res2.status == 0:
            res = res2
        for v, (a, bb) in enumerate(pairs):
            W[a, bb] = min(1.0, max(0.0, res.x[v]))
        lp_part = b.copy()
        for a, bb in pairs:
            lp_part[a] += pt[a] * qt[bb] * W[a, bb]
            lp_part[bb] -= pt[a] * qt[bb] * W[a, bb]
        new = new.copy()
        new[top] = lp_part
    elif s == 1:
        new = new.copy()
    new = np.clip(new, 0.0, None)
    return _Stage(rank, top, pos, W), new / new.sum()


def _check_stages(k: int) -> None:
    if k - 1 > MAX_STAGES:
        raise MethodError(
            f"khisti_is: k = {k} needs {k - 1} tournament stages (two LPs each), above the limit "
            f"{MAX_STAGES}; use the KSeq or RRS verifier, or optimal_acceptance(p, IID(q, k)) for α*"
        )


class KhistiIS(Verifier):
    """Khisti et al.'s importance-weighted selection with a truncated LP of ``s`` tokens
    (pairwise tournament for k > 2), followed by speculative sampling.

    Deterministic: a stage LP has many optimal weight matrices in general, and which one a
    solver returns depends on its version and platform (and later stages depend on it; two
    correct choices differ by 0.05 in acceptance at k = 3 on a five-token example).  Each
    stage therefore solves its LP lexicographically: first the acceptance objective, then,
    among (1e-13-)optimal weights, the one closest to the plain ranking tournament — a
    tie-break that depends only on the ranks, so every run and machine agrees and
    permuting the tokens permutes the plan.  Sizes are checked first: more than
    :data:`MAX_STAGES` stages (or |supp q|ᵏ above :data:`MAX_TUPLES` for the output
    notion) raise :class:`~optaccept.MethodError` before any LP is solved.

    Parameters
    ----------
    s : int
        LP truncation threshold (Khisti et al. use 5 to 15).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> round(verifiers.KhistiIS(s=5).acceptance(p, q, 2), 4)
    0.9075
    """

    name = "khisti_is"
    title = "Khisti et al. IS + truncated LP"

    def __init__(self, s: int = 5) -> None:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise InputError(f"s: must be a positive integer, got {s!r}")
        self.s = int(s)

    def __repr__(self) -> str:
        return f"KhistiIS(s={self.s})"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    def plan(self, p: np.ndarray, q: np.ndarray, k: int) -> tuple[list[_Stage], np.ndarray]:
        """The k − 1 tournament stages and the law π_k of the selected token.

        Each stage solves its truncated LP twice (lexicographically): first the acceptance
        objective, then, among its optima, the weights closest to the plain ranking
        tournament (see :func:`_stage`), so the plan is the same on every run and machine
        and permuting the tokens permutes it.

        Parameters
        ----------
        p, q : ndarray of float64, shape (n,)
            Target and draft distributions (already validated).
        k : int
            Number of drafts.

        Returns
        -------
        stages : list
            The k − 1 tournament stages, in order; stage m holds the ranking of the tokens,
            the ``s`` tokens of its LP and their pairwise keep-weights ``W``.
        pi : ndarray of float64, shape (n,)
            π_k, the law of the token the tournament selects.

        Raises
        ------
        MethodError
            If k − 1 stages exceed the limit on the number of stages.
        """
        _check_stages(k)
        pi = q.copy()
        stages = []
        for _ in range(k - 1):
            st, pi = _stage(p, pi, q, self.s)
            stages.append(st)
        return stages, pi

    def _acceptance(self, p, q, k, notion):
        _check_stages(k)
        if notion == "output" and k * np.log(max(int(np.count_nonzero(q)), 1)) > np.log(MAX_TUPLES):
            raise MethodError(
                f"khisti_is output-notion acceptance enumerates |supp q|^k draft tuples (k = {k}), above "
                f"the limit {MAX_TUPLES}; use notion='rule' or a smaller vocabulary"
            )
        stages, pi = self.plan(p, q, k)
        rule = float(np.minimum(p, pi).sum())
        if notion == "rule":
            return rule
        law = self._law(q, k)
        supp = int(np.count_nonzero(q))
        if supp**k > MAX_TUPLES:
            raise MethodError(
                f"khisti_is output-notion acceptance enumerates {supp}^{k} draft tuples, above "
                f"the limit {MAX_TUPLES}; use notion='rule' or a smaller vocabulary"
            )
        tuples, probs = law.tuple_law(max_tuples=MAX_TUPLES)
        sel = np.zeros(tuples.shape)  # P(winner = position j)
        sel[:, 0] = 1.0
        for m, st in enumerate(stages):
            new = tuples[:, m + 1]
            moved = np.zeros(tuples.shape[0])
            for j in range(m + 1):
                w = st.keep_prob(tuples[:, j], new)
                moved += sel[:, j] * (1.0 - w)
                sel[:, j] *= w
            sel[:, m + 1] += moved
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            acc = np.where(pi > 0, np.minimum(1.0, p / pi), 1.0)
        res = residual(p, pi)[0]
        srt = np.sort(tuples, axis=1)
        first = np.ones(srt.shape, dtype=bool)
        first[:, 1:] = srt[:, 1:] != srt[:, :-1]
        res_in = (res[srt] * first).sum(axis=1)
        a = acc[tuples]
        inside = (sel * (a + (1.0 - a) * res_in[:, None])).sum(axis=1)
        return float((np.asarray(probs) * inside).sum())

    def _simulate(self, p, q, k, law, drafts, rng):
        stages, pi = self.plan(p, q, k)
        size = drafts.shape[0]
        win = drafts[:, 0].copy()
        for m, st in enumerate(stages):
            new = drafts[:, m + 1]
            keep = rng.random(size) < st.keep_prob(win, new)
            win = np.where(keep, win, new)
        ok = rng.random(size) * pi[win] < p[win]
        y = win.copy()
        rej = np.flatnonzero(~ok)
        y[rej] = sample_from(rng, residual(p, pi)[0], rej.size)
        return y, ok
