"""llm.Warp is tree.with_sampling on torch logits: the same filters (one definition, run on
tensors), so its laws equal with_sampling's to float rounding on every engine — on random
logit rows with ties, −inf entries and near-one-hot rows, k above the vocabulary, p = 1 and
min-p 0 and 1."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest

from optaccept import InputError, tree

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from optaccept.llm._models import Warp  # noqa: E402

ENGINES = ("transformers", "vllm", "sglang")


def _rows(rng, rows, n):
    """Logit rows of n tokens: continuous, small integers (ties everywhere), −inf entries,
    near-one-hot (one logit 30 above the rest), all tied."""
    kind = rng.integers(0, 5, rows)
    x = rng.standard_normal((rows, n)) * rng.choice([0.5, 2.0, 8.0], (rows, 1))
    x[kind == 1] = rng.integers(-2, 2, (int((kind == 1).sum()), n)).astype(float)
    x[kind == 2] = np.where(rng.random((int((kind == 2).sum()), n)) < 0.3, -np.inf, x[kind == 2])
    x[kind == 3] = rng.integers(0, 2, (int((kind == 3).sum()), n)).astype(float)
    x[kind == 3, 0] = 30.0
    x[kind == 4] = 0.5
    x[~np.isfinite(x).any(axis=1), 0] = 0.0
    return x


PARAMS = list(
    itertools.product(
        (1.0, 0.3, 0.7, 1.5),  # temperature
        (None, 1, 2, 5, 1000),  # top_k (1000: above the vocabulary)
        (None, 0.3, 0.8, 0.95, 1.0),  # top_p
        (None, 0.0, 0.2, 1.0),  # min_p
    )
)


@pytest.mark.parametrize("engine", ENGINES)
def test_warp_is_with_sampling_on_logits(engine):
    rng = np.random.default_rng(17)
    checked = 0
    for i, (t, k, p, m) in enumerate(PARAMS):
        n = int((1, 2, 5, 9, 33)[i % 5])
        logits = _rows(rng, 3, n)
        got = Warp(t, k, p, m, engine).probs(torch.tensor(logits, dtype=torch.float64))
        assert got.dtype == torch.float64 and got.shape == logits.shape
        for row, out in zip(logits, got.numpy(), strict=True):
            law = np.exp(row - row.max())
            law /= law.sum()
            want = tree.with_sampling(lambda u, r=law: r, temperature=t, top_k=k, top_p=p, min_p=m, engine=engine)(())
            np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-15, err_msg=f"{row} T={t} k={k} p={p} m={m}")
            assert np.array_equal(out > 0, want > 0)  # the same tokens kept
            checked += 1
    assert checked == 3 * len(PARAMS)


def test_ties_near_one_hot_and_off_values():
    x = torch.tensor([[2.0, 1.0, 1.0, 1.0, 0.0], [40.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    for engine in ENGINES:
        kept = (Warp(top_k=2, engine=engine).probs(x)[0] > 0).sum().item()
        assert kept == 4  # every token tied with the 2nd kept
        assert (Warp(min_p=1.0, engine=engine).probs(x[1:]) > 0).sum().item() == 1
        plain = torch.softmax(x, -1)
        for w in (Warp(top_k=99, engine=engine), Warp(top_p=1.0, min_p=0.0, engine=engine)):
            torch.testing.assert_close(w.probs(x), plain, rtol=0, atol=1e-15)


def test_float32_logits_give_float32_laws():
    x = torch.randn(4, 300, generator=torch.Generator().manual_seed(0)) * 3
    out = Warp(0.8, top_k=50, top_p=0.9, min_p=0.01, engine="vllm").probs(x)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.sum(-1), torch.ones(4), rtol=0, atol=1e-5)
    ref = Warp(0.8, top_k=50, top_p=0.9, min_p=0.01, engine="vllm").probs(x.double())
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(temperature=0), "temperature"),
        (dict(temperature=-1.0), "temperature"),
        (dict(top_k=0), "top_k"),
        (dict(top_p=1.5), "top_p"),
        (dict(min_p=2), "min_p"),
        (dict(engine="tgi"), "engine"),
    ],
)
def test_mistakes_are_refused_naming_the_argument(kw, arg):
    with pytest.raises(InputError, match=rf"^{arg}"):
        Warp(**kw)


def test_record_and_truncation_flag():
    w = Warp(0.7, min_p=0.1, engine="sglang")
    assert w.as_dict() == dict(temperature=0.7, top_k=None, top_p=None, min_p=0.1, engine="sglang")
    assert w.truncated and not Warp(top_p=1.0, min_p=0.0).truncated


def test_the_docstring_examples_run():
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(Warp, "Warp", globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 5 and result.failed == 0
