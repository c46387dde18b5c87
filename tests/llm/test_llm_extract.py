"""Extraction, storage and resume, on a tiny random GPT-2 with a character tokenizer
built offline (milliseconds), against step-by-step uncached forward passes."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from optaccept import InputError  # noqa: E402
from optaccept.llm import ModelPair, builtin_prompts, extract  # noqa: E402
from optaccept.llm import _extract as extract_module  # noqa: E402
from optaccept.llm._extract import extract_sweep  # noqa: E402
from optaccept.llm._models import Warp  # noqa: E402
from optaccept.llm._prompts import load_prompts  # noqa: E402
from optaccept.real import Distributions  # noqa: E402

PROMPTS = ["Hello world", "abc", "The cat sat on", "x", "Why?"]


def tiny_tokenizer():
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<eos>": 0, "<unk>": 1}
    for c in range(32, 127):
        vocab[chr(c)] = len(vocab)
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", unk_token="<unk>", pad_token="<eos>")


def tiny_model(seed=0, scale=0.3):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        n_layer=2, n_embd=64, n_head=2, vocab_size=1000, bos_token_id=0, eos_token_id=0, initializer_range=scale
    )
    return GPT2LMHeadModel(cfg).eval()


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def model():
    return tiny_model()


@pytest.fixture
def pair(model, tok):
    return ModelPair(model, tok, target_warp=Warp(1.0), draft_warp=Warp(1.7), target_id="tiny-gpt2")


def run(pair, prompts=PROMPTS, **kw):
    kw.setdefault("max_new_tokens", 6)
    kw.setdefault("batch_size", 2)
    return extract(pair, prompts, device="cpu", progress=False, **kw)


def test_rows_are_the_models_next_token_distributions(pair, model, tok):
    data = run(pair)
    assert data.target.shape == data.draft.shape == (len(data), 1000)
    np.testing.assert_allclose(data.target.sum(1), 1, atol=1e-5)
    # Reference: an uncached forward pass on prompt + tokens so far, one position at a time.
    for row in range(len(data)):
        i, s = data.prompt_index[row], data.step[row]
        earlier = data.token[(data.prompt_index == i) & (data.step < s)]
        ids = tok(PROMPTS[i])["input_ids"] + list(earlier)
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1]
        np.testing.assert_allclose(data.target[row], torch.softmax(logits, -1).numpy(), atol=2e-6)
        np.testing.assert_allclose(data.draft[row], torch.softmax(logits / 1.7, -1).numpy(), atol=2e-6)
        assert data.target[row, data.token[row]] > 0
    # Steps run 0, 1, 2, ... per prompt; only end-of-text stops a prompt early.
    for i in range(len(PROMPTS)):
        steps = data.step[data.prompt_index == i]
        assert list(steps) == list(range(len(steps)))
        toks = data.token[data.prompt_index == i]
        assert len(steps) == 6 or toks[-1] == 0
        assert 0 not in toks[:-1]


def test_seeded_and_independent_of_batching(pair):
    a = run(pair, batch_size=2, rng=3)
    b = run(pair, batch_size=5, rng=3)
    c = run(pair, batch_size=2, rng=4)
    assert np.array_equal(a.token, b.token)
    np.testing.assert_allclose(a.target, b.target, atol=1e-6)
    assert not np.array_equal(a.token, c.token)


def test_separate_draft_model(model, tok):
    draft = tiny_model(seed=1)
    pair = ModelPair(model, tok, draft, draft_warp=Warp(1.0))
    data = run(pair, PROMPTS[:2])
    for row in range(len(data)):
        i, s = data.prompt_index[row], data.step[row]
        earlier = data.token[(data.prompt_index == i) & (data.step < s)]
        ids = tok(PROMPTS[i])["input_ids"] + list(earlier)
        with torch.no_grad():
            logits = draft(torch.tensor([ids])).logits[0, -1]
        np.testing.assert_allclose(data.draft[row], torch.softmax(logits, -1).numpy(), atol=2e-6)
    assert not np.allclose(data.target, data.draft)


def test_truncation(model, tok):
    pair = ModelPair(model, tok, target_warp=Warp(1.0, top_k=7), draft_warp=Warp(1.5, top_p=0.5))
    data = run(pair)
    assert np.all((data.target > 0).sum(1) <= 7)
    np.testing.assert_allclose(data.target.sum(1), 1, atol=1e-5)
    # top-p: the kept tokens are the most likely ones, their mass reaches 0.5, and
    # without the least likely kept token it would not.
    with torch.no_grad():
        for row in range(3):
            q = data.draft[row]
            kept = np.flatnonzero(q > 0)
            assert q[kept].sum() == pytest.approx(1, abs=1e-5)
    w = Warp(1.0, top_p=0.5)
    probs = torch.softmax(torch.tensor([[3.0, 2.0, 1.0, 0.0]]), -1)[0]
    out = w.probs(torch.log(probs)[None])[0]
    assert (out > 0).sum() == 1 + int(probs[0] < 0.5)
    with pytest.raises(InputError):
        Warp(0.0)
    with pytest.raises(InputError):
        Warp(1.0, top_p=1.5)


def test_storage_roundtrip_dense_and_sparse(pair, tmp_path, model, tok):
    data = run(pair)
    f = data.save(tmp_path / "d.npz")
    back = Distributions.load(f)
    assert np.array_equal(back.target, data.target) and np.array_equal(back.draft, data.draft)
    assert np.array_equal(back.token, data.token)
    assert back.meta["target_model"] == "tiny-gpt2"
    assert back.meta["draft_warp"]["temperature"] == 1.7
    assert back.meta["packages"]["torch"] == torch.__version__
    assert back.meta["prompt_ids"] == [f"prompt-{i}" for i in range(len(PROMPTS))]
    sparse_pair = ModelPair(model, tok, target_warp=Warp(1.0, top_k=5), draft_warp=Warp(2.0, top_k=5))
    sp = run(sparse_pair)
    g = sp.save(tmp_path / "s.npz")
    with np.load(g) as z:
        assert "indices" in z.files and "target" not in z.files
    back = Distributions.load(g)
    assert np.array_equal(back.target, sp.target) and np.array_equal(back.draft, sp.draft)


def test_checksum_detects_edits(pair, tmp_path):
    data = run(pair, PROMPTS[:2])
    f = data.save(tmp_path / "d.npz")
    with np.load(f) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["target"] = arrays["target"].copy()
    arrays["target"][0, 0] += 0.01
    np.savez_compressed(tmp_path / "bad.npz", **arrays)
    with pytest.raises(InputError, match="checksum"):
        Distributions.load(tmp_path / "bad.npz")
    meta = json.loads(str(arrays["meta"]))
    assert "config_sha256" in meta


def test_resume_after_interruption(pair, tmp_path, monkeypatch):
    full = run(pair, batch_size=2)
    calls = {"n": 0}
    real = extract_module._generate_and_read

    def flaky(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(extract_module, "_generate_and_read", flaky)
    ck = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt):
        run(pair, batch_size=2, checkpoint=ck)
    assert len(list(ck.glob("batch-*.npz"))) == 2
    monkeypatch.setattr(extract_module, "_generate_and_read", real)
    resumed = run(pair, batch_size=2, checkpoint=ck)
    assert resumed.meta["extraction"]["new_positions"] == int((full.prompt_index >= 4).sum())
    assert np.array_equal(resumed.prompt_index, full.prompt_index)
    assert np.array_equal(resumed.step, full.step)
    assert np.array_equal(resumed.token, full.token)
    np.testing.assert_allclose(resumed.target, full.target, atol=1e-6)
    # Other settings must not silently reuse these shards.
    with pytest.raises(InputError, match="other settings"):
        run(pair, batch_size=2, checkpoint=ck, max_new_tokens=3)


def test_sweep_equals_separate_extractions(pair):
    sweep = extract_sweep(pair, [1.2, 2.0], PROMPTS[:3], max_new_tokens=4, batch_size=2, device="cpu", progress=False)
    for t, d in sweep.items():
        single = run(pair.with_temperatures(draft=t), PROMPTS[:3], max_new_tokens=4)
        assert np.array_equal(d.token, single.token)
        np.testing.assert_allclose(d.draft, single.draft, atol=1e-6)
        assert d.meta["draft_warp"]["temperature"] == t
        assert d.meta["config_sha256"] == single.meta["config_sha256"]


def test_prompts(tmp_path):
    ps = builtin_prompts()
    assert len(ps) >= 30 and len({p.kind for p in ps}) >= 10
    assert len({p.id for p in ps}) == len(ps)
    f = tmp_path / "p.txt"
    f.write_text("first\n\nsecond\n")
    assert [p.text for p in load_prompts(f)] == ["first", "second"]
    j = tmp_path / "p.jsonl"
    j.write_text('{"id": "a", "text": "x"}\n{"text": "y"}\n')
    assert [p.id for p in load_prompts(j)] == ["a", "line-2"]
    j.write_text("not json\n")
    with pytest.raises(InputError, match="line 1"):
        load_prompts(j)


def test_extended_prompts():
    from optaccept.llm._prompts import extended_prompts

    ext, base = extended_prompts(), builtin_prompts()
    assert ext[: len(base)] == base  # the built-in set first, unchanged
    assert len(ext) == 296 and len({p.id for p in ext}) == len(ext)
    assert len({p.text for p in ext}) == len(ext)
    kinds = {p.kind for p in ext[len(base) :]}
    assert len(kinds) == 13 and all(sum(p.kind == k for p in ext[len(base) :]) == 20 for k in kinds)
    assert all("{" not in p.text and p.text.strip() == p.text for p in ext)


def test_bad_arguments(pair):
    with pytest.raises(InputError, match="max_new_tokens"):
        run(pair, max_new_tokens=0)
    with pytest.raises(InputError, match="pair"):
        extract("not a pair", PROMPTS)
    with pytest.raises(InputError, match="prompts"):
        run(pair, prompts=[])
    with pytest.raises(InputError, match="vocabulary"):
        from transformers import GPT2Config, GPT2LMHeadModel

        # fewer embedding rows (50) than the shared tokenizer's 97 tokens
        other = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=50))
        ModelPair(pair.target, pair.tokenizer, other)


def test_from_pretrained_and_cli(model, tok, tmp_path, capsys):
    from optaccept.cli.llm import register

    folder = tmp_path / "tiny"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    out = tmp_path / "d.npz"
    args = parser.parse_args(
        [
            "extract",
            "--model",
            str(folder),
            "--limit",
            "3",
            "--max-new-tokens",
            "3",
            "-o",
            str(out),
            "--quiet",
            "--device",
            "cpu",
        ]
    )
    assert args.func(args) == 0
    data = Distributions.load(out)
    assert data.meta["prompt_ids"] == [p.id for p in builtin_prompts()[:3]]
    args = parser.parse_args(
        ["gap-table", str(out), "-k", "2", "3", "--quiet", "--fast", "--out", str(tmp_path / "fig")]
    )
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "alpha_swor" in text
    assert (tmp_path / "fig" / "llm_gap_table.png").is_file()


def test_compact_rows_keep_alpha(model, tok):
    from optaccept import batched_optimal_acceptance
    from optaccept.verifiers import batched_acceptance as batched_verifier_acceptance

    pair = ModelPair(model, tok, target_warp=Warp(1.0, top_k=6), draft_warp=Warp(1.8, top_p=0.9))
    data = run(pair)
    p, q = data.rows()
    pc, qc = data.compact_rows()
    assert pc.shape[1] < p.shape[1]
    np.testing.assert_allclose(pc.sum(1), 1, atol=1e-12)
    for k in (2, 3):
        for law in ("iid", "swor", "greedy"):
            if law != "iid" and np.any((q > 0).sum(1) < k):
                continue
            np.testing.assert_allclose(
                batched_optimal_acceptance(pc, qc, k, law), batched_optimal_acceptance(p, q, k, law), atol=1e-12
            )
        for v in ("rrs", "kseq", "kseq-output", "nss"):
            np.testing.assert_allclose(
                batched_verifier_acceptance(pc, qc, k, v), batched_verifier_acceptance(p, q, k, v), atol=1e-12
            )


def test_no_third_party_notice_reaches_the_user():
    """transformers 5.x logs, once per process, that ``past_key_values`` is now ``cache``, on our
    calls and reads of the cache: a fresh process running an extraction and a sequence model
    (their documented examples, on a tiny offline model) shows the user nothing on stderr."""
    import subprocess
    import sys

    code = (
        "import doctest; import optaccept.llm as L; from optaccept.llm import _extract; "
        "doctest.run_docstring_examples(_extract.extract, {}); "
        "doctest.run_docstring_examples(L.sequence_models, {})"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "deprecated" not in run.stderr and "Failed example" not in run.stdout, run.stderr[-2000:] + run.stdout
