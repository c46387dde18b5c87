"""Model loaders that behave: no lasting change to the process, local folders and cached
Hub ids (never a download), the draft's temperature, tokenizers compared by vocabulary,
padded embedding rows dropped and recorded.  Tiny random GPT-2 models saved to tmp_path."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from optaccept import InputError  # noqa: E402
from optaccept.cli._main import main  # noqa: E402
from optaccept.llm import ModelPair, extract  # noqa: E402
from optaccept.real import Distributions  # noqa: E402


def char_tokenizer(swap: bool = False):
    """97 tokens: <eos>, <unk> and the printable ASCII characters (two swapped if ``swap``)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = [chr(c) for c in range(32, 127)]
    if swap:
        chars[33], chars[34] = chars[34], chars[33]
    vocab = {"<eos>": 0, "<unk>": 1, **{c: i + 2 for i, c in enumerate(chars)}}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", unk_token="<unk>", pad_token="<eos>")


def save_model(folder, vocab_size: int, seed: int, *, swap: bool = False):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=vocab_size, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg).eval()
    model.save_pretrained(folder)
    char_tokenizer(swap).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {
        "a": save_model(root / "a", 128, 0),
        "b": save_model(root / "b", 128, 1),
        "padded": save_model(root / "padded", 192, 2),
        "other_tok": save_model(root / "other_tok", 128, 3, swap=True),
        "small": save_model(root / "small", 64, 4),
    }


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _state():
    import huggingface_hub.constants as hc

    return dict(os.environ), hc.HF_HUB_OFFLINE


def test_loaders_leave_the_process_alone(models, no_network) -> None:
    before = _state()
    ModelPair.from_pretrained(models["a"], models["b"])
    assert _state() == before
    with pytest.raises(InputError):
        ModelPair.from_pretrained(models["a"], models["other_tok"])
    with pytest.raises(InputError):
        ModelPair.from_pretrained(models["a"] / "missing")
    assert _state() == before


def test_hub_ids_in_the_local_cache_load_without_network(models, tmp_path, monkeypatch, no_network) -> None:
    import shutil

    import huggingface_hub.constants as hc

    cache = tmp_path / "hub"
    repo = cache / "models--acme--tiny"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(models["a"], repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache))
    pair = ModelPair.from_pretrained("acme/tiny")
    assert pair.target_id == "acme/tiny" and pair.vocab_size == 128
    with pytest.raises(InputError, match="nothing is downloaded"):
        ModelPair.from_pretrained("acme/not-cached")


def test_a_separate_draft_defaults_to_the_target_temperature(models, tmp_path, capsys) -> None:
    pair = ModelPair.from_pretrained(models["a"], models["b"], target_temperature=0.7)
    assert pair.draft_warp.temperature == 0.7
    assert ModelPair.from_pretrained(models["a"], models["b"], draft_temperature=2.0).draft_warp.temperature == 2.0
    out = tmp_path / "d.npz"
    common = ["--limit", "2", "--max-new-tokens", "2", "--quiet", "--device", "cpu", "-o", str(out)]
    assert (
        main(
            [
                "extract",
                "--model",
                str(models["a"]),
                "--draft-model",
                str(models["b"]),
                "--target-temperature",
                "0.8",
                *common,
            ]
        )
        == 0
    )
    assert Distributions.load(out).meta["draft_warp"]["temperature"] == 0.8
    # one model at two temperatures keeps the built-in 1.5
    assert main(["extract", "--model", str(models["a"]), *common]) == 0
    assert Distributions.load(out).meta["draft_warp"]["temperature"] == 1.5
    capsys.readouterr()


def test_tokenizers_are_compared_by_vocabulary(models) -> None:
    with pytest.raises(InputError, match=r"tokenizer differs.*id 35 is 'A' for the target and 'B' for the draft"):
        ModelPair.from_pretrained(models["a"], models["other_tok"])
    with pytest.raises(InputError, match="tokenizer has 97 token ids but the draft model only 64"):
        ModelPair.from_pretrained(models["a"], models["small"])


def test_padded_embedding_rows_are_dropped_and_recorded(models) -> None:
    pair = ModelPair.from_pretrained(models["a"], models["padded"])
    assert pair.vocab_size == 128
    assert pair.provenance()["padded_rows_dropped"] == {"target": 0, "draft": 64}
    data = extract(pair, ["Hi there", "abc"], max_new_tokens=3, device="cpu", progress=False)
    assert data.target.shape[1] == data.draft.shape[1] == 128
    assert data.meta["padded_rows_dropped"] == {"target": 0, "draft": 64}
    # reference: the draft's softmax over its first 128 logits, by an uncached forward pass
    tok = pair.tokenizer
    ids = tok("Hi there")["input_ids"]
    with torch.no_grad():
        logits = pair.draft(torch.tensor([ids])).logits[0, -1, :128]
    np.testing.assert_allclose(data.draft[0], torch.softmax(logits, -1).numpy(), atol=2e-6)
    # the same pair the other way round
    back = ModelPair.from_pretrained(models["padded"], models["a"])
    assert back.provenance()["padded_rows_dropped"] == {"target": 64, "draft": 0}
