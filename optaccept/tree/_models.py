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
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._errors import InputError
from .._lib.validation import as_distribution, as_exact_distribution, is_exact_input, seed_of

__all__ = ["SequenceModel", "Model", "as_model", "model_pair", "with_temperature"]

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
        self, fn: Callable[[Prefix], Any], name: str, *, temperature: float | None = None, batch: Callable | None = None
    ) -> None:
        self._fn = fn
        self._batch = batch
        self.name = name
        self.n: int | None = None
        self.exact: bool | None = None
        self.temperature = temperature

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
        if is_exact_input(raw):
            vec = np.array(as_exact_distribution(raw, where), dtype=object)
            exact = True
        else:
            vec = as_distribution(raw, where)
            exact = False
        if self.temperature is not None and self.temperature != 1:
            vec = _tempered(vec, self.temperature)
        if self.n is None:
            self.n, self.exact = vec.size, exact
        elif vec.size != self.n:
            raise InputError(f"{where}: has {vec.size} tokens, earlier laws had {self.n}")
        elif exact != self.exact:
            raise InputError(f"{where}: mixes Fractions and floats across prefixes")
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


def _tempered(vec: np.ndarray, temperature: float) -> np.ndarray:
    """p^(1/T), renormalised (float; zeros stay zeros)."""
    v = np.asarray(vec, dtype=np.float64)
    out = np.zeros_like(v)
    pos = v > 0
    logv = np.log(v[pos]) / temperature
    out[pos] = np.exp(logv - logv.max())
    return out / out.sum()


def as_model(obj: Any, name: str, *, temperature: float | None = None) -> Model:
    """Wrap a sequence model (callable, or object with ``next_token_probs``/``probs``).

    Parameters
    ----------
    obj : callable, object with ``next_token_probs`` or ``probs``, or Model
        The sequence model, ``prefix -> next-token probabilities``.
    name : str
        The name error messages give it (e.g. ``"target"``).
    temperature : float, optional
        Apply p ∝ p^(1/T) to its laws.

    Returns
    -------
    Model
        The checked model (``obj`` itself when it is a Model at the same temperature).

    Raises
    ------
    InputError
        If ``obj`` is not a sequence model or ``temperature`` is not positive.
    """
    if isinstance(obj, Model):
        if temperature is None or temperature == obj.temperature:
            return obj
        return Model(obj._fn, obj.name, temperature=temperature, batch=obj._batch)
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
            raise InputError(f"temperature: must be a positive number, got {temperature!r}")
    batch = getattr(obj, "batch_next_token_probs", None)
    batch = batch if callable(batch) else None
    for meth in ("next_token_probs", "probs"):
        fn = getattr(obj, meth, None)
        if callable(fn):
            return Model(fn, name, temperature=temperature, batch=batch)
    if callable(obj):
        return Model(obj, name, temperature=temperature, batch=batch)
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


def with_temperature(model: Any, temperature: float, name: str = "model") -> Model:
    """``model`` with its laws raised to 1/temperature and renormalised.

    Parameters
    ----------
    model : sequence model
        ``prefix -> next-token probabilities``.
    temperature : float
        T > 0.
    name : str
        The name error messages give the model.

    Returns
    -------
    Model
        The tempered model.

    Raises
    ------
    InputError
        If ``model`` is not a sequence model or ``temperature`` is not positive.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> cold = tree.with_temperature(p, 0.5)  # laws raised to 1/0.5 = 2, renormalised: (1, 4) / 5
    >>> [round(float(x), 4) for x in cold(())]
    [0.2, 0.8]
    """
    return as_model(model, name, temperature=temperature)


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
