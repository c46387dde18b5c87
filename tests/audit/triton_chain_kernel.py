"""A Triton kernel for token-level verification of drafted chains, written for the audit tests
(docs/audit.md, "Auditing a Triton kernel on the CPU").

The rule, for one request with drafted tokens x_1 … x_k, drafted laws q_i and target laws p_i
(k + 1 of them, the last one giving the bonus token): accept x_i with probability
min(1, p_i(x_i) / q_i(x_i)), in order; at the first rejection, at position i, emit one token
drawn from the residual (p_i − q_i)₊ normalised and stop; if every x_i is accepted, emit the
bonus token.  The emitted sequence has the target's law (Leviathan et al., 2023; Chen et al.,
2023).

Layout, as engines pass a batch: the drafts of all requests flattened in one vector with the
cumulative counts per request (``ends[b]`` = number of drafts of requests 0 … b), one target and
one drafted probability row per drafted token, one bonus token per request, and an output
``[B, max_draft + 1]`` padded with −1.  One program per request: it tests every position of its
chain at once, finds the first rejection with a reduction, and draws at most one correction.

Uniforms either come from the host (``coins`` for the acceptance tests, ``picks`` for the
correction, one of each per drafted token) or are drawn in the kernel with ``tl.rand(seed,
offset + 2·j)`` and ``tl.rand(seed, offset + 2·j + 1)`` for the j-th drafted token of the batch.
The correction is an inverse-CDF draw: the first token whose running residual mass exceeds
``pick`` times the total, over the vocabulary in blocks of ``BLOCK_V``.

The audit tests make one-line bugs in copies of this file (Triton's interpreter reads a
kernel's source from its file), so the lines they replace must stay unique here.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _residual(p, q):
    return tl.maximum(p - q, 0.0)


@triton.jit
def chain_verify_kernel(
    out_ptr,  # int32 [B, MAX_DRAFT + 1]
    draft_ids_ptr,  # int32 [N]: the drafts of all requests, flattened
    ends_ptr,  # int32 [B]: cumulative draft counts
    target_ptr,  # float32 [N, V]: p_i for each drafted token
    draft_ptr,  # float32 [N, V]: q_i for each drafted token
    bonus_ptr,  # int32 [B]: the token emitted when a whole chain is accepted
    coins_ptr,  # float32 [N]: acceptance uniforms (HOST_UNIFORMS)
    picks_ptr,  # float32 [N]: correction uniforms (HOST_UNIFORMS)
    seed,
    offset,
    V,
    MAX_DRAFT: tl.constexpr,
    BLOCK_D: tl.constexpr,  # a power of two > MAX_DRAFT
    BLOCK_V: tl.constexpr,
    HOST_UNIFORMS: tl.constexpr,
):
    req = tl.program_id(0)
    stop = tl.load(ends_ptr + req)
    first = tl.load(ends_ptr + req - 1, mask=req > 0, other=0)
    count = stop - first

    pos = tl.arange(0, BLOCK_D)
    drafted = pos < count
    row = first + pos
    x = tl.load(draft_ids_ptr + row, mask=drafted, other=0)
    px = tl.load(target_ptr + row.to(tl.int64) * V + x, mask=drafted, other=0.0)
    qx = tl.load(draft_ptr + row.to(tl.int64) * V + x, mask=drafted, other=1.0)
    if HOST_UNIFORMS:
        u = tl.load(coins_ptr + row, mask=drafted, other=0.0)
    else:
        u = tl.rand(seed, offset + 2 * row)
    # u < p/q without dividing; a draft the drafter gave no mass is refused
    accept = (qx > 0) & (u * qx < px)
    refused = drafted & ~accept
    n_acc = tl.min(tl.where(refused, pos, BLOCK_D))
    n_acc = tl.minimum(n_acc, count)

    keep = tl.where(pos < n_acc, x, -1)
    tl.store(out_ptr + req * (MAX_DRAFT + 1) + pos, keep, mask=pos <= MAX_DRAFT)

    if n_acc < count:
        at = first + n_acc
        base = at.to(tl.int64) * V
        if HOST_UNIFORMS:
            pick = tl.load(picks_ptr + at)
        else:
            pick = tl.rand(seed, offset + 2 * at + 1)
        mass = 0.0
        mass_p = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            inside = cols < V
            p = tl.load(target_ptr + base + cols, mask=inside, other=0.0)
            q = tl.load(draft_ptr + base + cols, mask=inside, other=0.0)
            mass += tl.sum(_residual(p, q))
            mass_p += tl.sum(p)
        # (p − q)₊ = 0 only where the refusal had probability zero: fall back on p
        use_residual = mass > 0
        level = pick * tl.where(use_residual, mass, mass_p)
        token = V
        last = -1
        below = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            inside = cols < V
            p = tl.load(target_ptr + base + cols, mask=inside, other=0.0)
            q = tl.load(draft_ptr + base + cols, mask=inside, other=0.0)
            w = tl.where(use_residual, _residual(p, q), p)
            running = below + tl.cumsum(w, axis=0)
            hit = inside & (w > 0) & (running > level)
            token = tl.minimum(token, tl.min(tl.where(hit, cols, V)))
            last = tl.maximum(last, tl.max(tl.where(inside & (w > 0), cols, -1)))
            below += tl.sum(w)
        # rounding can leave level at or above the last running sum: the last token with mass
        token = tl.where(token < V, token, last)
        tl.store(out_ptr + req * (MAX_DRAFT + 1) + n_acc, token)
    else:
        tl.store(out_ptr + req * (MAX_DRAFT + 1) + count, tl.load(bonus_ptr + req))


def verify_chains(
    draft_ids,
    ends,
    target_probs,
    draft_probs,
    bonus_ids,
    max_draft,
    *,
    coins=None,
    picks=None,
    seed=None,
    offset=0,
    block_v=None,
):
    """The padded output ``[B, max_draft + 1]`` (int32, −1 after the emitted token) for a batch:
    ``draft_ids`` (N,) int32, ``ends`` (B,) int32 cumulative counts, ``target_probs`` and
    ``draft_probs`` (N, V) float32, ``bonus_ids`` (B,) int32.  Uniforms from the host
    (``coins`` and ``picks``, (N,) float32 in [0, 1)) or, with ``seed``, drawn in the kernel."""
    if (coins is None) == (seed is None):
        raise ValueError("pass either coins and picks, or seed")
    B = ends.shape[0]
    V = target_probs.shape[-1]
    out = torch.empty((B, max_draft + 1), dtype=torch.int32)
    host = coins is not None
    if host:
        coins = coins.to(torch.float32).contiguous()
        picks = picks.to(torch.float32).contiguous()
    else:
        coins = picks = torch.empty(1, dtype=torch.float32)
    chain_verify_kernel[(B,)](
        out,
        draft_ids.contiguous(),
        ends.contiguous(),
        target_probs.contiguous(),
        draft_probs.contiguous(),
        bonus_ids.contiguous(),
        coins,
        picks,
        0 if seed is None else int(seed),
        int(offset),
        V,
        MAX_DRAFT=max_draft,
        BLOCK_D=triton.next_power_of_2(max_draft + 1),
        BLOCK_V=block_v or min(triton.next_power_of_2(V), 1024),
        HOST_UNIFORMS=host,
    )
    return out
