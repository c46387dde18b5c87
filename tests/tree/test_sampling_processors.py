"""tree.with_sampling: temperature, top-k, top-p and min-p in each engine's order, against two
independent references — plain-Python loops over Fractions written from the stated rules, and
torch transcriptions of the engines' own filtering code (transformers' logits warpers, vLLM's
``apply_min_p`` / ``apply_top_k_top_p``, SGLang's ``top_k_top_p_min_p_sampling_from_probs_torch``)
— on nasty rows: zeros, ties, near-one-hot rows, k above the support, p = 1, min-p = 1."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from optaccept import InputError, tree

ENGINES = ("transformers", "vllm", "sglang")


# ---- reference 1: the rules, as loops over Fractions --------------------------------------------


def _renorm(v, keep):
    s = sum(v[i] for i in keep)
    return [v[i] / s if i in keep else F(0) for i in range(len(v))]


def _ref_top_k(v, k):
    kth = sorted(v, reverse=True)[min(k, len(v)) - 1]
    return {i for i in range(len(v)) if v[i] >= kth}


def _ref_top_p(v, p, inclusive):
    total = sum(v)
    keep = set()
    for i in range(len(v)):
        above = sum((v[j] for j in range(len(v)) if v[j] > v[i]), F(0))
        if above < p * total or (inclusive and above == p * total):
            keep.add(i)
    return keep


def _ref_min_p(v, m):
    top = max(v)
    return {i for i in range(len(v)) if v[i] >= m * top}


def reference(row, *, k=None, p=None, m=None, engine="transformers"):
    v = [F(x) for x in row]
    p = None if p is None or p == 1 else F(p)
    m = None if not m else F(m)
    if engine == "sglang":
        keep = set(range(len(v)))
        if k is not None:
            keep &= _ref_top_k(v, k)
        if p is not None:
            keep &= _ref_top_p(v, p, True)
        if m is not None:
            keep &= _ref_min_p(v, m)
        return _renorm(v, keep)
    order = "kpm" if engine == "transformers" else "mkp"
    for step in order:
        if step == "k" and k is not None:
            v = _renorm(v, _ref_top_k(v, k))
        if step == "p" and p is not None:
            v = _renorm(v, _ref_top_p(v, p, False))
        if step == "m" and m is not None:
            v = _renorm(v, _ref_min_p(v, m))
    return v


def _nasty_rows():
    rows = [
        [F(1, 2), F(1, 4), F(1, 8), F(1, 8)],  # a tie at the boundary of k = 3 and of p
        [F(1, 4)] * 4,  # all tied
        [F(1), F(0), F(0)],  # one-hot
        [F(1, 3), F(0), F(1, 3), F(1, 3), F(0)],  # zeros and ties at the top
        [1 - F(1, 10**12), F(1, 2 * 10**12), F(1, 2 * 10**12)],  # near one-hot
        [F(3, 10), F(3, 10), F(1, 5), F(1, 10), F(1, 10)],
        [F(1, 2), F(1, 2)],
        [F(1)],
    ]
    rng = np.random.default_rng(5)
    for n in (3, 5, 8):
        for _ in range(6):
            c = rng.integers(0, 4, n)  # small integers: many ties and zeros
            if c.sum() == 0:
                c[0] = 1
            rows.append([F(int(x), int(c.sum())) for x in c])
    return rows


PARAMS = [
    dict(k=k, p=p, m=m)
    for k, p, m in itertools.product((None, 1, 3, 10), (None, 0.25, 0.5, 0.75, 1.0), (None, 0.0, 0.5, 1.0))
]


@pytest.mark.parametrize("engine", ENGINES)
def test_exact_path_matches_the_rules_on_nasty_rows(engine):
    checked = 0
    for row in _nasty_rows():
        for kw in PARAMS:
            got = tree.with_sampling(lambda u, r=row: r, top_k=kw["k"], top_p=kw["p"], min_p=kw["m"], engine=engine)(())
            assert list(got) == reference(row, engine=engine, **kw), (row, kw)
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("engine", ENGINES)
def test_float_path_matches_the_rules_on_float_rows(engine):
    rng = np.random.default_rng(11)
    for trial in range(150):
        n = int(rng.integers(1, 9))
        row = rng.dirichlet(np.full(n, 0.5))
        row[rng.random(n) < 0.2] = 0.0
        if row.sum() == 0:
            row[0] = 1.0
        row = row / row.sum()
        kw = PARAMS[trial % len(PARAMS)]
        got = tree.with_sampling(lambda u, r=row: r, top_k=kw["k"], top_p=kw["p"], min_p=kw["m"], engine=engine)(())
        want = np.array([float(x) for x in reference(row / row.sum(), engine=engine, **kw)])
        np.testing.assert_allclose(got, want, atol=1e-12)


# ---- reference 2: the engines' own code, transcribed in torch -----------------------------------

torch = pytest.importorskip("torch")


def _hf(logits, T, k, p, m):
    """transformers' warpers in generate's order: Temperature, TopK, TopP, MinP (min_tokens_to_keep 1)."""
    x = logits / T
    if k is not None:
        kth = torch.topk(x, min(k, x.shape[-1]))[0][..., -1, None]
        x = x.masked_fill(x < kth, -float("inf"))
    if p is not None and p < 1:
        sorted_logits, sorted_idx = torch.sort(x, descending=False)
        cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cum <= (1 - p)
        remove_sorted[..., -1:] = False
        remove = remove_sorted.scatter(-1, sorted_idx, remove_sorted)
        x = x.masked_fill(remove, -float("inf"))
    if m:
        probs = torch.softmax(x, dim=-1)
        remove = probs < m * probs.amax(dim=-1, keepdim=True)
        x = x.masked_fill(remove, -float("inf"))
    return torch.softmax(x, dim=-1)


def _vllm(logits, T, k, p, m):
    """vLLM's sampler: temperature, min-p, then apply_top_k_top_p on the ascending sort."""
    x = logits / T
    if m:
        probs = torch.softmax(x, dim=-1)
        x = x.masked_fill(probs < m * probs.amax(dim=-1, keepdim=True), -float("inf"))
    logits_sort, idx = x.sort(dim=-1, descending=False)
    if k is not None:
        kk = min(k, x.shape[-1])
        mask = logits_sort.gather(-1, torch.tensor([[x.shape[-1] - kk]]))
        logits_sort = logits_sort.masked_fill(logits_sort < mask, -float("inf"))
    if p is not None and p < 1:
        probs_sum = logits_sort.softmax(dim=-1).cumsum(dim=-1)
        top_p_mask = probs_sum <= 1 - p
        top_p_mask[:, -1] = False
        logits_sort = logits_sort.masked_fill(top_p_mask, -float("inf"))
    x = logits_sort.scatter(-1, idx, logits_sort)
    return torch.softmax(x, dim=-1)


def _sglang(logits, T, k, p, m):
    """SGLang's torch sampler: softmax(logits / T), then top-k, top-p and min-p on the sorted law."""
    probs = torch.softmax(logits / T, dim=-1)
    probs_sort, idx = probs.sort(dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    if k is not None:
        probs_sort[torch.arange(probs.shape[-1]).view(1, -1) >= k] = 0.0
    if p is not None:
        probs_sort[(probs_sum - probs_sort) > p] = 0.0
    if m:
        probs_sort[probs_sort < (probs_sort[:, 0] * m).view(-1, 1)] = 0.0
    out = torch.zeros_like(probs).scatter(-1, idx, probs_sort)
    return out / out.sum(dim=-1, keepdim=True)


ENGINE_CODE = {"transformers": _hf, "vllm": _vllm, "sglang": _sglang}


@pytest.mark.parametrize("engine", ENGINES)
def test_matches_the_engines_code_on_random_logits(engine):
    """Continuous random logits (no ties; some −inf), float64: the processed laws agree."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(2, 40))
        logits = rng.standard_normal(n) * rng.choice([0.5, 2.0, 8.0])
        logits[rng.random(n) < 0.15] = -np.inf
        if not np.isfinite(logits).any():
            logits[0] = 0.0
        T = float(rng.choice([1.0, 0.3, 0.7, 1.5]))
        k = [None, 1, 2, 5, 50][trial % 5]
        p = [None, 0.3, 0.8, 0.95][(trial // 5) % 4]
        m = [None, 0.05, 0.2][(trial // 20) % 3]
        law = np.exp(logits - logits.max())
        law /= law.sum()
        got = tree.with_sampling(lambda u, r=law: r, temperature=T, top_k=k, top_p=p, min_p=m, engine=engine)(())
        want = ENGINE_CODE[engine](torch.tensor(logits[None, :], dtype=torch.float64), T, k, p, m)[0].numpy()
        np.testing.assert_allclose(got, want, atol=1e-9, err_msg=f"{engine} T={T} k={k} p={p} m={m}")


@pytest.mark.parametrize("engine", ["transformers", "vllm"])
def test_top_k_ties_at_the_boundary_as_transformers_and_vllm(engine):
    """Both compare with the k-th value: every token tied with it is kept."""
    logits = torch.tensor([[2.0, 1.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    law = torch.softmax(logits, -1)[0].numpy()
    for k in (1, 2, 3, 4):
        got = tree.with_sampling(lambda u: law, top_k=k, engine=engine)(())
        want = ENGINE_CODE[engine](logits, 1.0, k, None, None)[0].numpy()
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert (tree.with_sampling(lambda u: law, top_k=2, engine=engine)(()) > 0).sum() == 4


# ---- the transform in the rest of the package ---------------------------------------------------


def test_greedy_is_the_first_most_likely_token():
    row = [F(1, 4), F(3, 8), F(3, 8)]
    assert list(tree.with_sampling(lambda u: row, temperature=0)(())) == [0, 1, 0]
    got = tree.with_sampling(lambda u: np.array([0.2, 0.4, 0.4]), temperature=0, top_k=1)(())
    assert got.tolist() == [0.0, 1.0, 0.0]


def test_transforms_compose_and_temperature_is_the_tree_functions_one():
    target, draft = tree.synthetic_pair(6, rng=1)
    once = tree.with_sampling(target, temperature=0.7, top_k=3, top_p=0.9)
    twice = tree.with_sampling(tree.with_sampling(target, temperature=0.7), top_k=3, top_p=0.9)
    for u in [(), (1,), (2, 5)]:
        np.testing.assert_allclose(once(u), twice(u), atol=1e-15)
    law = tree.TreeDraftLaw(length=2)
    a = tree.accepted_tokens(target, draft, law, "token", temperature=0.5)
    b = tree.accepted_tokens(
        tree.with_sampling(target, temperature=0.5), tree.with_sampling(draft, temperature=0.5), law, "token"
    )
    assert float(a.value) == pytest.approx(float(b.value), abs=1e-12)


def test_identity_and_exactness():
    row = [F(1, 3), F(2, 3)]
    m = tree.with_sampling(lambda u: row)
    assert list(m(())) == row and m.processing == ()
    assert list(tree.with_sampling(lambda u: row, top_p=1.0, min_p=0.0)(())) == row


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(temperature=-1), "temperature"),
        (dict(temperature=float("nan")), "temperature"),
        (dict(temperature=True), "temperature"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=2.5), "top_k"),
        (dict(top_p=0), "top_p"),
        (dict(top_p=1.5), "top_p"),
        (dict(min_p=-0.1), "min_p"),
        (dict(min_p=2), "min_p"),
        (dict(engine="tgi"), "engine"),
    ],
)
def test_mistakes_are_refused_naming_the_argument(kw, arg):
    with pytest.raises(InputError, match=rf"^{arg}"):
        tree.with_sampling(lambda u: [0.5, 0.5], **kw)


def test_checked_laws_equal_the_full_check_and_bad_laws_are_still_refused():
    """Model's shortcut for float64 rows summing to 1 within 1e-9 returns what as_distribution
    returns; every other row takes the full check."""
    from optaccept._lib.validation import as_distribution

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 50):
        for off in (0.0, 1e-12, -3e-10):
            row = rng.dirichlet(np.ones(n))
            row = row * (1 + off)
            got = tree.with_sampling(lambda u, r=row: r)(())
            want = as_distribution(row, "x")
            assert np.array_equal(got, want) and not got.flags.writeable and got is not row
    bad = [np.array([0.5, np.nan, 0.5]), np.array([1.5, -0.5]), np.array([0.5, 0.4]), np.array([np.inf, 0.0])]
    for row in bad:
        with pytest.raises(InputError, match=r"^model\[\]"):
            tree.with_sampling(lambda u, r=row: r)(())
