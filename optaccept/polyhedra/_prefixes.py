r"""Exhaustive exact check that the n + 1 sorted prefixes suffice (docs/theory.md §2.1, §2.2).

Claim (Hu et al., ICLR 2025, §4, for i.i.d. drafts, docs/theory.md §2.1; without replacement
proved in docs/theory.md Theorem 2.7, stated by Hu et al.): the minimum over all S ⊆ Ω of

.. math::  p(S) + 1 - D(\mathrm{set} \subseteq S)

is attained at a prefix of the tokens sorted by ``p_i / q_i`` ascending
(``q_i = 0`` last, ties by index).  Here every pair (p, q) with entries in
``{0, 1/m, …, 1}`` is enumerated (every ordering of the ratios occurs), and the
prefix minimum is compared with the minimum over all ``2ⁿ`` subsets in exact
integer arithmetic.  This is independent of :mod:`optaccept.optimal`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction
from math import comb, factorial, lcm
from typing import Any

import numpy as np

from .._lib.limits import count, refuse, show_progress
from ..drafts import IID, WithoutReplacement

__all__ = ["compositions", "prefix_order", "check_prefixes", "check_orderings", "MAX_PREFIX_WORK"]

#: Largest number of (instance, subset) pairs a check enumerates: about 20 s (measured: the grid
#: n = 4, step 1/7, k = 2, 3, 4 — 691,200 pairs — takes 6 s).
MAX_PREFIX_WORK = 2_000_000


def _check_work(where: str, work: int) -> None:
    if work > MAX_PREFIX_WORK:
        raise refuse(
            where, f"{count(work)} (instance, subset) pairs", f"{count(MAX_PREFIX_WORK)}", "use a smaller n or grid"
        )


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """All tuples of ``parts`` non-negative integers summing to ``total``."""
    for cuts in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, out = -1, []
        for c in (*cuts, total + parts - 1):
            out.append(c - prev - 1)
            prev = c
        yield tuple(out)


def prefix_order(a: tuple[int, ...], b: tuple[int, ...]) -> list[int]:
    """Tokens sorted by a_i / b_i ascending; b_i = 0 last; ties by index."""
    return sorted(range(len(a)), key=lambda i: (b[i] == 0, Fraction(a[i], b[i]) if b[i] else 0, i))


def _subset_probs(b: tuple[int, ...], m: int, k: int, law: str) -> list[Fraction]:
    """D(set ⊆ S) for every mask S (bit i = token i), exactly: the draft law's own
    ``all_subset_probs`` (i.i.d.: q(S)ᵏ; without replacement: Σ of W(A) over the k-sets A ⊆ S
    by the W(B) recursion of :class:`optaccept.WithoutReplacement`)."""
    q = [Fraction(x, m) for x in b]
    return (IID(q, k) if law == "iid" else WithoutReplacement(q, k)).all_subset_probs()


def check_prefixes(n: int, m: int, ks: tuple[int, ...], law: str = "iid", *, progress: Any = None) -> dict:
    """Compare prefix minimum and subset minimum of (★) over the whole grid.

    Returns a dict with the number of instances, the orderings covered, and the
    counterexamples found (at most 5 kept), per k.  Refuses (before any work) more than
    :data:`MAX_PREFIX_WORK` (instance, subset) pairs, C(m + n − 1, n − 1)² · 2ⁿ per k;
    ``progress`` shows a ``tqdm`` bar over the draft vectors q of the grid (``None``: where
    someone watches).
    """
    size = comb(m + n - 1, n - 1)
    _check_work(f"n = {n}, m = {m}", len(ks) * size * size * 2**n)
    from tqdm.auto import tqdm

    grid = list(compositions(m, n))
    full = (1 << n) - 1
    out: dict = {"n": n, "m": m, "law": law, "per_k": {}}
    bar = tqdm(
        total=len(ks) * len(grid), desc=f"prefix check n = {n}, 1/{m}", unit="q", disable=not show_progress(progress)
    )
    for k in ks:
        if law == "swor" and k > n:
            continue
        instances, bad, orders = 0, [], set()
        for b in grid:
            bar.update(1)
            if law == "swor" and sum(1 for x in b if x) < k:
                continue
            D = _subset_probs(b, m, k, law)
            for a in grid:
                instances += 1
                ps = {}
                vals = {}
                for mask in range(1 << n):
                    ps[mask] = sum(a[i] for i in range(n) if mask >> i & 1)
                    vals[mask] = Fraction(ps[mask], m) + 1 - D[mask]
                best = min(vals.values())
                order = prefix_order(a, b)
                ratios = [Fraction(a[i], b[i]) for i in range(n) if b[i]]
                if len(set(ratios)) == n:
                    orders.add(tuple(order))
                mask, pref = 0, [vals[0]]
                for i in order:
                    mask |= 1 << i
                    pref.append(vals[mask])
                assert mask == full
                if min(pref) != best:
                    if len(bad) < 5:
                        arg = min(vals, key=lambda s: vals[s])
                        bad.append(
                            {
                                "p": [f"{x}/{m}" for x in a],
                                "q": [f"{x}/{m}" for x in b],
                                "subset_min": str(best),
                                "prefix_min": str(min(pref)),
                                "argmin": [i for i in range(n) if arg >> i & 1],
                            }
                        )
                    else:
                        bad.append(None)
        out["per_k"][str(k)] = {
            "instances": instances,
            "strict_orderings_covered": len(orders),
            "orderings_total": factorial(n),
            "failures": sum(1 for _ in bad),
            "counterexamples": [x for x in bad if x is not None],
        }
    bar.close()
    out["holds"] = all(v["failures"] == 0 for v in out["per_k"].values())
    out["all_orderings"] = all(v["strict_orderings_covered"] == v["orderings_total"] for v in out["per_k"].values())
    return out


def check_orderings(
    n: int, ks: tuple[int, ...], law: str = "iid", reps: int = 3, seed: int = 0, *, progress: Any = None
) -> dict:
    """For every ordering π of the n tokens, ``reps`` exact instances whose ratios p/q are
    strictly increasing along π (q random with full support, ratios random distinct
    integers, p ∝ ratio·q); compare prefix and subset minima exactly.  Refuses (before any
    work) more than :data:`MAX_PREFIX_WORK` (instance, subset) pairs, n!·reps·2ⁿ per k;
    ``progress``: a ``tqdm`` bar over the orderings (``None``: where someone watches)."""
    from tqdm.auto import tqdm

    _check_work(f"n = {n}", len(ks) * factorial(n) * reps * 2**n)
    rng = np.random.default_rng(seed)
    bar = tqdm(
        total=len(ks) * factorial(n), desc=f"orderings n = {n}", unit="ordering", disable=not show_progress(progress)
    )
    out: dict = {"n": n, "law": law, "reps": reps, "seed": seed, "per_k": {}}
    for k in ks:
        if law == "swor" and k > n:
            continue
        failures, cex, count = 0, [], 0
        for perm in itertools.permutations(range(n)):
            bar.update(1)
            for _ in range(reps):
                b = [int(x) for x in rng.integers(1, 20, size=n)]
                r = sorted(int(x) for x in rng.choice(np.arange(0, 50), size=n, replace=False))
                ratio = [0] * n
                for rank, tok in enumerate(perm):
                    ratio[tok] = r[rank]
                qs = [Fraction(x, sum(b)) for x in b]
                w = [ratio[i] * qs[i] for i in range(n)]
                if sum(w) == 0:
                    continue
                ps = [x / sum(w) for x in w]
                # common denominator so that the integer grid code can be reused

                m = lcm(*(x.denominator for x in ps + qs))
                a = tuple(int(x * m) for x in ps)
                bb = tuple(int(x * m) for x in qs)
                D = _subset_probs(bb, m, k, law)
                vals = {
                    mask: Fraction(sum(a[i] for i in range(n) if mask >> i & 1), m) + 1 - D[mask]
                    for mask in range(1 << n)
                }
                order = prefix_order(a, bb)
                assert tuple(order) == perm
                mask, pref = 0, [vals[0]]
                for i in order:
                    mask |= 1 << i
                    pref.append(vals[mask])
                count += 1
                if min(pref) != min(vals.values()):
                    failures += 1
                    if len(cex) < 5:
                        cex.append({"p": [str(x) for x in ps], "q": [str(x) for x in qs]})
        out["per_k"][str(k)] = {
            "instances": count,
            "orderings": factorial(n),
            "failures": failures,
            "counterexamples": cex,
        }
    bar.close()
    out["holds"] = all(v["failures"] == 0 for v in out["per_k"].values())
    return out
