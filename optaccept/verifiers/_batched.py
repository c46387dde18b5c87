r"""Exact acceptance of practical verifiers for a batch of (target, draft) rows, numpy or torch.

:func:`batched_acceptance` evaluates, for rows ``p`` and ``q`` of shape (B, n) (numpy
arrays, or torch tensors on any device), the exact acceptance α of a verifier in closed
form — the same quantities as the verifier classes of :mod:`optaccept.verifiers`
(``.acceptance(p, q, k, notion=...)``), written once for both array libraries.  Every
complement of a mass close to 1 is computed directly (docs/theory.md §5 and
:mod:`optaccept._lib.stable`): 1 − β_i of a rejection step is Σ (q − r)₊, 1 − (1 − c)ᵏ is
``−expm1(k·log1p(−c))``, and 1 − Π(1 − β_i) is ``−expm1(Σ log(1 − β_i))``.

Verifiers (``verifier=``):

* ``"sd"`` — single-draft speculative sampling (Leviathan et al., arXiv:2211.17192;
  Chen et al., arXiv:2302.01318): Σ min(p, q).
* ``"nss"`` — ignore the drafts and sample p: Σ p(1 − (1 − q)ᵏ).
* ``"rrs"`` — recursive rejection sampling with i.i.d. drafts (SpecInfer, Miao et al.,
  arXiv:2305.09781): 1 − Π_i (1 − β_i), β_i = Σ min(q, r_i), r_1 = p,
  r_{i+1} ∝ (r_i − q)₊.
* ``"kseq"`` / ``"kseq-output"`` — SpecTr's K-SEQ (Sun et al., arXiv:2310.15141),
  "accepted by the rule" 1 − (1 − β(ρ*))ᵏ and "output ∈ drafts".
* ``"greedy"`` — Hu et al.'s greedy verifier for greedy drafts (ICLR 2025, §5), which
  attains α* of that law.

Letters: p is the target, q the draft, k the number of drafts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._lib import stable as _stable
from .._lib.rows import check_k, iter_rows, sorted_by_ratio, take_rows
from .._lib.stable import array_namespace, is_torch, one_minus_pow1m
from .._lib.validation import check_choice
from ..optimal._batched import greedy_rows

__all__ = ["VERIFIERS", "batched_acceptance", "kseq_both", "kseq_parts", "rrs_chain"]

#: Verifiers accepted by :func:`batched_acceptance`.
VERIFIERS = ("sd", "nss", "rrs", "kseq", "kseq-output", "greedy")


def _clip(x: Any, lo: float | None = None, hi: float | None = None) -> Any:
    if is_torch(x):
        return x.clamp(min=lo, max=hi)
    return np.clip(x, lo, hi)


def _pos(x: Any) -> Any:
    """(x)₊."""
    return _clip(x, 0.0)


def _normalise(r: Any) -> Any:
    xp = array_namespace(r)
    mass = r.sum(1)[:, None]
    return r / xp.where(mass > 0, mass, xp.ones_like(mass))


def sd(p: Any, q: Any) -> Any:
    return _minimum(p, q).sum(1)


def _minimum(a: Any, b: Any) -> Any:
    return array_namespace(a).minimum(a, b)


def _hit_probability(q: Any, k: int) -> Any:
    """1 − (1 − q)ᵏ: q·Σ_{j<k} (1 − q)ʲ by Horner for k ≤ 16 (relative accuracy ~k ulps
    for every q, no cancellation: the sum is ≥ 1), else −expm1(k·log1p(−q))."""
    q = _clip(q, 0.0, 1.0)
    if k > 16:
        return one_minus_pow1m(q, k)
    c = 1.0 - q
    acc = 1.0 + 0.0 * q
    for _ in range(k - 1):
        acc = 1.0 + c * acc
    return q * acc


def nss(p: Any, q: Any, k: int) -> Any:
    return (p * _hit_probability(q, k)).sum(1)


def rrs_chain(p: Any, q: Any, k: int) -> tuple[list, Any]:
    """The residuals r_1 = p, …, r_{k+1} of RRS with replacement (each of shape (B, n);
    r_{i+1} = (r_i − q)₊ normalised, :func:`optaccept._lib.stable.residual`'s convention where
    that is 0) and the rejection probabilities ρ_i = 1 − β_i = Σ (q − r_i)₊ (B, k), summed
    directly (β_i ≈ 1 would cancel)."""
    xp = array_namespace(p)
    res, rho = [p], []
    for _ in range(k):
        r = res[-1]
        rho.append(_clip(_pos(q - r).sum(1), 0.0, 1.0))
        res.append(_stable.residual(r, q)[0])
    return res, xp.stack(rho, 1) if is_torch(p) else np.stack(rho, 1)


def rrs(p: Any, q: Any, k: int) -> Any:
    """1 − Π_i (1 − β_i) = −expm1(Σ_i log ρ_i) (:func:`rrs_chain`; a rejected draft has
    r_{i+1} = 0 there, so the final residual sample never repeats one)."""
    xp = array_namespace(p)
    _, rho = rrs_chain(p, q, k)
    with np.errstate(divide="ignore"):
        return -xp.expm1(xp.log(rho).sum(1))


def _kseq_rho(p: Any, q: Any, k: int, iters: int = 120) -> Any:
    """ρ* = the smallest ρ ∈ [1, k] with g(ρ) = D(ρ)ᵏ − Z(ρ) ≥ 0, per row, where
    D(ρ) = Σ (q − p/ρ)₊ = 1 − β(ρ) and Z(ρ) = Σ (p − ρq)₊ = 1 − ρβ(ρ), so that
    g(ρ) = ρβ(ρ) − p_acc(ρ): the feasibility condition of K-SEQ written as a difference of
    two sums of non-negative terms (no 1 − (1 − β)ᵏ against ρβ, both ≈ 1 when Z is small).
    Where Z ≥ 1/2 the form ρβ − p_acc (then two terms ≤ 1/2, p_acc by expm1/log1p) is used
    instead: each sign comes from the form whose terms are small.

    g is non-decreasing (D grows, Z falls), g(1) = TVᵏ − TV ≤ 0 and g(k) ≥ 0.  With the
    tokens sorted by r_i = p_i/q_i, D and Z at every breakpoint come from cumulative sums of
    non-negative increments (tokens with p = 0 or q = 0 add a constant), which locate the
    segment of the smallest root; on it D(ρ) = D(lo) + (1/lo − 1/ρ)·p(r ≤ lo) and
    Z(ρ) = Z(hi) + (hi − ρ)·q(r ≥ hi), with D(lo) and Z(hi) summed directly, and bisection
    ends at the smallest float with g ≥ 0 (so the returned ρ is on the feasible side:
    γ = p_acc/β ≤ ρ).  ρ* = 1 when g(1) ≥ 0 (p = q, disjoint supports, k = 1).
    """
    xp = array_namespace(p)
    _, ps, qs = sorted_by_ratio(p, q)
    posq, posp = qs > 0, ps > 0
    inf = float("inf")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (huge ratios: ∞)
        r = xp.where(posq, ps / xp.where(posq, qs, xp.ones_like(qs)), xp.full_like(qs, inf))
        s = xp.where(posp, qs / xp.where(posp, ps, xp.ones_like(ps)), xp.full_like(ps, inf))  # 1/r
    P = _stable.prefix_sums(ps, axis=1)  # P[j] = p(first j tokens)
    Qs = _stable.suffix_sums(qs, axis=1)  # Qs[j] = q(tokens j, j+1, …)
    # r > 2^600 (q = 0, or q negligible next to p): p_i − ρq_i = p_i to 2^-590 for ρ ≤ k, so
    # p_i enters Z as a constant and q_i leaves the increments below (a subnormal mass times
    # a huge ratio would carry no precision); s = 1/r > 2^600 likewise for D
    big = 2.0**600
    zf, df = r > big, s > big
    zero = xp.zeros_like(ps)
    z_free = xp.where(zf, ps, zero).sum(1)[:, None]
    d_free = xp.where(df, qs, zero).sum(1)[:, None]
    Qz = _stable.suffix_sums(xp.where(zf, zero, qs), axis=1)
    Pd = _stable.prefix_sums(xp.where(df, zero, ps), axis=1)
    # Z(r_j) = Z(r_{j+1}) + (r_{j+1} − r_j)·q(tokens > j), summed from the top; D from the bottom
    with np.errstate(invalid="ignore", over="ignore"):
        z_inc = (r[:, 1:] - r[:, :-1]) * Qz[:, 1:-1]
        z_inc = xp.where(xp.isfinite(z_inc), z_inc, xp.zeros_like(z_inc))
        d_inc = (s[:, :-1] - s[:, 1:]) * Pd[:, 1:-1]
        d_inc = xp.where(xp.isfinite(d_inc), d_inc, xp.zeros_like(d_inc))
    z_at = _stable.suffix_sums(z_inc, axis=1) + z_free  # length n: Z at r_0 … r_{n−1}
    d_at = _stable.prefix_sums(d_inc, axis=1) + d_free  # D at r_0 … r_{n−1}
    rc = _clip(r, 1.0, float(k))
    beta_at = _clip(P[:, 1:] / rc + Qs[:, 1:], 0.0, 1.0)  # β at the breakpoints, small terms
    g_at = xp.where(z_at < 0.5, _clip(d_at, 0.0, 1.0) ** k - z_at, rc * beta_at - one_minus_pow1m(beta_at, k))
    inside = (r >= 1) & (r <= k)
    m = (r < 1).sum(1) + (inside & (g_at < 0)).sum(1)  # breakpoints below the root
    n = r.shape[1]
    if is_torch(r):
        r_pad = xp.cat([xp.zeros_like(r[:, :1]), r, xp.full_like(r[:, :1], inf)], 1)
        up = (m + 1).clamp(max=n + 1)
    else:
        r_pad = np.concatenate([np.zeros_like(r[:, :1]), r, np.full_like(r[:, :1], inf)], 1)
        up = np.minimum(m + 1, n + 1)
    lo0 = _clip(take_rows(r_pad, m[:, None])[:, 0], 1.0, float(k))
    hi0 = _clip(take_rows(r_pad, up[:, None])[:, 0], 1.0, float(k))
    Pm = take_rows(P, m[:, None])[:, 0]  # p of the tokens with r ≤ lo
    Qm = take_rows(Qs, m[:, None])[:, 0]  # q of the tokens with r ≥ hi
    d_lo = _pos(qs - ps / lo0[:, None]).sum(1)
    z_hi = _pos(ps - hi0[:, None] * qs).sum(1)

    def feasible(rho: Any) -> Any:
        d = _clip(d_lo + (1.0 / lo0 - 1.0 / rho) * Pm, 0.0, 1.0)
        beta = _clip(Pm / rho + Qm, 0.0, 1.0)
        z = z_hi + (hi0 - rho) * Qm
        # the form whose two terms are small: Dᵏ and Z when Z < 1/2, else ρβ = 1 − Z and p_acc
        g = xp.where(z < 0.5, d**k - z, Pm + rho * Qm - one_minus_pow1m(beta, k))
        return g >= 0

    lo, hi = lo0, hi0
    for _ in range(iters):
        mid = (lo + hi) / 2
        ok = feasible(mid)
        lo = xp.where(ok, lo, mid)
        hi = xp.where(ok, mid, hi)
    return xp.where(feasible(lo0), lo0, hi)


def kseq_parts(p: Any, q: Any, k: int) -> tuple[Any, Any, Any, Any, Any]:
    """(ρ*, min(q, p/ρ*), β, p_acc, residual) of K-SEQ: ρ* on its feasible side (the
    residual (p − γ·min(q, p/ρ*))₊ with γ = p_acc/β ≤ ρ* loses no mass to the clipping),
    β = Σ min(q, p/ρ*), p_acc = 1 − (1 − β)ᵏ; the residual is unnormalised (total (1 − β)ᵏ
    at the exact root)."""
    xp = array_namespace(p)
    rho = _kseq_rho(p, q, k)
    mq = _minimum(q, p / rho[:, None])
    beta = _clip(mq.sum(1), 0.0, 1.0)
    p_acc = one_minus_pow1m(beta, k)
    gamma = xp.where(beta > 0, p_acc / xp.where(beta > 0, beta, xp.ones_like(beta)), xp.zeros_like(beta))
    return rho, mq, beta, p_acc, _pos(p - gamma[:, None] * mq)


def kseq_both(p: Any, q: Any, k: int, *, output: bool = True) -> tuple[Any, Any]:
    """SpecTr's K-SEQ: accept the first x_i with ρ* U_i ≤ p(x_i)/q(x_i).  Returns
    ("accepted by the rule", "output ∈ drafts").

    The rule accepts with p_acc = 1 − (1 − β(ρ*))ᵏ.  "Output ∈ drafts" adds
    P(all rejected) · P(residual sample ∈ drafts | all rejected): given rejection the
    drafts are i.i.d. ~ u/(1 − β), u = q − min(q, p/ρ*) = (q − p/ρ*)₊, and the residual is
    ∝ (p − γ min(p/ρ*, q))₊, γ = p_acc/β.
    """
    xp = array_namespace(p)
    rho, mq, beta, p_acc, res_raw = kseq_parts(p, q, k)
    if not output:
        return p_acc, p_acc
    mass = res_raw.sum(1)
    res = _normalise(res_raw)
    u_law = _normalise(_pos(q - p / rho[:, None]))
    hit = (res * _hit_probability(u_law, k)).sum(1)
    rejected = _stable.pow1m(beta, k)  # (1 − β)ᵏ
    return p_acc, p_acc + rejected * xp.where(mass > 0, hit, xp.zeros_like(hit))


def greedy(p: Any, q: Any, k: int, offset: int = 0) -> Any:
    """Hu et al.'s greedy verifier: the sampled last draft X ~ q̃ is accepted w.p.
    min(1, p(X)/q̃(X)); else a sample from r ∝ p on T, (p − q̃)₊ off T.  The output is a
    draft when X is accepted or r lands in T (r is 0 at a rejected X):
    α = p(T) + Σ_{y∉T} min(q̃(y), p(y)) = α* of the greedy draft law — the solvers'
    formula (:func:`optaccept.optimal._batched.greedy_rows`), not restated here."""
    return greedy_rows(p, q, k, False, offset)[0]


def batched_acceptance(p: Any, q: Any, k: int, verifier: str = "rrs", *, device: Any = None) -> Any:
    r"""Exact acceptance α of a practical verifier, batched over rows.

    Parameters
    ----------
    p, q : array_like or torch.Tensor, shape (B, n)
        Target and draft rows (the library's sum rule; a 1-D pair is one row).  numpy
        input is computed in numpy (torch is not needed).
    k : int
        Number of drafts (``"sd"`` uses one whatever k is).
    verifier : {"sd", "nss", "rrs", "kseq", "kseq-output", "greedy"}
        See the module docstring.
    device : str or torch.device, optional
        Compute on this torch device (``"auto"``: cuda when available).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape (B,)
        numpy for numpy input, a tensor on the compute device for tensor input.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept.verifiers import batched_acceptance
    >>> p = np.array([[.5, .3, .2]]); q = np.array([[.2, .3, .5]])
    >>> batched_acceptance(p, q, 2, "rrs").round(6)
    array([0.76])
    """
    k = check_k(k)
    check_choice("verifier", verifier, VERIFIERS)
    parts, done = [], 0
    for rows in iter_rows(p, q, device):
        parts.append(rows.out(_one_chunk(rows.p, rows.q, k, verifier, done)))
        done += int(rows.p.shape[0])
    if len(parts) == 1:
        return parts[0]
    if is_torch(parts[0]):
        import torch

        return torch.cat(parts)
    return np.concatenate(parts)


def _one_chunk(pr: Any, qr: Any, k: int, verifier: str, offset: int) -> Any:
    if pr.shape[0] == 0:
        return pr.sum(1)
    if verifier == "sd":
        return sd(pr, qr)
    if verifier == "nss":
        return nss(pr, qr, k)
    if verifier == "rrs":
        return rrs(pr, qr, k)
    if verifier == "kseq":
        return kseq_both(pr, qr, k, output=False)[0]
    if verifier == "kseq-output":
        return kseq_both(pr, qr, k, output=True)[1]
    return greedy(pr, qr, k, offset)
