"""Extraction of target and draft next-token distributions from a model pair.

For each prompt the target generates a continuation, sampling each token from
its own warped distribution p with a per-prompt seeded ``torch.Generator``.
Then the whole sequences are fed once more (teacher forcing) to the target and
the draft, batched, and p and q are read at every generated position: the
distributions that the target and the draft would propose for that token given
the same prefix.  Positions after an end-of-sequence token are not kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._errors import InputError
from .._lib.rows import resolve_device
from .._lib.sampling import torch_categorical
from .._lib.validation import seed_of
from ..real import Distributions
from ._models import ModelPair, Warp, forward, package_versions, past_of
from ._prompts import Prompt, as_prompts

__all__ = ["extract", "extract_sweep"]


def _prompt_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0] >> 1)


def _encode(tokenizer: Any, prompts: Sequence[Prompt], chat: bool | None) -> list[list[int]]:
    use_chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
    out = []
    for pr in prompts:
        if use_chat:
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": pr.text}], add_generation_prompt=True, tokenize=False
            )
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            ids = tokenizer(pr.text)["input_ids"]
        if not ids:
            raise InputError(f"prompts: prompt {pr.id!r} encodes to no tokens")
        out.append(list(ids))
    return out


def _eos_ids(pair: ModelPair) -> set[int]:
    ids: set[int] = set()
    for source in (pair.tokenizer, getattr(pair.target, "generation_config", None)):
        eos = getattr(source, "eos_token_id", None)
        if isinstance(eos, int):
            ids.add(eos)
        elif isinstance(eos, (list, tuple)):
            ids.update(int(e) for e in eos)
    return ids


def _left_pad(seqs: list[list[int]], pad: int, device: torch.device):
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, width - len(s) :] = torch.tensor(s, dtype=torch.long)
        mask[i, width - len(s) :] = 1
    pos = (mask.cumsum(dim=1) - 1).clamp_min(0)
    return ids.to(device), mask.to(device), pos.to(device)


@torch.no_grad()
def _generate_and_read(
    pair: ModelPair,
    prompt_ids: list[list[int]],
    max_new_tokens: int,
    generators: list[torch.Generator],
    pad: int,
    eos: set[int],
    draft_warps: Sequence[Warp],
    device: torch.device,
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """Sample continuations from the target, then read p and q at every generated position.

    Generation uses a KV cache.  Teacher forcing then feeds each whole
    continuation at once on top of the prompt's cached keys (the cache is cut
    back to the prompt), so the prompt is processed once; a separate draft
    model reads prompt + continuation in one pass.
    """
    model = pair.target
    vocab = pair.vocab_size
    ids, mask, pos = _left_pad(prompt_ids, pad, device)
    width = ids.shape[1]
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1)
    past = past_of(out)
    first_logits = out.logits[:, -1, :]
    logits = first_logits
    start_pos = pos[:, -1:] + 1
    next_pos = start_pos
    gen_mask = mask
    gen: list[list[int]] = [[] for _ in prompt_ids]
    done = [False] * len(prompt_ids)
    for step_number in range(max_new_tokens):
        probs = pair.target_warp.probs(logits[..., :vocab]).double().cpu()
        toks = []
        for i, g in enumerate(generators):
            tok = torch_categorical(probs[i], g)
            toks.append(tok)
            if not done[i]:
                gen[i].append(tok)
                done[i] = tok in eos
        if all(done) or step_number == max_new_tokens - 1:
            break
        step = torch.tensor(toks, dtype=torch.long, device=device)[:, None]
        gen_mask = torch.cat([gen_mask, torch.ones_like(step)], dim=1)
        out = forward(
            model, input_ids=step, attention_mask=gen_mask, position_ids=next_pos, past_key_values=past, use_cache=True
        )
        past = past_of(out)
        logits = out.logits[:, -1, :]
        next_pos = next_pos + 1
    # Teacher forcing of the continuations (all but their last token).
    longest = max(len(g) for g in gen)
    if longest > 1:
        extra = past.get_seq_length() - width
        if extra > 0:
            past.crop(-extra)  # back to the prompt
        cont = torch.full((len(gen), longest - 1), pad, dtype=torch.long)
        cmask = torch.zeros((len(gen), longest - 1), dtype=torch.long)
        for i, g in enumerate(gen):
            cont[i, : len(g) - 1] = torch.tensor(g[:-1], dtype=torch.long)
            cmask[i, : len(g) - 1] = 1
        cont, cmask = cont.to(device), cmask.to(device)
        cpos = start_pos + torch.arange(longest - 1, device=device)[None, :]
        forced = forward(
            model,
            input_ids=cont,
            attention_mask=torch.cat([mask, cmask], dim=1),
            position_ids=cpos,
            past_key_values=past,
            use_cache=True,
        ).logits
        logits_t = torch.cat([first_logits[:, None, :], forced], dim=1)
    else:
        logits_t = first_logits[:, None, :]
    rows = [i for i, g in enumerate(gen) for _ in g]
    steps = [s for g in gen for s in range(len(g))]
    tokens = [t for g in gen for t in g]
    r = torch.tensor(rows, dtype=torch.long, device=device)
    c = torch.tensor(steps, dtype=torch.long, device=device)
    lt = logits_t[r, c]
    if pair.shared:
        ld = lt
    else:
        seqs = [a + b[:-1] for a, b in zip(prompt_ids, gen, strict=True)]
        dids, dmask, dpos = _left_pad(seqs, pad, device)
        dwidth = dids.shape[1]
        cols = [dwidth - len(b) + s for b in gen for s in range(len(b))]
        dl = pair.draft(input_ids=dids, attention_mask=dmask, position_ids=dpos).logits
        ld = dl[r, torch.tensor(cols, dtype=torch.long, device=device)]
    # Padded embedding rows beyond the pair's vocabulary are dropped (ModelPair records how many).
    p = pair.target_warp.probs(lt[..., :vocab]).cpu().numpy()
    qs = [w.probs(ld[..., :vocab]).cpu().numpy() for w in draft_warps]
    return p, qs, np.array(rows), np.array(steps), np.array(tokens)


def _batches(
    pair: ModelPair,
    prompts: list[Prompt],
    draft_warps: Sequence[Warp],
    *,
    max_new_tokens: int,
    seed: int,
    batch_size: int,
    chat: bool | None,
    device: torch.device,
    skip: set[int],
    progress: bool,
) -> Iterator[tuple[int, np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]]:
    from tqdm.auto import tqdm

    tok = pair.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    eos = _eos_ids(pair)
    encoded = _encode(tok, prompts, chat)
    n_batches = (len(prompts) + batch_size - 1) // batch_size
    for b in tqdm(range(n_batches), desc="extract", unit="batch", disable=not progress):
        if b in skip:
            continue
        lo, hi = b * batch_size, min(len(prompts), (b + 1) * batch_size)
        gens = [torch.Generator().manual_seed(_prompt_seed(seed, i)) for i in range(lo, hi)]
        p, qs, idx, steps, tokens = _generate_and_read(
            pair, encoded[lo:hi], max_new_tokens, gens, pad, eos, draft_warps, device
        )
        yield b, p, qs, idx + lo, steps, tokens


def _check_int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise InputError(f"{name}: must be an integer >= {lo}, got {v!r}")
    return int(v)


def _check_args(max_new_tokens: int, batch_size: int, seed: int) -> None:
    for name, v, lo in (("max_new_tokens", max_new_tokens, 1), ("batch_size", batch_size, 1), ("rng", seed, 0)):
        _check_int(name, v, lo)


def _start(pair: Any, prompts: Any, device: Any) -> tuple[list[Prompt], Any]:
    """How every extraction starts: check the pair, read the prompts, move the pair to its device."""
    if not isinstance(pair, ModelPair):
        raise InputError("pair: must be a ModelPair")
    prompts = as_prompts(prompts)
    dev = resolve_device(device)
    pair.to(dev)
    return prompts, dev


def _meta(pair: ModelPair, prompts: list[Prompt], **settings: Any) -> dict[str, Any]:
    texts = json.dumps([[p.id, p.text] for p in prompts])
    meta = {
        **pair.provenance(),
        "prompt_ids": [p.id for p in prompts],
        "prompts_sha256": hashlib.sha256(texts.encode()).hexdigest(),
        **settings,
        "packages": package_versions(),
    }
    config = {k: v for k, v in meta.items() if k not in ("packages", "device")}
    meta["config_sha256"] = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    return meta


def _resume(
    checkpoint: str | os.PathLike | None, pattern: str, cls: Any, meta: dict[str, Any], key: str
) -> tuple[Path | None, dict[int, Any]]:
    """The checkpoint folder (created; None without one) and its finished shards
    (files ``pattern`` read by ``cls.load``), by their ``meta[key]``."""
    done: dict[int, Any] = {}
    folder = Path(checkpoint) if checkpoint is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        for shard in sorted(folder.glob(pattern)):
            part = cls.load(shard)
            if part.meta.get("config_sha256") != meta["config_sha256"]:
                raise InputError(
                    f"checkpoint: {folder} holds shards made with other settings; use another folder or delete it"
                )
            done[int(part.meta[key])] = part
    return folder, done


def extract(
    pair: ModelPair,
    prompts: Any = None,
    *,
    max_new_tokens: int = 32,
    device: Any = "auto",
    rng: Any = 0,
    batch_size: int = 8,
    chat: bool | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = True,
) -> Distributions:
    """Generate from the target and read p and q at every generated position.

    Parameters
    ----------
    pair : ModelPair
        Target and draft (with their temperatures and truncation).
    prompts : list of Prompt or str, or a path to a prompt file, optional
        Default: :func:`builtin_prompts`.
    max_new_tokens : int
        Generated tokens per prompt (fewer when the target ends the text).
    device : str or torch.device
        ``"auto"``: cuda when available, else cpu.
    rng : int or numpy.random.Generator
        Prompt i is sampled with a ``torch.Generator`` seeded from (seed, i),
        so results do not depend on batching or on resuming.
    batch_size : int
        Prompts per batch (one checkpoint shard per batch).
    chat : bool, optional
        Wrap prompts in the tokenizer's chat template (default: when it has one).
    checkpoint : path, optional
        A folder receiving one shard per finished batch.  Running again with
        the same settings skips the finished batches: an interrupted
        extraction resumes without losing or duplicating positions.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    Distributions
        Rows in prompt order, then step order; ``meta`` holds the provenance.

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
    >>> data = llm.extract(pair, ["Hello", "abc", "x"], max_new_tokens=3, device="cpu", rng=0, progress=False)
    >>> data.target.shape, data.draft.shape  # one row per generated position
    ((9, 96), (9, 96))
    >>> data.prompt_index.tolist(), data.step.tolist()
    ([0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 1, 2, 0, 1, 2, 0, 1, 2])
    """
    seed = seed_of(rng)
    _check_args(max_new_tokens, batch_size, seed)
    prompts, dev = _start(pair, prompts, device)
    meta = _meta(
        pair,
        prompts,
        max_new_tokens=max_new_tokens,
        seed=seed,
        batch_size=batch_size,
        chat=chat,
        device=str(dev),
    )
    folder, done = _resume(checkpoint, "batch-*.npz", Distributions, meta, "batch")
    start = time.perf_counter()
    fresh = 0
    for b, p, (q,), idx, steps, tokens in _batches(
        pair,
        prompts,
        [pair.draft_warp],
        max_new_tokens=max_new_tokens,
        seed=seed,
        batch_size=batch_size,
        chat=chat,
        device=dev,
        skip=set(done),
        progress=progress,
    ):
        part = Distributions(p, q, prompt_index=idx, step=steps, token=tokens, meta={**meta, "batch": b})
        fresh += part.n_positions
        if folder is not None:
            part.save(folder / f"batch-{b:05d}.npz", sparse=False)
        done[b] = part
    seconds = time.perf_counter() - start
    out_meta = {**meta, "extraction": {"new_positions": fresh, "seconds": round(seconds, 3)}}
    return Distributions.concatenate([done[b] for b in sorted(done)], meta=out_meta)


def extract_sweep(
    pair: ModelPair,
    draft_temperatures: Sequence[float],
    prompts: Any = None,
    *,
    max_new_tokens: int = 32,
    device: Any = "auto",
    rng: int = 0,
    batch_size: int = 8,
    chat: bool | None = None,
    progress: bool = True,
) -> dict[float, Distributions]:
    """Like :func:`extract` for several draft temperatures at once.

    The continuations (sampled from the target) and the forward passes are
    shared; only the draft's warp changes.  Returns one :class:`Distributions`
    per temperature, each equal to ``extract(pair.with_temperatures(draft=τ))``.

    Parameters
    ----------
    pair : ModelPair
        The models; its draft warp's truncation is kept, its temperature replaced.
    draft_temperatures : sequence of float
        The draft temperatures, at least one.
    prompts, max_new_tokens, device, rng, batch_size, chat, progress :
        As in :func:`extract`.

    Returns
    -------
    dict of float to Distributions
        One per draft temperature.

    Raises
    ------
    InputError
        If ``draft_temperatures`` is empty or another argument is refused as in
        :func:`extract`.
    """
    seed = seed_of(rng)
    _check_args(max_new_tokens, batch_size, seed)
    temps = [float(t) for t in draft_temperatures]
    if not temps:
        raise InputError("draft_temperatures: empty")
    prompts, dev = _start(pair, prompts, device)
    warps = [dataclasses.replace(pair.draft_warp, temperature=t) for t in temps]
    parts: list[list[Distributions]] = [[] for _ in temps]
    for _, p, qs, idx, steps, tokens in _batches(
        pair,
        prompts,
        warps,
        max_new_tokens=max_new_tokens,
        seed=seed,
        batch_size=batch_size,
        chat=chat,
        device=dev,
        skip=set(),
        progress=progress,
    ):
        for j, q in enumerate(qs):
            parts[j].append(Distributions(p, q, prompt_index=idx, step=steps, token=tokens))
    out = {}
    for t, w, ps in zip(temps, warps, parts, strict=True):
        sub = pair.replace(draft_warp=w)
        meta = _meta(
            sub, prompts, max_new_tokens=max_new_tokens, seed=seed, batch_size=batch_size, chat=chat, device=str(dev)
        )
        out[t] = Distributions.concatenate(ps, meta=meta)
    return out
