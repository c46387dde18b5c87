"""``tree.best_tree``: the tree an engine should draft, for a node budget or a cost curve
(docs/trees.md §8c).

Three strategies:
* ``"sequoia"`` — one static shape from Sequoia's dynamic programme (Chen et al.,
  arXiv 2402.12374) on positional acceptance rates measured on the given contexts:
  a_r = E[p(x_(r))] for top-k children (the target mass of the draft's r-th token),
  and for children drawn from q the gain of the (r + 1)-th child of a one-level tree,
  a_r = v(r + 1) − v(r) with v(b) the verifier's exact accepted tokens on the shape (b,).
* ``"ceiling"`` — the best static shape for the given contexts, valued exactly
  (top-k children): the largest mean Σ_{w ∈ T} p(w) over every shape of N nodes, by a
  knapsack over the rank paths a shape of N nodes can hold.  No static shape does
  better on these contexts; Sequoia's shape reaches it when the positional rates do not
  depend on the path.
* ``"dynamic"`` — EAGLE-2's dynamic tree (Li et al., arXiv 2406.16858): for each context
  the N strings of largest draft path probability, one shape per context.

With ``cost=`` the size is chosen too: the one of largest expected tokens per step
(accepted + 1) divided by the cost of verifying that many nodes.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib import stable as _stable
from .._lib.limits import show_progress
from .._lib.validation import check_choice, one_renormalization_warning
from ..drafts import WithoutReplacement
from ._budget import _check_sequoia_budget, _p_of, _sequoia_values, best_first, sequoia_shapes, sequoia_table
from ._checks import check_shaped
from ._models import as_model
from ._shape import CHILDREN, MAX_NODES, Shape, as_shape, topk_indices
from ._shaped import shaped_accepted_tokens

__all__ = ["best_tree", "BEST_STRATEGIES", "MAX_CEILING_PATHS", "count_rank_paths"]

BEST_STRATEGIES = ("sequoia", "ceiling", "dynamic")
#: largest number of rank paths (candidate nodes) ``strategy="ceiling"`` enumerates
MAX_CEILING_PATHS = 65_536
#: largest size searched with ``cost=`` a callable, unless ``budget`` says otherwise
DEFAULT_MAX_NODES = 64
_DETERMINISTIC = ("target_only", "token_optimal", "optimal")


@one_renormalization_warning
def best_tree(
    pairs: Any,
    budget: int | None = None,
    *,
    cost: Callable[[int], float] | Mapping[int, float] | Sequence[float] | None = None,
    strategy: str = "sequoia",
    children: str = "topk",
    verifier: str = "target_only",
    calibration: Any = None,
    progress: bool | None = None,
) -> Shape | list[Shape]:
    """The best tree to draft: for a node budget, or for a cost curve.

    Parameters
    ----------
    pairs : list of (target, draft)
        Sequence models after one context each (callables ``prefix -> law``, objects
        with ``next_token_probs``, e.g. ``llm.sequence_models(pair, prompt)`` over
        prompts, or ``[tree.synthetic_pair(n, rng=s) for s in …]``).
    budget : int, optional
        Nodes below the root (1 … 4,096; 1 … 1,024 for ``"sequoia"``).  With ``cost``: the largest size searched
        (default: the cost table's largest size, or 64 for a callable).
    cost : callable, mapping or sequence, optional
        Seconds per verification of n nodes: ``cost(n)``, ``{n: seconds}``, or a
        sequence whose entry i is the cost of i + 1 nodes.  The size chosen maximises
        (E[accepted] + 1) / cost(n), ties to the smaller size, over the sizes the cost
        covers: 1 … ``budget`` (64) for a callable, the table's own sizes up to ``budget``
        for a table (a table that stops below ``budget`` is refused, naming the sizes
        without a cost).
        A mapping with gaps such as ``{1: …, 8: …, 64: …}`` is searched at its measured
        sizes only; costs are not interpolated (verify time jumps between kernel tile
        sizes): to search every size, pass a callable, e.g.
        ``lambda n: numpy.interp(n, sizes, seconds)``.  ``shape.meta["by_size"]`` lists
        the sizes searched.
    strategy : {"sequoia", "ceiling", "dynamic"}
        See the module docstring (docs/trees.md §8c).  ``"ceiling"`` and ``"dynamic"``
        need top-k children.
    children : {"topk", "swor", "iid"}
        How the shape is filled when drafted (default top-k, verified by target-only:
        the optimum for a deterministic tree, Proposition 1.1).
    verifier : str
        The verifier the shape is chosen for (default ``"target_only"``); any of
        :data:`optaccept.tree.VERIFIERS` that applies to ``children``.
    calibration : list of (target, draft), optional
        Contexts on which Sequoia's rates are measured (default: ``pairs``).
    progress : bool, optional
        Progress bar over contexts (default: on in a terminal or Jupyter).

    Returns
    -------
    Shape or list of Shape
        One static :class:`Shape` (``"sequoia"``, ``"ceiling"``), or one per context
        (``"dynamic"``).  ``shape.meta`` holds the strategy, ``value`` (mean accepted
        tokens per step on ``pairs``: exact for top-k children, Sequoia's model value
        otherwise), ``tokens_per_step`` (value + 1), ``cost`` and ``tokens_per_second``
        with ``cost=``, and ``rates``.

    Raises
    ------
    InputError
        Neither ``budget`` nor ``cost``; a budget outside 1 … 4,096; a cost that is not
        positive and finite; an unknown strategy, children rule or verifier.
    MethodError
        ``"ceiling"`` or ``"dynamic"`` with children drawn from q; a verifier that does
        not apply to the children; ``"ceiling"`` beyond 65,536 candidate nodes;
        ``"sequoia"`` beyond 1,024 nodes.

    Examples
    --------
    >>> from optaccept import tree
    >>> pairs = [tree.synthetic_pair(50, rng=s) for s in range(4)]
    >>> shape = tree.best_tree(pairs, budget=8, progress=False)
    >>> shape.size, shape.to_vllm() == tree.Shape.from_vllm(shape.to_vllm()).to_vllm()
    (8, True)
    """

    check_choice("strategy", strategy, BEST_STRATEGIES)
    check_choice("children", children, CHILDREN)
    if verifier == "block":
        raise MethodError("verifier 'block' verifies one chain; a best tree branches: use 'traversal' or 'token'")
    check_shaped(verifier, as_shape((2,)), children)
    if strategy in ("ceiling", "dynamic") and children != "topk":
        raise MethodError(
            f"strategy {strategy!r} builds trees from the draft's top-k tokens: use children='topk', "
            "or strategy='sequoia' for children drawn from q"
        )
    if budget is None and cost is None:
        raise InputError("budget: give budget= (nodes) or cost= (seconds per verify of n nodes)")
    costs = None if cost is None else _cost_table(cost, budget)
    top = max(costs) if costs is not None else _check_budget(budget)
    if isinstance(pairs, tuple) and len(pairs) == 2 and not isinstance(pairs[0], tuple):
        pairs = [pairs]  # one (target, draft) pair
    pairs = [(as_model(t, "target").cached(), as_model(d, "draft").cached()) for t, d in pairs]
    if not pairs:
        raise InputError("pairs: at least one (target, draft) pair is needed")
    cal = (
        pairs
        if calibration is None
        else [(as_model(t, "target").cached(), as_model(d, "draft").cached()) for t, d in calibration]
    )
    if not cal:
        raise InputError("calibration: at least one (target, draft) pair is needed")
    bar = show_progress(progress)
    sizes = sorted(costs) if costs is not None else [top]
    if strategy == "sequoia":
        _check_sequoia_budget(top)
        return _sequoia(pairs, cal, sizes, costs, children, verifier, bar)
    if strategy == "dynamic":
        return _dynamic(pairs, sizes, costs, bar)
    return _ceiling(pairs, sizes, costs, bar)


# ----------------------------------------------------------------------------------
def _check_budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 1 <= budget <= MAX_NODES:
        raise InputError(f"budget: an integer in 1..{MAX_NODES}, got {budget!r}")
    return int(budget)


def _cost_table(cost: Any, budget: Any) -> dict[int, float]:
    """{n: seconds per verify of n nodes} over the sizes searched."""
    if callable(cost):
        top = DEFAULT_MAX_NODES if budget is None else _check_budget(budget)
        table = {}
        for n in range(1, top + 1):
            try:
                table[n] = cost(n)
            except Exception as e:  # noqa: BLE001 - the user's function: say which call failed
                raise InputError(f"cost: cost({n}) raised {type(e).__name__}: {e}") from None
    elif isinstance(cost, Mapping):
        table = dict(cost.items())
    elif hasattr(cost, "__len__") and not isinstance(cost, (str, bytes)):
        table = {i + 1: c for i, c in enumerate(cost)}
    else:
        raise InputError(f"cost: a callable n -> seconds, a mapping {{n: seconds}} or a sequence, got {cost!r}")
    out: dict[int, float] = {}
    for n, c in table.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_NODES:
            raise InputError(f"cost: sizes must be integers in 1..{MAX_NODES}, got {n!r}")
        try:
            c = float(c)
        except (TypeError, ValueError):
            raise InputError(f"cost: the cost of {n} nodes must be a number, got {c!r}") from None
        if not math.isfinite(c) or c <= 0:
            raise InputError(f"cost: the cost of {n} nodes must be positive and finite, got {c!r}")
        out[int(n)] = c
    if budget is not None and not callable(cost):
        top = _check_budget(budget)
        if out and max(out) < top:
            lo = max(out) + 1
            gap = f"size {lo}" if lo == top else f"sizes {lo}..{top}"
            raise InputError(
                f"cost: the table stops at {max(out)} nodes and budget={top}: no cost for {gap} "
                "(measure them, lower the budget, or pass a callable)"
            )
        out = {n: c for n, c in out.items() if n <= top}
    if not out:
        raise InputError("cost: no size to choose from")
    return out


def _choose(values: dict[int, float], costs: dict[int, float] | None) -> tuple[int, dict[str, Any]]:
    """The size of largest (value + 1) / cost, ties to the smaller size."""
    if costs is None:
        (n,) = values
        return n, {"value": values[n], "tokens_per_step": values[n] + 1.0}
    rate = {n: (values[n] + 1.0) / costs[n] for n in sorted(costs)}
    n = max(sorted(rate), key=lambda m: (rate[m], -m))
    return n, {
        "value": values[n],
        "tokens_per_step": values[n] + 1.0,
        "cost": costs[n],
        "tokens_per_second": rate[n],
        "by_size": {m: (values[m], costs[m], rate[m]) for m in sorted(costs)},
    }


def _topk_value(P: Any, Q: Any, paths: Sequence[tuple[int, ...]]) -> float:
    """Σ_{w ∈ T} p(w) of the shape filled with top-k children (target-only's value)."""

    return float(sum(_sequoia_values(P, Q, list(paths))))


def _rates(cal: list, R: int, children: str, verifier: str) -> np.ndarray:
    """Positional rates a_0 … a_{R-1}, averaged over the calibration contexts."""
    rates = np.zeros(R)
    for P, Q in cal:
        p, q = np.asarray(P(()), dtype=np.float64), np.asarray(Q(()), dtype=np.float64)
        if children == "topk":
            top = p[np.argsort(-q, kind="stable")[:R]]
            rates[: top.size] += top
            continue
        b_max = min(R, int(np.count_nonzero(q)) if children == "swor" else R)
        v = np.zeros(R + 1)
        for b in range(1, b_max + 1):
            v[b] = _star_value(P, Q, p, q, b, children, verifier)
        v[b_max + 1 :] = v[b_max]
        rates += np.maximum(np.diff(v), 0.0)  # float noise only: v grows with b
    return rates / len(cal)


def _star_value(P: Any, Q: Any, p: np.ndarray, q: np.ndarray, b: int, children: str, verifier: str) -> float:
    """Accepted tokens of ``verifier`` on the one-level shape (b,) at this context."""
    if verifier == "token":
        from ..verifiers import RRS, RRSWithoutReplacement

        rule = RRS() if children == "iid" or b == 1 else RRSWithoutReplacement()
        return float(rule.acceptance(p, q, k=b))
    if verifier == "target_only":  # Σ_y p(y)·P(y is drafted)
        if children == "iid":
            return float(np.sum(p * _stable.one_minus_pow1m(np.minimum(q, 1.0), b)))
        return float(np.sum(p * WithoutReplacement(q, min(b, int(np.count_nonzero(q)))).inclusion()))

    try:
        r = shaped_accepted_tokens(
            P.model, Q.model, (b,), children, verifier, samples=None, rng=None, progress=False, max_trees=200_000
        )
    except MethodError:
        raise MethodError(
            f"verifier {verifier!r}: Sequoia's rates for {children} children need its exact value on the shape "
            f"({b},), which has too many draft trees to enumerate here; use verifier='token' or 'target_only'"
        ) from None
    return float(r.value)


def _sequoia(pairs, cal, sizes, costs, children, verifier, bar) -> Shape:
    from tqdm.auto import tqdm

    top = max(sizes)
    rates = _rates(cal, top, children, verifier)
    shapes = sequoia_shapes(rates, sizes, progress=bar)
    if children == "topk":
        values = dict.fromkeys(sizes, 0.0)
        for P, Q in tqdm(pairs, desc="contexts", unit="context", disable=not bar):
            for n in sizes:
                values[n] += _topk_value(P, Q, shapes[n]) / len(pairs)
        kind = "exact on the contexts (top-k children, target-only)"
    else:
        V = sequoia_table(rates, top)[0]
        values = {n: float(V[n + 1] - 1.0) for n in sizes}
        kind = "Sequoia's model: Σ over nodes of the product of the rates along the node's path"
    n, meta = _choose(values, costs)
    meta.update(strategy="sequoia", children=children, verifier=verifier, rates=rates, value_kind=kind)
    return Shape(tuple(shapes[n]), meta=meta)


def _dynamic(pairs, sizes, costs, bar) -> list[Shape]:
    from tqdm.auto import tqdm

    top = max(sizes)
    grown = []
    cum = np.zeros(top)
    for P, Q in tqdm(pairs, desc="contexts", unit="context", disable=not bar):
        ws = [w for w, _ in best_first(Q, top)]
        P.prefetch(list({w[:i] for w in ws for i in range(len(w))}))
        vals = np.array([_p_of(P, w) for w in ws] + [0.0] * (top - len(ws)))
        cum += np.cumsum(vals) / len(pairs)
        rank: dict[tuple[int, ...], tuple[int, ...]] = {(): ()}
        for w in ws:  # each string's parent is taken before it
            order = topk_indices(np.asarray(Q(w[:-1]), dtype=np.float64), top)
            rank[w] = rank[w[:-1]] + (order.index(w[-1]),)
        grown.append([rank[w] for w in ws])
    values = {n: float(cum[n - 1]) for n in sizes}
    n, meta = _choose(values, costs)
    meta.update(strategy="dynamic", children="topk", verifier="target_only")
    return [Shape(tuple(paths[:n]), meta=dict(meta, context=i)) for i, paths in enumerate(grown)]


def count_rank_paths(budget: int, vocab: int) -> int:
    """Rank paths (r_1, …, r_d) that a shape of ``budget`` nodes can hold: Σ (r_i + 1) ≤
    budget with every r_i < vocab (about 2^budget for vocab ≥ budget)."""
    c = [0] * (budget + 1)  # c[m]: paths with Σ (r_i + 1) = m
    c[0] = 1
    for m in range(1, budget + 1):
        c[m] = sum(c[m - s] for s in range(1, min(vocab, m) + 1))
    return sum(c[1:])


def _ceiling(pairs, sizes, costs, bar) -> Shape:
    """The best static shape of each size on the contexts, by a knapsack over rank paths."""
    from tqdm.auto import tqdm

    top = max(sizes)
    vocab = max(int(np.asarray(Q(()), dtype=np.float64).size) for _, Q in pairs)
    count = count_rank_paths(top, vocab)
    if count > MAX_CEILING_PATHS:
        raise MethodError(
            f"strategy 'ceiling': a shape of {top} nodes can hold {count:,} rank paths (more than "
            f"{MAX_CEILING_PATHS:,}); use a budget of at most 16 nodes, or strategy='sequoia'"
        )
    weight: dict[tuple[int, ...], float] = {}
    for P, Q in tqdm(pairs, desc="contexts", unit="context", disable=not bar):
        stack: list[tuple[tuple[int, ...], tuple[int, ...], float]] = [((), (), 1.0)]  # (path, string, p)
        while stack:
            path, w, pw = stack.pop()
            used = sum(r + 1 for r in path)
            if used >= top:
                continue
            q = np.asarray(Q(w), dtype=np.float64)
            p = np.asarray(P(w), dtype=np.float64)
            order = topk_indices(q, top - used)
            for r, x in enumerate(order):
                child = path + (r,)
                pc = pw * float(p[x])
                weight[child] = weight.get(child, 0.0) + pc / len(pairs)
                stack.append((child, w + (x,), pc))
    memo: dict[tuple[int, ...], np.ndarray] = {}

    def forest(first: tuple[int, ...]) -> np.ndarray:
        """F[m]: the best weight of m nodes among ``first``, its younger siblings and their
        subtrees (−inf where m nodes do not fit)."""
        if first in memo:
            return memo[first]
        cap = top - sum(r + 1 for r in first) + 1
        F = np.full(top + 1, -np.inf)
        F[0] = 0.0
        if first in weight and cap >= 1:
            below = forest(first + (0,))
            nxt = forest(first[:-1] + (first[-1] + 1,))
            # take ``first`` with s - 1 nodes below it, and m - s nodes in the younger siblings
            A = weight[first] + below[:cap]  # A[s - 1]
            for m in range(1, cap + 1):
                F[m] = np.max(A[:m] + nxt[m - 1 :: -1][:m])
        memo[first] = F
        return F

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * top + 1000))
    try:
        root = forest((0,))
    finally:
        sys.setrecursionlimit(old)

    def rebuild(first: tuple[int, ...], m: int, out: list[tuple[int, ...]]) -> None:
        if m == 0:
            return
        below = memo[first + (0,)] if first + (0,) in memo else forest(first + (0,))
        nxt_key = first[:-1] + (first[-1] + 1,)
        nxt = memo[nxt_key] if nxt_key in memo else forest(nxt_key)
        best_s, best = 1, -np.inf
        for s in range(1, m + 1):
            v = weight[first] + below[s - 1] + nxt[m - s]
            if v > best:  # the first maximum: the smallest subtree among ties
                best_s, best = s, v
        out.append(first)
        rebuild(first + (0,), best_s - 1, out)
        rebuild(nxt_key, m - best_s, out)

    shapes = {}
    values = {}
    for n in sizes:
        if not np.isfinite(root[n]):
            raise MethodError(f"strategy 'ceiling': no shape of {n} nodes fits the vocabulary")
        out: list[tuple[int, ...]] = []
        rebuild((0,), n, out)
        shapes[n] = out
        values[n] = float(root[n])
    n, meta = _choose(values, costs)
    meta.update(strategy="ceiling", children="topk", verifier="target_only", candidates=count)
    return Shape(tuple(shapes[n]), meta=meta)
