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
so the exact acceptance enumerates the rejection paths; the last two levels are summed
in one array pass over all parent states.  Cost O(n^{k-1} · n); size limit
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


def _last_two_levels(states: list, q: np.ndarray) -> float:
    """Acceptance contributed by levels k − 1 and k below the given level-(k − 1) states
    (prob, r, Q, drafted mask), all states in one array pass.

    At level k − 1 draft x is accepted with Σ min(r, q_m); after rejecting x (probability
    (q_m − r)_+(x)) the last draft is accepted with f(c_x) = Σ_{z: q_z > 0} min(r'_z, c_x q_z),
    r' the normalised residual and c_x = 1/(1 − Q − q_x) summed over the undrafted tokens
    (no subtraction).  Row chunks keep the (pairs × n) block small.
    """
    if not states:
        return 0.0
    probs = np.array([s[0] for s in states])
    R = np.stack([s[1] for s in states])
    M = np.stack([s[3] for s in states])
    Qun = np.where(M, 0.0, q[None, :])
    rest = Qun.sum(axis=1)
    Qm = Qun / rest[:, None]
    acc = np.minimum(R, Qm).sum(axis=1)
    total = float(probs @ acc)
    live = acc < 1.0
    if not live.any():
        return total
    R, M, Qun, Qm, probs = R[live], M[live], Qun[live], Qm[live], probs[live]
    rej = np.clip(Qm - R, 0.0, None)
    rej[M] = 0.0
    rnew = np.clip(R - Qm, 0.0, None)
    s = rnew.sum(axis=1)
    rnew = np.divide(rnew, s[:, None], out=np.zeros_like(rnew), where=s[:, None] > 0)
    with np.errstate(divide="ignore", over="ignore"):  # (a subnormal rest: c = inf)
        cs = 1.0 / _stable.others_sum(Qun, axis=1)
    b, x = np.nonzero(rej > 0)
    pos = q > 0
    qp = q[pos]
    step = max(1, (1 << 20) // max(int(pos.sum()), 1))
    for lo in range(0, b.size, step):
        bb, xx = b[lo : lo + step], x[lo : lo + step]
        c = cs[bb, xx]
        with np.errstate(invalid="ignore", over="ignore"):
            f = np.minimum(rnew[bb][:, pos], c[:, None] * qp[None, :]).sum(axis=1)
        total += float((probs[bb] * rej[bb, xx]) @ f)
    return total


class RRSWithoutReplacement(Verifier):
    """RRS without replacement (Jeon et al.): exact acceptance by enumerating rejection
    paths (at most :data:`MAX_RRS_STATES` expanded states), both notions equal."""

    name = "rrs_wor"
    title = "RRS without replacement (Jeon et al.)"

    def _law(self, q: np.ndarray, k: int) -> DraftLaw:
        return WithoutReplacement(q, k)

    def _acceptance(self, p, q, k, notion):
        self._law(q, k)  # validates k <= |supp q|
        keep = (p > 0) | (q > 0)  # tokens outside both supports never carry mass: drop them
        if not keep.all():
            p, q = p[keep], q[keep]
        # Only ratios q/(1 − Q) and products c·q occur: an exact power-of-two rescaling keeps
        # subnormal masses (and 1/(their sum)) inside the float range.
        q, _ = _stable.rescale_tiny(q)
        total = 0.0
        # states: (prob, r, Q, drafted mask) at level m (1-based), all sharing nothing
        states = [(1.0, p.copy(), 0.0, np.zeros(p.size, dtype=bool))]
        expanded = 0
        for m in range(1, k + 1):
            if m + 1 == k:  # the last two levels, all parent states at once
                return total + _last_two_levels(states, q)
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
