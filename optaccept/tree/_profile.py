r"""Acceptance profiles along generated text, in the forms engines replay (docs/engines.md §1).

A *profile* of a tree shape and a verifier is the law of the number A of drafted tokens a step
accepts, as per-depth rates r_d = P(A ≥ d) (d = 1 … depth), averaged over the positions of
text the target generates: for each (target, draft) pair a continuation of ``positions`` tokens
is drawn from the target, and at every position t the step that starts after its first t tokens
is valued.  Σ_d r_d = E[A], the mean accepted tokens; the mean accepted length engines report
counts the correction or bonus token too: AL = 1 + E[A].

**How each step is valued.**  Top-down verifiers ("token": recursive rejection sampling;
"target_only") decide level by level, so on a tree cut below depth d they accept min(A, d)
tokens: r_d = E[min(A, d)] − E[min(A, d − 1)], both exact per-tree values
(:mod:`optaccept.tree._verifiers`) of the cut trees.  Block verification of a chain (Sun et al.,
ICLR 2025) accepts τ = max{i : η_i = 1} with independent η_i ~ Bernoulli(h_i), so
P(τ ≥ d) = 1 − Π_{i ≥ d}(1 − h_i) from the same h_i as its exact value.  Top-k children make the
tree a function of the context: each position is then exact, and on such trees target-only is
the optimal lossless verifier (docs/trees.md §1b), so "optimal" and "token_optimal" get its
profile.  Sampled children ("iid", "swor") are Rao–Blackwellised: the per-tree rates are exact
and averaged over ``samples`` drafted trees per position.  Traversal verification decides from
the leaves up; its per-depth law is not computed here (its mean is, by
:func:`optaccept.tree.accepted_tokens`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.display import Tabular, html_fields
from .._lib.sampling import draw
from .._lib.statistics import std_err as sample_std_err
from .._lib.validation import check_choice, check_rng, check_size, one_renormalization_warning
from ._checks import VERIFIERS, check_shaped
from ._models import as_model
from ._shape import Shape, as_shape, check_children
from ._shaped_tree import ShapedTree, sample_shaped, topk_tree
from ._verifiers import block_rates, target_only_value, token_value

__all__ = ["AcceptanceProfile", "acceptance_profile", "ENGINES"]

#: Engines whose replay options :meth:`AcceptanceProfile.to_engine` writes.
ENGINES = ("vllm", "sglang", "trtllm")
_DETERMINISTIC_OPTIMUM = ("target_only", "token_optimal", "optimal")


@dataclass
class AcceptanceProfile(Tabular):
    """Per-depth acceptance rates of a shape and a verifier along generated text.

    In the results' vocabulary: ``value`` is ``mean_accepted`` with its ``std_err``,
    ``method`` how it was computed, ``ok`` whether the rates form a profile (finite, in
    [0, 1], non-increasing); ``to_pandas()`` and ``to_latex()`` give one row per depth.

    Attributes
    ----------
    rates : ndarray, shape (depth,)
        r_d = P(accepted drafted tokens ≥ d), d = 1 … depth: non-increasing, in [0, 1] (vLLM's
        "unconditional per-position acceptance rates").
    mean_accepted : float
        E[accepted drafted tokens] = Σ rates (AL − 1; the correction or bonus token not counted).
    std_err : float or None
        Standard error of ``mean_accepted`` over the generated texts (clustered by text: the
        positions of one text are not independent).  None — unknown — for a profile of a single
        text, whose spread over texts cannot be estimated; never 0 for a sampled profile.
    by_position : ndarray, shape (positions, depth)
        The rates at each position of the text, averaged over the pairs.

    Examples
    --------
    >>> from optaccept import tree
    >>> pair = tree.synthetic_pair(6, rng=0)
    >>> prof = tree.acceptance_profile(pair, 2, "target_only", positions=4, samples=8, rng=0)
    >>> type(prof).__name__, prof.verifier, prof.positions
    ('AcceptanceProfile', 'target_only', 4)
    >>> bool(prof.rates[0] >= prof.rates[1]), round(prof.mean_accepted - float(prof.rates.sum()), 12)
    (True, 0.0)
    """

    rates: np.ndarray
    mean_accepted: float
    std_err: float | None
    by_position: np.ndarray
    shape: Any
    verifier: str
    children: str
    method: str
    texts: int
    positions: int
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float:
        """``mean_accepted``, the results' name for it."""
        return self.mean_accepted

    @property
    def ok(self) -> bool:
        """Whether the rates are finite, in [0, 1] and non-increasing (within 1e-12)."""
        r = np.asarray(self.rates, dtype=np.float64)
        return bool(np.isfinite(r).all() and (r >= -1e-12).all() and (r <= 1 + 1e-12).all()) and bool(
            (np.diff(r) <= 1e-12).all()
        )

    _caption = "Acceptance profile: P(accepted drafted tokens ≥ d) by depth d."

    def _records(self) -> list[dict[str, Any]]:
        return [{"depth": d, "rate": float(r)} for d, r in enumerate(self.rates, start=1)]

    @property
    def al(self) -> float:
        """Mean accepted length as engines report it: 1 + mean accepted drafted tokens."""
        return 1.0 + self.mean_accepted

    @property
    def accepted_law(self) -> np.ndarray:
        """P(A = a), a = 0 … depth."""
        r = np.concatenate([[1.0], self.rates, [0.0]])
        return r[:-1] - r[1:]

    def to_engine(self, name: str) -> dict[str, Any]:
        """The profile in the form an engine's replay option takes.

        ``"vllm"``: the ``speculative_config`` entries of vLLM's synthetic rejection sampler,
        ``rejection_sample_method="synthetic"`` with ``synthetic_acceptance_rates`` = ``rates``
        (length ``num_speculative_tokens`` = depth, non-increasing, each the probability that
        the first d drafts are all accepted).  ``"sglang"``: the environment variables
        ``SGLANG_SIMULATE_ACC_LEN`` = AL (bonus token counted) with
        ``SGLANG_SIMULATE_ACC_METHOD=match-expected`` (floor or ceiling of AL at random, mean AL).
        ``"trtllm"``: ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`` = AL − 1 (drafted tokens only;
        fractional values are read by the one-model path, the two-model path reads an integer).
        Where each option is read in the engines' code: docs/engines.md §1.

        Parameters
        ----------
        name : {"vllm", "sglang", "trtllm"}
            The engine.

        Returns
        -------
        dict
            Option or environment-variable name → value.

        Raises
        ------
        InputError
            If ``name`` is not one of the three engines.
        """
        if name == "vllm":
            rates = [round(float(r), 6) for r in self.rates]
            return {
                "num_speculative_tokens": len(rates),
                "rejection_sample_method": "synthetic",
                "synthetic_acceptance_rates": rates,
            }
        if name == "sglang":
            return {"SGLANG_SIMULATE_ACC_LEN": f"{self.al:.4f}", "SGLANG_SIMULATE_ACC_METHOD": "match-expected"}
        if name == "trtllm":
            return {"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": f"{self.mean_accepted:.4f}"}
        check_choice("name", name, ENGINES)

    def __str__(self) -> str:
        rates = ", ".join(f"{r:.4f}" for r in self.rates)
        return (
            f"Acceptance profile ({self.verifier}, {self.children} children, shape {self.shape!r}; {self.method}; "
            f"{self.texts} texts × {self.positions} positions)\n"
            f"  P(accepted ≥ d), d = 1…{self.rates.size}: [{rates}]\n"
            f"  mean accepted {self.mean_accepted:.4f} ± {self._se_text()}; AL {self.al:.4f}"
        )

    def _se_text(self) -> str:
        if self.std_err is None:
            return f"unknown (standard error needs at least 2 texts, got {self.texts})"
        return f"{self.std_err:.4f}"

    def _repr_html_(self) -> str:
        return html_fields(
            "Acceptance profile",
            [
                ("rates", self.rates),
                ("mean_accepted", self.mean_accepted),
                ("std_err", "unknown (fewer than 2 texts)" if self.std_err is None else self.std_err),
                ("al", self.al),
                ("verifier", self.verifier),
                ("children", self.children),
                ("method", self.method),
                ("texts", self.texts),
                ("positions", self.positions),
            ],
        )


def _as_pairs(pairs: Any) -> list[tuple[Any, Any]]:
    if isinstance(pairs, tuple) and len(pairs) == 2 and callable(pairs[0]) and callable(pairs[1]):
        return [pairs]
    try:
        out = [tuple(pr) for pr in pairs]
    except TypeError:
        raise InputError(f"pairs: a list of (target, draft) sequence models, got {type(pairs).__name__}") from None
    if not out or any(len(pr) != 2 for pr in out):
        raise InputError("pairs: a non-empty list of (target, draft) sequence models")
    return out


def _cut(tree: Any, d: int) -> Any:
    """The drafted tree without its nodes below depth d."""

    paths = tuple(t for t in tree.shape.paths if len(t) <= d)
    return ShapedTree(Shape(paths), tree.children, {t: x for t, x in tree.tokens.items() if len(t) <= d})


def _tree_rates(tree: Any, P: Any, Q: Any, verifier: str, depth: int) -> np.ndarray:
    """Per-depth rates P(A ≥ d) of one drafted tree (exact given the tree)."""

    if verifier == "block":
        chain = tree.chains[0] if tree.tokens else ()
        hs = [float(h) for h in block_rates(chain, P, Q)] if chain else []
        hs = hs + [0.0] * (depth - len(hs))
        tail = np.cumprod([1.0 - h for h in hs[::-1]])[::-1]  # Π_{i≥d}(1 − h_i)
        return 1.0 - tail
    fn = target_only_value if verifier in _DETERMINISTIC_OPTIMUM else token_value
    cum = [0.0] + [float(fn(_cut(tree, d), P, Q)) for d in range(1, depth + 1)]
    return np.diff(np.array(cum))


@one_renormalization_warning
def acceptance_profile(
    pairs: Any,
    shape: Any,
    verifier: str = "target_only",
    *,
    children: str | None = None,
    positions: int = 16,
    samples: int = 64,
    rng: Any = 0,
    progress: bool = False,
) -> AcceptanceProfile:
    """Per-depth acceptance rates of ``shape`` under ``verifier``, averaged along generated text.

    Parameters
    ----------
    pairs : list of (target, draft)
        Sequence models (``prefix -> next-token law``; e.g. ``llm.sequence_models(pair, prompt)``
        over prompts, or :func:`optaccept.tree.synthetic_pair`); one pair is accepted as well.
    shape : int, branching tuple, list of index paths or Shape
        The drafted tree; an int γ is a chain of γ tokens.
    verifier : {"target_only", "token", "block", "optimal", "token_optimal"}
        See the module docstring ("traversal" is refused).
    children : {"topk", "swor", "iid"}, optional
        How children are drafted (default "topk" for "target_only", "optimal" and
        "token_optimal", "iid" for "token" and "block").
    positions : int
        Positions of each text that are valued (the first token after the prompt is position 0).
    samples : int
        Drafted trees per position for sampled children (Rao–Blackwellised).
    rng : numpy.random.Generator or int
        Draws the texts (and the sampled trees).
    progress : bool
        A tqdm bar over pairs × positions.

    Returns
    -------
    AcceptanceProfile
        ``rates``, ``mean_accepted``, ``to_engine(name)`` and the rest (see the class).

    Examples
    --------
    >>> from optaccept import tree
    >>> pair = tree.synthetic_pair(6, rng=0)
    >>> prof = tree.acceptance_profile(pair, 3, "token", positions=4, samples=8, rng=0)
    >>> prof.rates.shape, prof.ok  # r_d = P(at least d drafted tokens accepted), d = 1, 2, 3
    ((3,), True)
    """
    from tqdm.auto import tqdm

    rng = check_rng(rng)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        if shape < 1:
            raise InputError(f"shape: a chain needs at least one token, got {shape}")
        shape = (1,) * int(shape)
    shp = as_shape(shape)
    check_choice("verifier", verifier, VERIFIERS)
    if verifier == "traversal":
        raise MethodError(
            "verifier 'traversal': its per-depth law is not computed (tree.accepted_tokens gives its mean)"
        )
    if children is None:
        children = "topk" if verifier in _DETERMINISTIC_OPTIMUM else "iid"
    children = check_children(children)
    if verifier in ("optimal", "token_optimal") and children != "topk":
        raise MethodError(
            f"verifier {verifier!r}: its profile is known on top-k trees (where target-only is optimal); "
            "use children='topk', or verifier='token' / 'target_only' for sampled children"
        )
    check_shaped(verifier, shp, children)
    positions = check_size(positions, "positions")
    samples = check_size(samples, "samples")
    if positions < 1 or samples < 1:
        raise InputError("positions, samples: must be at least 1")
    plist = _as_pairs(pairs)
    depth = shp.depth
    rates = np.zeros((len(plist), positions, depth))
    texts: list[tuple[int, ...]] = []
    bar = tqdm(total=len(plist) * positions, desc="positions", unit="pos", disable=not progress)
    for i, (target, draft) in enumerate(plist):
        Pc = as_model(target, "target").cached()
        Qc = as_model(draft, "draft").cached()
        if Pc(()).size != Qc(()).size:
            raise InputError(f"pairs[{i}]: the draft has {Qc(()).size} tokens, the target {Pc(()).size}")
        text: tuple[int, ...] = ()
        for t in range(positions):

            def P(u: Any, ctx: tuple[int, ...] = text, model: Any = Pc) -> np.ndarray:
                return model(ctx + tuple(u))

            def Q(u: Any, ctx: tuple[int, ...] = text, model: Any = Qc) -> np.ndarray:
                return model(ctx + tuple(u))

            if children == "topk":
                rates[i, t] = _tree_rates(topk_tree(Q, shp), P, Q, verifier, depth)
            else:
                acc = np.zeros(depth)
                for _ in range(samples):
                    acc += _tree_rates(sample_shaped(Q, shp, children, rng), P, Q, verifier, depth)
                rates[i, t] = acc / samples
            text = text + (draw(np.asarray(Pc(text), dtype=np.float64), rng),)
            bar.update(1)
        texts.append(text)
    bar.close()
    rates = np.clip(rates, 0.0, 1.0)
    mean_rates = np.minimum.accumulate(rates.mean(axis=(0, 1)))  # non-increasing up to round-off
    per_text = rates.sum(axis=2).mean(axis=1)
    R = per_text.size
    # clustered by text; one text gives no spread over texts (its positions are dependent):
    # the standard error is then unknown (None), never the 0 of a single cluster
    se = sample_std_err(per_text) if R > 1 else None
    method = "exact per position" if children == "topk" else f"Rao–Blackwellised ({samples} trees per position)"
    return AcceptanceProfile(
        rates=mean_rates,
        mean_accepted=float(mean_rates.sum()),
        std_err=se,
        by_position=rates.mean(axis=0),
        shape=shp,
        verifier=verifier,
        children=children,
        method=method,
        texts=R,
        positions=positions,
        details={"per_text_mean": per_text, "texts": texts},
    )
