"""Batched optimal acceptance α* and verifier acceptances in torch.

Every function takes a batch of target rows ``p`` and draft rows ``q`` of shape
``(B, n)`` (numpy arrays or torch tensors, on CPU or GPU) and returns the ``B``
values, as a numpy array for numpy input and as a tensor on the input's device
for tensor input.  The formulas are those of the numpy core (docs/theory.md §2, §5);
here they run over whole batches at full vocabulary size.

Letters: p is the target, q the draft, k the number of drafts, n the
vocabulary.  Khisti et al. and Yin et al. call the target q and the draft p;
Hu et al. call the number of drafts n.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from .._errors import InputError

__all__ = [
    "DRAFT_LAWS",
    "VERIFIERS",
    "batched_optimal_acceptance",
    "batched_verifier_acceptance",
    "resolve_device",
]

#: Draft laws accepted by :func:`batched_optimal_acceptance`.
DRAFT_LAWS = ("iid", "swor", "greedy")
#: Verifiers accepted by :func:`batched_verifier_acceptance`.
VERIFIERS = ("sd", "nss", "rrs", "kseq", "kseq-output", "greedy")

# Without-replacement quadrature: composite Gauss-Legendre panels
# [0, H0], then [a, GROWTH * a] up to T0 / r (r = the integrand's decay rate).
_GL_NODES = 16
_H0 = 0.5
_GROWTH = 1.5
_T0 = 50.0
# Tokens with q_i * t_max <= _RHO enter through a power series of their moments.
_RHO = 1.0 / 32.0
_EXTRA_TERMS = 12
# Bound on the entries of one (rows, candidates, nodes, k) work tensor.
_CHUNK_ELEMENTS = 4_000_000


def resolve_device(device: Any = "auto") -> torch.device:
    """``"auto"`` gives ``cuda`` when available, else ``cpu``; anything else goes
    to :class:`torch.device`."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InputError(f"device: not a torch device ({exc})") from None


def _as_batch(p: Any, q: Any, device: Any) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Validate and convert ``p``, ``q`` to tensors of shape (B, n)."""
    was_numpy = not isinstance(p, torch.Tensor)
    tensors = []
    for name, x in (("p", p), ("q", q)):
        if isinstance(x, torch.Tensor):
            t = x.detach()
        else:
            try:
                arr = np.asarray(x)
            except (TypeError, ValueError):
                raise InputError(f"{name}: must be a numeric array") from None
            if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
                raise InputError(f"{name}: must be a numeric array, got dtype {arr.dtype}")
            if arr.dtype not in (np.float32, np.float64):
                arr = arr.astype(np.float64)
            # No copy when the array is writable (nothing below writes into it); torch
            # refuses to wrap a read-only array, so that one is copied.
            arr = np.ascontiguousarray(arr)
            t = torch.from_numpy(arr if arr.flags.writeable else arr.copy())
        if not t.is_floating_point():
            t = t.to(torch.float64)
        if t.dtype not in (torch.float32, torch.float64):
            t = t.to(torch.float32)
        if t.ndim == 1:
            t = t.unsqueeze(0)
        if t.ndim != 2:
            raise InputError(f"{name}: must have shape (B, n), got {tuple(t.shape)}")
        tensors.append(t)
    pt, qt = tensors
    if pt.shape != qt.shape:
        raise InputError(f"p and q: shapes differ ({tuple(pt.shape)} vs {tuple(qt.shape)})")
    if pt.shape[1] == 0:
        raise InputError("p: the vocabulary must have at least one token")
    dtype = torch.float64 if torch.float64 in (pt.dtype, qt.dtype) else torch.float32
    dev = resolve_device(device) if device is not None else pt.device
    pt = pt.to(device=dev, dtype=dtype)
    qt = qt.to(device=dev, dtype=dtype)
    tol = 1e-6 if dtype == torch.float64 else 1e-4
    for name, t in (("p", pt), ("q", qt)):
        if t.shape[0] == 0:
            continue
        sums = t.sum(dim=1)  # NaN and inf propagate into the row sums
        if not bool(torch.isfinite(sums).all()):
            raise InputError(f"{name}: contains NaN or infinite entries")
        if float(t.min()) < 0:
            raise InputError(f"{name}: contains negative entries")
        err = (sums - 1).abs()
        if bool((err > tol).any()):
            row = int(torch.argmax(err))
            raise InputError(
                f"{name}: row {row} sums to {float(t[row].sum())!r}, not 1 within {tol:g}"
            )
    return pt, qt, was_numpy


def _default_batch(drafts: str, device: torch.device) -> int:
    """Rows per chunk: small on the CPU, where (8, 49152) float64 arrays stay in
    cache and run faster than big batches; large on a GPU."""
    if device.type == "cpu":
        return 16 if drafts == "swor" else 8
    return 256 if drafts == "swor" else 4096


def _out(x: torch.Tensor, was_numpy: bool) -> Any:
    return x.cpu().numpy() if was_numpy else x


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputError(f"k: must be an integer, got {k!r}")
    if k < 1:
        raise InputError(f"k: must be at least 1, got {k}")
    return int(k)


def _argsort_rows(key: torch.Tensor) -> torch.Tensor:
    """Row-wise argsort; on the CPU numpy's sort is several times faster."""
    if key.device.type == "cpu":
        return torch.from_numpy(np.argsort(key.numpy(), axis=1))
    return torch.argsort(key, dim=1)


def _smallest_sorted(key: torch.Tensor, m: int) -> torch.Tensor:
    """The m smallest entries of each row, ascending (m small)."""
    vals = torch.topk(key, m, dim=1, largest=False).values
    return torch.sort(vals, dim=1).values


def _top_mask(q: torch.Tensor, m: int) -> torch.Tensor:
    """Mask of the m largest entries of each row, ties broken by lower index."""
    if m == 0:
        return torch.zeros_like(q, dtype=torch.bool)
    v = torch.topk(q, m, dim=1).values[:, -1:]
    above = q > v
    tied = q == v
    need = m - above.sum(dim=1, keepdim=True)
    if bool((tied.sum(dim=1, keepdim=True) <= need).all()):  # no tie to break
        return above | tied
    return above | (tied & (torch.cumsum(tied.to(torch.int64), dim=1) <= need))


_SORT_MEMO: dict | None = None


@contextlib.contextmanager
def shared_sort() -> Iterator[None]:
    """Within this block, rows sorted by p/q are computed once per (p, q) batch and
    reused by every solver (the batch arrays must stay alive and unchanged)."""
    global _SORT_MEMO
    outer = _SORT_MEMO
    _SORT_MEMO = {} if outer is None else outer
    try:
        yield
    finally:
        _SORT_MEMO = outer


def _sorted_by_ratio(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of p and q sorted by p/q ascending, tokens with q = 0 last."""
    if _SORT_MEMO is not None:
        key = (p.data_ptr(), q.data_ptr(), tuple(p.shape), p.dtype, str(p.device))
        if key not in _SORT_MEMO:
            _SORT_MEMO.clear()  # one batch at a time
            _SORT_MEMO[key] = _sort_rows(p, q)
        return _SORT_MEMO[key]
    return _sort_rows(p, q)


def _sort_rows(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # p/q is +inf where q = 0 < p and NaN where p = q = 0; numpy and torch both
    # sort NaN after +inf, so every token with q = 0 comes last.
    order = _argsort_rows(p / q)
    return torch.gather(p, 1, order), torch.gather(q, 1, order)


def _prefix_sums(x: torch.Tensor) -> torch.Tensor:
    """(B, n) -> (B, n + 1) cumulative sums starting at 0."""
    zero = torch.zeros(x.shape[0], 1, dtype=x.dtype, device=x.device)
    return torch.cat([zero, torch.cumsum(x, dim=1)], dim=1)


def _suffix_sums(x: torch.Tensor) -> torch.Tensor:
    """(B, n) -> (B, n + 1): entry j is the sum of x[:, j:]."""
    zero = torch.zeros(x.shape[0], 1, dtype=x.dtype, device=x.device)
    return torch.cat([torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1]), zero], dim=1)


def _iid(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    ps, qs = _sorted_by_ratio(p, q)
    P, Q = _prefix_sums(ps), _prefix_sums(qs)
    vals = P + 1 - Q.clamp(0, 1) ** k
    return vals.min(dim=1).values.clamp(max=1.0)


def _greedy(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    n = q.shape[1]
    if k == 1:
        return torch.minimum(p, q).sum(dim=1)
    if k > n:
        raise InputError(f"k: Greedy needs k <= n, got k={k}, n={n}")
    in_t = _top_mask(q, k - 1)
    rest = torch.where(in_t, torch.zeros_like(q), q)
    mass = rest.sum(dim=1, keepdim=True)
    if bool((mass <= 0).any()):
        row = int(torch.argmin(mass[:, 0]))
        raise InputError(
            f"q: row {row} puts all its mass on its k-1 = {k - 1} most likely tokens; "
            "Greedy needs mass outside them"
        )
    q_tilde = rest / mass
    p_t = torch.where(in_t, p, torch.zeros_like(p)).sum(dim=1)
    off = torch.where(in_t, torch.zeros_like(p), torch.minimum(p, q_tilde)).sum(dim=1)
    return p_t + off


def _check_support(q: torch.Tensor, k: int) -> None:
    support = (q > 0).sum(dim=1)
    if bool((support < k).any()):
        row = int(torch.argmin(support))
        raise InputError(
            f"k: drawing k={k} tokens without replacement needs k <= |supp q|, "
            f"but row {row} of q has {int(support[row])} positive entries"
        )


def _swor_k2(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """k = 2: D(S) = sum_{i in S} q_i (q(S) - q_i) / (1 - q_i), by prefix sums."""
    ps, qs = _sorted_by_ratio(p, q)
    P, Q = _prefix_sums(ps), _prefix_sums(qs)
    A = _prefix_sums(qs / (1 - qs))
    C = _prefix_sums(qs * qs / (1 - qs))
    D = (Q * A - C).clamp(0, 1)
    return (P + 1 - D).min(dim=1).values.clamp(max=1.0)


def _gauss_legendre_grid(t_end: float, device: torch.device) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes/weights on [0, t_end): panels geometric in t."""
    x, w = np.polynomial.legendre.leggauss(_GL_NODES)
    edges = [0.0, _H0]
    while edges[-1] < t_end:
        edges.append(edges[-1] * _GROWTH)
    a = np.array(edges[:-1])[:, None]
    b = np.array(edges[1:])[:, None]
    nodes = (a + (b - a) * (x + 1) / 2).ravel()
    weights = ((b - a) / 2 * w).ravel()
    return nodes, weights


def _series_coefficients(k: int, terms: int) -> np.ndarray:
    """C[l-1, m] with (e^x - 1)^l = sum_m C[l-1, m] x^m, l = 1..k-1, m = 0..terms."""
    base = np.array([0.0] + [1.0 / math.factorial(m) for m in range(1, terms + 1)])
    out = np.zeros((k - 1, terms + 1))
    cur = np.zeros(terms + 1)
    cur[0] = 1.0
    for row in range(k - 1):
        cur = np.convolve(cur, base)[: terms + 1]
        out[row] = cur
    return out


def _swor_general(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    """α* for drafts without replacement, any k, by prefix search and quadrature.

    For a prefix S = S_j of the p/q order, with λ = q(Ω∖S),
    ``f(j) = p(S) + λ ∫_0^∞ e^{-λt} P(N_S(t) <= k-1) dt`` where N_S(t) counts the
    tokens of S whose exponential clock (rate q_i) rang by time t.  Only
    prefixes whose with-replacement lower bound ``p(S) + 1 - q(S)^k`` is below
    an upper bound of the minimum are evaluated.  The generating function of
    N_S(t) is the product of the "big" tokens' factors (1 - a_i + a_i z),
    a_i = 1 - e^{-q_i t}, by a sequential recursion, times that of the "small"
    tokens (q_i t <= ρ) from the power series of their moments.
    """
    dev, dt = q.device, torch.float64
    p = p.to(dt)
    q = q.to(dt)
    B, n = q.shape
    ps, qs = _sorted_by_ratio(p, q)
    P = _prefix_sums(ps)
    Q = _prefix_sums(qs)
    lam = _suffix_sums(qs)  # q(Ω∖S_j)
    # Lower bound of f (D_swor(S) <= q(S)^k) and upper bound of min f
    # (D_swor(S) >= prod_m (q(S) - m c)/(1 - m c), c = max q on S).
    lower = P + 1 - Q.clamp(0, 1) ** k
    cmax = torch.cat([torch.zeros(B, 1, dtype=dt, device=dev), torch.cummax(qs, 1).values], 1)
    low_d = torch.ones_like(Q)
    for m in range(k):
        den = 1 - m * cmax
        fac = torch.where(den > 0, (Q - m * cmax).clamp_min(0) / den.clamp_min(1e-300), 0.0)
        low_d = low_d * fac.clamp(0, 1)
    upper = (P + 1 - low_d).min(dim=1).values.clamp(max=1.0)
    # f(j) >= lower(j): only prefixes with lower(j) <= upper can hold the minimum,
    # and those with lower(j) >= 1 cannot beat f(0) = 1 (the final clamp).
    cand = (lower <= upper[:, None] + 1e-12) & (lower < 1)
    cand[:, 0] = False
    n_cand = cand.sum(dim=1)
    c_max = int(n_cand.max()) if B else 0
    result = upper.clone()
    if c_max == 0:
        return result.clamp(max=1.0)
    # Candidate prefix lengths, padded with the last candidate of the row.
    pos = torch.arange(n + 1, device=dev).expand(B, n + 1)
    key = torch.where(cand, pos, torch.full_like(pos, n + 1))
    cidx = _smallest_sorted(key, c_max)
    valid = cidx <= n
    cidx = torch.where(valid, cidx, cidx[:, :1].clamp(max=n))
    # Decay rate of the integrand, and a per-row quadrature range.
    top = (
        torch.topk(qs, k - 1, dim=1).values.sum(dim=1)
        if k > 1
        else torch.zeros(B, dtype=dt, device=dev)
    )
    rate = (1 - top).clamp_min(1e-12)
    t_end = _T0 / rate
    nodes, weights = _gauss_legendre_grid(float(t_end.max()), dev)
    t_all = torch.as_tensor(nodes, dtype=dt, device=dev)
    w_all = torch.as_tensor(weights, dtype=dt, device=dev)
    # Keep, per row, the panels starting before its t_end; clamp t beyond.
    n_nodes = _GL_NODES
    edges = [0.0, _H0]
    while len(edges) - 1 < len(nodes) // n_nodes:
        edges.append(edges[-1] * _GROWTH)
    left = torch.as_tensor(np.repeat(edges[:-1], n_nodes), dtype=dt, device=dev)
    right = torch.as_tensor(np.repeat(edges[1:], n_nodes), dtype=dt, device=dev)
    keep = left[None, :] < t_end[:, None]  # (B, G)
    t_hi = torch.where(keep, right[None, :], torch.zeros_like(keep, dtype=dt)).max(dim=1).values
    w = torch.where(keep, w_all[None, :], torch.zeros((), dtype=dt, device=dev))
    t = torch.minimum(t_all[None, :], t_hi[:, None])  # (B, G)
    # Small and big tokens.
    small = qs * t_hi[:, None] <= _RHO
    terms = k - 1 + _EXTRA_TERMS
    # Moments of the small tokens on each candidate prefix: M[b, c, m] = sum q_i^m.
    qsmall = torch.where(small, qs, torch.zeros((), dtype=dt, device=dev))
    moments = []
    powq = torch.ones_like(qsmall)
    for _ in range(terms):
        powq = powq * qsmall
        moments.append(torch.gather(_prefix_sums(powq), 1, cidx))
    M = torch.stack(moments, dim=2)  # (B, C, terms), m = 1..terms
    # Big tokens (q_i t > ρ somewhere on the row's grid), in sorted order.
    big = ~small & (qs > 0)
    nbig_prefix = _prefix_sums(big.to(dt)).round().long()
    s_all = torch.gather(nbig_prefix, 1, cidx)  # big tokens before each candidate
    s_all = torch.where(valid, s_all, torch.zeros_like(s_all))
    s_max = int(s_all.max())
    big_key = torch.where(big, pos[:, :n], torch.full_like(pos[:, :n], n))
    big_order = _smallest_sorted(big_key, s_max)
    big_q = torch.where(
        big_order < n,
        torch.gather(qs, 1, big_order.clamp(max=n - 1)),
        torch.zeros((), dtype=dt, device=dev),
    )
    G = t.shape[1]
    coef = torch.as_tensor(_series_coefficients(k, terms)[:, 1:], dtype=dt, device=dev)
    tpow = t[:, :, None] ** torch.arange(1, terms + 1, dtype=dt, device=dev)  # (B, G, m)
    signs = torch.tensor([(-1.0) ** (j + 1) / j for j in range(1, k)], dtype=dt, device=dev)
    lam_all = torch.gather(lam, 1, cidx)
    p_all = torch.gather(P, 1, cidx)
    chunk = max(1, _CHUNK_ELEMENTS // (B * G * k))
    for c0 in range(0, c_max, chunk):
        sl = slice(c0, c0 + chunk)
        Mc, s_c, lam_c = M[:, sl], s_all[:, sl], lam_all[:, sl]
        C = Mc.shape[1]
        # Small tokens: prod (1 - a_i + a_i z) = e^{-t q_small(S)} exp(sum_j (-1)^{j+1} p_j z^j / j)
        # with power sums p_j of r_i = e^{q_i t} - 1 from the moments (series in q_i t).
        psum = torch.einsum("lm,bcm,bgm->bcgl", coef, Mc, tpow)
        g = psum * signs  # log-series coefficients, degree 1..k-1
        E = [torch.ones_like(g[..., 0])]
        for m in range(1, k):
            acc = torch.zeros_like(E[0])
            for j in range(1, m + 1):
                acc = acc + j * g[..., j - 1] * E[m - j]
            E.append(acc / m)
        small_cum = torch.cumsum(torch.stack(E, dim=-1), dim=-1)  # (B, C, G, k)
        # Big tokens: e_m <- (1 - a) e_m + a e_{m-1}, captured at each candidate.
        state = torch.zeros(B, G, k, dtype=dt, device=dev)
        state[:, :, 0] = 1.0
        big_state = torch.zeros(B, C, G, k, dtype=dt, device=dev)
        s_np = s_c.cpu().numpy()
        groups = {int(v): np.nonzero(s_np == v) for v in np.unique(s_np)}
        for step in range(int(s_np.max()) + 1):
            if step > 0:
                a = (-torch.expm1(-big_q[:, step - 1, None] * t))[:, :, None]  # (B, G, 1)
                new_state = (1 - a) * state
                new_state[:, :, 1:] += a * state[:, :, :-1]
                state = new_state
            if step in groups:
                bi, ci = groups[step]
                bi_t = torch.as_tensor(bi, device=dev)
                big_state[bi_t, torch.as_tensor(ci, device=dev)] = state[bi_t]
        # P(N_S(t) <= k-1) = sum_{a+b<k} big_a small_b, times e^{-(λ + q_small(S)) t}.
        F = torch.zeros(B, C, G, dtype=dt, device=dev)
        for a_deg in range(k):
            F = F + big_state[..., a_deg] * small_cum[..., k - 1 - a_deg]
        decay = torch.exp(-(lam_c[:, :, None] + Mc[:, :, 0, None]) * t[:, None, :])
        integral = (w[:, None, :] * decay * F).sum(dim=2)
        f = p_all[:, sl] + lam_c * integral
        f = torch.where(valid[:, sl], f, torch.full_like(f, float("inf")))
        result = torch.minimum(result, f.min(dim=1).values)
    return result.clamp(max=1.0)


def _swor(p: torch.Tensor, q: torch.Tensor, k: int, *, method: str = "auto") -> torch.Tensor:
    _check_support(q, k)
    if k == 1:
        return _iid(p, q, 1)
    if k == 2 and method == "auto":
        return _swor_k2(p.to(torch.float64), q.to(torch.float64)).to(p.dtype)
    return _swor_general(p, q, k).to(p.dtype)


def batched_optimal_acceptance(
    p: Any,
    q: Any,
    k: int,
    drafts: str = "iid",
    *,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    r"""Optimal acceptance α*(p, D) for a batch of (target, draft) rows.

    .. math::

        α^* = \min_{S ⊆ Ω}\; p(S) + 1 - D(\mathrm{set}(\bar x) ⊆ S)

    (Hu et al., ICLR 2025, the subset-selection dual; their n is our k.)

    Parameters
    ----------
    p, q : array_like or torch.Tensor, shape (B, n)
        Target and draft rows, each summing to 1 (a 1-D pair is one row).
    k : int
        Number of drafts.
    drafts : {"iid", "swor", "greedy"}
        ``"iid"``: k i.i.d. drafts from q; the minimum is over the n+1 prefixes
        of the tokens sorted by p/q ascending (q = 0 last) of
        ``P_j + 1 - Q_j^k``.  ``"swor"``: k drafts without replacement
        (needs k <= |supp q|); the same prefixes, with
        ``D(S) = 1 - λ ∫_0^∞ e^{-λt} P(N_S(t) <= k-1) dt`` (exponential clocks),
        exact closed form for k = 2.  ``"greedy"``: Hu et al.'s greedy drafts,
        ``p(T) + Σ_{y∉T} min(p(y), q̃(y))`` with T the k-1 most likely draft
        tokens (ties by lower index) and q̃ = q off T renormalised.
    device : str or torch.device, optional
        Where to compute (``"auto"``: cuda if available).  Default: the
        input's device (cpu for numpy input).
    batch_size : int, optional
        Rows per chunk (default 8 on the CPU, 16 for ``"swor"``; 4096 and 256
        on a GPU).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape (B,)
        α* per row: numpy for numpy input, a tensor on the compute device for
        tensor input; float32 only when both inputs are float32.
    """
    k = _check_k(k)
    if drafts not in DRAFT_LAWS:
        raise InputError(f"drafts: must be one of {DRAFT_LAWS}, got {drafts!r}")
    pt, qt, was_numpy = _as_batch(p, q, device)
    fn = {"iid": _iid, "swor": _swor, "greedy": _greedy}[drafts]
    if batch_size is None:
        batch_size = _default_batch(drafts, pt.device)
    if batch_size < 1:
        raise InputError(f"batch_size: must be at least 1, got {batch_size}")
    with torch.no_grad():
        chunks = [
            fn(pt[i : i + batch_size], qt[i : i + batch_size], k)
            for i in range(0, pt.shape[0], batch_size)
        ]
    out = torch.cat(chunks) if chunks else torch.zeros(0, dtype=pt.dtype, device=pt.device)
    return _out(out.to(pt.dtype), was_numpy)


# ---------------------------------------------------------------------------
# Verifiers (docs/theory.md §5)


def _sd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return torch.minimum(p, q).sum(dim=1)


def _normalise_residual(r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    mass = r.sum(dim=1, keepdim=True)
    safe = torch.where(mass > 0, mass, torch.ones_like(mass))
    return r / safe, mass[:, 0]


def _rrs(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    """SpecInfer's recursive rejection sampling with i.i.d. drafts.

    Draft i is accepted with probability β_i = Σ_y min(q(y), r_i(y)), r_1 = p,
    r_{i+1} = normalise((r_i - q)_+); a rejected draft has r_{i+1} = 0 there, so
    the final residual sample never repeats one: α = 1 - Π_i (1 - β_i).
    """
    r = p
    reject = torch.ones(p.shape[0], dtype=p.dtype, device=p.device)
    for _ in range(k):
        beta = torch.minimum(q, r).sum(dim=1)
        reject = reject * (1 - beta).clamp_min(0)
        r, _ = _normalise_residual((r - q).clamp_min(0))
        # mass == 0 means acceptance was certain: reject is already 0.
    return 1 - reject


def _kseq_rho(p: torch.Tensor, q: torch.Tensor, k: int, iters: int = 120) -> torch.Tensor:
    """ρ* in [1, k] with 1 - (1 - β(ρ))^k = ρ β(ρ), β(ρ) = Σ min(q, p/ρ).

    h(ρ) = 1 - (1 - β)^k - ρβ decreases in ρ, h(1) >= 0 >= h(k).  With the
    tokens sorted by r_i = p_i/q_i, β(ρ) = P_m/ρ + 1 - Q_m on the segment where m
    tokens have r_i <= ρ; m* = #{r_i < 1} + #{1 <= r_i <= k : h(r_i) >= 0}, and
    the root is found by bisection on that segment's closed form.
    """
    ps, qs = _sorted_by_ratio(p, q)
    P, Q = _prefix_sums(ps), _prefix_sums(qs)
    pos = qs > 0
    r = torch.where(pos, ps / torch.where(pos, qs, torch.ones_like(qs)), float("inf"))
    rc = r.clamp(1.0, float(k))
    beta_at = P[:, 1:] / rc + (1 - Q[:, 1:])
    h_at = 1 - (1 - beta_at).clamp(0, 1) ** k - rc * beta_at
    inside = (r >= 1) & (r <= k)
    m = (r < 1).sum(dim=1) + (inside & (h_at >= 0)).sum(dim=1)
    Pm = torch.gather(P, 1, m[:, None])[:, 0]
    Qm = torch.gather(Q, 1, m[:, None])[:, 0]
    n = r.shape[1]
    r_pad = torch.cat([torch.zeros_like(r[:, :1]), r, torch.full_like(r[:, :1], float("inf"))], 1)
    lo = torch.gather(r_pad, 1, m[:, None])[:, 0].clamp(1.0, float(k))
    hi = torch.gather(r_pad, 1, (m + 1).clamp(max=n + 1)[:, None])[:, 0].clamp(1.0, float(k))
    for _ in range(iters):
        mid = (lo + hi) / 2
        beta = Pm / mid + 1 - Qm
        h = 1 - (1 - beta).clamp(0, 1) ** k - mid * beta
        lo = torch.where(h >= 0, mid, lo)
        hi = torch.where(h >= 0, hi, mid)
    return (lo + hi) / 2


def _kseq(p: torch.Tensor, q: torch.Tensor, k: int, *, output: bool) -> torch.Tensor:
    rule, out = _kseq_both(p, q, k, output=output)
    return out if output else rule


def _kseq_both(
    p: torch.Tensor, q: torch.Tensor, k: int, *, output: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """SpecTr's K-SEQ: accept the first x_i with ρ* U_i <= p(x_i)/q(x_i).

    "accepted by the rule": p_acc = 1 - (1 - β(ρ*))^k.  "output ∈ drafts" adds
    P(all rejected) · P(residual sample ∈ drafts | all rejected): given
    rejection the drafts are i.i.d. ~ u/(1-β), u = q - min(q, p/ρ*), and the
    residual is ∝ (p - γ min(p/ρ*, q))_+, γ = p_acc/β.
    """
    rho = _kseq_rho(p, q, k)
    m = torch.minimum(q, p / rho[:, None])
    beta = m.sum(dim=1)
    p_acc = 1 - (1 - beta).clamp(0, 1) ** k
    if not output:
        return p_acc, p_acc
    gamma = torch.where(beta > 0, p_acc / beta.clamp_min(1e-300), torch.zeros_like(beta))
    res, mass = _normalise_residual((p - gamma[:, None] * m).clamp_min(0))
    u = q - m
    u_mass = u.sum(dim=1, keepdim=True)
    u_law = u / torch.where(u_mass > 0, u_mass, torch.ones_like(u_mass))
    hit = (res * (1 - (1 - u_law).clamp(0, 1) ** k)).sum(dim=1)
    return p_acc, p_acc + (1 - p_acc) * torch.where(mass > 0, hit, torch.zeros_like(hit))


def _nss(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    return (p * (1 - (1 - q).clamp(0, 1) ** k)).sum(dim=1)


def _greedy_verifier(p: torch.Tensor, q: torch.Tensor, k: int) -> torch.Tensor:
    """Hu et al.'s greedy verifier: the sampled last draft X ~ q̃ is accepted
    w.p. min(1, p(X)/q̃(X)); else a sample from r ∝ p on T, (p - q̃)_+ off T.
    The output is a draft when X is accepted or r lands in T (r is 0 at a
    rejected X): α = p(T) + Σ_{y∉T} q̃(y) min(1, p(y)/q̃(y))."""
    if k == 1:
        return _sd(p, q)
    in_t = _top_mask(q, k - 1)
    rest = torch.where(in_t, torch.zeros_like(q), q)
    q_tilde = rest / rest.sum(dim=1, keepdim=True)
    ratio = torch.where(q_tilde > 0, p / torch.where(q_tilde > 0, q_tilde, 1.0), 0.0)
    accept = (q_tilde * ratio.clamp(max=1)).sum(dim=1)
    return torch.where(in_t, p, 0.0).sum(dim=1) + accept


def batched_verifier_acceptance(
    p: Any, q: Any, k: int, verifier: str = "rrs", *, device: Any = None
) -> Any:
    r"""Exact acceptance α of a practical verifier, batched over rows.

    Parameters
    ----------
    p, q : array_like or torch.Tensor, shape (B, n)
        Target and draft rows.
    k : int
        Number of drafts (ignored by ``"sd"``, which uses one).
    verifier : str
        ``"sd"``: single-draft speculative sampling (Leviathan et al.; Chen et
        al.), Σ min(p, q).  ``"nss"``: ignore the drafts, Σ p(1 - (1-q)^k).
        ``"rrs"``: recursive rejection sampling with i.i.d. drafts (SpecInfer,
        Miao et al.), 1 - Π(1 - β_i).  ``"kseq"``: SpecTr's K-SEQ (Sun et al.),
        "accepted by the rule" 1 - (1 - β(ρ*))^k.  ``"kseq-output"``: K-SEQ,
        "output ∈ drafts".  ``"greedy"``: Hu et al.'s greedy verifier for
        greedy drafts (equal to α* of that law).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape (B,)
    """
    k = _check_k(k)
    if verifier not in VERIFIERS:
        raise InputError(f"verifier: must be one of {VERIFIERS}, got {verifier!r}")
    pt, qt, was_numpy = _as_batch(p, q, device)
    if verifier == "greedy" and k > 1:
        _greedy(pt, qt, k)  # validates k <= n and the mass off T
    with torch.no_grad():
        if verifier == "sd":
            out = _sd(pt, qt)
        elif verifier == "nss":
            out = _nss(pt, qt, k)
        elif verifier == "rrs":
            out = _rrs(pt, qt, k)
        elif verifier == "kseq":
            out = _kseq(pt, qt, k, output=False)
        elif verifier == "kseq-output":
            out = _kseq(pt, qt, k, output=True)
        else:
            out = _greedy_verifier(pt, qt, k)
    return _out(out, was_numpy)
