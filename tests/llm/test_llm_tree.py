"""Draft trees from real models: the layer-skip draft, tree-masked extraction against plain
forward passes of each chain, storage, replay as sequence models, and the table on the
shipped trees (with batch speculative decoding as its length-1 special case)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SMOLLM2_REASON, has_smollm2, needs_smollm2

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from optaccept import InputError, llm, real, sequence, tree  # noqa: E402
from optaccept.drafts import IID, WithoutReplacement  # noqa: E402
from optaccept.llm import _layerskip, _models, _prompts  # noqa: E402
from optaccept.optimal import optimal_acceptance  # noqa: E402
from optaccept.real import tree_table  # noqa: E402


@pytest.fixture(scope="session")
def tiny():
    """A tiny random Llama (4 layers, vocabulary 64) and a layer-skip draft of it."""
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    return model


class _Tok:
    """Just enough tokenizer for extract_trees: prompts are strings of digits."""

    chat_template = None
    pad_token_id = 0
    eos_token_id = 2

    def __call__(self, text, **kw):
        return {"input_ids": [1] + [3 + int(c) for c in text]}


def _direct(model, ids):
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1).numpy()


def _check_rows(pair, trees, prompt_ids, atol):
    """Every stored row equals a plain forward pass of each model on prompt + node path."""
    worst = 0.0
    for j in range(trees.n_nodes):
        ids = prompt_ids[int(trees.prompt_index[trees.tree[j]])] + list(trees.path(j))
        p = pair.target_warp.probs(pair.target(torch.tensor([ids])).logits[0, -1].detach()).numpy()
        q = pair.draft_warp.probs(pair.draft(torch.tensor([ids])).logits[0, -1].detach()).numpy()
        worst = max(worst, np.abs(trees.target[j] - p).max(), np.abs(trees.draft[j] - q).max())
    assert worst < atol, worst


# ------------------------------------------------------------------ layer skip (tiny)


def test_layer_skip_shares_weights_and_differs(tiny):
    full = _layerskip.layer_skip(tiny, range(4))
    ids = [1, 5, 9, 3, 7]
    np.testing.assert_array_equal(_direct(full, ids), _direct(tiny, ids))  # all layers: the model itself
    draft = _layerskip.layer_skip(tiny, [0, 3])
    assert draft.model.embed_tokens is tiny.model.embed_tokens and draft.lm_head is tiny.lm_head
    assert draft.model.layers[1].mlp is tiny.model.layers[3].mlp
    assert draft.model.layers[1].self_attn.layer_idx == 1 and tiny.model.layers[3].self_attn.layer_idx == 3
    assert len(tiny.model.layers) == 4  # the target is untouched
    # Independent reference: run the kept layers by hand.
    x = tiny.model.embed_tokens(torch.tensor([ids]))
    pos = torch.arange(len(ids))[None]
    emb = tiny.model.rotary_emb(x, pos)
    mask = torch.full((len(ids), len(ids)), float("-inf")).triu(1)[None, None]
    with torch.no_grad():
        for i in (0, 3):
            x = tiny.model.layers[i](x, attention_mask=mask, position_embeddings=emb, position_ids=pos)
            x = x[0] if isinstance(x, tuple) else x
        ref = torch.softmax(tiny.lm_head(tiny.model.norm(x))[0, -1], -1).numpy()
    np.testing.assert_allclose(_direct(draft, ids), ref, atol=1e-6)
    assert 0.5 * np.abs(ref - _direct(tiny, ids)).sum() > 1e-3
    with pytest.raises(InputError, match="layers"):
        _layerskip.layer_skip(tiny, [2, 1])
    with pytest.raises(InputError, match="layers"):
        _layerskip.layer_skip(tiny, [])


@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_tree_extraction_matches_chains_tiny(tiny, drafts, tmp_path):
    pair = llm.ModelPair(tiny, _Tok(), _layerskip.layer_skip(tiny, [0, 2]), draft_warp=_models.Warp(1.3))
    prompts = ["123", "4567", "89"]
    trees = llm.extract_trees(
        pair,
        prompts,
        drafts=tree.TreeDraftLaw(length=3, k=3, children=drafts),
        trees_per_prompt=2,
        device="cpu",
        chat=False,
        progress=False,
    )
    assert trees.n_trees == 6 and trees.k == 3 and trees.length == 3
    ids = [[1] + [3 + int(c) for c in s] for s in prompts]
    _check_rows(pair, trees, ids, 1e-5)
    for i in range(trees.n_trees):
        chains = trees.chains(i)
        assert len(chains) == 3 and all(len(c) == 3 for c in chains)
        if drafts == "swor":
            assert len({c[0] for c in chains}) == 3  # distinct at the root
        nodes = trees.nodes(i)
        assert trees.depth[nodes[0]] == 0 and trees.parent[nodes[0]] == -1
        # the nodes are exactly the prefixes of the chains
        assert set(trees.prefixes(i)) == {c[:d] for c in chains for d in range(4)}
    # storage round trip, checksum, and a tampered file
    path = trees.save(tmp_path / "t.npz")
    back = real.DraftTrees.load(path)
    np.testing.assert_array_equal(back.target, trees.target)
    assert [back.chains(i) for i in range(6)] == [trees.chains(i) for i in range(6)]
    assert back.meta["drafts"] == drafts and back.meta["config_sha256"] == trees.meta["config_sha256"]
    sub = back.select([4, 1])
    assert sub.chains(0) == trees.chains(4) and sub.chains(1) == trees.chains(1)
    np.testing.assert_array_equal(sub.target[sub.nodes(1)], trees.target[trees.nodes(1)])


def test_checkpoint_resumes(tiny, tmp_path):
    pair = llm.ModelPair(tiny, _Tok(), _layerskip.layer_skip(tiny, [1, 2, 3]))
    kw = dict(drafts=tree.TreeDraftLaw(length=2, k=2), device="cpu", chat=False, progress=False, rng=3)
    prompts = ["12", "345", "6"]
    full = llm.extract_trees(pair, prompts, checkpoint=tmp_path / "ck", **kw)
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [f"prompt-0000{i}.npz" for i in range(3)]
    (tmp_path / "ck" / "prompt-00001.npz").unlink()  # an interrupted run
    again = llm.extract_trees(pair, prompts, checkpoint=tmp_path / "ck", **kw)
    assert again.meta["extraction"]["new_nodes"] == full.nodes(1).size
    np.testing.assert_array_equal(again.target, full.target)
    assert [again.chains(i) for i in range(3)] == [full.chains(i) for i in range(3)]
    with pytest.raises(InputError, match="other settings"):
        llm.extract_trees(pair, prompts, checkpoint=tmp_path / "ck", **{**kw, "rng": 4})


def test_sequence_models_and_replay(tiny):
    pair = llm.ModelPair(tiny, _Tok(), _layerskip.layer_skip(tiny, [0, 1]))
    trees = llm.extract_trees(
        pair, ["314"], drafts=tree.TreeDraftLaw(length=2, k=2), device="cpu", chat=False, progress=False
    )
    stored_t, stored_d = trees.models(0)
    live_t, live_d = llm.sequence_models(pair, [1, 6, 4, 7], device="cpu")
    chains = trees.chains(0)
    prefixes = [()] + [c[:1] for c in chains] + list(chains)
    np.testing.assert_allclose(live_t.batch(prefixes), stored_t.batch_next_token_probs(prefixes), atol=1e-5)
    for u in prefixes:
        np.testing.assert_allclose(live_d(u), stored_d(u), atol=1e-5)
        np.testing.assert_allclose(live_t(u), _direct(tiny, [1, 6, 4, 7, *u]), atol=1e-5)
    with pytest.raises(KeyError, match="not a node"):
        stored_t((63, 63))
    # the tree package reads both kinds, and the stored tree gives the same per-tree values
    t = trees.draft_tree(0)
    for v in ("token", "traversal" if trees.drafts == "swor" else "token"):
        a = tree._sampling.tree_value(t, stored_t, stored_d, v)
        b = tree._sampling.tree_value(t, live_t, live_d, v)
        assert abs(a - b) < 1e-5
    # compact vocabulary: same values
    ct, cd = trees.models(0, compact=True)
    assert (
        abs(
            tree._sampling.tree_value(trees.draft_tree(0, compact=True), ct, cd, "token")
            - tree._sampling.tree_value(t, stored_t, stored_d, "token")
        )
        < 1e-12
    )


# ------------------------------------------------------------ the real built-in pair


@pytest.fixture(scope="session")
def smollm2_pair():
    if not has_smollm2():
        pytest.skip(SMOLLM2_REASON)
    return llm.smollm2_layerskip()


@needs_smollm2
def test_smollm2_layerskip_trees(smollm2_pair):
    pair = smollm2_pair
    assert pair.draft is not pair.target and len(pair.draft.model.layers) == 26
    assert "layer skip" in pair.draft_id
    prompts = llm.builtin_prompts()[:1]
    trees = llm.extract_trees(pair, prompts, drafts=tree.TreeDraftLaw(length=2, k=2), device="cpu", progress=False)
    assert trees.vocab_size == 49152 and trees.n_trees == 1
    from optaccept.llm._extract import _encode

    _check_rows(pair, trees, _encode(pair.tokenizer, prompts, None), 1e-5)
    # the draft really differs from the target, yet is a usable draft
    quality = _layerskip.draft_quality(trees.as_distributions())
    assert 0.05 < quality["mean_tv"] < 0.95, quality


# ------------------------------------------------------------------- shipped trees


@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_shipped_trees(drafts):
    trees = real.DraftTrees.load(real.trees_path(drafts))  # checksum verified
    m = trees.meta
    assert trees.drafts == drafts and trees.vocab_size == 49152 and trees.k == 4 and trees.length == 4
    assert "SmolLM2-135M-Instruct" in m["target_model"] and "layer skip" in m["draft_model"]
    assert m["target_warp"]["top_k"] == 50 and m["draft_warp"]["top_k"] == 50
    assert trees.n_trees == 2 * len(m["prompt_ids"])
    for rows in (trees.target, trees.draft):  # top 50, more only through ties at the 50th value
        for row in rows[(rows > 0).sum(1) != 50]:
            kept = row[row > 0]
            assert kept.size > 50 and np.sum(kept == kept.min()) >= kept.size - 49
    np.testing.assert_allclose(trees.target.sum(1), 1, atol=1e-4)
    # every drafted token has draft mass at its parent (it was sampled from it)
    child = trees.parent >= 0
    assert np.all(trees.draft[trees.parent[child], trees.token[child]] > 0)


def test_table_on_shipped_trees_and_batch_sd():
    files = {d: real.DraftTrees.load(real.trees_path(d)) for d in ("iid", "swor")}
    table = tree_table(files, ks=(1, 2, 3), lengths=(1, 2))
    # length 1 is exact per prompt: token-level RRS with i.i.d. drafts is batch SD (Yin et al.)
    for k in (1, 2, 3):
        tok, batch = table.get("token", "iid", k, 1), table.get("batch", "iid", k, 1)
        assert tok["method"] == "exact per prompt" and abs(tok["value"] - batch["value"]) < 1e-12
        opt = table.get("optimal", "iid", k, 1)
        assert batch["value"] <= opt["value"] + 1e-12  # RRS never beats α*
    # the exact order at one token: RRS without replacement ≥ with replacement (k ≥ 2)
    for k in (2, 3):
        assert table.get("token", "swor", k, 1)["value"] >= table.get("token", "iid", k, 1)["value"] - 1e-12
    # standard errors clustered by prompt, recomputed independently: 2 trees per prompt, so the
    # clustered s.e. is the s.e. of the 36 prompt means (each prompt counted once)
    f = files["iid"]
    prompts = np.unique(f.prompt_index)
    res = tree._sampling.rao_blackwell(f.items(k=2, length=2), verifiers=("token",))["token"]
    x = np.asarray(res.details["values"])
    means = np.array([x[f.prompt_index == g].mean() for g in prompts])
    row = table.get("token", "iid", 2, 2)
    assert row["prompts"] == prompts.size == 36 and row["trees"] == 72
    assert abs(row["value"] - means.mean()) < 1e-12
    assert abs(row["std_err"] - means.std(ddof=1) / np.sqrt(prompts.size)) < 1e-12
    first = [int(np.flatnonzero(f.prompt_index == g)[0]) for g in prompts]
    roots = np.flatnonzero(f.parent < 0)[first]
    p, q = f.rows(roots)
    a1 = np.array([1 - 0.5 * np.abs(a - b).sum() for a, b in zip(p, q, strict=True)])
    assert abs(table.get("optimal", "iid", 1, 1)["std_err"] - a1.std(ddof=1) / np.sqrt(a1.size)) < 1e-12
    # paired differences on the same trees; the bound caps the optimum where both are known
    d = [r for r in table.differences if (r["drafts"], r["k"], r["length"], r["a"]) == ("swor", 3, 2, "traversal")]
    assert len(d) == 1 and d[0]["std_err"] > 0
    assert table.get("bound", "iid", 1, 2)["value"] >= table.get("optimal", "iid", 1, 2)["value"] - 1e-12
    # k = 1: block (= the optimum) ≥ token-level; swor ≥ iid at length 1 (exact α* per prompt)
    for L in (1, 2):
        assert table.get("block", "iid", 1, L)["value"] >= table.get("token", "iid", 1, L)["value"] - 1e-12
    assert table.get("optimal", "swor", 3, 1)["value"] >= table.get("optimal", "iid", 3, 1)["value"] - 1e-12
    # exact α* per prompt, recomputed independently on the roots
    assert abs(table.get("optimal", "iid", 1, 1)["value"] - a1.mean()) < 1e-9
    # across draft laws: paired by prompt (the files share their prompts), recomputed here
    # from the exact one-token values at each prompt's root (RRS without vs with replacement)
    from optaccept.verifiers import RRS, RRSWithoutReplacement

    ps, qs = files["swor"].rows(np.flatnonzero(files["swor"].parent < 0)[first])
    dd = np.array([RRSWithoutReplacement().acceptance(a, b, k=2) for a, b in zip(ps, qs, strict=True)])
    dd -= np.array([RRS().acceptance(a, b, k=2) for a, b in zip(p, q, strict=True)])
    cross = [r for r in table.differences if r["drafts"].startswith("swor vs iid") and (r["k"], r["length"]) == (2, 1)]
    assert {r["a"] for r in cross} == {"token (swor)", "traversal (swor)"}
    for r in cross:
        assert abs(r["value"] - dd.mean()) < 1e-12
        assert abs(r["std_err"] - dd.std(ddof=1) / np.sqrt(dd.size)) < 1e-12
    md, tex = table.to_markdown(), table.to_latex()
    assert "traversal verification (Weng et al.)" in md and r"\toprule" in tex and "±" not in tex
    from optaccept.plots import plot_accepted_tokens

    ax = plot_accepted_tokens(table, 2)
    assert ax.get_xlabel() == "number of draft chains k"


# ----------------------------------------------- batch SD is the length-1 special case


def test_batch_sd_is_token_verification_at_one_token():
    """Yin et al.'s batch SD with M i.i.d. drafts at one token = token-level RRS of a
    length-1 tree with k = M i.i.d. chains: 1 - Π TV(p^m, q), exactly (Fractions)."""
    from fractions import Fraction as F

    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(2, 5))
        M = int(rng.integers(1, 4))
        a = rng.integers(0, 6, size=n) + (np.arange(n) == 0)
        b = rng.integers(0, 6, size=n) + (np.arange(n) == n - 1)
        p = [F(int(x), int(a.sum())) for x in a]
        q = [F(int(x), int(b.sum())) for x in b]
        r = tree.accepted_tokens(
            lambda u, p=p: p,
            lambda u, q=q: q,
            drafts=tree.TreeDraftLaw(length=1, k=M, children="iid"),
            verifier="token",
        )
        want = 1 - sequence._batch.batch_rejection_probability(np.array(p, float), np.array(q, float), M)
        assert abs(float(r.value) - want) < 1e-12
        # and α* bounds it (length 1: the optimal verifier is α* of the core)
        assert float(r.value) <= optimal_acceptance(np.array(p, float), IID(np.array(q, float), M)).value + 1e-12


def test_batch_sd_markov_horizon_one():
    """On a Markov pair with horizon 1, Theorem 3's expected rejections of batch SD are
    1 - accepted tokens of one length-1 step of token verification with M chains."""
    chain = sequence.MarkovPair.random(states=5, horizon=1, rng=np.random.default_rng(3))
    init = chain.initial if hasattr(chain, "initial") else None
    for M in (1, 2, 4):
        rej = sequence.batch_expected_rejections(chain, k=M)
        acc = sum(
            float(w)
            * float(
                tree.accepted_tokens(
                    chain, drafts=tree.TreeDraftLaw(length=1, k=M, children="iid"), verifier="token", prompt=s
                ).value
            )
            for s, w in enumerate(init if init is not None else np.full(5, 0.2))
        )
        assert abs((1 - acc) - rej) < 1e-9, (M, rej, acc)


def test_swor_length_one_alpha_bound():
    rng = np.random.default_rng(11)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    for k in (2, 3):
        r = tree.accepted_tokens(
            lambda u: p, lambda u: q, drafts=tree.TreeDraftLaw(length=1, k=k, children="swor"), verifier="token"
        )
        assert float(r.value) <= optimal_acceptance(p, WithoutReplacement(q, k)).value + 1e-12


def test_sparse_rows_match_the_dense_rows(tmp_path):
    """DraftTrees keeps rows on their union of supports: every access equals the dense
    computation, through select, concatenate and both archive layouts."""
    from optaccept.real._storage import SparseRows

    rng = np.random.default_rng(5)
    m, n = 9, 40
    t = rng.random((m, n)) * (rng.random((m, n)) < 0.3)
    d = rng.random((m, n)) * (rng.random((m, n)) < 0.3)
    t[:, 0] += 0.1  # no empty row
    d[:, 1] += 0.1
    t, d = (t / t.sum(1, keepdims=True)).astype(np.float32), (d / d.sum(1, keepdims=True)).astype(np.float32)
    s = SparseRows.from_dense(t, d)
    assert s.nnz == int(((t > 0) | (d > 0)).sum())
    np.testing.assert_array_equal(s.dense()[0], t)
    np.testing.assert_array_equal(s.dense()[1], d)
    sel = np.array([4, 0, 4, 7])
    np.testing.assert_array_equal(s.take(sel).dense()[1], d[sel])
    np.testing.assert_array_equal(s.support([2, 5]), np.flatnonzero(((t[[2, 5]] > 0) | (d[[2, 5]] > 0)).any(0)))
    both = SparseRows.concatenate([s.take([1, 2]), s.take([8])])
    np.testing.assert_array_equal(both.dense()[0], t[[1, 2, 8]])
    # three trees of three nodes (a root and two children), built from the dense rows
    trees = real.DraftTrees(
        t,
        d,
        tree=np.repeat(np.arange(3), 3),
        parent=[-1, 0, 0, -1, 3, 3, -1, 6, 6],
        depth=[0, 1, 1] * 3,
        token=[-1, 0, 1] * 3,
        prompt_index=[0, 0, 1],
        chains=np.array([[[1], [2]], [[4], [5]], [[7], [8]]]),
        meta={"drafts": "iid"},
    )
    p, q = trees.rows([3, 8])
    np.testing.assert_allclose(p, t[[3, 8]] / t[[3, 8]].astype(np.float64).sum(1, keepdims=True), rtol=1e-15)
    np.testing.assert_array_equal(trees.vocabulary(1), np.flatnonzero(((t[3:6] > 0) | (d[3:6] > 0)).any(0)))
    sub = trees.select([2, 0])
    np.testing.assert_array_equal(sub.target, t[[6, 7, 8, 0, 1, 2]])
    cat = real.DraftTrees.concatenate([trees.select([1]), trees.select([0])])
    np.testing.assert_array_equal(cat.draft, d[[3, 4, 5, 0, 1, 2]])
    for sparse in (True, False):
        back = real.DraftTrees.load(trees.save(tmp_path / f"t{sparse}.npz", sparse=sparse))
        np.testing.assert_array_equal(back.target, t)
        np.testing.assert_array_equal(back.draft, d)


@pytest.mark.parametrize("drafts", ["iid", "swor"])
def test_extended_shipped_trees(drafts):
    """The large shipped sets (12 trees after each of the 296 extended prompts) load
    without densifying their rows, and hold what their provenance says."""
    trees = real.DraftTrees.load(real.trees_path(drafts, "extended"))  # checksum verified
    m = trees.meta
    assert trees.drafts == drafts and trees.vocab_size == 49152 and (trees.k, trees.length) == (4, 4)
    assert m["prompt_ids"] == [p.id for p in _prompts.extended_prompts()]
    assert trees.n_trees == 12 * 296 and m["trees_per_prompt"] == 12
    assert trees._rows.nnz < 200 * trees.n_nodes  # ~70 entries per node, not 49,152
    rng = np.random.default_rng(0)
    nodes = np.sort(rng.choice(trees.n_nodes, 500, replace=False))
    p, q = trees.rows(nodes)
    assert np.all(((p > 0).sum(1) >= 50) & ((q > 0).sum(1) >= 50) & ((p > 0).sum(1) < 60))
    child = nodes[trees.parent[nodes] >= 0]
    _, qpar = trees.rows(trees.parent[child])
    assert np.all(qpar[np.arange(child.size), trees.token[child]] > 0)  # drafted from the draft
    # the chains' first tokens follow the draft law at the root: E q(x_1) = Σ q², and the
    # second chain's E q(x_2) is Σ q² (i.i.d.) or Σ_a q_a (Σ q² − q_a²)/(1 − q_a) (swor)
    roots = np.flatnonzero(trees.parent < 0)
    obs, want = [], []
    for t in range(trees.n_trees):
        if t % 12 == 0:
            q = trees.rows([roots[t]])[1][0]
            s2 = float(q @ q)
            w = np.flatnonzero(q > 0)
            second = s2 if drafts == "iid" else float(np.sum(q[w] * (s2 - q[w] ** 2) / (1 - q[w])))
        first, nxt = trees.chains(t)[0][0], trees.chains(t)[1][0]
        obs.append((q[first], q[nxt]))
        want.append((s2, second))
    obs, want = np.array(obs), np.array(want)
    z = (obs.mean(0) - want.mean(0)) / (obs.std(0) / np.sqrt(len(obs)))
    assert np.all(np.abs(z) < 4), z
