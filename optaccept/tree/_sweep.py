"""Sweeps over temperatures × draft laws (k chains of a length, :class:`TreeDraftLaw`) × verifiers,
run through joblib.

Each grid point (all verifiers of one source, temperature, k, length and draft law)
is one independent task handed to :class:`joblib.Parallel`, so the
sweep runs wherever joblib's active backend runs it: processes on this machine by
default (``n_jobs``), or a Dask or Ray cluster with no code change::

    import joblib
    from dask.distributed import Client          # or: from ray.util.joblib import register_ray
    client = Client("scheduler-address:8786")    #     register_ray()
    with joblib.parallel_backend("dask"):        #     joblib.parallel_backend("ray")
        laws = [tree.TreeDraftLaw(length=L, k=k) for k in (1, 2, 4) for L in (1, 2, 3)]
        rows = tree.sweep(sources, drafts=laws, samples=10_000, rng=0)

Sources are loaded inside the task (a file path travels, not its arrays).
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.validation import one_renormalization_warning, seed_of
from ._api import accepted_tokens
from ._checks import PER_TREE, check_verifier
from ._draft_law import TreeDraftLaw
from ._sampling import sample_accepted_tokens

__all__ = ["sweep"]


def _as_pair(source: Any) -> Any:
    """A sweep source that is not a path as something :func:`accepted_tokens` takes as
    ``target`` (with ``draft``): a (target, draft) pair of sequence models or a
    Markov/position pair."""
    if isinstance(source, tuple) and len(source) == 2:
        return source
    return (source, None)


def _task(
    name: str,
    source: Any,
    loader: Callable | None,
    point: dict[str, Any],
    verifiers: tuple[str, ...],
    samples: int | None,
    seed: int,
    max_trees: int,
) -> list[dict[str, Any]]:
    """One grid point, every verifier (sampled verifiers share the same trees)."""

    if isinstance(source, (str, os.PathLike)):
        target, draft = loader(source, positions=point["length"] + 1)
    else:
        target, draft = _as_pair(source)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for v in verifiers:
        row = {"source": name, **point, "verifier": v}
        try:
            check_verifier(v, point["k"], point["drafts"])
            if samples is not None and v not in PER_TREE:
                raise MethodError(f"verifier {v!r} has no sampled estimate (exact laws only)")
        except MethodError as exc:
            rows[v] = {**row, "value": None, "std_err": None, "method": None, "skipped": str(exc)}
            continue
        todo.append(v)
        rows[v] = row
    if samples is None:
        for v in todo:
            r = accepted_tokens(
                target,
                draft,
                _law_of(point),
                v,
                temperature=point["temperature"],
                max_trees=max_trees,
            )
            rows[v].update(value=float(r.value), std_err=None, method=r.method, skipped=None)
    elif todo:
        out = sample_accepted_tokens(
            target,
            draft,
            drafts=_law_of(point),
            verifiers=tuple(todo),
            samples=samples,
            rng=np.random.default_rng([seed, *_key(point)]),
            temperature=point["temperature"],
            progress=False,
        )
        for v in todo:
            rows[v].update(value=float(out[v].value), std_err=out[v].std_err, method="sampled", skipped=None)
    return [rows[v] for v in verifiers]


def _law_of(point: dict[str, Any]) -> TreeDraftLaw:
    """The draft law of a grid point (its k, length and law name)."""
    return TreeDraftLaw(length=point["length"], k=point["k"], children=point["drafts"])


def _key(row: dict[str, Any]) -> list[int]:
    """Stable integers identifying a grid point (seeds its sampler)."""

    text = repr(sorted((k, str(v)) for k, v in row.items()))
    return [int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)]


@one_renormalization_warning
def sweep(
    sources: Any,
    *,
    temperatures: tuple[float, ...] = (1.0,),
    drafts: tuple[TreeDraftLaw, ...] | None = None,
    verifiers: tuple[str, ...] = ("token",),
    samples: int | None = None,
    rng: Any = 0,
    n_jobs: int | None = None,
    loader: Callable | None = None,
    max_trees: int = 200_000,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Accepted tokens per step over a grid, one row (dict) per grid point.

    Parameters
    ----------
    sources : source or mapping name -> source, or list of sources
        A source is a (target, draft) pair of sequence models, a MarkovPair /
        PositionPair, or a path to a distribution file read by
        ``loader(path, positions=...)`` (e.g. :func:`optaccept.real.load_source`).  Sources must be
        picklable for process backends (module-level functions and classes, not
        lambdas, when the backend is not cloudpickle-based).
    temperatures, drafts, verifiers : tuples
        The grid: temperatures × draft laws × verifiers.  ``drafts`` holds chain laws,
        :class:`TreeDraftLaw` ``(length=, k=, children=)`` (default: one chain of one
        token).  Combinations a verifier does not cover
        (block with k > 1, traversal on iid trees with k > 1) give a row with ``skipped``
        set.
    samples : int, optional
        Rao-Blackwellised estimate with this many trees per point (else exact).
    rng : int or numpy.random.Generator
        A grid point's sampler is seeded by (seed, hash of the point), and its sampled
        verifiers share the same trees: results do not depend on the backend or the
        order in which points run.
    n_jobs : int, optional
        Passed to :class:`joblib.Parallel`; None uses the active backend's default
        (one job, or what ``joblib.parallel_backend`` sets).

    Returns
    -------
    list of dict
        Keys: source, temperature, k, length, drafts, verifier, value, std_err,
        method, skipped.

    Examples
    --------
    >>> from optaccept import tree
    >>> sources = {"toy": tree.synthetic_pair(6, rng=0)}
    >>> chains = (tree.TreeDraftLaw(length=2),)
    >>> rows = tree.sweep(
    ...     sources, temperatures=(1.0, 0.5), drafts=chains, verifiers=("token", "block"), n_jobs=1, progress=False
    ... )
    >>> len(rows), sorted(rows[0])[:4]
    (4, ['drafts', 'k', 'length', 'method'])
    >>> [(r["temperature"], r["verifier"], round(float(r["value"]), 4)) for r in rows]
    [(1.0, 'token', 0.7737), (1.0, 'block', 0.8077), (0.5, 'token', 0.4213), (0.5, 'block', 0.4335)]
    """
    import joblib

    if isinstance(sources, Mapping):
        named = list(sources.items())
    elif isinstance(sources, list):
        named = [(str(s) if isinstance(s, (str, os.PathLike)) else f"source{i}", s) for i, s in enumerate(sources)]
    else:
        named = [(str(sources) if isinstance(sources, (str, os.PathLike)) else "source0", sources)]
    if not named:
        raise InputError("sources: at least one source is required")
    if loader is None and any(isinstance(src, (str, os.PathLike)) for _, src in named):
        raise InputError(
            "loader: a path source needs loader=optaccept.real.load_source (optaccept.tree reads no files)"
        )
    laws = (TreeDraftLaw(),) if drafts is None else tuple(drafts)
    for i, law in enumerate(laws):
        if not isinstance(law, TreeDraftLaw) or law.shape is not None:
            raise InputError(
                f"drafts[{i}]: the grid takes chain laws, TreeDraftLaw(length=, k=, children=), got {law!r}; "
                "for a tree shape call accepted_tokens"
            )
    grid = [
        {"temperature": float(t), "k": law.k, "length": law.length, "drafts": law.children}
        for t, law in itertools.product(temperatures, laws)
    ]
    seed = seed_of(rng)
    tasks = [
        joblib.delayed(_task)(name, src, loader, point, tuple(verifiers), samples, seed, max_trees)
        for name, src in named
        for point in grid
    ]
    par = joblib.Parallel(n_jobs=n_jobs, verbose=10 if progress else 0)
    return [row for rows in par(tasks) for row in rows]
