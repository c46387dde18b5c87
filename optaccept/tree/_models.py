"""Sequence models: the one protocol every tree computation reads its laws through.

A *sequence model* maps a prefix — a tuple of token ids generated after the
prompt, ``()`` for the first token — to the law of the next token.  Accepted forms:
* a callable ``prefix -> probabilities`` (numpy array, list, tuple, torch tensor;
  Fractions give the exact path);
* an object with a ``next_token_probs(prefix)`` method (or ``probs(prefix)``),
  e.g. a language-model wrapper or a cache of stored trees; if it also has
  ``batch_next_token_probs(prefixes) -> (len(prefixes), n)`` the target's laws at all
  internal nodes of a sampled tree are read in one call (a tree-attention pass);
* :class:`optaccept.sequence.MarkovPair` and :class:`optaccept.sequence.PositionPair`
  (both models at once, see :func:`model_pair`).

Every law is checked once (non-negative, sums to 1 under the house rule of
``optaccept._lib.validation``) and then cached per prefix by :class:`Model.cached`.

**Sampling processors** (:func:`with_sampling`).  Engines do not sample the model's law p but
a processed one: temperature, then top-k, top-p and min-p truncations, each followed by a
renormalisation, in an order that depends on the engine.  :class:`_Processing` is that
transform of a law, one implementation for the tree functions (their ``temperature``), the
audits and :func:`optaccept.audit.torch_lm`; its filters read their few array operations from a
namespace (:class:`_NumpyOps` here), so that ``optaccept.llm``'s ``Warp`` runs the very same
filters on torch logits at vocabulary scale; the rules and the engines' orders are stated in
docs/engines.md §6 and tested against plain-Python sorted loops in Fractions and against
torch transcriptions of the engines' own code (tests/tree/test_sampling_processors.py).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._errors import InputError
from .._lib.validation import SUM_TOL, as_distribution, as_exact_distribution, check_choice, is_exact_input, seed_of

__all__ = ["SequenceModel", "Model", "as_model", "model_pair", "with_sampling"]

Prefix = tuple[int, ...]


@runtime_checkable
class SequenceModel(Protocol):
    """Anything called with a prefix (tuple of token ids) that returns the next-token law.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> isinstance(p, tree.SequenceModel)  # any callable prefix -> next-token law
    True
    >>> p(())  # the law of the first token
    [Fraction(1, 3), Fraction(2, 3)]
    """

    def __call__(self, prefix: Prefix) -> Any: ...


class Model:
    """A validated sequence model (see the module docstring).

    Attributes
    ----------
    n : int or None
        Vocabulary size (known after the first call).
    exact : bool or None
        True when the model returns Fractions (known after the first call).
    name : str
        Argument name used in error messages.
    """

    def __init__(
        self,
        fn: Callable[[Prefix], Any],
        name: str,
        *,
        processing: tuple[_Processing, ...] = (),
        batch: Callable | None = None,
    ) -> None:
        self._fn = fn
        self._batch = batch
        self.name = name
        self.n: int | None = None
        self.exact: bool | None = None
        self.processing = tuple(pr for pr in processing if not pr.identity)

    def __call__(self, prefix: Prefix) -> np.ndarray:
        """Next-token law after ``prefix``: float64 array, or object array of Fractions."""
        prefix = tuple(int(t) for t in prefix)
        try:
            raw = self._fn(prefix)
        except InputError:
            raise
        except (KeyError, IndexError) as exc:
            raise InputError(f"{self.name}: no next-token law for prefix {prefix} ({exc})") from None
        return self._check(raw, prefix)

    def _check(self, raw: Any, prefix: Prefix) -> np.ndarray:
        where = f"{self.name}{list(prefix)}"
        vec = _fast_float_law(raw)
        if vec is not None:
            exact = False
        elif is_exact_input(raw):
            vec = np.array(as_exact_distribution(raw, where), dtype=object)
            exact = True
        else:
            vec = as_distribution(raw, where)
            exact = False
        if self.n is None:
            self.n, self.exact = vec.size, exact
        elif vec.size != self.n:
            raise InputError(f"{where}: has {vec.size} tokens, earlier laws had {self.n}")
        elif exact != self.exact:
            raise InputError(f"{where}: mixes Fractions and floats across prefixes")
        for pr in self.processing:
            vec = pr(vec)
        return vec

    def cached(self) -> _Cached:
        """The model with a private per-prefix cache (drop it to free the memory).

        Returns
        -------
        callable
            ``prefix -> law``, each law read from the model once.
        """
        return _Cached(self)

    def prefetch_into(self, memo: dict[Prefix, np.ndarray], prefixes: list[Prefix]) -> None:
        """Fill ``memo`` for ``prefixes`` with one ``batch_next_token_probs`` call when the
        wrapped object has that method (e.g. one forward pass with a tree attention mask).

        Parameters
        ----------
        memo : dict of tuple of int to ndarray
            The cache filled, prefix → law (prefixes already in it are skipped).
        prefixes : list of tuple of int
            The prefixes whose laws are read.

        Raises
        ------
        InputError
            If the batched call returns a number of laws other than the prefixes asked, or
            a law fails the model's checks.
        """
        todo = [tuple(int(t) for t in u) for u in prefixes]
        todo = [u for u in dict.fromkeys(todo) if u not in memo]
        if not todo:
            return
        if self._batch is None:
            for u in todo:
                memo[u] = self(u)
            return
        rows = self._batch(todo)
        if len(rows) != len(todo):
            raise InputError(f"{self.name}: batch_next_token_probs returned {len(rows)} laws for {len(todo)} prefixes")
        for u, row in zip(todo, rows):
            memo[u] = self._check(row, u)

    def __repr__(self) -> str:
        return f"Model({self.name}, n={self.n})"


def _fast_float_law(raw: Any) -> np.ndarray | None:
    """A float64 vector that sums to 1 within float64 rounding, finite and non-negative: the
    read-only copy ``as_distribution`` would return (rescaled to sum exactly 1), at a fraction
    of its cost; None for anything else (which takes the full check)."""
    if type(raw) is not np.ndarray or raw.dtype != np.float64 or raw.ndim != 1 or not raw.size:
        return None
    total = float(raw.sum())
    if not abs(total - 1.0) <= SUM_TOL or not float(raw.min()) >= 0:  # NaN fails both ways
        return None
    vec = raw / total if total != 1.0 else raw.copy()
    vec.setflags(write=False)
    return vec


class _Cached:
    """A :class:`Model` with a private per-prefix cache; call it with a prefix."""

    __slots__ = ("model", "memo")

    def __init__(self, model: Model) -> None:
        self.model = model
        self.memo: dict[Prefix, np.ndarray] = {}

    def __call__(self, prefix: Prefix) -> np.ndarray:
        out = self.memo.get(prefix)
        if out is None:
            out = self.memo[prefix] = self.model(prefix)
        return out

    def prefetch(self, prefixes: list[Prefix]) -> None:
        """Read the laws of ``prefixes`` at once (one batched call when the model has one)."""
        self.model.prefetch_into(self.memo, prefixes)


#: The engines whose order of sampling processors :func:`with_sampling` reproduces.
ENGINES = ("transformers", "vllm", "sglang")


def _tempered(vec: np.ndarray, temperature: float) -> np.ndarray:
    """p^(1/T), renormalised (float; zeros stay zeros)."""
    v = np.asarray(vec, dtype=np.float64)
    out = np.zeros_like(v)
    pos = v > 0
    logv = np.log(v[pos]) / temperature
    out[pos] = np.exp(logv - logv.max())
    return out / out.sum()


class _NumpyOps:
    """The few array operations the filters below need, along the last axis, for numpy arrays
    (float64, or objects holding Fractions).  ``optaccept.llm.Warp`` passes the same operations
    for torch tensors, so the order and boundary rules are written once, in the filters."""

    where = staticmethod(np.where)

    @staticmethod
    def zero(v: np.ndarray) -> Any:
        return Fraction(0) if v.dtype == object else v.dtype.type(0)

    @staticmethod
    def sort_desc(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-v, axis=-1, kind="stable")
        return np.take_along_axis(v, order, axis=-1), order

    @staticmethod
    def kth_largest(v: np.ndarray, k: int) -> np.ndarray:
        n = v.shape[-1]
        return np.sort(v, axis=-1)[..., n - k : n - k + 1]

    @staticmethod
    def cumsum(v: np.ndarray) -> np.ndarray:
        return np.cumsum(v, axis=-1)

    @staticmethod
    def cummax(v: np.ndarray) -> np.ndarray:
        return np.maximum.accumulate(v, axis=-1)

    @staticmethod
    def take(v: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.take_along_axis(v, idx, axis=-1)

    @staticmethod
    def unsort(v_sorted: np.ndarray, order: np.ndarray) -> np.ndarray:
        out = np.empty_like(v_sorted)
        np.put_along_axis(out, order, v_sorted, axis=-1)
        return out

    @staticmethod
    def positions(v: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.arange(v.shape[-1]), v.shape)

    @staticmethod
    def all_true(v: np.ndarray) -> np.ndarray:
        return np.ones(v.shape, dtype=bool)

    @staticmethod
    def amax(v: np.ndarray) -> np.ndarray:
        return v.max(axis=-1, keepdims=True)

    @staticmethod
    def total(v: np.ndarray) -> np.ndarray:
        return v.sum(axis=-1, keepdims=True)


# The filters: each keeps a set of tokens of a law v (any scale, laws along the last axis) and
# reads the array operations from ``xp`` (:class:`_NumpyOps`, or the torch ones of llm.Warp).


def _keep_top_k(xp: Any, v: Any, k: int) -> Any:
    """Every token at least as likely as the k-th most likely (ties at the boundary kept)."""
    if k >= v.shape[-1]:
        return xp.all_true(v)
    return v >= xp.kth_largest(v, k)


def _keep_top_p(xp: Any, v: Any, p: Any, inclusive: bool) -> Any:
    """Tokens whose mass strictly above them (the tokens strictly more likely) is < p·total
    (``inclusive``: ≤ p·total); tied tokens share one mass above, so ties are kept together."""
    s, order = xp.sort_desc(v)
    before = xp.cumsum(s) - s
    new = xp.all_true(s)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    idx = xp.positions(s)
    first = xp.cummax(xp.where(new, idx, 0))  # where each run of tied values starts
    above = xp.take(before, first)
    bound = p * xp.total(v)
    return xp.unsort((above <= bound) if inclusive else (above < bound), order)


def _keep_min_p(xp: Any, v: Any, m: Any) -> Any:
    """Tokens at least ``m`` times as likely as the most likely one."""
    return v >= m * xp.amax(v)


def _renormalised(xp: Any, v: Any, keep: Any) -> Any:
    out = xp.where(keep, v, xp.zero(v))
    return out / xp.total(out)


@dataclass(frozen=True)
class _Processing:
    """Temperature, top-k, top-p and min-p applied to a law, in an engine's order
    (:func:`with_sampling` states the rules)."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    engine: str = "transformers"

    def __post_init__(self) -> None:
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not (t >= 0 and math.isfinite(t)):
            raise InputError(f"temperature: must be a number >= 0 (0: greedy), got {t!r}")
        k = self.top_k
        if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
            raise InputError(f"top_k: must be an integer >= 1 or None (no top-k), got {k!r}")
        p = self.top_p
        if p is not None and (isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < p <= 1):
            raise InputError(f"top_p: must lie in (0, 1] or be None (no top-p), got {p!r}")
        m = self.min_p
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Real) or not 0 <= m <= 1):
            raise InputError(f"min_p: must lie in [0, 1] or be None (no min-p), got {m!r}")
        check_choice("engine", self.engine, ENGINES)

    @property
    def identity(self) -> bool:
        """True when the transform leaves every law as it is."""
        return (
            self.temperature == 1 and self.top_k is None and (self.top_p is None or self.top_p == 1) and not self.min_p
        )

    def __call__(self, vec: np.ndarray) -> np.ndarray:
        exact = vec.dtype == object
        if self.temperature == 0:  # greedy: the first most likely token (torch.argmax's rule)
            out = np.zeros(vec.size, dtype=object) if exact else np.zeros(vec.size)
            out[:] = Fraction(0) if exact else 0.0
            out[int(np.argmax(vec))] = Fraction(1) if exact else 1.0
            return out
        v = vec if self.temperature == 1 else _tempered(vec, self.temperature)
        return self.filtered(v, _NumpyOps)

    def filtered(self, v: Any, xp: Any) -> Any:
        """Top-k, top-p and min-p of the tempered laws ``v`` (along the last axis), in the
        engine's order: the one definition of the order and boundary rules, for numpy arrays
        (``xp`` = :class:`_NumpyOps`) and torch tensors (``llm.Warp``)."""
        exact = isinstance(v, np.ndarray) and v.dtype == object
        num = Fraction if exact else float
        k, p, m = self.top_k, self.top_p, self.min_p
        p = None if p is None or p == 1 else num(p)
        m = None if not m else num(m)
        if self.engine == "sglang":  # every filter on the tempered law, then their intersection
            keep = xp.all_true(v)
            if k is not None:
                keep &= _keep_top_k(xp, v, k)
            if p is not None:
                keep &= _keep_top_p(xp, v, p, inclusive=True)
            if m is not None:
                keep &= _keep_min_p(xp, v, m)
            return _renormalised(xp, v, keep)
        steps = ("k", "p", "m") if self.engine == "transformers" else ("m", "k", "p")
        for step in steps:
            if step == "k" and k is not None:
                v = _renormalised(xp, v, _keep_top_k(xp, v, k))
            elif step == "p" and p is not None:
                v = _renormalised(xp, v, _keep_top_p(xp, v, p, inclusive=False))
            elif step == "m" and m is not None:
                v = _renormalised(xp, v, _keep_min_p(xp, v, m))
        return v


def as_model(obj: Any, name: str, *, temperature: float | None = None) -> Model:
    """Wrap a sequence model (callable, or object with ``next_token_probs``/``probs``).

    Parameters
    ----------
    obj : callable, object with ``next_token_probs`` or ``probs``, or Model
        The sequence model, ``prefix -> next-token probabilities``.
    name : str
        The name error messages give it (e.g. ``"target"``).
    temperature : float, optional
        Apply p ∝ p^(1/T) to its laws (after any processing ``obj`` already has).

    Returns
    -------
    Model
        The checked model (``obj`` itself when it is a Model and no temperature is given).

    Raises
    ------
    InputError
        If ``obj`` is not a sequence model or ``temperature`` is not positive.
    """
    extra: tuple[_Processing, ...] = ()
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
            raise InputError(f"temperature: must be a positive number, got {temperature!r}")
        extra = (_Processing(temperature=temperature),)
    if isinstance(obj, Model):
        if not extra or extra[0].identity:
            return obj
        return Model(obj._fn, obj.name, processing=obj.processing + extra, batch=obj._batch)
    batch = getattr(obj, "batch_next_token_probs", None)
    batch = batch if callable(batch) else None
    for meth in ("next_token_probs", "probs"):
        fn = getattr(obj, meth, None)
        if callable(fn):
            return Model(fn, name, processing=extra, batch=batch)
    if callable(obj):
        return Model(obj, name, processing=extra, batch=batch)
    raise InputError(
        f"{name}: must be a sequence model (a callable prefix -> probabilities, or an object "
        f"with next_token_probs(prefix)), got {type(obj).__name__}"
    )


def model_pair(pair: Any, *, prompt: int | None = None) -> tuple[Callable, Callable]:
    """(target, draft) callables of a :class:`~optaccept.sequence.MarkovPair` or
    :class:`~optaccept.sequence.PositionPair`.

    For a Markov pair the step starts after the prompt token ``prompt`` (a state);
    the law of token t + 1 of the step is ``target[t][last token]``.  For a position
    pair token t of the step has law ``target[t]`` whatever came before.

    Parameters
    ----------
    pair : MarkovPair or PositionPair
        The target and draft sequence models.
    prompt : int, optional
        For a Markov pair: the state the step starts from (required).

    Returns
    -------
    target, draft : callable
        ``prefix -> next-token probabilities``; a prefix beyond the pair's horizon raises
        :class:`InputError`.

    Raises
    ------
    InputError
        If ``pair`` is neither pair, or a Markov pair comes without a valid ``prompt``.

    Examples
    --------
    >>> from optaccept import sequence, tree
    >>> pair = sequence.PositionPair([[.5, .5], [.9, .1]], [[.8, .2], [.9, .1]])
    >>> target, draft = tree.model_pair(pair)
    >>> target(()).tolist(), draft((0,)).tolist()  # position 0, then position 1
    ([0.5, 0.5], [0.9, 0.1])
    >>> res = tree.accepted_tokens(target, draft, tree.TreeDraftLaw(length=2), verifier="token")
    >>> round(float(res.value), 4)  # 0.7 + 0.7 * 1
    1.4
    """

    from ..sequence import MarkovPair, PositionPair  # (tqdm): optaccept.tree loads without it

    if isinstance(pair, MarkovPair):
        if prompt is None:
            raise InputError("prompt: a Markov pair needs the prompt state (an integer) the step starts from")
        s = int(prompt)
        if not 0 <= s < pair.n:
            raise InputError(f"prompt: must be a state in 0..{pair.n - 1}, got {prompt!r}")

        def law(arr: np.ndarray) -> Callable:
            def f(prefix: Prefix) -> np.ndarray:
                t = len(prefix)
                if t >= pair.horizon:
                    raise InputError(f"length: the Markov pair has only {pair.horizon} steps")
                last = prefix[-1] if prefix else s
                return arr[t][last]

            return f

        return law(pair.target), law(pair.draft)
    if isinstance(pair, PositionPair):

        def plaw(arr: np.ndarray) -> Callable:
            def f(prefix: Prefix) -> np.ndarray:
                if len(prefix) >= pair.horizon:
                    raise InputError(f"length: the position pair has only {pair.horizon} positions")
                return arr[len(prefix)]

            return f

        return plaw(pair.target), plaw(pair.draft)
    raise InputError(f"pair: must be a MarkovPair or a PositionPair, got {type(pair).__name__}")


def with_sampling(
    model: Any,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    engine: str = "transformers",
    name: str = "model",
) -> Model:
    """``model`` as an engine samples it: its laws after temperature, top-k, top-p and min-p,
    in the engine's order (docs/engines.md §6).

    Each filter keeps a set of tokens and renormalises:

    * temperature T: p ∝ p^(1/T); T = 0 is greedy decoding, all the mass on the first most
      likely token (the lowest id among ties, as ``torch.argmax``);
    * top-k: the tokens at least as likely as the k-th most likely (every token tied with it
      kept, as transformers and vLLM compare with the k-th value; SGLang keeps exactly k by its
      sort);
    * top-p: the tokens whose mass strictly above them (the tokens strictly more likely) is
      below p — transformers and vLLM keep ``above < p``, SGLang ``above ≤ p``; tied tokens
      share that mass, so they are kept or dropped together (an engine's sort may split them);
    * min-p: the tokens at least ``min_p`` times as likely as the most likely one.

    Orders: ``"transformers"`` (``generate``'s warpers) T → top-k → top-p → min-p, each on the
    law the previous step left; ``"vllm"`` T → min-p → top-k → top-p, each on the previous
    step's law; ``"sglang"`` every filter on the tempered law, then their intersection.
    Fractions at T = 1 stay exact; a temperature makes floats.  Applied to a model already
    processed, the new filters act after the old ones (the transforms compose).  The same
    filters, run on torch logits, make the laws of ``optaccept.llm``'s ``ModelPair`` (its
    ``Warp``).

    Parameters
    ----------
    model : sequence model
        ``prefix -> next-token probabilities`` (a :class:`Model` included).
    temperature : float
        T ≥ 0 (1: the law itself; 0: greedy).
    top_k : int, optional
        k ≥ 1 (None: no top-k; the engines' 0 or −1 "off" is None here).
    top_p : float, optional
        p in (0, 1] (None or 1: no top-p).
    min_p : float, optional
        In [0, 1] (None or 0: no min-p).
    engine : {"transformers", "vllm", "sglang"}
        Whose order and boundary rules.
    name : str
        The name error messages give the model.

    Returns
    -------
    Model
        The processed model.

    Raises
    ------
    InputError
        If ``model`` is not a sequence model or an argument is out of its range.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 2), F(1, 4), F(1, 8), F(1, 8)]
    >>> tree.with_sampling(p, top_k=2)(()).tolist()  # the two most likely, renormalised
    [Fraction(2, 3), Fraction(1, 3), Fraction(0, 1), Fraction(0, 1)]
    >>> tree.with_sampling(p, top_k=3)(()).tolist()  # a tie at the 3rd place: both kept
    [Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8)]
    >>> tree.with_sampling(p, top_p=0.75)(()).tolist()  # mass above the 1/4 token is 1/2 < 3/4
    [Fraction(2, 3), Fraction(1, 3), Fraction(0, 1), Fraction(0, 1)]
    >>> [round(float(x), 4) for x in tree.with_sampling(p, temperature=0.5)(())]  # p², renormalised
    [0.7273, 0.1818, 0.0455, 0.0455]
    >>> tree.with_sampling(p, min_p=0.5)(()).tolist()  # at least half as likely as the first
    [Fraction(2, 3), Fraction(1, 3), Fraction(0, 1), Fraction(0, 1)]
    """
    proc = _Processing(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p, engine=engine)
    base = as_model(model, name)
    return Model(base._fn, base.name, processing=base.processing + (proc,), batch=base._batch)


class _Synthetic:
    """Picklable random sequence model: the logits after a prefix are a deterministic
    function of (seed, prefix); the draft adds ``noise`` × independent normals."""

    def __init__(self, n: int, seed: int, scale: float, noise: float, role: int) -> None:
        self.n, self.seed, self.scale, self.noise, self.role = n, seed, scale, noise, role

    def __call__(self, prefix: Prefix) -> np.ndarray:
        base = np.random.default_rng([self.seed, 0, len(prefix), *prefix]).standard_normal(self.n) * self.scale
        if self.role == 1:
            base = base + self.noise * np.random.default_rng([self.seed, 1, len(prefix), *prefix]).standard_normal(
                self.n
            )
        base = np.exp(base - base.max())
        return base / base.sum()


def synthetic_pair(n: int, *, rng: Any = 0, scale: float = 2.0, noise: float = 1.0) -> tuple[Callable, Callable]:
    """A random (target, draft) pair of sequence models over ``n`` tokens, for tests and
    benchmarks: target logits ~ scale·N(0, 1) i.i.d. per prefix, draft logits = target's
    + noise·N(0, 1).  Deterministic in (seed, prefix); picklable (works with joblib).

    Parameters
    ----------
    n : int
        Vocabulary size, at least 1.
    rng : int or numpy.random.Generator
        Seed of the pair.
    scale : float
        Standard deviation of the target's logits.
    noise : float
        Standard deviation of the draft's extra logit noise.

    Returns
    -------
    target, draft : callable
        ``prefix -> next-token probabilities`` over ``n`` tokens.

    Raises
    ------
    InputError
        If ``n`` is not a positive integer.

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import tree
    >>> target, draft = tree.synthetic_pair(6, rng=0)
    >>> np.round(target(()), 3), round(float(target((2,)).sum()), 12)
    (array([0.138, 0.083, 0.387, 0.133, 0.037, 0.222]), 1.0)
    >>> np.array_equal(target((1, 2)), tree.synthetic_pair(6, rng=0)[0]((1, 2)))  # fixed by (seed, prefix)
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n: must be an integer >= 1, got {n!r}")
    seed = seed_of(rng)
    return _Synthetic(int(n), seed, scale, noise, 0), _Synthetic(int(n), seed, scale, noise, 1)
