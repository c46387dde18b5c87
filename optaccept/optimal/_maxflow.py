"""The one maximum-flow algorithm of the package.

Network: source → each draft set A (capacity D(A)) → each token y ∈ A (unbounded) → sink
(capacity p(y)); α* is its maximum flow (Hu et al. §3) and the tokens the final residual
network reaches from the source are a minimum cut, the subset S of the dual (★)
(docs/theory.md §2).  :func:`dinic` computes it by Dinic's algorithm (level graph by
breadth-first search, blocking flow by depth-first search with current-arc pointers) over
any exact ordered number type:

* Python integers: the float path, in units of 2^-80 (:func:`optaccept.optimal._flow.polish_flow`,
  behind the methods ``"max_flow"`` and ``"lp"``, the flow-plan verifier and ``verify``'s
  witness);
* :class:`fractions.Fraction`: the exact path (:func:`exact_max_flow`, behind the exact
  flow-plan verifier and ``verify``'s exact witness).

Arithmetic is exact in both, so the algorithm terminates with a maximum flow.  Tested
against networkx's maximum flow and a brute-force minimum cut in tests/optimal/test_maxflow.py.
The LP formulation of the same network (method ``"lp"``, scipy's HiGHS) is a different
solver offered by choice; its flow is finished by this one.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

__all__ = ["dinic", "exact_max_flow"]


def dinic(ptr: list[int], arc_tok: list[int], cap_set: list[Any], cap_tok: list[Any], f: list[Any]) -> list[bool]:
    """Augment a feasible flow to a maximum flow, in place, by Dinic's algorithm.

    Parameters
    ----------
    ptr : list of int, length m + 1
        Set a's arcs are ``ptr[a]:ptr[a + 1]`` (CSR layout).
    arc_tok : list of int
        The token (an index into ``cap_tok``) each arc goes to.
    cap_set, cap_tok : list of int or Fraction
        Capacities of the source → set and token → sink arcs.
    f : list of int or Fraction
        A feasible flow on the set → token arcs (zeros for none); augmented in place.

    Returns
    -------
    list of bool
        For each token, whether the final residual network reaches it from the source:
        the source side of a minimum cut.
    """
    m = len(ptr) - 1
    by_tok: list[list[int]] = [[] for _ in cap_tok]
    for j, t in enumerate(arc_tok):
        by_tok[t].append(j)
    arc_set = [a for a in range(m) for _ in range(ptr[a + 1] - ptr[a])]
    out = [sum(f[ptr[a] : ptr[a + 1]]) for a in range(m)]
    inflow = [sum(f[j] for j in arcs) for arcs in by_tok]
    return _dinic(m, ptr, arc_tok, arc_set, by_tok, cap_set, cap_tok, f, out, inflow)


def exact_max_flow(sets, D, p) -> tuple[list[dict[int, Fraction]], Fraction, tuple[int, ...]]:
    """The maximum flow source → set A (capacity D(A)) → y ∈ A → sink (capacity p(y)) in
    exact arithmetic.

    Parameters
    ----------
    sets : sequence of tuple of int
        The draft sets (sorted token ids).
    D : sequence of Fraction
        Their probabilities.
    p : sequence of Fraction
        The target law (length n).

    Returns
    -------
    flow : list of dict
        Per set, ``{y: flow}`` over its tokens with positive flow.
    value : Fraction
        The maximum flow.
    S : tuple of int
        The tokens the final residual network reaches from the source (a minimum cut).
    """
    toks = sorted({y for s in sets for y in s})
    tid = {y: i for i, y in enumerate(toks)}
    ptr, arc_tok = [0], []
    for s in sets:
        arc_tok.extend(tid[y] for y in s)
        ptr.append(len(arc_tok))
    f: list[Any] = [Fraction(0)] * len(arc_tok)
    reach = dinic(ptr, arc_tok, list(D), [p[y] for y in toks], f)
    flow = [{toks[arc_tok[j]]: f[j] for j in range(ptr[a], ptr[a + 1]) if f[j] > 0} for a in range(len(sets))]
    return flow, sum(f, Fraction(0)), tuple(y for y, r in zip(toks, reach) if r)


def _dinic(m, ptr, arc_tok, arc_set, by_tok, cap_set, cap_tok, f, out, inflow) -> list[bool]:
    """Augment f (flows on set → token arcs) to a maximum flow, in place; return which tokens
    the final residual network reaches from the source."""
    nt = len(by_tok)
    while True:
        # levels: sets and tokens reachable from the source in the residual network
        lev_s = [-1] * m
        lev_t = [-1] * nt
        frontier = [a for a in range(m) if cap_set[a] > out[a]]
        for a in frontier:
            lev_s[a] = 1
        sink_level = -1
        depth = 1
        while frontier and sink_level < 0:
            toks_next = []
            for a in frontier:  # set → every token of the set
                for j in range(ptr[a], ptr[a + 1]):
                    t = arc_tok[j]
                    if lev_t[t] < 0:
                        lev_t[t] = depth + 1
                        toks_next.append(t)
            if any(cap_tok[t] > inflow[t] for t in toks_next):
                sink_level = depth + 2
                break
            sets_next = []
            for t in toks_next:  # token → the sets that send it flow
                for j in by_tok[t]:
                    a = arc_set[j]
                    if f[j] > 0 and lev_s[a] < 0:
                        lev_s[a] = depth + 2
                        sets_next.append(a)
            frontier = sets_next
            depth += 2
        if sink_level < 0:
            return [lv >= 0 for lv in lev_t]
        # blocking flow: depth-first from each source arc along increasing levels
        cur_s = list(ptr[:m])
        cur_t = [0] * nt
        for a0 in range(m):
            if lev_s[a0] != 1:
                continue
            while cap_set[a0] > out[a0]:
                pushed = _dfs_push(
                    a0,
                    cap_set[a0] - out[a0],
                    lev_s,
                    lev_t,
                    sink_level,
                    ptr,
                    arc_tok,
                    arc_set,
                    by_tok,
                    cap_tok,
                    f,
                    out,
                    inflow,
                    cur_s,
                    cur_t,
                )
                if pushed == 0:
                    break
                out[a0] += pushed


def _dfs_push(
    a0, limit, lev_s, lev_t, sink_level, ptr, arc_tok, arc_set, by_tok, cap_tok, f, out, inflow, cur_s, cur_t
) -> int:
    """One augmenting path from set a0 in the level graph (iterative), pushing its
    bottleneck; returns the amount (0: none left from a0)."""
    path: list[tuple[int, int]] = []  # (arc, +1 forward set→token / −1 backward token→set)
    a = a0
    while True:
        advanced = False
        while cur_s[a] < ptr[a + 1]:  # from set a: forward arcs to tokens one level down
            j = cur_s[a]
            t = arc_tok[j]
            if lev_t[t] == lev_s[a] + 1:
                if lev_t[t] + 1 == sink_level and cap_tok[t] > inflow[t]:
                    path.append((j, 1))
                    bott = min([limit, cap_tok[t] - inflow[t]] + [f[jj] for jj, d in path if d < 0])
                    for jj, d in path:  # intermediate sets and tokens keep their totals
                        f[jj] += d * bott
                    inflow[t] += bott
                    return bott
                # continue through token t to a set that sends it flow, one level down
                k = cur_t[t]
                arcs = by_tok[t]
                while k < len(arcs):
                    jb = arcs[k]
                    b = arc_set[jb]
                    if f[jb] > 0 and lev_s[b] == lev_t[t] + 1:
                        break
                    k += 1
                cur_t[t] = k
                if k < len(arcs):
                    path.append((j, 1))
                    path.append((arcs[k], -1))
                    a = arc_set[arcs[k]]
                    advanced = True
                    break
            cur_s[a] += 1
        if advanced:
            continue
        # dead end at set a: retreat
        if not path:
            return 0
        jb, _ = path.pop()
        j, _ = path.pop()
        a = arc_set[j]
        t = arc_tok[j]
        cur_t[t] += 1  # the backward arc jb leads nowhere any more
