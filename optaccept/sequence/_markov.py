"""Sequence models: a target and a draft model over whole sequences.

Two models are provided, both lossless-decoding settings of Yin et al.,
*A Theoretical Perspective for Speculative Decoding Algorithm* (NeurIPS 2024),
who write q for the target and p for the draft (here: p target, q draft).

* :class:`MarkovPair` -- target and draft are (possibly non-stationary) Markov
  chains over S states: the law of token t given the past is
  ``target[t - 1][x_{t-1}]`` (resp. ``draft[t - 1][x_{t-1}]``), and the prompt
  token x_0 has law ``initial``.
* :class:`PositionPair` -- per-position next-token laws ``target[t]``,
  ``draft[t]`` of shape (T, n) that do not depend on the earlier tokens, e.g.
  the next-token laws of two language models read along one fixed text.

Both expose the same private interface used by the exact dynamic programmes
and the Monte Carlo simulators: a context set of size C (the previous token for
a Markov pair, a single context for a position pair), the (C, n) laws of step
t, and whether the drawn token becomes the next context.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.validation import as_distribution, as_distribution_rows, check_rng

__all__ = ["MarkovPair", "PositionPair", "SequencePair"]


def _as_horizon(horizon: Any) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral):
        raise InputError(f"horizon: must be an integer, got {horizon!r}")
    horizon = int(horizon)
    if horizon < 1:
        raise InputError(f"horizon: must be at least 1, got {horizon}")
    return horizon


def _as_stochastic(x: Any, name: str, *, tol: float | None = None) -> np.ndarray:
    """Validate an array whose last axis holds probability vectors; return a read-only copy.

    The sum rule is optaccept's single one (``optaccept._lib.validation``); ``tol`` replaces its
    tolerance when given."""
    arr = as_distribution_rows(x, name, ndim=None, tol=tol)
    if not isinstance(arr, np.ndarray):  # a torch tensor, checked in its own dtype
        arr = _to_numpy(arr)
    arr.setflags(write=False)
    return arr


class SequencePair:
    """Common base of :class:`MarkovPair` and :class:`PositionPair` (no public constructor).

    Attributes
    ----------
    horizon : int
        T, the number of generated tokens.
    n : int
        Size of the token alphabet.
    """

    horizon: int
    n: int
    #: True when the drawn token becomes the next context (Markov); False for a single context.
    _markov: bool

    @property
    def contexts(self) -> int:
        """C, the number of contexts a step's laws depend on."""
        raise NotImplementedError

    def _initial_contexts(self) -> np.ndarray:
        """(C,) law of the context of the first generated token."""
        raise NotImplementedError

    def _laws(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """(target, draft) laws of step t = 0..T-1, each of shape (C, n)."""
        raise NotImplementedError

    def _next(self, nu: np.ndarray) -> np.ndarray:
        """Push a joint weight over (context, token, ...) to the next context axis."""
        if self._markov:
            return nu.sum(axis=0)
        return nu.sum(axis=(0, 1))[None, ...]


class MarkovPair(SequencePair):
    r"""Target and draft Markov chains over S states, sharing the prompt token.

    The target generates :math:`x_t \sim p_t(\cdot \mid x_{t-1})` = ``target[t-1][x_{t-1}]``
    and the draft :math:`x_t \sim q_t(\cdot \mid x_{t-1})` = ``draft[t-1][x_{t-1}]`` for
    t = 1..T, from a prompt token :math:`x_0 \sim` ``initial``.  This is the Markov
    abstraction of Yin et al. (NeurIPS 2024), whose target is called q and draft p.

    Parameters
    ----------
    initial : array_like, shape (S,)
        Law of the prompt token x_0.
    target, draft : array_like, shape (T, S, S) or (S, S)
        Transition arrays: row s of step t is the next-token law after token s.
        A 2-D array is a stationary chain and needs ``horizon``.
    horizon : int, optional
        T for stationary chains; if given with 3-D arrays it must equal their length.
    tol : float, optional
        Tolerance on row sums (default: the library's sum rule, n·2⁻²³);
        rows are then rescaled to sum exactly 1.

    Raises
    ------
    InputError
        Non-stochastic rows, negative or non-finite entries, shape mismatches, a
        horizon below 1, or a 2-D array without a horizon.

    Examples
    --------
    >>> from optaccept import sequence
    >>> chain = sequence.MarkovPair([1.0, 0.0], [[.5, .5], [.5, .5]], [[.8, .2], [.8, .2]], horizon=3)
    >>> chain.horizon
    3
    >>> round(sequence.expected_rejections(chain), 4)  # 3 steps of TV(p, q) = 0.3
    0.9
    """

    _markov = True

    def __init__(
        self,
        initial: Any,
        target: Any,
        draft: Any,
        *,
        horizon: int | None = None,
        tol: float | None = None,
    ) -> None:
        p = _as_stochastic(target, "target", tol=tol)
        q = _as_stochastic(draft, "draft", tol=tol)
        if p.ndim not in (2, 3):
            raise InputError(f"target: must have shape (T, S, S) or (S, S), got {p.shape}")
        if q.shape != p.shape:
            raise InputError(f"draft: shape {q.shape} does not match target's shape {p.shape}")
        if p.shape[-1] != p.shape[-2]:
            raise InputError(f"target: transition matrices must be square, got {p.shape}")
        s = p.shape[-1]
        init = as_distribution(initial, "initial", tol=tol)
        if init.size != s:
            raise InputError(f"initial: length {init.size} does not match the {s} states")
        if p.ndim == 2:
            if horizon is None:
                raise InputError("horizon: required when target and draft are (S, S) matrices")
            t = _as_horizon(horizon)
            p = np.broadcast_to(p, (t, s, s))
            q = np.broadcast_to(q, (t, s, s))
        else:
            t = p.shape[0]
            if horizon is not None and _as_horizon(horizon) != t:
                raise InputError(f"horizon: {horizon} does not match the {t} steps of target")
        self.initial = init
        self.target = p
        self.draft = q
        self.horizon = t
        self.n = s

    @property
    def states(self) -> int:
        """S, the number of states (tokens)."""
        return self.n

    @property
    def contexts(self) -> int:
        return self.n

    def _initial_contexts(self) -> np.ndarray:
        return self.initial

    def _laws(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        return self.target[t], self.draft[t]

    def marginals(self) -> np.ndarray:
        """(T + 1, S) laws of x_0, ..., x_T under the target chain.

        Returns
        -------
        ndarray of float64, shape (T + 1, S)
            Row t is the law of x_t when every token is drawn from the target.
        """
        out = np.empty((self.horizon + 1, self.n))
        out[0] = self.initial
        for t in range(self.horizon):
            out[t + 1] = out[t] @ self.target[t]
        return out

    @classmethod
    def random(
        cls,
        states: int = 7,
        horizon: int = 50,
        rng: Any = None,
        *,
        stationary: bool = False,
        concentration: float = 1.0,
    ) -> MarkovPair:
        """A random pair: every row of target, draft and the initial law ~ Dirichlet(concentration).

        Parameters
        ----------
        states, horizon : int
            S and T.
        rng : numpy.random.Generator or int or None
            Source of randomness (an int is a seed).
        stationary : bool
            One (S, S) matrix per model instead of one per step.
        concentration : float
            Dirichlet parameter (small values give peaked rows).

        Returns
        -------
        MarkovPair
            The random pair, with rows checked to sum 1 within 1e-6.

        Raises
        ------
        InputError
            If ``states`` or ``horizon`` is not a positive integer, ``concentration`` is not
            positive, or ``rng`` is neither a Generator, a seed nor None.

        Examples
        --------
        >>> import numpy as np
        >>> chain = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(10))
        >>> chain.target.shape
        (50, 7, 7)
        """
        if isinstance(states, bool) or not isinstance(states, numbers.Integral) or states < 1:
            raise InputError(f"states: must be an integer >= 1, got {states!r}")
        horizon = _as_horizon(horizon)
        if not (np.isfinite(concentration) and concentration > 0):
            raise InputError(f"concentration: must be a positive number, got {concentration!r}")
        gen = check_rng(rng)
        alpha = np.full(int(states), float(concentration))
        steps = 1 if stationary else horizon
        init = gen.dirichlet(alpha)
        p = gen.dirichlet(alpha, size=(steps, int(states)))
        q = gen.dirichlet(alpha, size=(steps, int(states)))
        if stationary:
            return cls(init, p[0], q[0], horizon=horizon, tol=1e-6)
        return cls(init, p, q, tol=1e-6)

    @staticmethod
    def from_distributions(dists: Any, *, tol: float | None = None) -> PositionPair:
        """Per-position pair from any object with ``.target`` and ``.draft`` arrays of shape
        (positions, vocab), e.g. the language-model ``Distributions``.

        Next-token laws of a language model depend on the whole prefix, not on one
        previous token, so the result is a :class:`PositionPair`, not a Markov pair.

        Parameters
        ----------
        dists : object
            Anything with ``.target`` and ``.draft`` arrays of shape (positions, vocab).
        tol : float, optional
            Tolerance on row sums, as in :class:`PositionPair`.

        Returns
        -------
        PositionPair
            Row t of each array is the law of token t.

        Raises
        ------
        InputError
            If ``dists`` lacks ``.target`` or ``.draft``, or their rows are not distributions
            of the same shape.
        """
        return PositionPair.from_distributions(dists, tol=tol)

    def __repr__(self) -> str:
        return f"MarkovPair(states={self.n}, horizon={self.horizon})"


class PositionPair(SequencePair):
    r"""Per-position target and draft next-token laws that ignore earlier tokens.

    Token t is drawn from :math:`p_t` = ``target[t]`` (resp. :math:`q_t` = ``draft[t]``)
    whatever came before.  Typical use: the next-token laws of a large and a small
    language model read along one fixed text, where Yin et al.'s Theorem 1 reads
    :math:`E[N_{rej}] = \sum_t \mathrm{TV}(p_t, q_t)`.

    Parameters
    ----------
    target, draft : array_like, shape (T, n)
        Row t is the law of token t.  Torch tensors on the CPU are accepted.
    tol : float, optional
        Tolerance on row sums (default: the library's sum rule, n·2⁻²³, which
        covers float32 softmax output); rows are then rescaled to sum exactly 1.

    Examples
    --------
    >>> from optaccept import sequence
    >>> pair = sequence.PositionPair([[.5, .5], [.9, .1]], [[.8, .2], [.9, .1]])
    >>> round(sequence.expected_rejections(pair), 4)  # TV 0.3 at position 0, 0 at position 1
    0.3
    """

    _markov = False

    def __init__(self, target: Any, draft: Any, *, tol: float | None = None) -> None:
        p = _as_stochastic(target, "target", tol=tol)  # torch tensors checked in their own dtype
        q = _as_stochastic(draft, "draft", tol=tol)
        if p.ndim != 2:
            raise InputError(f"target: must have shape (positions, vocabulary), got {p.shape}")
        if q.shape != p.shape:
            raise InputError(f"draft: shape {q.shape} does not match target's shape {p.shape}")
        self.target = p
        self.draft = q
        self.horizon = p.shape[0]
        self.n = p.shape[1]

    @property
    def contexts(self) -> int:
        return 1

    def _initial_contexts(self) -> np.ndarray:
        return np.ones(1)

    def _laws(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        return self.target[t : t + 1], self.draft[t : t + 1]

    @classmethod
    def from_distributions(cls, dists: Any, *, tol: float | None = None) -> PositionPair:
        """Build from any object with ``.target`` and ``.draft`` arrays of shape (positions, vocab).

        Parameters
        ----------
        dists : object
            Anything with ``.target`` and ``.draft`` arrays of shape (positions, vocab), e.g.
            the language-model ``Distributions``.
        tol : float, optional
            Tolerance on row sums, as in the constructor.

        Returns
        -------
        PositionPair
            Row t of each array is the law of token t.

        Raises
        ------
        InputError
            If ``dists`` lacks ``.target`` or ``.draft``, or their rows are not distributions
            of the same shape.
        """
        try:
            target, draft = dists.target, dists.draft
        except AttributeError:
            raise InputError("dists: needs .target and .draft arrays of shape (positions, vocab)") from None
        return cls(target, draft, tol=tol)

    def __repr__(self) -> str:
        return f"PositionPair(positions={self.horizon}, vocabulary={self.n})"


def _to_numpy(x: Any) -> Any:
    """Detach a torch tensor (without importing torch); leave anything else alone."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if hasattr(x, "double"):
            x = x.double()
        return x.numpy()
    return x
