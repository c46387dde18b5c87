r"""Recursive rejection sampling (RRS), with and without replacement.

With replacement (SpecInfer, Miao et al. 2024; = Yin et al.'s batch SD at one token):
k i.i.d. drafts from q; :math:`r^1 = p`; draft m is accepted with probability
:math:`\min(1, r^m(x_m)/q(x_m))`, else :math:`r^{m+1} = (r^m - q)_+ / \mathrm{TV}(r^m, q)`;
if all are rejected Y ~ :math:`r^{k+1}`.  The residuals do not depend on the drafts, so

.. math:: \alpha = 1 - \prod_{m=1}^{k} \mathrm{TV}(r^m, q)

(Yin et al., Theorem 3, whose target is q and draft p).  A rejected draft has
:math:`r^{m+1}(x_m) = 0`, so the residual never outputs a draft: both notions agree.

Without replacement (Jeon et al., *Recursive Speculative Decoding*, 2024): drafts by
successive sampling without replacement; draft m's law is
:math:`q_m = q\,1[\text{not yet drafted}] / (1 - q(\text{drafted}))`; accept with
:math:`\min(1, r^m(x_m)/q_m(x_m))`, else :math:`r^{m+1} = (r^m - q_m)_+` normalised.
The residual depends on the path through the masses :math:`q(x_1), q(x_1)+q(x_2), …`,
so the exact acceptance enumerates the rejection paths; the last level is summed in
O(n log n) per parent state by sorting r/q.  Cost O(n^{k-2} · n log n); size limit
:data:`MAX_RRS_STATES` parent states (MethodError beyond).
"""

from __future__ import annotations

import numpy as np

from .. import _stable
from .._errors import MethodError
from .._rows import sample_rows
from ..drafts import IID, DraftLaw, WithoutReplacement
from ._base import Verifier, normalised, sample_from
from ._batched import rrs, rrs_chain

__all__ = ["RRS", "RRSWithoutReplacement", "rrs_residuals", "MAX_RRS_STATES"]

#: Largest number of explicitly expanded rejection states (each costs O(n)).
MAX_RRS_STATES = 200_000


def rrs_residuals(p: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Residuals r¹..r^{k+1} (rows of a (k+1, n) array) and the rejection
    probabilities TV(r^m, q), m = 1..k, of RRS with replacement (the batched
    :func:`optaccept.verifiers._batched.rrs_chain` on one row)."""
    res, rho = rrs_chain(np.asarray(p, dtype=np.float64)[None], np.asarray(q, dtype=np.float64)[None], k)
    return np.concatenate(res, axis=0), rho[0]


class RRS(Verifier):
    """RRS with replacement (SpecInfer): α = 1 − ∏_{m=1}^{k} TV(r^m, q), both notions."""

    name = "rrs"
    title = "RRS with replacement (SpecInfer)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return IID(q, k)

    def _acceptance(self, p, q, k, notion):
        return float(rrs(p[None], q[None], k)[0])

    def _simulate(self, p, q, k, law, drafts, rng):
        res, _ = rrs_residuals(p, q, k)
        size = drafts.shape[0]
        y = np.full(size, -1, dtype=np.int64)
        acc = np.zeros(size, dtype=bool)
        alive = np.ones(size, dtype=bool)
        for m in range(k):
            idx = np.flatnonzero(alive)
            x = drafts[idx, m]
            ok = rng.random(idx.size) * q[x] < res[m][x]
            y[idx[ok]] = x[ok]
            acc[idx[ok]] = True
            alive[idx[ok]] = False
        idx = np.flatnonzero(alive)
        y[idx] = sample_from(rng, res[k], idx.size)
        return y, acc


def _min_sum_curve(r: np.ndarray, q: np.ndarray):
    """f(c) = Σ_z min(r(z), c q(z)) for many c ≥ 0, by sorting t = r/q once."""
    pos = q > 0
    with np.errstate(over="ignore"):  # r/q beyond 1e308: inf sorts last, as it should
        t = r[pos] / q[pos]
    order = np.argsort(t)
    t, rr, qq = t[order], r[pos][order], q[pos][order]
    cum_r = np.concatenate([[0.0], np.cumsum(rr)])
    tail_q = np.concatenate([np.cumsum(qq[::-1])[::-1], [0.0]])

    def f(c: np.ndarray) -> np.ndarray:
        j = np.searchsorted(t, c, side="right")  # tokens with t <= c give r, others c q
        with np.errstate(invalid="ignore", over="ignore"):
            return cum_r[j] + np.where(tail_q[j] > 0, c * tail_q[j], 0.0)  # (c = inf: no tail left)

    return f


class RRSWithoutReplacement(Verifier):
    """RRS without replacement (Jeon et al.): exact acceptance by enumerating rejection
    paths (at most :data:`MAX_RRS_STATES` expanded states), both notions equal."""

    name = "rrs_wor"
    title = "RRS without replacement (Jeon et al.)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return WithoutReplacement(q, k)

    def _acceptance(self, p, q, k, notion):
        self._law(q, k)  # validates k <= |supp q|
        # Only ratios q/(1 − Q) and products c·q occur: an exact power-of-two rescaling keeps
        # subnormal masses (and 1/(their sum)) inside the float range.
        q, _ = _stable.rescale_tiny(q)
        total = 0.0
        # states: (prob, r, Q, drafted mask) at level m (1-based), all sharing nothing
        states = [(1.0, p.copy(), 0.0, np.zeros(p.size, dtype=bool))]
        expanded = 0
        for m in range(1, k + 1):
            nxt = []
            for prob, r, Q, mask in states:
                # 1 − Q(drafted) as the sum over the undrafted tokens: no cancellation
                q_un = np.where(mask, 0.0, q)
                rest = float(q_un.sum())
                qm = q_un / rest
                acc = float(np.minimum(r, qm).sum())
                total += prob * acc
                if m == k or acc >= 1.0:
                    continue
                rej = np.clip(qm - r, 0.0, None)
                rej[mask] = 0.0
                rnew = normalised(r - qm)
                xs = np.flatnonzero(rej > 0)
                if m + 1 == k:  # last level: sum children in closed form
                    f = _min_sum_curve(rnew, q)
                    with np.errstate(divide="ignore", over="ignore"):  # (a subnormal rest: c = inf)
                        cs = 1.0 / _stable.others_sum(q_un)[xs]  # 1/(1 − Q − q_x), summed directly
                    total += prob * float((rej[xs] * f(cs)).sum())
                    continue
                expanded += xs.size
                if expanded > MAX_RRS_STATES:
                    raise MethodError(
                        f"rrs_wor exact acceptance: more than {MAX_RRS_STATES} rejection states "
                        f"(n = {p.size}, k = {k}); use a smaller vocabulary or k"
                    )
                for x in xs.tolist():
                    m2 = mask.copy()
                    m2[x] = True
                    nxt.append((prob * rej[x], rnew, Q + q[x], m2))
            states = nxt
        return total

    def _simulate(self, p, q, k, law, drafts, rng):
        size, n = drafts.shape[0], p.size
        q, _ = _stable.rescale_tiny(q)  # (only ratios q/(1 − Q) are used, see _acceptance)
        y = np.full(size, -1, dtype=np.int64)
        acc = np.zeros(size, dtype=bool)
        step = max(1, 4_000_000 // max(n, 1))
        for lo in range(0, size, step):
            d = drafts[lo : lo + step]
            rows = d.shape[0]
            r = np.tile(p, (rows, 1))
            alive = np.ones(rows, dtype=bool)
            yy = np.full(rows, -1, dtype=np.int64)
            aa = np.zeros(rows, dtype=bool)
            ar = np.arange(rows)
            for m in range(k):
                x = d[:, m]
                # 1 − Q(drafted) as the sum over the undrafted tokens (no cancellation)
                q_un = np.tile(q, (rows, 1))
                q_un[ar[:, None], d[:, :m]] = 0.0
                rest = q_un.sum(axis=1)
                qx = q[x] / rest
                ok = alive & (rng.random(rows) * qx < r[ar, x])
                yy[ok] = x[ok]
                aa[ok] = True
                alive &= ~ok
                # residual update for the rows still alive: (r - q_m)_+ with q_m = q / (1 - Q) off drafted
                qm = q_un / rest[:, None]
                newr = np.clip(r - qm, 0.0, None)
                s = newr.sum(axis=1)
                upd = alive & (s > 0)
                r[upd] = newr[upd] / s[upd, None]
            idx = np.flatnonzero(alive)
            yy[idx] = sample_rows(rng, r[idx])
            y[lo : lo + step] = yy
            acc[lo : lo + step] = aa
        return y, acc
