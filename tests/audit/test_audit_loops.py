"""Loops as engines write them, audited with no glue beyond the loop and the models:
audit.torch_lm's key/value cache, attention masks and per-prefix cache, a speculative loop on
cached model wrappers, and a loop with temperature, top-k and top-p filtering audited against
tree.with_sampling.  References: the target's laws read directly (prefix by prefix), the
tree enumeration's exact tokens per call."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _generation_loops import hf_cached_sd

import optaccept as oa
from optaccept import audit, tree

torch = pytest.importorskip("torch")

PROMPTS = [(1,), (2, 3)]


@pytest.fixture(scope="module")
def pair():
    t, d = tree.synthetic_pair(8, rng=3)
    return functools.lru_cache(maxsize=None)(t), functools.lru_cache(maxsize=None)(d)


def _laws(lm_out, rows):
    return [[np.exp(lm_out.logits[b, t].numpy().astype(np.float64)) for t in range(len(r))] for b, r in enumerate(rows)]


def test_cache_fed_new_tokens_gives_the_full_forward(pair):
    target, _ = pair
    lm = audit.torch_lm(target, 8)
    ids = torch.tensor([[1, 4, 2, 7, 0, 3]])
    full = lm(ids).logits
    out = lm(ids[:, :2], use_cache=True)
    assert out.past_key_values.get_seq_length() == 2 and out[1] is out.past_key_values
    parts = [out.logits]
    cache = out.past_key_values
    for a, b in ((2, 3), (3, 6)):
        o = lm(ids[:, a:b], past_key_values=cache, use_cache=True)
        parts.append(o.logits)
        cache = o.past_key_values
    assert cache.get_seq_length() == 6
    assert torch.equal(torch.cat(parts, dim=1), full)
    for t in range(6):
        want = np.asarray(target(tuple(ids[0, : t + 1].tolist())))
        assert np.allclose(full[0, t].exp().numpy(), want, atol=1e-6)
    cache.crop(3)  # a rejected tail dropped: the next token's law is read after the first 3
    o = lm(torch.tensor([[5]]), past_key_values=cache)
    assert np.allclose(o.logits[0, 0].exp().numpy(), target((1, 4, 2, 5)), atol=1e-6)
    cache.crop(-1)
    assert cache.get_seq_length() == 2
    assert lm(ids, use_cache=False).past_key_values is None


def test_legacy_tuple_cache_is_sliced_like_tensors(pair):
    target, _ = pair
    lm = audit.torch_lm(target, 8)
    out = lm(torch.tensor([[1, 4, 2, 7]]), past_key_values=None, use_cache=True)
    legacy = out.past_key_values.to_legacy_cache()
    assert legacy[0][0].shape == (1, 1, 4, 1)
    cut = tuple((k[:, :, :2], v[:, :, :2]) for k, v in legacy)  # how tuple-cache loops roll back
    o = lm(torch.tensor([[6]]), past_key_values=cut)
    assert isinstance(o.past_key_values, tuple) and o.past_key_values[0][0].shape[2] == 3
    assert np.allclose(o.logits[0, 0].exp().numpy(), target((1, 4, 6)), atol=1e-6)


@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_batches_read_each_row_without_its_padding(pair, side):
    target, _ = pair
    lm = audit.torch_lm(target, 8)
    texts = [(1, 4, 2), (3,), (2, 5)]
    width = 3
    pad = [(0,) * (width - len(r)) for r in texts]
    ids = [(p + r) if side == "left" else (r + p) for p, r in zip(pad, texts)]
    mask = [
        ((0,) * len(p) + (1,) * len(r)) if side == "left" else ((1,) * len(r) + (0,) * len(p))
        for p, r in zip(pad, texts)
    ]
    out = lm(torch.tensor(ids), attention_mask=torch.tensor(mask), use_cache=True)
    for b, r in enumerate(texts):
        real = [t for t in range(width) if mask[b][t]]
        for j, t in enumerate(real):
            assert np.allclose(out.logits[b, t].exp().numpy(), target(r[: j + 1]), atol=1e-6)
    # one more token per row, fed alone, with the mask of the whole text (Hugging Face's convention)
    nxt = torch.tensor([[6], [7], [0]])
    full_mask = torch.cat([torch.tensor(mask), torch.ones((3, 1), dtype=torch.long)], dim=1)
    o = lm(nxt, attention_mask=full_mask, past_key_values=out.past_key_values)
    for b, r in enumerate(texts):
        assert np.allclose(o.logits[b, 0].exp().numpy(), target(r + (int(nxt[b, 0]),)), atol=1e-6)


def test_each_distinct_prefix_is_read_once():
    calls = []
    target = tree.synthetic_pair(8, rng=3)[0]

    def counted(prefix):
        calls.append(prefix)
        return target(prefix)

    lm = audit.torch_lm(counted, 8)
    ids = torch.tensor([[1, 4, 2, 7, 0, 3]])
    for L in range(1, 7):  # a loop re-scoring the whole text at every step: O(L^2) positions
        lm(ids[:, :L])
    assert len(calls) == len(set(calls)) == 6
    assert lm(ids, logits_to_keep=2).logits.shape == (1, 2, 8)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lm: lm(None), "input_ids"),
        (lambda lm: lm(torch.tensor([[1, 2]]), attention_mask=torch.ones((1, 5))), "attention_mask"),
        (lambda lm: lm(torch.tensor([[1, 2]]), past_key_values=object()), "past_key_values"),
        (
            lambda lm: lm(
                torch.tensor([[1], [2]]), past_key_values=lm(torch.tensor([[1]]), use_cache=True).past_key_values
            ),
            "past_key_values",
        ),
    ],
)
def test_mistakes_are_refused_naming_the_argument(pair, call, match):
    lm = audit.torch_lm(pair[0], 8)
    with pytest.raises(oa.InputError, match=rf"^{match}"):
        call(lm)


def _run(loop):
    def generate(prompt, rng):
        out, counts = loop(torch.tensor([list(prompt)]))
        return out[0, len(prompt) :].tolist(), counts

    return generate


def test_cached_speculative_loop_audits_unchanged(pair):
    """A loop on cached model wrappers (it asserts a cache after the first call, then feeds only
    new tokens and crops the caches after each call) passes, its tokens per call at speculative
    sampling's value."""
    target, draft = pair
    loop = hf_cached_sd(audit.torch_lm(draft, 8), audit.torch_lm(target, 8), 3, 6)
    rep = audit.audit_generation(
        _run(loop),
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=6,
        drafting=audit.ChainDrafting(draft, 3, "sd"),
        progress=False,
    )
    assert rep.lossless
    z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
    assert abs(z) < 5


def test_loop_with_top_k_top_p_filtering_audits_against_with_sampling(pair):
    """The loop filters both models' logits (T = 0.8, top-k 4, top-p 0.9): audited against the
    processed laws it passes, with its tokens per call at speculative sampling's value on them;
    audited against the raw target it is flagged."""
    target, draft = pair
    kw = dict(temperature=0.8, top_k=4, top_p=0.9)
    loop = hf_cached_sd(audit.torch_lm(draft, 8), audit.torch_lm(target, 8), 2, 6, **kw)
    P, Q = tree.with_sampling(target, **kw), tree.with_sampling(draft, **kw)
    rep = audit.audit_generation(
        _run(loop),
        P,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=7,
        drafting=audit.ChainDrafting(Q, 2, "sd"),
        progress=False,
    )
    assert rep.lossless
    z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
    assert abs(z) < 5
    raw = audit.audit_generation(
        _run(loop),
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=7,
        drafting=audit.ChainDrafting(draft, 2, "sd"),
        progress=False,
    )
    assert not raw.lossless


@pytest.mark.parametrize("shared_uniforms", [False, True])
def test_batched_left_padded_loop_audits_unchanged(pair, shared_uniforms):
    """A loop decoding a batch of prompts per call (left-padded rows, attention masks, rows
    re-aligned after accepting different numbers of tokens) is handed over as it is: the audit
    deals the prompts out in batches of 4, strips the padding and each row's prompt, reads the
    per-row counts.  Correct, it passes at speculative sampling's tokens per call; with one
    uniform per draw broadcast over the batch (every row's law right, the rows dependent), the
    rows test flags it."""
    from _generation_loops import hf_batched_sd

    target, draft = pair
    loop = hf_batched_sd(audit.torch_lm(draft, 8), audit.torch_lm(target, 8), 2, 6, shared_uniforms=shared_uniforms)
    rep = audit.audit_generation(
        lambda prompts, rng: loop(prompts),
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=8,
        drafting=audit.ChainDrafting(draft, 2, "sd"),
        options=audit.GenerationOptions(batch=4, pad=-1),
        progress=False,
    )
    assert rep.texts == 300
    if not shared_uniforms:
        assert rep.lossless
        z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
        assert abs(z) < 5
    else:
        assert not rep.lossless and rep.worst.startswith("rows/")


def test_batch_rows_as_lists_and_refusals(pair):
    target, _ = pair

    def rows(prompts, rng):  # a list of rows, each its new tokens, right-padded with -1
        return [[int(rng.choice(8, p=target(tuple(p)))), -1] for p in prompts]

    rep = audit.audit_generation(
        rows,
        target,
        prompts=PROMPTS,
        samples=40,
        new_tokens=1,
        rng=0,
        options=audit.GenerationOptions(batch=3, pad=-1),
        progress=False,
    )
    assert rep.texts == 80 and rep.padded == 0 and "rows/p" in rep.ks_distance
    with pytest.raises(oa.InputError, match="one row per prompt"):
        audit.audit_generation(
            lambda prompts, rng: [[1]],
            target,
            prompts=PROMPTS,
            samples=2,
            new_tokens=1,
            rng=0,
            options=audit.GenerationOptions(batch=2),
            progress=False,
        )
    with pytest.raises(oa.InputError, match="does not start with its prompt"):
        audit.audit_generation(
            lambda prompts, rng: np.array([[5, 1], [5, 1]]),
            target,
            prompts=PROMPTS,
            samples=1,
            new_tokens=1,
            rng=0,
            options=audit.GenerationOptions(batch=2),
            progress=False,
        )
    with pytest.raises(oa.InputError, match="^options.batch"):
        audit.audit_generation(
            rows, target, prompts=PROMPTS, samples=1, rng=0, options=audit.GenerationOptions(batch=0)
        )


def test_calls_that_emit_more_than_accepted_plus_one(pair):
    """A loop that resamples every position after a rejection from the target (γ + 1 tokens per
    call, lossless) reports (accepted, emitted) pairs: its text passes, its calls are placed at
    the right prefixes (the estimates match speculative sampling's value)."""
    from _generation_loops import _draw

    target, draft = pair
    gamma = 2

    def generate(prompt, rng):
        toks, counts = [], []
        while len(toks) < 6:
            ctx = tuple(prompt) + tuple(toks)
            xs, qs = [], []
            for _ in range(gamma):
                q = np.asarray(draft(ctx + tuple(xs)))
                xs.append(_draw(q, rng.random()))
                qs.append(q)
            m = 0
            while m < gamma and rng.random() * qs[m][xs[m]] < np.asarray(target(ctx + tuple(xs[:m])))[xs[m]]:
                m += 1
            out = xs[:m]
            if m < gamma:
                res = np.maximum(np.asarray(target(ctx + tuple(out))) - qs[m], 0.0)
                out.append(_draw(res / res.sum(), rng.random()))
            while len(out) < gamma + 1:  # the rest of the call sampled from the target
                out.append(_draw(np.asarray(target(ctx + tuple(out))), rng.random()))
            toks += out
            counts.append((m, len(out)))
        return toks, counts

    rep = audit.audit_generation(
        generate,
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=9,
        drafting=audit.ChainDrafting(draft, gamma, "sd"),
        progress=False,
    )
    assert rep.lossless and rep.details["emitted_per_call"] == gamma + 1
    z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
    assert abs(z) < 5
    with pytest.raises(oa.InputError, match="emitted"):
        audit.audit_generation(
            lambda p, r: ([1, 2], [(1, 0)]),
            target,
            prompts=PROMPTS,
            samples=1,
            new_tokens=2,
            rng=0,
            drafting=audit.ChainDrafting(draft, gamma),
            progress=False,
        )


def test_docs_examples_run():
    """The code of docs/audit.md §11b, run as written."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text(encoding="utf-8")
    section = text[text.index("## 11b.") : text.index("## 12.")]
    blocks = section.split("```python\n")[1:]
    assert blocks
    for block in blocks:
        exec(compile(block.split("```")[0], "docs/audit.md", "exec"), {})  # noqa: S102 - the docs' own code


def test_counts_read_from_the_target_forwards(pair):
    """drafting.counter: the loop returns its text only; the accepted counts read from the
    target module's forwards equal the counts the loop itself reports, for a loop re-scoring
    its text, a cached loop and a batched left-padded loop; the audit then passes at speculative
    sampling's value."""
    from _generation_loops import hf_style_sd

    target, draft = pair
    t_lm, d_lm = audit.torch_lm(target, 8), audit.torch_lm(draft, 8)
    torch.manual_seed(0)
    for loop in (hf_style_sd(d_lm, t_lm, 3, 8), hf_cached_sd(d_lm, t_lm, 3, 8)):
        for prompt in PROMPTS * 5:
            t_lm.calls.clear()
            out, counts = loop(torch.tensor([list(prompt)]))
            toks = tuple(out[0, len(prompt) :].tolist())
            got = audit._generation._counts_from_calls([c[0] for c in t_lm.calls], prompt, toks, 3)
            assert got == list(counts)
    from _generation_loops import hf_batched_sd

    batched = hf_batched_sd(d_lm, t_lm, 2, 6)
    t_lm.calls.clear()
    rows, counts = batched([(1,), (2, 3), (1,)])
    for b, pr in enumerate([(1,), (2, 3), (1,)]):
        toks = tuple(t for t in rows[b].tolist() if t != -1)[len(pr) :]
        got = audit._generation._counts_from_calls([c[b] for c in t_lm.calls], pr, toks, 2)
        assert got == counts[b]

    loop = hf_style_sd(d_lm, t_lm, 3, 6)
    rep = audit.audit_generation(
        lambda prompt, rng: loop(torch.tensor([list(prompt)]))[0][0, len(prompt) :].tolist(),
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=10,
        drafting=audit.ChainDrafting(draft, 3, "sd", counter=t_lm),
        progress=False,
    )
    assert rep.lossless and rep.calls > 300
    z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
    assert abs(z) < 5
    with pytest.raises(oa.InputError, match="^drafting.counter"):
        audit.audit_generation(
            lambda p, r: [1],
            target,
            prompts=PROMPTS,
            samples=1,
            new_tokens=1,
            rng=0,
            drafting=audit.ChainDrafting(draft, 3, counter=object()),
        )

    def one_forward(prompt, rng):  # one target forward for six new tokens: not one per call
        t_lm(torch.tensor([list(prompt) + [1, 2, 3]]))
        return [1, 2, 3, 4, 5, 6]

    with pytest.raises(oa.InputError, match="^drafting.counter: consecutive"):
        audit.audit_generation(
            one_forward,
            target,
            prompts=PROMPTS,
            samples=1,
            new_tokens=6,
            rng=0,
            drafting=audit.ChainDrafting(draft, 1, counter=t_lm),
            progress=False,
        )
