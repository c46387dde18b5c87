"""audit.audit_generation and audit.torch_lm: correct loops pass, loops with a reused random
stream, a stale residual or a truncated q are flagged; the serial statistic is exactly uniform
under independence; tokens per call agree with the declared rule and never exceed the lossless
optimum on a correct loop.  The loops are written in tests/_generation_loops.py from the rules'
definitions; reference values come from optaccept.tree's enumeration, not from the code under
test."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _generation_loops import plain_loop, sd_loop

import optaccept as oa
from optaccept import audit, tree

PROMPTS = [(1,), (2, 3)]


def cached_pair(n, seed, noise=1.0):
    """A synthetic pair whose laws are computed once per prefix (the loops read them often)."""
    t, d = tree.synthetic_pair(n, rng=seed, noise=noise)
    return functools.lru_cache(maxsize=None)(t), functools.lru_cache(maxsize=None)(d)


@pytest.fixture(scope="module")
def pair():
    return cached_pair(8, 3)


def test_serial_values_uniform_under_independence_and_not_otherwise():
    rng = np.random.default_rng(0)
    U = rng.random((20_000, 6))
    for off in (0, 1):
        W = audit._generation.serial_values(U, 4, 1, off)
        assert W.size == 20_000 * (3 if off == 0 else 2)
        assert np.all((W >= 0) & (W <= 1))
        # DKW at 1e-6: a uniform sample stays within the band
        assert audit._core._ks_uniform(W) < np.sqrt(np.log(2 / 1e-6) / (2 * W.size))
    U[:, 1::2] = U[:, 0::2]  # every pair (U_0, U_1), (U_2, U_3), … fully dependent
    # within bin b the second value lies in [b/4, (b + 1)/4]: distance (1/4)(1 − 1/4) = 0.1875
    assert audit._core._ks_uniform(audit._generation.serial_values(U, 4, 1, 0)) == pytest.approx(0.1875, abs=0.01)


def test_correct_plain_loop_passes_and_reused_stream_is_flagged(pair):
    target, _ = pair
    good = audit.audit_generation(plain_loop(target, 8), target, prompts=PROMPTS, samples=400, new_tokens=8, rng=0)
    assert good.lossless
    assert good.transforms == 800 * 8 and good.padded == 0
    bad = audit.audit_generation(
        plain_loop(target, 8, reuse=True), target, prompts=PROMPTS, samples=400, new_tokens=8, rng=0
    )
    assert not bad.lossless
    assert bad.worst.startswith("lag")  # each step's law is right: only the dependence test sees it
    assert all(bad.ks_distance[k] <= bad.ks_threshold[k] for k in bad.ks_distance if k.startswith("pooled"))
    assert "resolution" in str(bad) and 0 < good.detectable < 1


def test_short_texts_are_padded_to_a_fixed_count(pair):
    target, _ = pair

    def stops_early(prompt, rng):  # stops after a token chosen by the text itself
        toks = plain_loop(target, 8)(prompt, rng)
        cut = 1 + toks[0] % 8
        return toks[:cut]

    rep = audit.audit_generation(stops_early, target, prompts=PROMPTS, samples=300, new_tokens=8, rng=1)
    assert rep.lossless and rep.padded > 0 and rep.transforms == 600 * 8


@pytest.mark.parametrize(
    "bug, gamma, runs", [(None, 4, 400), ("reuse", 1, 600), ("stale", 4, 600), ("truncated", 4, 500)]
)
def test_sd_loop(pair, bug, gamma, runs):
    """A reused stream repeats at the lag of a call's length: with γ = 1 that is lag 1 or 2
    (the power at γ = 4 is in docs/audit.md §11, measured by benchmarks/bench_audit_generation.py)."""
    target, draft = pair
    gen = sd_loop(target, draft, gamma, 8, bug=bug, top=2)
    rep = audit.audit_generation(
        gen,
        target,
        prompts=PROMPTS,
        samples=runs,
        new_tokens=8,
        rng=2,
        drafting=audit.ChainDrafting(draft, gamma, "sd"),
    )
    assert rep.lossless == (bug is None)
    if bug is None:
        assert rep.calls > 0
        z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
        assert abs(z) < 5
        assert rep.optimum + 5 * rep.optimum_se >= rep.tokens_per_call
        assert rep.optimum >= rep.expected - 5 * rep.expected_se
        assert not rep.above_optimum


def test_chain_estimates_match_enumeration():
    """Expected tokens per call at one fixed prefix: the audit's estimate against
    optaccept.tree's exact enumeration (γ = 2, 3 tokens)."""
    target, draft = tree.synthetic_pair(3, rng=5)
    prompt = (0,)

    def one_call(prompt_, rng):  # a loop that makes exactly one call and stops
        toks, counts = sd_loop(target, draft, 2, 1)(prompt_, rng)
        return toks[: counts[0] + 1], counts[:1]

    rep = audit.audit_generation(
        one_call,
        target,
        prompts=[prompt],
        samples=3000,
        new_tokens=1,
        rng=4,
        drafting=audit.ChainDrafting(draft, 2, "sd"),
    )
    P = lambda u: target(prompt + tuple(u))  # noqa: E731
    Q = lambda u: draft(prompt + tuple(u))  # noqa: E731
    sd = 1 + tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=2, k=1), verifier="token").value
    block = 1 + tree.accepted_tokens(P, Q, drafts=tree.TreeDraftLaw(length=2, k=1), verifier="block").value
    assert abs(rep.expected - sd) < 5 * rep.expected_se
    assert abs(rep.optimum - block) < 5 * rep.optimum_se
    assert abs(rep.tokens_per_call - sd) < 5 * rep.std_err


def test_refusals_come_before_any_run(pair):
    target, draft = pair
    calls = []

    def gen(prompt, rng):
        calls.append(1)
        return [0]

    for kw, match in [
        (dict(samples=0), "^samples: must be at least 1, got 0$"),
        (dict(new_tokens=0), "^new_tokens: must be at least 1"),
        (dict(drafting=audit.ChainDrafting(None, 2, "sd")), "^drafting: length and declared need the draft model"),
        (dict(drafting=audit.ChainDrafting(draft, None)), "^drafting: the chain length is needed"),
        (dict(drafting=audit.ChainDrafting(draft, 2, "typical")), "declared"),
        (dict(prompts=[(99,)]), r"prompts\[0\]"),
        (dict(prompts=[]), "prompts"),
        (dict(rng="x"), "rng"),
    ]:
        args = dict(prompts=PROMPTS, samples=3) | kw
        with pytest.raises(oa.InputError, match=match):
            audit.audit_generation(gen, target, **args)
    assert not calls


def test_torch_lm_layout_and_a_hugging_face_style_loop(pair):
    torch = pytest.importorskip("torch")
    target, _ = pair
    lm = audit.torch_lm(target, 8)
    ids = torch.tensor([[1, 4, 2], [2, 3, 0]])
    out = lm(ids, attention_mask=torch.ones_like(ids))
    assert out.logits.shape == (2, 3, 8) and out[0] is out.logits
    for b in range(2):
        for t in range(3):
            want = np.asarray(target(tuple(ids[b, : t + 1].tolist())))
            assert np.allclose(out.logits[b, t].exp().numpy(), want, atol=1e-6)
    assert next(lm.parameters()).device.type == "cpu" and lm.config.vocab_size == 8
    zero = audit.torch_lm(lambda u: [0.5, 0.5, 0.0], 3)(torch.tensor([[0]])).logits
    assert torch.isneginf(zero[0, 0, 2])

    def hf_loop(prompt, rng):  # the way Hugging Face-style sampling loops are written
        x = torch.tensor([list(prompt)])
        for _ in range(6):
            probs = torch.softmax(lm(x).logits[:, -1, :], dim=-1)
            nxt = torch.multinomial(probs, 1)  # torch's global generator, seeded by the audit
            x = torch.cat([x, nxt], dim=1)
        return x[0, len(prompt) :].tolist()

    rep = audit.audit_generation(hf_loop, target, prompts=PROMPTS, samples=100, new_tokens=6, rng=5)
    assert rep.lossless

    def hf_loop_reseeding(prompt, rng):  # re-seeds torch at every step: the text is wrong
        x = torch.tensor([list(prompt)])
        for _ in range(6):
            torch.manual_seed(1234)
            probs = torch.softmax(lm(x).logits[:, -1, :], dim=-1)
            x = torch.cat([x, torch.multinomial(probs, 1)], dim=1)
        return x[0, len(prompt) :].tolist()

    assert not audit.audit_generation(
        hf_loop_reseeding, target, prompts=PROMPTS, samples=100, new_tokens=6, rng=5
    ).lossless


@pytest.mark.parametrize("random_seed", [None, 1234])
def test_hugging_face_style_sd_loop_end_to_end(pair, random_seed):
    """A speculative sampling loop written against Hugging Face-style models, run unchanged on
    torch_lm: correct, it passes with its tokens per call at speculative sampling's value; re-seeding
    before every acceptance coin (the coin is then one fixed number) is flagged."""
    torch = pytest.importorskip("torch")
    from _generation_loops import hf_style_sd

    target, draft = pair
    loop = hf_style_sd(audit.torch_lm(draft, 8), audit.torch_lm(target, 8), 3, 6, random_seed=random_seed)

    def generate(prompt, rng):
        out, counts = loop(torch.tensor([list(prompt)]))
        return out[0, len(prompt) :].tolist(), counts

    rep = audit.audit_generation(
        generate,
        target,
        prompts=PROMPTS,
        samples=150,
        new_tokens=6,
        rng=6,
        drafting=audit.ChainDrafting(draft, 3, "sd"),
    )
    assert rep.lossless == (random_seed is None)
    if random_seed is None:
        z = (rep.tokens_per_call - rep.expected) / np.hypot(rep.std_err, rep.expected_se)
        assert abs(z) < 5


@pytest.mark.parametrize("counts", [[1, 2], [1, 2, 3]])
def test_counts_without_draft_are_refused_in_one_line(counts):
    target, _ = tree.synthetic_pair(8, rng=0)

    def generate(prompt, rng):
        return [1, 2, 3], counts

    with pytest.raises(oa.InputError, match="needs drafting="):
        audit.audit_generation(generate, target, prompts=[(1,)], samples=2, new_tokens=3, rng=0)
