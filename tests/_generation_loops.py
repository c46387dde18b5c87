"""Decoding loops for the tests of optaccept.audit.audit_generation, written here from the rules'
definitions (a plain sampler and speculative sampling with one drafted chain, as loops in
public repositories write them), each with switches for the defects the audit must flag."""

from __future__ import annotations

import numpy as np


def _draw(law, u):
    """Inverse CDF along token ids: the way torch.multinomial and most samplers draw."""
    c = np.cumsum(law)
    return min(int(np.searchsorted(c, u * c[-1], side="right")), law.size - 1)


def plain_loop(target, new_tokens, *, reuse=False):
    """Sample each token from the target; ``reuse``: the generator is re-seeded with the same
    seed at every step (each step's law is right, the text is not)."""

    def generate(prompt, rng):
        seed = int(rng.integers(2**32))
        toks = []
        for _ in range(new_tokens):
            step = np.random.default_rng(seed) if reuse else rng
            toks.append(_draw(np.asarray(target(tuple(prompt) + tuple(toks))), step.random()))
        return toks

    return generate


def sd_loop(target, draft, gamma, new_tokens, *, bug=None, top=4):
    """Speculative sampling with one chain of ``gamma`` drafts per call; returns (tokens,
    accepted per call).  ``bug``: "reuse" (the same random stream at every call), "stale"
    (the residual of every position taken from the chain's first position), "truncated" (drafts
    from the ``top`` most likely tokens of q, the ratio against the full q)."""

    def generate(prompt, rng):
        seed = int(rng.integers(2**32))
        toks, counts = [], []
        while len(toks) < new_tokens:
            r = np.random.default_rng(seed) if bug == "reuse" else rng
            ctx = tuple(prompt) + tuple(toks)
            xs, qs = [], []
            for _ in range(gamma):
                q = np.asarray(draft(ctx + tuple(xs)), dtype=np.float64)
                qd = q
                if bug == "truncated":
                    keep = np.argsort(-q, kind="stable")[:top]
                    qd = np.zeros_like(q)
                    qd[keep] = q[keep]
                xs.append(_draw(qd, r.random()))
                qs.append(q)
            ps = [np.asarray(target(ctx + tuple(xs[:i])), dtype=np.float64) for i in range(gamma + 1)]
            m = 0
            while m < gamma and r.random() * qs[m][xs[m]] < ps[m][xs[m]]:
                m += 1
            if m == gamma:
                y = _draw(ps[gamma], r.random())
            else:
                j = 0 if bug == "stale" else m
                res = np.maximum(ps[j] - qs[j], 0.0)
                y = _draw(res if res.sum() > 0 else ps[m], r.random())
            toks.extend(xs[:m] + [y])
            counts.append(m)
        return toks, counts

    return generate


def hf_style_sd(approx_model, target_model, gamma, max_len, *, random_seed=None):
    """Speculative sampling written against Hugging Face-style models (``model(ids).logits``),
    one request, the target scoring the drafted chain in one forward pass, torch's global
    generator for every draw; ``random_seed``: re-seed torch before every acceptance coin, a
    pattern found in public loops (the coins are then one fixed number)."""
    import torch

    def sample(probs):
        return torch.multinomial(probs, 1)

    @torch.no_grad()
    def generate(prefix):
        T = prefix.shape[1] + max_len
        counts = []
        while prefix.shape[1] < T:
            x, start = prefix, prefix.shape[1]
            for _ in range(gamma):
                q_logits = approx_model(x).logits
                x = torch.cat((x, sample(torch.softmax(q_logits[:, -1, :], -1))), dim=1)
            q = torch.softmax(approx_model(x).logits, -1)
            p = torch.softmax(target_model(x).logits, -1)
            n = start - 1
            t = None
            for i in range(gamma):
                if random_seed:
                    torch.manual_seed(random_seed)
                r = torch.rand(1)
                j = x[0, start + i]
                if r < torch.clamp(p[0, n, j] / q[0, n, j], max=1.0):
                    n += 1
                else:
                    t = sample(torch.clamp(p[:, n, :] - q[:, n, :], min=0.0))
                    break
            if t is None:
                t = sample(p[:, -1, :])
            counts.append(n - start + 1)
            prefix = torch.cat((x[:, : n + 1], t), dim=1)
        return prefix, counts

    return generate


def _filter_logits(logits, temperature, top_k, top_p):
    """Temperature, then top-k, then top-p on logits (torch), as sampling code in public loops
    writes it: -inf below the k-th value; nucleus by a descending sort and a shifted cumsum."""
    import torch

    logits = logits / temperature
    if top_k:
        kth = torch.topk(logits, min(top_k, logits.shape[-1]))[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, idx = torch.sort(logits, descending=True)
        cum = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
        drop = cum > top_p
        drop[..., 1:] = drop[..., :-1].clone()
        drop[..., 0] = False
        logits = logits.masked_fill(drop.scatter(-1, idx, drop), float("-inf"))
    return torch.softmax(logits, dim=-1)


def hf_cached_sd(approx_model, target_model, gamma, max_len, *, temperature=1.0, top_k=0, top_p=1.0):
    """Speculative sampling on Hugging Face-style models with key/value caches, as such loops are
    written: the first forward builds each model's cache (asserted), later forwards feed only the
    tokens the cache has not seen, the target scores the drafted chain in one forward, and the
    caches are cropped to the accepted text after each call.  Sampling processors
    (temperature, top-k, top-p) act on both models' logits.  Returns (text, accepted per call)."""
    import torch

    def probs(logits):
        return _filter_logits(logits, temperature, top_k, top_p)

    def step(model, x, cache):
        if cache is None:
            out = model(x, use_cache=True)
        else:
            out = model(x[:, cache.get_seq_length() :], past_key_values=cache, use_cache=True)
        assert out.past_key_values is not None, "a cached loop needs the model's cache"
        return out.logits, out.past_key_values

    @torch.no_grad()
    def generate(prefix):
        end = prefix.shape[1] + max_len
        counts, q_cache, p_cache = [], None, None
        while prefix.shape[1] < end:
            x, start = prefix, prefix.shape[1]
            qs = []
            for _ in range(gamma):
                logits, q_cache = step(approx_model, x, q_cache)
                qs.append(probs(logits[:, -1, :]))
                x = torch.cat((x, torch.multinomial(qs[-1], 1)), dim=1)
            logits, p_cache = step(target_model, x, p_cache)
            ps = probs(logits[:, -(gamma + 1) :, :])
            n, t = 0, None
            for i in range(gamma):
                j = x[0, start + i]
                if torch.rand(1) < torch.clamp(ps[0, i, j] / qs[i][0, j], max=1.0):
                    n += 1
                else:
                    res = torch.clamp(ps[:, i, :] - qs[i], min=0.0)
                    t = torch.multinomial(res / res.sum(), 1)
                    break
            if t is None:
                t = torch.multinomial(ps[:, gamma, :], 1)
            counts.append(n)
            q_cache.crop(start + n)
            p_cache.crop(start + n)
            prefix = torch.cat((x[:, : start + n], t), dim=1)
        return prefix, counts

    return generate


def hf_batched_sd(approx_model, target_model, gamma, max_len, *, pad_id=-1, shared_uniforms=False):
    """Speculative sampling over a batch of prompts, as batched loops are written: rows are
    left-padded to one width with an attention mask at every forward (no cache), every row
    drafts γ tokens, the target scores the padded batch with its drafts in one forward, and rows
    that accepted different numbers of tokens are re-aligned by re-padding.  Returns a 2-D tensor
    of each row's prompt and new tokens, left-padded with ``pad_id`` (Hugging Face's layout), and
    the accepted counts per row.  ``shared_uniforms``: one uniform per draw broadcast over the
    batch (each row's law is right, the rows are not independent)."""
    import torch

    def padded(texts):
        width = max(len(t) for t in texts)
        ids = torch.tensor([[pad_id] * (width - len(t)) + t for t in texts])
        mask = torch.tensor([[0] * (width - len(t)) + [1] * len(t) for t in texts])
        return ids, mask

    def draw(probs, u):  # inverse CDF of each row at its uniform
        c = torch.cumsum(probs, -1)
        return torch.clamp(torch.searchsorted(c, (u * c[..., -1:]).contiguous()), max=probs.shape[-1] - 1)

    def uniforms(B, k):
        return torch.rand(1, k).expand(B, k) if shared_uniforms else torch.rand(B, k)

    @torch.no_grad()
    def generate(prompts):
        B = len(prompts)
        texts = [list(p) for p in prompts]
        ends = [len(p) + max_len for p in prompts]
        counts = [[] for _ in range(B)]
        while any(len(t) < e for t, e in zip(texts, ends)):
            ids, mask = padded(texts)
            qs = []
            for _ in range(gamma):
                q = torch.softmax(approx_model(ids, attention_mask=mask).logits[:, -1, :], -1)
                qs.append(q)
                ids = torch.cat((ids, draw(q, uniforms(B, 1))), dim=1)
                mask = torch.cat((mask, torch.ones((B, 1), dtype=mask.dtype)), dim=1)
            p = torch.softmax(target_model(ids, attention_mask=mask).logits[:, -(gamma + 1) :, :], -1)
            coins, last = uniforms(B, gamma), uniforms(B, 1)
            for b in range(B):
                if len(texts[b]) >= ends[b]:
                    continue
                drafts = ids[b, -gamma:]
                n, t = 0, None
                for i in range(gamma):
                    j = drafts[i]
                    if coins[b, i] < torch.clamp(p[b, i, j] / qs[i][b, j], max=1.0):
                        n += 1
                    else:
                        res = torch.clamp(p[b, i] - qs[i][b], min=0.0)
                        t = int(draw(res, last[b]))
                        break
                if t is None:
                    t = int(draw(p[b, gamma], last[b]))
                texts[b] += drafts[:n].tolist() + [t]
                counts[b].append(n)
        return padded(texts)[0], counts

    return generate
