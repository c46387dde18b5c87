"""A sequence model as a Hugging Face-style causal language model (:func:`torch_lm`): logits,
a key/value cache in the forms such loops hand back and forth, attention masks of padded
batches, and a per-prefix cache so that each distinct prefix is read and checked once.

The cache holds no keys or values: it holds the token ids seen so far and their attention
mask, row by row, laid out as one layer's ``(key, value)`` pair of shape
batch × 1 × length × 1 (the ids, as float64, in the key; the mask in the value).  So what
loops do to a cache — ``get_seq_length()``, ``crop(n)``, slicing a legacy tuple
``[(k[:, :, :n], v[:, :, :n]) for k, v in past]``, selecting rows — does the same to the
text it stands for, and the prefix of each new token is read from it when only new tokens
are fed.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from .._errors import InputError, MissingDependencyError
from .._lib.validation import check_size
from ..tree._models import as_model

__all__ = ["torch_lm"]

#: Probabilities kept in the cache of log-laws read (about 128 MB of float64).
_CACHE_ENTRIES = 1 << 24


def torch_lm(model: Any, vocab: int) -> Any:
    """A sequence model ``prefix -> probabilities`` as a ``torch.nn.Module`` laid out like a
    Hugging Face causal language model, so that decoding loops written for those run
    unchanged on laws known exactly.

    ``forward(input_ids, attention_mask=None, past_key_values=None, use_cache=None, ...)``
    returns an object with ``.logits`` (also ``[0]``) and ``.past_key_values`` (also ``[1]``):

    * ``logits``: float32, batch × (tokens fed) × ``vocab``; at a fed position it holds the
      log-probabilities of the next token after the text up to and including it (−inf where
      the probability is 0): the cached tokens, then the fed ones, without the positions whose
      ``attention_mask`` is 0 (padding, left or right; zeros at padded positions).
      ``logits_to_keep=k`` keeps the last k positions;
    * ``past_key_values``: the cache of the text so far (module docstring) — an object with
      ``get_seq_length()``, ``crop(n)``, ``reorder_cache(rows)``, ``batch_select_indices``,
      ``to_legacy_cache()`` and ``[0]`` the one layer's ``(key, value)``; a legacy tuple
      ``((key, value),)`` when one was passed in; None with ``use_cache=False``.

    ``calls`` lists the forwards, each the texts of its rows (cached and fed tokens, padding
    removed): ``ChainDrafting(..., counter=module)`` reads a loop's accepted counts from them.
    ``attention_mask`` covers the cached and the fed tokens (Hugging Face's convention; a mask
    of the fed tokens alone is taken as such).  ``position_ids`` and ``cache_position`` are
    accepted and ignored: the law of a token is read from the tokens before it.  The module
    has ``config.vocab_size``, one empty parameter (so ``next(m.parameters()).device`` works)
    and no state; each distinct prefix is read from ``model`` and checked once (a bounded
    cache), so re-scoring a whole prefix costs a lookup per position.  Sampling processors go
    on the model: ``torch_lm(tree.with_sampling(target, top_k=50), vocab)``.

    Parameters
    ----------
    model : sequence model
        ``prefix -> next-token probabilities`` over ``vocab`` tokens, prefix = the whole text.
    vocab : int
        The vocabulary size.

    Returns
    -------
    torch.nn.Module
        The module described above.

    Raises
    ------
    MissingDependencyError
        If torch is not installed.
    InputError
        If ``vocab`` is not a positive integer or ``model`` is not a sequence model; at a
        forward, if ``input_ids`` is missing, a mask or cache does not fit the ids, or the model
        returns a law of another size.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from optaccept import audit, tree
    >>> target = tree.synthetic_pair(6, rng=0)[0]
    >>> lm = audit.torch_lm(target, 6)
    >>> out = lm(torch.tensor([[1, 2, 3]]), use_cache=True)  # Hugging Face style
    >>> tuple(out.logits.shape), lm.config.vocab_size, out.past_key_values.get_seq_length()
    ((1, 3, 6), 6, 3)
    >>> np.allclose(out.logits[0, -1].exp().numpy(), target((1, 2, 3)), atol=1e-6)  # after (1, 2, 3)
    True
    >>> nxt = lm(torch.tensor([[4]]), past_key_values=out.past_key_values)  # only the new token fed
    >>> np.allclose(nxt.logits[0, -1].exp().numpy(), target((1, 2, 3, 4)), atol=1e-6)
    True
    >>> padded = lm(torch.tensor([[0, 0, 1, 2]]), attention_mask=torch.tensor([[0, 0, 1, 1]]))
    >>> np.allclose(padded.logits[0, -1].exp().numpy(), target((1, 2)), atol=1e-6)  # left padding
    True
    """
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is in the llm extra
        raise MissingDependencyError("torch_lm needs torch (pip install 'optaccept[llm]')") from exc

    vocab = check_size(vocab, "vocab")
    if vocab < 1:
        raise InputError("vocab: must be at least 1")
    law = as_model(model, "model")
    memo: dict[tuple[int, ...], np.ndarray] = {}

    def log_law(prefix: tuple[int, ...]) -> np.ndarray:
        row = memo.get(prefix)
        if row is None:
            p = np.asarray(law(prefix), dtype=np.float64)
            if p.size != vocab:
                raise InputError(f"model: returned {p.size} probabilities, vocab is {vocab}")
            with np.errstate(divide="ignore"):
                row = np.log(p)
            if (len(memo) + 1) * vocab > _CACHE_ENTRIES:
                memo.clear()
            memo[prefix] = row
        return row

    class _Output(SimpleNamespace):
        def __getitem__(self, i: int) -> Any:
            return tuple(x for x in (self.logits, self.past_key_values) if x is not None)[i]

    class _TokenCache:
        """The text seen so far per row (ids and mask), in a key/value cache's clothes."""

        is_compileable = False

        def __init__(self, ids: Any, mask: Any) -> None:
            self.ids, self.mask = ids, mask

        @classmethod
        def of(cls, past: Any, batch: int) -> _TokenCache:
            if past is None:
                empty = torch.zeros((batch, 0), dtype=torch.long)
                return cls(empty, empty.clone())
            if isinstance(past, cls):
                return past
            try:
                key, value = past[0][0], past[0][1]
                ids, mask = torch.as_tensor(key)[:, 0, :, 0], torch.as_tensor(value)[:, 0, :, 0]
            except (TypeError, IndexError, KeyError, AttributeError):
                raise InputError(
                    "past_key_values: must be a cache this module returned (or its legacy tuple)"
                ) from None
            return cls(ids.detach().cpu().long(), mask.detach().cpu().long())

        def get_seq_length(self, layer_idx: int = 0) -> int:
            return int(self.ids.shape[1])

        @property
        def seen_tokens(self) -> int:
            return self.get_seq_length()

        def get_max_cache_shape(self, layer_idx: int = 0) -> None:
            return None

        def crop(self, max_length: int) -> None:
            if max_length < 0:
                max_length = self.get_seq_length() - abs(max_length)
            self.ids, self.mask = self.ids[:, :max_length], self.mask[:, :max_length]

        def reorder_cache(self, beam_idx: Any) -> None:
            idx = torch.as_tensor(beam_idx).cpu()
            self.ids, self.mask = self.ids.index_select(0, idx), self.mask.index_select(0, idx)

        def batch_select_indices(self, indices: Any) -> None:
            self.ids, self.mask = self.ids[indices], self.mask[indices]

        def batch_repeat_interleave(self, repeats: int) -> None:
            self.ids = self.ids.repeat_interleave(repeats, dim=0)
            self.mask = self.mask.repeat_interleave(repeats, dim=0)

        def _pair(self) -> tuple[Any, Any]:
            return self.ids[:, None, :, None].double(), self.mask[:, None, :, None].double()

        def to_legacy_cache(self) -> tuple[tuple[Any, Any], ...]:
            return (self._pair(),)

        def __len__(self) -> int:
            return 1

        def __getitem__(self, layer: int) -> tuple[Any, Any]:
            if layer not in (0, -1):
                raise IndexError(f"the cache has one layer, got layer {layer}")
            return self._pair()

        def __iter__(self) -> Any:
            yield self._pair()

        def __repr__(self) -> str:
            return f"TokenCache(batch={self.ids.shape[0]}, length={self.get_seq_length()})"

    class _ExactLM(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = SimpleNamespace(vocab_size=vocab, is_encoder_decoder=False, use_cache=True)
            self._anchor = torch.nn.Parameter(torch.zeros(0), requires_grad=False)
            self.calls: list[tuple[tuple[int, ...], ...]] = []

        @property
        def device(self) -> Any:
            return self._anchor.device

        def forward(
            self,
            input_ids: Any = None,
            attention_mask: Any = None,
            past_key_values: Any = None,
            use_cache: bool | None = None,
            logits_to_keep: int = 0,
            **kwargs: Any,
        ) -> Any:
            if input_ids is None:
                raise InputError("input_ids: the module reads token ids only (no inputs_embeds)")
            ids = torch.as_tensor(input_ids).detach().cpu().long()
            if ids.ndim == 1:
                ids = ids[None, :]
            B, L = ids.shape
            cache = _TokenCache.of(past_key_values, B)
            P = cache.get_seq_length()
            if cache.ids.shape[0] != B:
                raise InputError(f"past_key_values: holds {cache.ids.shape[0]} rows, input_ids has {B}")
            if attention_mask is None:
                mask = torch.cat([cache.mask, torch.ones((B, L), dtype=torch.long)], dim=1)
            else:
                am = torch.as_tensor(attention_mask).detach().cpu().long()
                if am.ndim == 1:
                    am = am[None, :]
                if am.shape == (B, P + L):
                    mask = am
                elif am.shape == (B, L):
                    mask = torch.cat([cache.mask, am], dim=1)
                else:
                    raise InputError(
                        f"attention_mask: shape {tuple(am.shape)} fits neither the cached and fed tokens "
                        f"({B}, {P + L}) nor the fed ones ({B}, {L})"
                    )
            all_ids = torch.cat([cache.ids, ids], dim=1)
            rows, masks = all_ids.numpy(), mask.numpy()
            keep = L if not logits_to_keep else min(int(logits_to_keep), L)
            out = np.zeros((B, keep, vocab))
            texts = []
            for b in range(B):
                text = [int(t) for t, m in zip(rows[b, : P + L], masks[b]) if m]
                texts.append(tuple(text))
                before = int(masks[b, : P + L - keep].sum())  # real tokens before the first kept position
                for j, t in enumerate(range(P + L - keep, P + L)):
                    if masks[b, t]:
                        before += 1
                        out[b, j] = log_law(tuple(text[:before]))
            self.calls.append(tuple(texts))
            logits = torch.as_tensor(out, dtype=torch.float32, device=self._anchor.device)
            if use_cache is False:
                return _Output(logits=logits, past_key_values=None)
            new = _TokenCache(all_ids, mask)
            legacy = past_key_values is not None and not isinstance(past_key_values, _TokenCache)
            return _Output(logits=logits, past_key_values=new.to_legacy_cache() if legacy else new)

    return _ExactLM()
