"""Hugging Face assisted generation, logged: the p and q its sampler really used.

``log_assisted_generation`` runs ``model.generate(..., assistant_model=..., do_sample=True)``
on a :class:`ModelPair` with a hook around ``transformers.generation.utils._speculative_sampling``
(the function that verifies each chain of candidates), recording at every call the drafted
candidates X, the draft laws Q it received (softmax of the candidate logits), the target laws P
(softmax of the processed target logits, one row per candidate and one for the bonus), the
number m of accepted candidates and the emitted token Y.  The hook calls the original function
unchanged; it is removed when the run ends.  Audit the log with
:func:`optaccept.audit.audit_chain_log` (or ``optaccept audit-assisted``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import seed_of
from ._models import ModelPair
from ._prompts import as_prompts

__all__ = ["AssistedLog", "log_assisted_generation"]


@dataclass
class AssistedLog:
    """One record per call of the sampler: ``X[c]`` (γ_c,), ``P[c]`` (γ_c + 1, n) float32,
    ``Q[c]`` (γ_c, n) float32, ``m[c]``, ``Y[c]``, and the prompt index ``prompt[c]``.

    Attributes
    ----------
    X : list of ndarray of int64
        The drafted tokens of each call.
    P : list of ndarray of float32
        The target's laws of each call, one row per drafted token and one after them.
    Q : list of ndarray of float32
        The draft's laws of each call.
    m : list of int
        Accepted drafted tokens of each call.
    Y : list of int
        The token emitted after them.
    prompt : list of int
        The prompt index of each call.
    sequences : list of ndarray
        The new token ids ``generate`` returned, one array per prompt.
    meta : dict
        The warp, the models and ``max_new_tokens``.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import llm
    >>> log = llm.AssistedLog(  # one sampler call: 2 drafted tokens, the first accepted, then token 1
    ...     X=[np.array([0, 1])], P=[np.full((3, 2), 0.5)], Q=[np.full((2, 2), 0.5)], m=[1], Y=[1], prompt=[0],
    ...     meta={"warp": "T = 1"})
    >>> log
    AssistedLog(1 sampler calls, 2 generated tokens, T = 1)
    >>> len(log), log.P[0].shape
    (1, (3, 2))
    """

    X: list[np.ndarray] = field(default_factory=list)
    P: list[np.ndarray] = field(default_factory=list)
    Q: list[np.ndarray] = field(default_factory=list)
    m: list[int] = field(default_factory=list)
    Y: list[int] = field(default_factory=list)
    prompt: list[int] = field(default_factory=list)
    #: the new token ids ``generate`` returned, one array per prompt
    sequences: list[np.ndarray] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.m)

    def __repr__(self) -> str:
        toks = sum(self.m) + len(self.m)
        return f"AssistedLog({len(self)} sampler calls, {toks} generated tokens, {self.meta.get('warp')})"


@contextlib.contextmanager
def _hooked(log: AssistedLog, prompt_index: list[int]) -> Iterator[None]:
    import transformers.generation.utils as gu

    original = gu._speculative_sampling

    def hook(candidate_input_ids: Any, candidate_logits: Any, candidate_length: int, new_logits: Any, **kw: Any):
        out = original(candidate_input_ids, candidate_logits, candidate_length, new_logits, **kw)
        if candidate_input_ids.shape[0] != 1:
            raise InputError("log_assisted_generation: batch size 1 only (Hugging Face's assisted decoding)")
        log.X.append(candidate_input_ids[0, -candidate_length:].detach().cpu().numpy().astype(np.int64))
        log.Q.append(candidate_logits[0].double().softmax(-1).float().cpu().numpy())
        log.P.append(new_logits[0].double().softmax(-1).float().cpu().numpy())
        log.m.append(int(out[1]))
        log.Y.append(int(out[0][0, -1]))
        log.prompt.append(prompt_index[0])
        return out

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # generate()'s advice on its own arguments is not the user's concern
    gu._speculative_sampling = hook
    try:
        yield
    finally:
        gu._speculative_sampling = original
        hf_logging.set_verbosity(verbosity)


def log_assisted_generation(
    pair: ModelPair,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int = 48,
    top_k: int | None = None,
    top_p: float | None = None,
    temperature: float = 1.0,
    rng: Any = 0,
    progress: bool = True,
) -> AssistedLog:
    """Generate ``max_new_tokens`` tokens (exactly: the end-of-text token is held back) after
    each prompt with Hugging Face's assisted generation, target ``pair.target`` and assistant
    ``pair.draft`` (both sampled with the given warp), and log every verification call.

    ``rng`` (a seed, or a Generator giving one) seeds torch before each prompt (prompt i uses
    seed + i).

    Parameters
    ----------
    pair : ModelPair
        A pair with a separate draft model.
    prompts : sequence of str or Prompt
        The prompts.
    max_new_tokens : int
        Tokens generated per prompt.
    top_k, top_p : optional
        Truncation of both models' sampling.
    temperature : float
        Temperature of both models' sampling.
    rng : int or numpy.random.Generator
        Seed of prompt 0.
    progress : bool
        A bar over prompts.

    Returns
    -------
    AssistedLog
        One record per verification call, for :func:`optaccept.audit.audit_chain_log`.

    Raises
    ------
    InputError
        If the pair shares one model, or the batch has more than one sequence.

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
    >>> from optaccept import audit
    >>> target, draft = transformers.GPT2LMHeadModel(config).eval(), transformers.GPT2LMHeadModel(config).eval()
    >>> pair = llm.ModelPair(target, tok, draft)
    >>> log = llm.log_assisted_generation(pair, ["Hello", "abc"], max_new_tokens=4, rng=0, progress=False)
    >>> [len(s) for s in log.sequences]  # exactly max_new_tokens per prompt
    [4, 4]
    >>> all(len(P) == len(Q) + 1 == len(X) + 1 for P, Q, X in zip(log.P, log.Q, log.X))
    True
    >>> audit.audit_chain_log(log.P, log.Q, log.X, log.m, log.Y).steps == len(log)
    True
    """
    seed = seed_of(rng)
    import torch
    from tqdm.auto import tqdm

    if pair.shared:
        raise InputError("pair: assisted generation needs a separate draft model (e.g. llm.smollm2_layerskip())")
    log = AssistedLog(
        meta=dict(
            top_k=top_k,
            top_p=top_p,
            temperature=temperature,
            warp=f"top_k={top_k}, top_p={top_p}",
            target=pair.target_id,
            draft=pair.draft_id,
            max_new_tokens=int(max_new_tokens),
        )
    )
    tok = pair.tokenizer
    current = [0]
    items = as_prompts(list(prompts))
    with _hooked(log, current):
        for i, pr in enumerate(tqdm(items, desc="prompts", disable=not progress)):
            current[0] = i
            text = (
                tok.apply_chat_template(
                    [{"role": "user", "content": pr.text}], add_generation_prompt=True, tokenize=False
                )
                if getattr(tok, "chat_template", None)
                else pr.text
            )
            enc = tok(text, return_tensors="pt", add_special_tokens=False)
            torch.manual_seed(seed + i)
            with torch.no_grad():
                out = pair.target.generate(
                    **enc,
                    assistant_model=pair.draft,
                    do_sample=True,
                    max_new_tokens=int(max_new_tokens),
                    min_new_tokens=int(max_new_tokens),
                    top_k=top_k,
                    top_p=top_p,
                    temperature=temperature,
                    pad_token_id=tok.eos_token_id,
                )
            log.sequences.append(out[0, enc["input_ids"].shape[1] :].cpu().numpy().astype(np.int64))
    return log
