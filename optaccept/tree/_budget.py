"""The best tree for a node budget (docs/trees.md §8b).

For a deterministic draft tree T (its nodes fixed given the models, e.g. top-k
children) every lossless verifier accepts at most target-only's
E[accepted] = Σ_{w ∈ T} p(w) (Proposition 1.1), so the question "which tree of N nodes
should I draft" becomes "which N strings".  Three strategies, one curve each:
* ``"sequoia"`` — a static shape chosen once by dynamic programming on positional
  acceptance rates (Sequoia, Chen et al., arXiv 2402.12374): a_r = E[p(x_(r))], the mean
  target mass of the draft's r-th most probable token, measured on calibration
  positions; under Sequoia's assumption that a_r does not depend on the path, the
  value of a shape is Σ over nodes of the product of a along its rank path, and
  Sequoia's dynamic programme (:func:`sequoia_table`) finds the best shape of each
  budget exactly for any rates (taking the N largest products is optimal only when
  the rates fall with the rank).  The shape is then drafted with top-k children at
  every position.
* ``"dynamic"`` — EAGLE-2's dynamic expansion (Li et al., arXiv 2406.16858): per
  position, the N strings of largest draft path probability q(w) = Π q(w_i | w_<i),
  found best first (a draft call per expanded node).
* ``"ceiling"`` — the N strings of largest target probability p(w), best first: no tree
  of N nodes does better for a deterministic draft (Σ_{w∈T} p(w) ≤ the sum of the N
  largest p(w)), so it is the ceiling of every strategy above.

``"dynamic"`` and ``"ceiling"`` grow best first, so one run to the largest budget gives
every smaller one (the first N nodes taken); the optimal Sequoia shapes of two budgets
need not nest, and one run of the programme gives them all.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.display import Estimate, Tabular, html_table, markdown_table
from .._lib.display.files import write_records_csv
from .._lib.limits import show_progress
from .._lib.statistics import std_err as sample_std_err
from .._lib.validation import check_choice, one_renormalization_warning
from ._models import as_model
from ._shape import topk_indices

__all__ = [
    "budget_curve",
    "BudgetCurve",
    "STRATEGIES",
    "best_first",
    "sequoia_shape",
    "sequoia_shapes",
    "sequoia_table",
    "shape_value",
]

STRATEGIES = ("sequoia", "dynamic", "ceiling")
#: largest budget of Sequoia's programme (its time grows as budget³: seconds at 1,024)
MAX_SEQUOIA = 1024
NAMES = {
    "sequoia": "static shape, positional DP (Sequoia)",
    "dynamic": "dynamic expansion by draft path probability (EAGLE-2)",
    "ceiling": "N most probable target prefixes (ceiling)",
}
Prefix = tuple[int, ...]


def best_first(law: Callable[[Prefix], np.ndarray], budget: int, prefetch: int = 8) -> list[tuple[Prefix, float]]:
    """The ``budget`` strings of largest path probability under ``law``, in the order they
    are taken (each string's parent is taken before it), with their probabilities.
    Ties go to the smaller token ids."""
    heap: list[tuple[float, Prefix]] = []

    def push_children(w: Prefix, pw: float) -> None:
        v = np.asarray(law(w), dtype=np.float64)
        top = np.argsort(-v, kind="stable")[:budget]
        for x in top:
            if v[x] > 0:
                heapq.heappush(heap, (-pw * float(v[x]), w + (int(x),)))

    out: list[tuple[Prefix, float]] = []
    memo = getattr(law, "memo", None)
    push_children((), 1.0)
    while heap and len(out) < budget:
        negp, w = heapq.heappop(heap)
        out.append((w, -negp))
        if len(out) < budget:
            if memo is not None and w not in memo:
                # read the laws of the next candidates too, in one batched call (one forward
                # pass of a language model): the order taken stays exactly best first
                law.prefetch([w] + [v for _, v in heapq.nsmallest(prefetch - 1, heap)])
            push_children(w, -negp)
    return out


def sequoia_table(
    rates: Sequence[float], budget: int, *, progress: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sequoia's dynamic programme (Chen et al., arXiv 2402.12374, §3.1) on positional
    rates a_0, a_1, … (any order, any values ≥ 0).

    A shape's value is Σ over its nodes of Π a_r along the node's rank path; a node
    with b children has them at ranks 0 … b − 1.  With V(s) the best value of a subtree
    of s nodes counting its root as 1, and G(m, j) the best Σ_{i ≥ j} a_i·V(n_i) over
    children at ranks j, j + 1, … whose subtrees hold exactly m nodes,

        V(s) = 1 + G(s − 1, 0),
        G(0, j) = 0,   G(m, j) = max_{1 ≤ s ≤ m} a_j·V(s) + G(m − s, j + 1)  (m ≥ 1),

    G(m, j) = −∞ when no rank j is left.  Returns (V, G, choice) with ``choice[m, j]``
    the subtree size s taken at rank j (the smallest among ties).  O(budget² · ranks):
    seconds at budget 1,024, the largest accepted (``progress``: a bar over the (m, j, s)
    cells).
    """
    a = np.asarray(rates, dtype=np.float64)
    if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise InputError(f"rates: finite values >= 0, got {rates!r}")
    _check_sequoia_budget(budget)
    R = int(min(a.size, budget))
    a = a[:R]
    M = int(budget)
    V = np.zeros(M + 2)
    G = np.full((M + 1, R + 1), -np.inf)
    G[0, :] = 0.0
    choice = np.zeros((M + 1, R + 1), dtype=np.int64)
    V[1] = 1.0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        work = sum(m * min(R, M - m + 1) for m in range(1, M + 1))
        bar = tqdm(total=work, desc="Sequoia's programme", unit="cell", unit_scale=True)
    for m in range(1, M + 1):
        # a child at rank j has j elder siblings of >= 1 node each: with m nodes left for
        # ranks >= j, j <= M - m (ranks beyond are never reached and stay -inf)
        r = min(R, M - m + 1)
        # candidates[j, s - 1] = a_j·V(s) + G(m − s, j + 1) for s = 1..m
        cand = a[:r, None] * V[None, 1 : m + 1] + G[m - 1 :: -1, 1 : r + 1].T
        best = np.argmax(cand, axis=1)  # first maximum: the smallest subtree among ties
        G[m, :r] = cand[np.arange(r), best]
        choice[m, :r] = best + 1
        V[m + 1] = 1.0 + G[m, 0]
        if bar is not None:
            bar.update(m * r)
    if bar is not None:
        bar.close()
    return V, G, choice


def _check_sequoia_budget(budget: int) -> None:
    if budget > MAX_SEQUOIA:
        raise MethodError(
            f"budget: Sequoia's programme takes time growing as N³; budgets up to {MAX_SEQUOIA:,} nodes, "
            f"got {budget:,} (use strategy 'dynamic' or 'ceiling' beyond)"
        )


def sequoia_shape(rates: Sequence[float], budget: int) -> list[tuple[int, ...]]:
    """The shape of ``budget`` nodes (below the root) of largest Σ_nodes Π a_r along the
    node's rank path: Sequoia's dynamic programme (:func:`sequoia_table`), exact for any
    rates.  Index paths by depth, then lexicographically."""
    budget = int(budget)
    if budget < 1:
        return []
    V, G, choice = sequoia_table(rates, budget)
    if not np.isfinite(G[budget, 0]):
        raise InputError(f"rates: need at least one rank, got {list(rates)!r}")
    return _rebuild(choice, budget)


def shape_value(rates: Sequence[float], paths: Iterable[tuple[int, ...]]) -> float:
    """Σ over the nodes of Π a_r along each node's rank path (the positional model)."""
    a = np.asarray(rates, dtype=np.float64)
    total = 0.0
    for t in paths:
        v = 1.0
        for r in t:
            v *= float(a[r]) if r < a.size else 0.0
        total += v
    return total


@dataclass
class BudgetCurve(Tabular):
    """Expected accepted tokens per step against the node budget N, per strategy.

    ``values[strategy]`` has one row per position (prompt) and one column per budget;
    :meth:`mean` and :meth:`std_err` average over positions.  Plot with
    :func:`optaccept.plots.plot_budget_curve`.  In the results' vocabulary, a curve holds one
    series per strategy, so ``value`` and ``std_err`` are methods: ``value(strategy)`` (=
    :meth:`mean`) and ``std_err(strategy)``, and with no strategy the arrays of every row of
    :meth:`to_pandas`; ``method`` is ``"exact per position"``; ``ok`` says every value is finite.

    Attributes
    ----------
    budgets : tuple of int
        The node budgets N, increasing.
    values : dict of str to ndarray, shape (positions, len(budgets))
        Accepted tokens per step, by strategy.
    rates : ndarray of float64
        Sequoia's calibrated acceptance rates a_r by rank.
    meta : dict
        Further data (``"sequoia_shapes"``: Sequoia's shape of each budget).

    Examples
    --------
    >>> from optaccept import tree
    >>> pairs = [tree.synthetic_pair(6, rng=s) for s in range(2)]
    >>> curve = tree.budget_curve(pairs, budgets=(2, 4), strategies=("dynamic",), progress=False)
    >>> type(curve).__name__, curve.budgets
    ('BudgetCurve', (2, 4))
    >>> bool((curve.std_err("dynamic") >= 0).all())
    True
    """

    budgets: tuple[int, ...]
    values: dict[str, np.ndarray]
    rates: np.ndarray = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict, repr=False)

    def mean(self, strategy: str) -> np.ndarray:
        """Mean over positions, one entry per budget.

        Parameters
        ----------
        strategy : str
            A key of ``values``.

        Returns
        -------
        ndarray of float64, shape (len(budgets),)
            The mean accepted tokens per step.
        """
        return self.values[strategy].mean(axis=0)

    def std_err(self, strategy: str | None = None) -> np.ndarray:
        """Standard error of :meth:`mean` over positions (zeros for one position).

        Parameters
        ----------
        strategy : str, optional
            A key of ``values``; None: every strategy, in the row order of :meth:`to_pandas`.

        Returns
        -------
        ndarray of float64, shape (len(budgets),)
            The standard errors (all strategies' one after the other without ``strategy``).
        """
        if strategy is None:
            return np.concatenate([self.std_err(s) for s in self.values])
        v = self.values[strategy]
        return sample_std_err(v, axis=0)

    def value(self, strategy: str | None = None) -> np.ndarray:
        """:meth:`mean`, the results' name for it.

        Parameters
        ----------
        strategy : str, optional
            A key of ``values``; None: every strategy, in the row order of :meth:`to_pandas`.

        Returns
        -------
        ndarray of float64
            The mean accepted tokens per step.
        """
        if strategy is None:
            return np.concatenate([self.mean(s) for s in self.values])
        return self.mean(strategy)

    #: the values are exact at each position; their means carry a standard error over positions
    method = "exact per position"

    @property
    def ok(self) -> bool:
        """Whether every value is finite."""
        return all(bool(np.isfinite(v).all()) for v in self.values.values())

    _caption = "Expected accepted tokens per step against the node budget N (mean ± standard error)."

    def _records(self) -> list[dict[str, Any]]:
        return self.rows()

    def _latex_rows(self) -> tuple[list[str], list[list[Any]]]:
        header = ["$N$"] + [NAMES[s] for s in self.values]
        body = [
            [int(n)] + [Estimate(float(self.mean(s)[j]), float(self.std_err(s)[j]), 3) for s in self.values]
            for j, n in enumerate(self.budgets)
        ]
        return header, body

    def rows(self) -> list[dict[str, Any]]:
        """The curve in long format.

        Returns
        -------
        list of dict
            One row per (strategy, budget): ``strategy``, ``name``, ``budget``, ``value``,
            ``std_err`` and ``positions``.
        """
        return [
            dict(
                strategy=s, name=NAMES[s], budget=n, value=float(m), std_err=float(e), positions=self.values[s].shape[0]
            )
            for s in self.values
            for n, m, e in zip(self.budgets, self.mean(s), self.std_err(s), strict=True)
        ]

    def to_markdown(self) -> str:
        """The curve as a Markdown table.

        Returns
        -------
        str
            One row per budget, one column per strategy, each cell mean ± standard error.
        """

        header = ["N"] + [NAMES[s] for s in self.values]
        body = [
            [str(n)] + [str(Estimate(self.mean(s)[j], self.std_err(s)[j], 3)) for s in self.values]
            for j, n in enumerate(self.budgets)
        ]
        return markdown_table(header, body)

    def to_csv(self, path: str | Path) -> Path:
        """Write :meth:`rows` as CSV.

        Parameters
        ----------
        path : str or pathlib.Path
            Where the CSV goes: columns strategy, name, budget, value, std_err, positions.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        return write_records_csv(path, ["strategy", "name", "budget", "value", "std_err", "positions"], self.rows())

    def _repr_html_(self) -> str:
        header = ["N"] + [NAMES[s] for s in self.values]
        body = [
            [str(n)] + [f"{self.mean(s)[j]:.3f} ± {self.std_err(s)[j]:.3f}" for s in self.values]
            for j, n in enumerate(self.budgets)
        ]
        return html_table(header, body, title="Accepted tokens per step against the node budget")


@one_renormalization_warning
def budget_curve(
    pairs: Iterable[tuple[Any, Any]],
    budgets: Sequence[int] = (4, 8, 16, 32, 64),
    *,
    strategies: Sequence[str] = STRATEGIES,
    calibration: Iterable[tuple[Any, Any]] | None = None,
    progress: bool | None = None,
) -> BudgetCurve:
    """Accepted tokens per step of the best deterministic tree of each budget, per strategy.

    Parameters
    ----------
    pairs : iterable of (target, draft)
        Sequence models after one prompt each (callables ``prefix -> law``, objects with
        ``next_token_probs``, e.g. :class:`optaccept.llm.LMSequenceModel`).
    budgets : sequence of int
        Node budgets N (nodes below the root), each in 1 … 4,096 (1 … 1,024 with
        ``"sequoia"``: its programme's time grows as N³).
    strategies : subset of ("sequoia", "dynamic", "ceiling")
    calibration : iterable of (target, draft), optional
        Positions on which Sequoia's rates a_r are measured (default: ``pairs`` — an
        in-sample calibration).
    progress : bool, optional
        A bar over positions (default: on in a terminal or Jupyter).

    Returns
    -------
    BudgetCurve
        ``meta["sequoia_shapes"]`` holds Sequoia's shape of each budget (index paths).

    Examples
    --------
    >>> from optaccept import tree
    >>> pairs = [tree.synthetic_pair(6, rng=s) for s in range(2)]
    >>> curve = tree.budget_curve(pairs, budgets=(2, 4), strategies=("dynamic",), progress=False)
    >>> curve.budgets, curve.values["dynamic"].shape  # one row per pair, one column per budget
    ((2, 4), (2, 2))
    >>> [round(float(v), 4) for v in curve.mean("dynamic")]
    [0.5022, 0.6256]
    """
    from tqdm.auto import tqdm

    bs = tuple(int(b) for b in budgets)
    if not bs or any(b < 1 or b > 4096 for b in bs) or list(bs) != sorted(set(bs)):
        raise InputError(f"budgets: increasing integers in 1..4096, got {tuple(budgets)!r}")
    for s in strategies:
        check_choice("strategies", s, STRATEGIES)
    if "sequoia" in strategies:
        _check_sequoia_budget(bs[-1])
    pairs = [(as_model(t, "target").cached(), as_model(d, "draft").cached()) for t, d in pairs]
    if not pairs:
        raise InputError("pairs: at least one (target, draft) pair is needed")
    N = bs[-1]
    cal = (
        pairs
        if calibration is None
        else [(as_model(t, "target").cached(), as_model(d, "draft").cached()) for t, d in calibration]
    )
    rates = np.zeros(N)
    for P, Q in cal:
        p, q = np.asarray(P(()), dtype=np.float64), np.asarray(Q(()), dtype=np.float64)
        rates += (
            p[np.argsort(-q, kind="stable")[:N]]
            if q.size >= N
            else np.pad(p[np.argsort(-q, kind="stable")], (0, N - q.size))
        )
    rates /= len(cal)
    shapes = sequoia_shapes(rates, bs, progress=show_progress(progress)) if "sequoia" in strategies else {}
    idx = np.array(bs) - 1
    values = {s: np.zeros((len(pairs), len(bs))) for s in strategies}
    for i, (P, Q) in enumerate(tqdm(pairs, desc="positions", unit="position", disable=not show_progress(progress))):
        for s in strategies:
            if s == "sequoia":  # one optimal shape per budget (the optima need not nest)
                values[s][i] = [sum(_sequoia_values(P, Q, shapes[n])) for n in bs]
                continue
            if s == "ceiling":
                taken = [pw for _, pw in best_first(P, N)]
            else:
                ws = [w for w, _ in best_first(Q, N)]
                P.prefetch(list({w[:i] for w in ws for i in range(len(w))}))
                taken = [_p_of(P, w) for w in ws]
            cum = np.cumsum(np.pad(np.asarray(taken, dtype=np.float64), (0, max(0, N - len(taken)))))
            values[s][i] = cum[idx]
    meta = {"positions": len(pairs), "calibration": len(cal), "sequoia_shapes": shapes}
    return BudgetCurve(bs, values, rates, meta)


def sequoia_shapes(
    rates: Sequence[float], budgets: Sequence[int], *, progress: bool = False
) -> dict[int, list[tuple[int, ...]]]:
    """The optimal shape of each budget from one run of Sequoia's programme."""
    out: dict[int, list[tuple[int, ...]]] = {}
    if not budgets:
        return out
    V, G, choice = sequoia_table(rates, max(budgets), progress=progress and max(budgets) > 512)
    for n in budgets:
        out[int(n)] = _rebuild(choice, int(n))
    return out


def _rebuild(choice: np.ndarray, budget: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    stack: list[tuple[tuple[int, ...], int, int]] = [((), budget, 0)]  # (parent, nodes left, next rank)
    while stack:
        parent, m, j = stack.pop()
        if m == 0:
            continue
        s = int(choice[m, j])
        node = parent + (j,)
        out.append(node)
        stack.append((parent, m - s, j + 1))
        stack.append((node, s - 1, 0))
    return sorted(out, key=lambda t: (len(t), t))


def _p_of(P: Any, w: Prefix) -> float:
    v = 1.0
    for i in range(len(w)):
        v *= float(P(w[:i])[w[i]])
    return v


def _sequoia_values(P: Any, Q: Any, shape: list[tuple[int, ...]]) -> list[float]:
    """p(w) of each node of the static shape filled with top-k children (in shape order).
    The laws are read depth by depth, one batched call per depth and model."""

    width: dict[tuple[int, ...], int] = {}
    for path in shape:
        width[path[:-1]] = max(width.get(path[:-1], 0), path[-1] + 1)
    token_of: dict[tuple[int, ...], Prefix | None] = {(): ()}
    for depth in range(1, max((len(t) for t in shape), default=0) + 1):
        level = [t for t in shape if len(t) == depth]
        parents = list(dict.fromkeys(w for t in level if (w := token_of[t[:-1]]) is not None))
        for model in (Q, P):
            if hasattr(model, "prefetch"):
                model.prefetch(parents)
        for t in level:
            parent = token_of[t[:-1]]
            kids = [] if parent is None else topk_indices(np.asarray(Q(parent), dtype=np.float64), width[t[:-1]])
            token_of[t] = parent + (kids[t[-1]],) if t[-1] < len(kids) else None  # type: ignore[operator]
    return [0.0 if token_of[t] is None else _p_of(P, token_of[t]) for t in shape]
