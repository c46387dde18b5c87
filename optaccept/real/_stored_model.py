"""A sequence model answering from stored next-token laws (:class:`StoredModel`): the rows a
:class:`~optaccept.real.DraftTrees` file holds at a tree's nodes, replayed offline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["StoredModel"]


class StoredModel:
    """A sequence model replaying stored rows: ``model(prefix)`` -> float64 distribution.

    Defined only on the stored prefixes (token tuples after the prompt); any other
    prefix raises ``KeyError`` naming it.

    Parameters
    ----------
    rows : dict of tuple of int to array_like
        Prefix → next-token distribution.
    side : str
        ``"target"`` or ``"draft"``, for messages.
    where : str
        Where the rows come from (e.g. ``"tree 3"``), for messages.
    """

    def __init__(self, rows: dict[tuple[int, ...], np.ndarray], side: str = "model", where: str = "") -> None:
        self._rows = {tuple(int(t) for t in k): np.asarray(v, dtype=np.float64) for k, v in rows.items()}
        for v in self._rows.values():
            v.setflags(write=False)
        self.side = side
        self.where = where
        self.vocab_size = len(next(iter(self._rows.values()))) if self._rows else 0

    def __call__(self, prefix: Sequence[int]) -> np.ndarray:
        """The stored distribution after ``prefix`` (also ``next_token_probs``).

        Parameters
        ----------
        prefix : sequence of int
            Token ids after the prompt.

        Returns
        -------
        ndarray of float64, shape (vocab,)
            The stored row (read-only).

        Raises
        ------
        KeyError
            If ``prefix`` is not a stored node.
        """
        key = tuple(int(t) for t in prefix)
        try:
            return self._rows[key]
        except KeyError:
            raise KeyError(
                f"prefix {key}: not a node of the stored {self.side} rows ({self.where}); "
                "stored models answer only at their tree's nodes"
            ) from None

    @property
    def prefixes(self) -> list[tuple[int, ...]]:
        return list(self._rows)

    def __contains__(self, prefix: Sequence[int]) -> bool:
        return tuple(int(t) for t in prefix) in self._rows

    next_token_probs = __call__

    def batch_next_token_probs(self, prefixes: Sequence[Sequence[int]]) -> np.ndarray:
        """The stored distributions after several prefixes.

        Parameters
        ----------
        prefixes : sequence of sequence of int
            Stored prefixes.

        Returns
        -------
        ndarray of float64, shape (len(prefixes), vocab)
            One row per prefix.

        Raises
        ------
        KeyError
            If a prefix is not a stored node.
        """
        return np.stack([self(pr) for pr in prefixes])

    def __repr__(self) -> str:
        return f"StoredModel({self.side}, {len(self._rows)} prefixes, vocab {self.vocab_size}, {self.where})"
