"""Draft trees sampled from a real draft model, with target and draft distributions at every node.

For each prompt, ``trees_per_prompt`` draft trees are grown from the draft model:
``k`` chains of ``length`` tokens, ``drafts="iid"`` (each chain sampled
independently, token by token, from the draft's warped distribution q) or
``"swor"`` (the chains passing through a node draw distinct tokens there, without
replacement, as in RRS-without-replacement trees; Jeon et al. 2024, arXiv
2402.14160).  Chains that share a prefix share nodes, so the chains form a tree
whose root is the prompt.

The forward passes are tree-batched.  The prompt is run once per model and kept
in a key/value cache; the draft then reads all new nodes of one depth (of every
tree of the prompt) in one pass, and the target reads *every* node of every
tree of the prompt in a single pass, each node seeing the prompt, its ancestors
and itself through a tree attention mask (SpecInfer, Miao et al. 2024, arXiv
2305.09781) and sitting at the position of its depth.  The distribution read at
a node is therefore the model's next-token law given prompt + the node's path,
as a separate forward pass of that chain would give (tested to 1e-5).

The result is a :class:`~optaccept.real.DraftTrees` (numpy only, defined
in :mod:`optaccept.real._stored`): the trees (node parents, tokens, depths, the k chains as
node indices) and the rows p, q of every node, compressed, with provenance and a SHA-256
checksum, like :class:`~optaccept.real.Distributions`.  :meth:`DraftTrees.models` replays one
tree's rows as sequence models (prefix -> distribution), so that the tree computations run
from a file, offline.  :class:`~optaccept.llm.LMSequenceModel` (in
``_lm_sequence``) is the live counterpart: a model and a prompt as a cached ``prefix -> distribution``
callable.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import torch

from .._errors import InputError
from .._lib.sampling import draws
from .._lib.validation import check_choice, seed_of
from ..real import DraftTrees
from ..tree import TreeDraftLaw
from ..tree._draft import DRAFT_LAWS
from ._extract import _check_int, _encode, _meta, _prompt_seed, _resume, _start
from ._lm_sequence import _TreeRunner
from ._models import ModelPair

__all__ = ["extract_trees", "DRAFT_LAWS"]


def _sample_children(q: np.ndarray, m: int, drafts: str, rng: np.random.Generator) -> list[int]:
    """m tokens at one node: i.i.d. from q, or m distinct ones without replacement."""
    if drafts == "iid":
        return [int(t) for t in draws(q, rng, m)]
    support = int(np.count_nonzero(q))
    if m > support:
        raise InputError(f"k: {m} chains without replacement at a node whose draft support is {support}")
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=q.size) / q  # exponential races: the m first are a SWOR sample
    return [int(t) for t in np.argsort(keys, kind="stable")[:m]]


def _grow_trees(
    pair: ModelPair,
    prompt_ids: list[int],
    *,
    k: int,
    length: int,
    drafts: str,
    n_trees: int,
    rng: np.random.Generator,
    device: torch.device,
) -> dict[str, Any]:
    """Sample ``n_trees`` trees after one prompt and read p and q at every node.

    Nodes are numbered in creation order: the roots, then depth 1 of every tree,
    depth 2, ...; the same order is the order in which the draft and the target
    read them (parents before children)."""
    draft_model = pair.target if pair.shared else pair.draft
    d_run = _TreeRunner(draft_model, prompt_ids, device)
    tree_of = list(range(n_trees))
    parent = [-1] * n_trees
    depth = [0] * n_trees
    token = [-1] * n_trees
    q_logits: list[torch.Tensor] = [d_run.root_logits] * n_trees
    chains = np.zeros((n_trees, k, length), dtype=np.int64)
    current = [[t] * k for t in range(n_trees)]  # node each chain has reached
    for d in range(length):
        first_new = len(tree_of)
        for t in range(n_trees):
            at: dict[int, list[int]] = {}
            for c in range(k):
                at.setdefault(current[t][c], []).append(c)
            children: dict[int, int] = {}
            for node, cs in at.items():
                qrow = pair.draft_warp.probs(q_logits[node][None]).double().cpu().numpy()[0]
                toks = _sample_children(qrow / qrow.sum(), len(cs), drafts, rng)
                children.clear()
                for c, tok in zip(cs, toks, strict=True):
                    if tok not in children:
                        children[tok] = len(tree_of)
                        tree_of.append(t)
                        parent.append(node)
                        depth.append(d + 1)
                        token.append(tok)
                    chains[t, c, d] = current[t][c] = children[tok]
        new = range(first_new, len(tree_of))
        # fed index of node j is j - n_trees (roots are the prompt, not fed)
        logits = d_run.feed([parent[j] - n_trees for j in new], [token[j] for j in new], [depth[j] for j in new])
        q_logits.extend(logits[i] for i in range(len(new)))
    if pair.shared:
        t_logits = q_logits
    else:  # the target reads every node of every tree of this prompt in one pass
        t_run = _TreeRunner(pair.target, prompt_ids, device)
        others = range(n_trees, len(tree_of))
        logits = t_run.feed(
            [parent[j] - n_trees for j in others], [token[j] for j in others], [depth[j] for j in others]
        )
        t_logits = [t_run.root_logits] * n_trees + [logits[i] for i in range(len(others))]
    # Renumber: trees one after another, each breadth-first with its root first.
    order = sorted(range(len(tree_of)), key=lambda j: (tree_of[j], depth[j], j))
    new_of = np.empty(len(order), dtype=np.int64)
    new_of[order] = np.arange(len(order))
    p = pair.target_warp.probs(torch.stack([t_logits[j] for j in order])).cpu().numpy()
    q = pair.draft_warp.probs(torch.stack([q_logits[j] for j in order])).cpu().numpy()
    return {
        "target": p,
        "draft": q,
        "tree": np.array([tree_of[j] for j in order]),
        "parent": np.array([new_of[parent[j]] if parent[j] >= 0 else -1 for j in order]),
        "depth": np.array([depth[j] for j in order]),
        "token": np.array([token[j] for j in order]),
        "chains": new_of[chains],
    }


def extract_trees(
    pair: ModelPair,
    prompts: Any = None,
    *,
    drafts: TreeDraftLaw | None = None,
    trees_per_prompt: int = 1,
    device: Any = "auto",
    rng: int = 0,
    chat: bool | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = True,
) -> DraftTrees:
    """Sample draft trees from the pair's draft and read p and q at every node.

    Parameters
    ----------
    pair : ModelPair
        Target and draft (two models sharing a tokenizer, e.g.
        :func:`smollm2_layerskip`, or one model at two temperatures).
    prompts : list of Prompt or str, or a path to a prompt file, optional
        Default: :func:`builtin_prompts`.
    drafts : TreeDraftLaw, optional
        The trees' law: ``TreeDraftLaw(length=, k=, children=)``, k chains of ``length``
        tokens drawn independently (``"iid"``) or without replacement at every node
        (``"swor"``).  Default: 2 chains of 2 tokens, i.i.d.
    trees_per_prompt : int
        Independent trees after each prompt (run in the same forward passes).
    device : str or torch.device
        ``"auto"``: cuda when available, else cpu.
    rng : int or numpy.random.Generator
        Prompt i's trees use a ``numpy.random.Generator`` seeded from (seed, i),
        so results do not depend on resuming.
    chat : bool, optional
        Wrap prompts in the tokenizer's chat template (default: when it has one).
    checkpoint : path, optional
        A folder receiving one shard per finished prompt; running again with the
        same settings skips them (an interrupted extraction resumes).
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    DraftTrees
        Trees in prompt order; ``meta`` holds the provenance and timings.

    Examples
    --------
    >>> import torch, transformers
    >>> from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    >>> from optaccept import llm
    >>> chars = Tokenizer(models.WordLevel({"<eos>": 0, **{chr(c): c - 31 for c in range(32, 127)}}, unk_token="<eos>"))
    >>> chars.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")  # one token per character
    >>> tok = transformers.PreTrainedTokenizerFast(tokenizer_object=chars, eos_token="<eos>", pad_token="<eos>")
    >>> config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=96, bos_token_id=0, eos_token_id=0)
    >>> _ = torch.manual_seed(0)
    >>> from optaccept import tree
    >>> pair = llm.ModelPair(transformers.GPT2LMHeadModel(config).eval(), tok).with_temperatures(draft=1.5)
    >>> law = tree.TreeDraftLaw(length=2, k=2)  # 2 i.i.d. chains of 2 tokens
    >>> trees = llm.extract_trees(pair, ["Hello", "abc"], drafts=law, device="cpu", rng=0, progress=False)
    >>> trees
    DraftTrees(2 trees, k=2, length=2, drafts='iid', 10 nodes, vocab 96)
    >>> trees.target.shape == trees.draft.shape == (trees.n_nodes, 96)  # p and q after every node
    True
    """
    from tqdm.auto import tqdm

    law = TreeDraftLaw(length=2, k=2) if drafts is None else drafts
    if not isinstance(law, TreeDraftLaw) or law.shape is not None:
        raise InputError(f"drafts: chains, tree.TreeDraftLaw(length=, k=, children=), got {drafts!r}")
    k, length, drafts = law.k, law.length, law.children
    trees_per_prompt = _check_int("trees_per_prompt", trees_per_prompt, 1)
    seed = seed_of(rng)
    check_choice("drafts", drafts, DRAFT_LAWS)
    prompts, dev = _start(pair, prompts, device)
    meta = _meta(
        pair,
        prompts,
        k=k,
        length=length,
        drafts=drafts,
        trees_per_prompt=trees_per_prompt,
        seed=seed,
        chat=chat,
        device=str(dev),
    )
    folder, done = _resume(checkpoint, "prompt-*.npz", DraftTrees, meta, "prompt")
    encoded = _encode(pair.tokenizer, prompts, chat)
    start = time.perf_counter()
    fresh_nodes = 0
    with torch.no_grad():
        for i in tqdm(range(len(prompts)), desc="trees", unit="prompt", disable=not progress):
            if i in done:
                continue
            rng = np.random.default_rng(_prompt_seed(seed, i))
            arr = _grow_trees(
                pair, encoded[i], k=k, length=length, drafts=drafts, n_trees=trees_per_prompt, rng=rng, device=dev
            )
            part = DraftTrees(
                arr["target"],
                arr["draft"],
                tree=arr["tree"],
                parent=arr["parent"],
                depth=arr["depth"],
                token=arr["token"],
                prompt_index=np.full(trees_per_prompt, i),
                chains=arr["chains"],
                meta={**meta, "prompt": i},
            )
            fresh_nodes += part.n_nodes
            if folder is not None:
                part.save(folder / f"prompt-{i:05d}.npz")
            done[i] = part
    seconds = time.perf_counter() - start
    out_meta = {**meta, "extraction": {"new_nodes": fresh_nodes, "seconds": round(seconds, 3)}}
    return DraftTrees.concatenate([done[i] for i in sorted(done)], meta=out_meta)
