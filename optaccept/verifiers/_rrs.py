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
Its exact acceptance (derived here; tested against the algorithm run in exact
Fractions on every draft path, tests/verifiers/test_verifiers_rrs_wor.py) comes from one fact.

**Lemma.** With :math:`Z(s) = \sum_y (p(y) - s\,q(y))_+`, along every rejection path
:math:`r^m = (p - t_m q)_+ / Z(t_m)`, where :math:`t_1 = 0` and
:math:`t_{m+1} = t_m + Z(t_m)/q(U_m)`, :math:`U_m` the tokens not drafted before step m.

*Proof sketch* (induction on m).  On :math:`U_m`, :math:`q_m = q/q(U_m)`, so
:math:`r^m - q_m = ((p - t_m q)_+ - (t_{m+1} - t_m) q)/Z(t_m)`, whose positive part is
:math:`(p - t_{m+1} q)_+/Z(t_m)` (where :math:`p \le t_m q` both sides vanish).  A drafted
token x_j was rejected, so :math:`r^j(x_j) < q_j(x_j)`, i.e. :math:`p(x_j) < t_{j+1} q(x_j)
\le t_{m+1} q(x_j)`: there :math:`r^m = 0 = (p - t_{m+1}q)_+`.  Normalising gives
:math:`r^{m+1}`.  ∎

Hence, with :math:`\rho_x = p(x)/q(x)`, at step m of a path (since
:math:`\min(a_+, c) = a_+ - (a - c)_+` for c ≥ 0, drafted tokens adding 0):

* P(accept) :math:`= \sum_y \min(r^m, q_m) = 1 - Z(t_{m+1})/Z(t_m)`;
* P(draft x ∈ U_m and reject it) :math:`= (q_m - r^m)_+(x)
  = q(x)\,[(t_{m+1} - \rho_x)_+ - (t_m - \rho_x)_+]/Z(t_m)`.

The path enters only through :math:`q(U_m)`, so P(all k rejected) is a sum over the
rejection paths of length k − 1 of these weights times :math:`Z(t_{k+1})/Z(t_k)`.  At
k = 2 (:math:`t_2 = 1`) it is one sum over the first draft:

.. math:: \alpha = 1 - \sum_x (q(x) - p(x))_+\; Z\bigl(1 + Z(1)/(1 - q(x))\bigr) / Z(1).

Z is piecewise linear in s with breakpoints at the ratios ρ: after one sort it is
evaluated in O(log n) per point without cancellation (:class:`_Excess`), so k = 2 costs
O(n log n); larger k expands the N_{k−2} ≤ n^{k−2} rejection paths of length k − 2 and
sums the last two levels of each in one O(n log n) pass.  Beyond :data:`MAX_RRS_STATES`
paths or :data:`MAX_RRS_WORK` token steps (a few seconds) the acceptance is refused with
a MethodError as soon as the count is known, before the sum.
"""

from __future__ import annotations

import numpy as np

from .._errors import MethodError
from .._lib import stable as _stable
from .._lib.rows import sample_rows
from ..drafts import IID, DraftLaw, WithoutReplacement
from ._base import Verifier, sample_from
from ._batched import rrs, rrs_chain

__all__ = ["RRS", "RRSWithoutReplacement", "rrs_residuals", "MAX_RRS_STATES", "MAX_RRS_WORK"]


def rrs_residuals(p: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Residuals r¹..r^{k+1} (rows of a (k+1, n) array) and the rejection
    probabilities TV(r^m, q), m = 1..k, of RRS with replacement (the batched
    :func:`optaccept.verifiers._batched.rrs_chain` on one row).

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Target and draft distributions.
    k : int
        Number of i.i.d. drafts.

    Returns
    -------
    residuals : ndarray of float64, shape (k + 1, n)
        Row m − 1 is r^m, the target law left after m − 1 rejections (r¹ = p).
    rejections : ndarray of float64, shape (k,)
        TV(r^m, q) for m = 1..k: the probability that draft m is rejected given the
        earlier ones were.
    """
    res, rho = rrs_chain(np.asarray(p, dtype=np.float64)[None], np.asarray(q, dtype=np.float64)[None], k)
    return np.concatenate(res, axis=0), rho[0]


class RRS(Verifier):
    """RRS with replacement (SpecInfer): α = 1 − ∏_{m=1}^{k} TV(r^m, q), both notions.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> [round(verifiers.RRS().acceptance(p, q, k), 4) for k in (1, 2, 3)]
    [0.68, 0.824, 0.8544]
    """

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


#: Largest number of rejection paths of length k − 2 that the exact acceptance of
#: :class:`RRSWithoutReplacement` expands (each then costs O(n log n)); MethodError beyond.
MAX_RRS_STATES = 200_000
#: Largest (rejection paths of length k − 2) × n, the token steps of that sum (a few
#: seconds); MethodError beyond, raised before the work.
MAX_RRS_WORK = 50_000_000


class _Excess:
    """Z(s) = Σ_i (p_i − s·q_i)₊ for any s ≥ 0, from one sort by ratio: O(log n) per point.

    With the ratios ρ_1 ≤ … ≤ ρ_M of the tokens with q > 0, Z at the breakpoints is
    accumulated from the top as a sum of non-negative terms,
    Z(ρ_{j−1}) = Z(ρ_j) + (ρ_j − ρ_{j−1})·q(ρ ≥ ρ_j), and between breakpoints
    Z(s) = Z(ρ_j) + (ρ_j − s)·q(ρ ≥ ρ_j), ρ_j the first ratio above s: no difference of
    two nearly equal sums.  Tokens with q = 0 add their p for every s.
    """

    def __init__(self, p: np.ndarray, q: np.ndarray) -> None:
        pos = q > 0
        ratio = p[pos] / q[pos]
        order = np.argsort(ratio, kind="stable")
        self.rho = ratio[order]
        self.qsuf = _stable.suffix_sums(q[pos][order])  # q(ρ ≥ ρ_j), length M + 1
        m = self.rho.size
        gaps = np.diff(self.rho) * self.qsuf[1:m]
        self.zb = np.zeros(m)
        self.zb[:-1] = np.cumsum(gaps[::-1])[::-1]
        self.free = float(p[~pos].sum())

    def __call__(self, s: np.ndarray | float) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        m = self.rho.size
        j = np.searchsorted(self.rho, s, side="right")
        jj = np.minimum(j, m - 1)
        with np.errstate(invalid="ignore"):  # (s = inf: no token left above it)
            z = np.where(j < m, self.zb[jj] + (self.rho[jj] - s) * self.qsuf[jj], 0.0)
        return z + self.free


def _refuse(count: int, n: int, k: int) -> None:
    if count > MAX_RRS_STATES or count * n > MAX_RRS_WORK:
        raise MethodError(
            f"rrs_wor exact acceptance at k = {k} on {n:,} tokens needs at least {count:,} rejection paths "
            f"× {n:,} tokens, above the limits of {MAX_RRS_STATES:,} paths and {MAX_RRS_WORK:,} token steps "
            f"(the cost grows like n^(k−1)); use a smaller k (k ≤ 2 takes O(n log n)) or rows cut to their top tokens"
        )


def _rrs_wor_rejection(p: np.ndarray, q: np.ndarray, k: int) -> float:
    r"""P(all k drafts rejected) of RRS without replacement (proof: the module docstring).

    A state at level m is (probability of the path, t_m, Z(t_m), q(undrafted), drafted
    tokens), the states held as arrays.  Levels 1 … k − 2 are expanded for chunks of states
    at once (in path order); each level-(k − 1) state sums its last two levels in one pass
    over the tokens (chunks of states at once).
    """
    n = p.size
    ex = _Excess(p, q)
    pos = q > 0
    with np.errstate(divide="ignore"):
        ratio = np.where(pos, p / np.where(pos, q, 1.0), np.inf)
    # level 1: t = 0, Z(0) = Σ p, nothing drafted
    prob, t, zt, rest = np.ones(1), np.zeros(1), np.array([float(p.sum())]), np.array([float(q.sum())])
    drafted = np.zeros((1, 0), dtype=np.int64)
    step = max(1, (1 << 21) // max(n, 1))
    for _ in range(1, k - 1):  # levels 1 … k − 2: expand the rejection paths
        parts, count = [], 0
        for lo in range(0, prob.size, step):
            cut = slice(lo, lo + step)
            c = zt[cut] / rest[cut]
            t1 = t[cut] + c
            z1 = ex(t1)
            live = np.flatnonzero(~(z1 <= 0.0))  # a state with Z(t1) ≤ 0 accepts its draft for sure
            if not live.size:
                continue
            w = _rejection_weights(q, ratio, t[cut][live], t1[live], c[live])
            d = drafted[cut][live]
            at = np.arange(live.size)[:, None]
            w[at, d] = 0.0
            b, x = np.nonzero(w > 0)
            count += b.size
            _refuse(count, n, k)
            q_un = np.broadcast_to(q, w.shape).copy()
            q_un[at, d] = 0.0
            rest_x = _stable.others_sum(q_un, axis=1)
            parts.append(
                (
                    prob[cut][live][b] * w[b, x] / zt[cut][live][b],
                    t1[live][b],
                    z1[live][b],
                    rest_x[b, x],
                    np.concatenate([d[b], x[:, None]], axis=1),
                )
            )
        if not parts:
            return 0.0
        prob, t, zt, rest, drafted = (np.concatenate(a) for a in zip(*parts, strict=True))
    if k == 1:
        return float(ex(t[0] + zt[0] / rest[0])) / float(zt[0])
    return _last_two_levels((prob, t, zt, rest, drafted), p, q, ratio, ex)


def _rejection_weights(q: np.ndarray, ratio: np.ndarray, t: np.ndarray | float, t1, c) -> np.ndarray:
    """Z(t)·P(draft x is drafted and rejected) at a step t → t1 = t + c (drafted tokens
    not yet zeroed): q_x·c where ρ_x ≤ t, q_x·(t1 − ρ_x) where t < ρ_x < t1, else 0.
    Undrafted tokens have q_x ≤ q(undrafted), so their weight is at most Z(t) ≤ 1; only
    drafted ones (zeroed by the caller) can overflow."""
    t, t1, c = (np.asarray(v, dtype=np.float64)[..., None] for v in (t, t1, c))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(ratio <= t, q * c, q * np.clip(t1 - ratio, 0.0, None))


#: Below this, Z(t)·Z(t1) is formed from factors that are themselves near the subnormal range.
_NORMAL_PRODUCT = 1e-290


def _last_two_levels(states: tuple, p: np.ndarray, q: np.ndarray, ratio: np.ndarray, ex: _Excess) -> float:
    """Σ over level-(k − 1) states of prob · Σ_x [w(x)/Z(t)] · Z(t2(x))/Z(t1), with
    t1 = t + Z(t)/rest, t2(x) = t1 + Z(t1)/(rest − q_x): chunks of states at once.
    ``states``: the arrays (prob, t, Z(t), rest, drafted tokens (states, k − 2))."""
    n = p.size
    total = 0.0
    step = max(1, (1 << 21) // max(n, 1))
    prob_all, t_all, zt_all, rest_all, drafted = states
    for lo in range(0, prob_all.size, step):
        cut = slice(lo, lo + step)
        prob, t, zt, rest = prob_all[cut], t_all[cut], zt_all[cut], rest_all[cut]
        c = zt / rest
        t1 = t + c
        z1 = ex(t1)
        live = z1 > 0
        if not live.any():
            continue
        rows = np.flatnonzero(live)
        w = _rejection_weights(q, ratio, t[rows], t1[rows], c[rows])
        q_un = np.broadcast_to(q, w.shape).copy()
        d = drafted[cut][rows]
        at = np.arange(rows.size)[:, None]
        w[at, d] = 0.0
        q_un[at, d] = 0.0
        rest_x = _stable.others_sum(q_un, axis=1)
        b, x = np.nonzero(w > 0)
        with np.errstate(divide="ignore", over="ignore"):
            t2 = t1[rows][b] + z1[rows][b] / rest_x[b, x]
        z2 = ex(t2)
        with np.errstate(over="ignore", divide="ignore"):
            scale = prob[rows] / (zt[rows] * z1[rows])
        # Z(t)·Z(t1) below the normal range (subnormal masses): the product loses its digits
        # or underflows; there the bounded factors w/Z(t) ≤ 1 and Z(t2)/Z(t1) ≤ 1 are formed first
        tiny = ~np.isfinite(scale) | (zt[rows] * z1[rows] < _NORMAL_PRODUCT)
        if tiny.any():
            sel = tiny[b]
            bs = b[sel]
            total += float(np.sum(prob[rows][bs] * (w[bs, x[sel]] / zt[rows][bs]) * (z2[sel] / z1[rows][bs])))
            scale = np.where(tiny, 0.0, scale)
        total += float(np.bincount(b, weights=w[b, x] * z2, minlength=rows.size) @ scale)
    return total


class RRSWithoutReplacement(Verifier):
    """RRS without replacement (Jeon et al.): exact acceptance from the residual lemma of
    the module docstring, O(n log n) at k ≤ 2 and O(N_{k−2}·n log n) beyond (N_{k−2} rejection
    paths of length k − 2, refused beyond :data:`MAX_RRS_STATES` / :data:`MAX_RRS_WORK`);
    both notions equal.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import verifiers
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> v = verifiers.RRSWithoutReplacement()
    >>> v.drafts(q, 2)
    WithoutReplacement(n=5, k=2)
    >>> round(v.acceptance(p, q, 2), 4)
    0.8487
    """

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
        return min(1.0, max(0.0, 1.0 - _rrs_wor_rejection(p, q, k)))

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
