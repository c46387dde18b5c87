"""A language model after a prompt as a sequence model, and tree-masked forward passes.

:class:`LMSequenceModel` wraps a causal language model and a prompt as a cached
``prefix -> next-token distribution`` callable (the protocol of ``optaccept.tree``);
:meth:`LMSequenceModel.batch` answers many prefixes in one forward pass whose attention
mask lets each node see the prompt, its ancestors and itself (SpecInfer, Miao et al.
2024, arXiv 2305.09781).  ``_TreeRunner`` keeps the prompt in a key/value cache and runs
such forests on top of it; :mod:`optaccept.llm._tree_extract` grows draft trees with it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._errors import InputError
from .._lib.rows import resolve_device
from ._extract import _encode
from ._models import ModelPair, Warp, forward, past_of
from ._prompts import as_prompts

__all__ = ["LMSequenceModel", "sequence_models"]


class LMSequenceModel:
    """A language model after a fixed prompt, as ``model(prefix)`` -> float64 distribution.

    ``prefix`` is a tuple of token ids following the prompt; the answer is the
    warped next-token law (renormalised float64).  The prompt's keys and values are
    computed once; answers are cached (least recently used, ``cache_size`` entries).
    :meth:`batch` answers many prefixes in one tree-masked forward pass.

    Parameters
    ----------
    model : transformers causal LM
    prompt_ids : sequence of int
        The prompt, already tokenised (chat template applied if wanted).
    warp : Warp, optional
        Temperature and truncation (default: temperature 1, none).
    device : str or torch.device
        ``"auto"``: cuda when available, else cpu.
    cache_size : int
        Distributions kept (each is vocab × 8 bytes).
    name : str
        The model's name, shown by ``repr``.

    Raises
    ------
    InputError
        If ``warp`` is not a Warp or the prompt is empty.
    """

    def __init__(
        self,
        model: Any,
        prompt_ids: Sequence[int],
        warp: Warp | None = None,
        *,
        device: Any = "auto",
        cache_size: int = 4096,
        name: str = "model",
    ) -> None:
        warp = Warp() if warp is None else warp
        if not isinstance(warp, Warp):
            raise InputError("warp: must be a Warp")
        ids = [int(t) for t in prompt_ids]
        if not ids:
            raise InputError("prompt_ids: empty prompt")
        self.model = model
        self.prompt_ids = tuple(ids)
        self.warp = warp
        self.device = resolve_device(device)
        self.cache_size = int(cache_size)
        self.name = name
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self.forward_passes = 0
        self._runner: _TreeRunner | None = None

    def _run(self) -> _TreeRunner:
        if self._runner is None:
            self.model.to(self.device)
            self._runner = _TreeRunner(self.model, list(self.prompt_ids), self.device)
            self.forward_passes += 1
        return self._runner

    def __call__(self, prefix: Sequence[int]) -> np.ndarray:
        return self.batch([prefix])[0]

    def next_token_probs(self, prefix: Sequence[int]) -> np.ndarray:
        """Same as calling the model (the ``optaccept.tree`` sequence-model protocol).

        Parameters
        ----------
        prefix : sequence of int
            Token ids after the prompt.

        Returns
        -------
        ndarray of float64, shape (vocab,)
            The warped next-token law.
        """
        return self(prefix)

    def batch_next_token_probs(self, prefixes: Sequence[Sequence[int]]) -> np.ndarray:
        """Same as :meth:`batch`: one tree-masked forward pass for all the prefixes.

        Parameters
        ----------
        prefixes : sequence of sequence of int
            Token ids after the prompt, one tuple per prefix (``()``: the prompt itself).

        Returns
        -------
        ndarray of float64, shape (len(prefixes), vocab)
            The warped next-token laws, one row per prefix.
        """
        return self.batch(prefixes)

    def batch(self, prefixes: Sequence[Sequence[int]]) -> np.ndarray:
        """Distributions at several prefixes, shape (len(prefixes), vocab), one forward pass.

        Parameters
        ----------
        prefixes : sequence of sequence of int
            Token ids after the prompt, one tuple per prefix (``()``: the prompt itself).

        Returns
        -------
        ndarray of float64, shape (len(prefixes), vocab)
            The warped next-token laws, one row per prefix.
        """
        keys = [tuple(int(t) for t in pr) for pr in prefixes]
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache and k))
        if missing:
            runner = self._run()
            nodes, parents, tokens, depths = _trie(missing)
            logits = runner.forest(parents, tokens, depths)
            self.forward_passes += 1
            probs = self.warp.probs(logits).double().cpu().numpy()
            for j, key in enumerate(nodes):
                self._store(key, probs[j])
        if () in keys and () not in self._cache:
            runner = self._run()
            self._store((), self.warp.probs(runner.root_logits[None]).double().cpu().numpy()[0])
        out = []
        for key in keys:
            row = self._cache[key]
            self._cache.move_to_end(key)
            out.append(row)
        return np.stack(out)

    def _store(self, key: tuple[int, ...], row: np.ndarray) -> None:
        row = row / row.sum()
        row.setflags(write=False)
        self._cache[key] = row
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def __repr__(self) -> str:
        return (
            f"LMSequenceModel({self.name!r}, prompt of {len(self.prompt_ids)} tokens, {self.warp}, "
            f"{len(self._cache)} cached)"
        )


def _trie(prefixes: Sequence[tuple[int, ...]]) -> tuple[list[tuple[int, ...]], list[int], list[int], list[int]]:
    """All nonempty prefixes of ``prefixes`` as a forest in breadth-first order:
    (keys, parent index or -1 for a child of the root, token, depth)."""
    keys = sorted({pr[:d] for pr in prefixes for d in range(1, len(pr) + 1)}, key=lambda t: (len(t), t))
    where = {k: j for j, k in enumerate(keys)}
    parents = [where.get(k[:-1], -1) for k in keys]
    return keys, parents, [k[-1] for k in keys], [len(k) for k in keys]


def sequence_models(
    pair: ModelPair, prompt: Any, *, chat: bool | None = None, device: Any = "auto", cache_size: int = 4096
) -> tuple[LMSequenceModel, LMSequenceModel]:
    """(target, draft) of a pair after a prompt, as cached sequence models.

    ``prompt`` is a string, a :class:`Prompt` or a list of token ids; text is
    wrapped in the tokenizer's chat template when it has one (``chat``).

    Parameters
    ----------
    pair : ModelPair
        The models and their warps.
    prompt : str, Prompt or list of int
        The prompt, as text or token ids.
    chat : bool, optional
        Wrap text in the chat template (default: when the tokenizer has one).
    device : str or torch.device
        ``"auto"``: cuda when available, else cpu.
    cache_size : int
        Distributions each model keeps.

    Returns
    -------
    target, draft : LMSequenceModel
        The two models after the prompt (the target at the draft warp when the pair shares
        one model).

    Raises
    ------
    InputError
        If ``pair`` is not a ModelPair.

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
    >>> pair = llm.ModelPair(transformers.GPT2LMHeadModel(config).eval(), tok).with_temperatures(draft=1.5)
    >>> p, q = llm.sequence_models(pair, "Hello", device="cpu")  # or a list of token ids
    >>> type(p).__name__, p(()).shape, round(float(p(()).sum()), 4)  # next-token law after the prompt
    ('LMSequenceModel', (96,), 1.0)
    >>> bool((q((5, 6)) > 0).all())  # after the prompt and two more tokens
    True
    """
    if not isinstance(pair, ModelPair):
        raise InputError("pair: must be a ModelPair")
    if isinstance(prompt, (list, tuple)) and all(isinstance(t, (int, np.integer)) for t in prompt):
        ids = [int(t) for t in prompt]
    else:
        ids = _encode(pair.tokenizer, as_prompts([prompt]), chat)[0]
    draft_model = pair.target if pair.shared else pair.draft
    return (
        LMSequenceModel(pair.target, ids, pair.target_warp, device=device, cache_size=cache_size, name=pair.target_id),
        LMSequenceModel(draft_model, ids, pair.draft_warp, device=device, cache_size=cache_size, name=pair.draft_id),
    )


# ------------------------------------------------------------------ forward passes


class _TreeRunner:
    """A model with a prompt in its key/value cache; runs forests of nodes on top of it."""

    def __init__(self, model: Any, prompt_ids: list[int], device: torch.device) -> None:
        self.model = model
        self.device = device
        self.P = len(prompt_ids)
        with torch.no_grad():
            out = model(input_ids=torch.tensor([prompt_ids], device=device), use_cache=True, logits_to_keep=1)
        self.past = past_of(out)
        self.root_logits = out.logits[0, -1].float()
        self.fed = 0  # nodes currently in the cache after the prompt
        self._parents: list[int] = []  # parent (fed index, -1 = prompt) of each fed node

    def reset(self) -> None:
        if self.fed:
            self.past.crop(-self.fed)  # back to the prompt
            self.fed = 0
            self._parents = []

    @torch.no_grad()
    def feed(self, parents: list[int], tokens: list[int], depths: list[int]) -> torch.Tensor:
        """Append nodes (parent = index among all fed nodes, or -1 for a child of the root) to
        the cache; returns their logits (new nodes, vocab), float32.  A node may have as
        parent a node fed earlier or earlier in this call."""
        n_old, n_new = self.fed, len(tokens)
        total = n_old + n_new
        anc = torch.zeros((n_new, total), dtype=torch.bool)
        for j in range(n_new):
            anc[j, n_old + j] = True
            par = parents[j]
            while par >= 0:
                if par >= n_old:
                    anc[j] |= anc[par - n_old]
                    break
                anc[j, par] = True
                par = self._parents[par]
        self._parents = self._parents[:n_old] + list(parents)
        allowed = torch.cat([torch.ones((n_new, self.P), dtype=torch.bool), anc], dim=1)
        dtype = self.model.dtype if self.model.dtype.is_floating_point else torch.float32
        mask = torch.zeros(allowed.shape, dtype=dtype)
        mask.masked_fill_(~allowed, torch.finfo(dtype).min)
        pos = torch.tensor([self.P + d - 1 for d in depths], dtype=torch.long)
        out = forward(
            self.model,
            input_ids=torch.tensor([tokens], device=self.device),
            attention_mask=mask[None, None].to(self.device),
            position_ids=pos[None].to(self.device),
            past_key_values=self.past,
            use_cache=True,
        )
        self.past = past_of(out)
        self.fed = total
        return out.logits[0].float()

    def forest(self, parents: list[int], tokens: list[int], depths: list[int]) -> torch.Tensor:
        """Logits at every node of a forest in one pass (cache restored afterwards)."""
        self.reset()
        try:
            return self.feed(parents, tokens, depths)
        finally:
            self.reset()
