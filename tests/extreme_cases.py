"""Extreme instances and exact references for them, built independently of optaccept.

Every reference reads the float inputs as the exact rationals they are (``Fraction(x)``),
rescales them to sum exactly 1, enumerates the ordered draft tuples of the law in
Fractions and takes the dual (★) α* = min_S p(S) + 1 − D(set ⊆ S) over all 2^n subsets.
Nothing here calls the library, so the references share no code (and no rounding) with
what they check.  Used by ``tests/foundations/test_extremes.py`` and ``benchmarks/bench_extremes.py``;
:func:`nasty_row_pairs` by the optimal verifier's one-shot tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction

import numpy as np

#: Masses put on the "rest" of a near-one-hot law: 1 − 1e-6 … 1 − 1e-15 on one token.
NEAR_ONE_HOT = (1e-6, 1e-9, 1e-12, 1e-15)
#: Tiny masses, subnormals included (5e-324 is the smallest positive double).
TINY = (1e-80, 1e-200, 1e-300, 1e-310, 1.5e-323, 5e-324)


def exact(v) -> list[Fraction]:
    """The floats as exact rationals, rescaled to sum exactly 1."""
    fr = [Fraction(float(x)) for x in v]
    s = sum(fr, Fraction(0))
    return [x / s for x in fr]


def tuple_law(kind: str, q: list[Fraction], k: int) -> dict[tuple[int, ...], Fraction]:
    """Ordered draft tuples and their exact probabilities."""
    n = len(q)
    supp = [i for i in range(n) if q[i] > 0]
    out: dict[tuple[int, ...], Fraction] = {}
    if kind == "iid":
        for t in itertools.product(supp, repeat=k):
            out[t] = math.prod((q[i] for i in t), start=Fraction(1))
    elif kind == "swor":
        for t in itertools.permutations(supp, k):
            pr, used = Fraction(1), Fraction(0)
            for i in t:
                pr *= q[i] / (1 - used)
                used += q[i]
            out[t] = pr
    elif kind == "topk":  # the k most likely tokens, ties to the lower index, with probability 1
        out[tuple(sorted(range(n), key=lambda i: (-q[i], i))[:k])] = Fraction(1)
    elif kind in ("greedy", "spechub"):
        top = sorted(range(n), key=lambda i: (-q[i], i))[: k - 1]
        rest = 1 - sum((q[i] for i in top), Fraction(0))
        if kind == "greedy":
            for y in supp:
                if y not in top:
                    out[tuple(top) + (y,)] = q[y] / rest
        else:  # SpecHub: x1 ~ q; (x1, a) if x1 != a, else (a, x2) with x2 ~ q off a
            a = top[0]
            for i in supp:
                if i != a:
                    out[(i, a)] = out.get((i, a), Fraction(0)) + q[i]
                    out[(a, i)] = out.get((a, i), Fraction(0)) + q[a] * q[i] / rest
    else:
        raise ValueError(kind)
    return out


def independent_law(qs: list[list[Fraction]]) -> dict[tuple[int, ...], Fraction]:
    supps = [[i for i, v in enumerate(r) if v > 0] for r in qs]
    return {t: math.prod((qs[m][i] for m, i in enumerate(t)), start=Fraction(1)) for t in itertools.product(*supps)}


def alpha_star(p: list[Fraction], law: dict[tuple[int, ...], Fraction]) -> Fraction:
    """min over all S of p(S) + 1 − D(set ⊆ S), exactly."""
    n = len(p)
    sets: dict[int, Fraction] = {}
    for t, pr in law.items():
        m = 0
        for i in t:
            m |= 1 << i
        sets[m] = sets.get(m, Fraction(0)) + pr
    best = Fraction(2)
    for S in range(1 << n):
        pS = sum((p[i] for i in range(n) if S >> i & 1), Fraction(0))
        dS = sum((pr for m, pr in sets.items() if m & ~S == 0), Fraction(0))
        best = min(best, pS + 1 - dS)
    return best


def _near_one_hot(rng: np.random.Generator, n: int, eps: float, at: int) -> np.ndarray:
    w = rng.dirichlet(np.ones(n - 1)) * eps
    v = np.insert(w, at, 1.0 - eps)
    return v


def _with_tiny(rng: np.random.Generator, n: int, tiny: float, count: int) -> np.ndarray:
    v = rng.dirichlet(np.ones(n) * rng.choice([0.3, 1.0]))
    idx = rng.choice(n, size=count, replace=False)
    v[idx] = tiny * rng.integers(1, 4, size=count)
    return v


def instances(count: int, seed: int = 0, nmax: int = 5) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """``count`` (label, p, q) pairs of extreme shapes, n = 3 … nmax, deterministic."""
    rng = np.random.default_rng(seed)
    shapes = ("q one-hot", "p one-hot", "both one-hot", "same one-hot", "tiny q", "tiny p", "tiny both", "mixed")
    for c in range(count):
        shape = shapes[c % len(shapes)]
        n = int(rng.integers(3, nmax + 1))
        eps = NEAR_ONE_HOT[c // len(shapes) % len(NEAR_ONE_HOT)]
        tiny = TINY[c % len(TINY)]
        a, b = rng.choice(n, size=2, replace=False)
        p = rng.dirichlet(np.ones(n))
        q = rng.dirichlet(np.ones(n))
        if shape == "q one-hot":
            q = _near_one_hot(rng, n, eps, a)
        elif shape == "p one-hot":
            p = _near_one_hot(rng, n, eps, a)
        elif shape == "both one-hot":
            p, q = _near_one_hot(rng, n, eps, a), _near_one_hot(rng, n, eps, b)
        elif shape == "same one-hot":
            p, q = _near_one_hot(rng, n, eps, a), _near_one_hot(rng, n, eps * 10, a)
        elif shape == "tiny q":
            q = _with_tiny(rng, n, tiny, int(rng.integers(1, n)))
        elif shape == "tiny p":
            p = _with_tiny(rng, n, tiny, int(rng.integers(1, n)))
        elif shape == "tiny both":
            p = _with_tiny(rng, n, tiny, int(rng.integers(1, n)))
            q = _with_tiny(rng, n, TINY[(c + 1) % len(TINY)], int(rng.integers(1, n)))
        else:  # near-one-hot q whose rest holds tiny and zero masses
            q = _near_one_hot(rng, n, eps, a)
            q[b] = tiny
            p = _with_tiny(rng, n, tiny, 1)
            p[a] = 0.0
        yield f"{shape} n={n} eps={eps:g} tiny={tiny:g}", p / p.sum(), q / q.sum()


# The reproducers of the numerical-robustness report, with their exact values.
REPRODUCERS = {
    "spechub cancellation": (
        np.array([1e-12, 1 - 2e-12, 1e-12]),
        np.array([1 - 2e-12, 1e-12, 1e-12]),
    ),
    "rrs_wor cancellation": (
        np.array([1.8625809099935434e-12, 1.8625809099935434e-12, 0.5387158062229749, 0.46128419377330004]),
        np.array([1.1599343617649056e-12, 0.513055783150679, 1.1599343617649056e-12, 0.48694421684700123]),
    ),
    "swor 1e-80": (
        np.array([1e-80, 1 - 2e-80, 1e-80]),
        np.array([1 - 2e-80, 1e-80, 1e-80]),
    ),
    "swor subnormal": (
        np.array([1.0] + [1.04e-322] * 4),
        np.array([1.5e-323, 1.0] + [1.5e-323] * 3),
    ),
}


LAWS = ("iid", "swor", "greedy", "spechub", "topk")


def _law(oa, kind: str, q: np.ndarray, k: int):
    return {
        "iid": lambda: oa.IID(q, k),
        "swor": lambda: oa.WithoutReplacement(q, k),
        "greedy": lambda: oa.Greedy(q, k),
        "spechub": lambda: oa.SpecHub(q),
        "topk": lambda: oa.TopK(q, k),
    }[kind]()


def _methods(kind: str, n: int, k: int, transport: bool) -> list[str]:
    out = ["auto", "subsets", "lp"]
    if kind in ("iid", "swor", "greedy", "spechub", "topk"):
        out.append("sorted")
    if kind == "iid" and k == 2:
        out.append("closed_form")
    if transport and n ** (k + 1) <= 4000:
        out.append("transport")
    return out


def _exact_verifier_values(name: str, p, q, k: int, alpha_own):
    """Exact acceptances (output notion) that have a closed form, in Fractions."""
    if name == "sd":
        return sum((min(a, b) for a, b in zip(p, q)), Fraction(0))
    if name == "nss":
        return sum((a * (1 - (1 - b) ** k) for a, b in zip(p, q)), Fraction(0))
    if name == "naive_tree":
        base = sum((min(a, b) for a, b in zip(p, q)), Fraction(0))
        return base + sum((max(a - b, 0) * (1 - (1 - b) ** (k - 1)) for a, b in zip(p, q)), Fraction(0))
    if name in ("hu_greedy", "optimal"):
        return alpha_own
    if name == "rrs":
        return _rrs_exact(p, q, k, replace=True)
    if name == "rrs_wor" and k <= 3:
        return _rrs_exact(p, q, k, replace=False)
    return None


def _rrs_exact(p, q, k: int, replace: bool) -> Fraction:
    """Recursive rejection sampling, every branch in Fractions: draft x from the current
    draft law q_m (q itself, or q off the drafted tokens renormalised), accept it with
    probability min(1, r(x)/q_m(x)), else go on with r ← (r − q_m)₊ normalised."""
    n = len(p)

    def rec(r, drafted: frozenset, m: int) -> Fraction:
        rest = 1 - sum((q[i] for i in drafted), Fraction(0))
        qm = [Fraction(0) if i in drafted else q[i] / rest for i in range(n)]
        acc = sum((min(r[i], qm[i]) for i in range(n)), Fraction(0))
        diff = [max(r[i] - qm[i], Fraction(0)) for i in range(n)]
        s = sum(diff, Fraction(0))
        if m == k or s == 0:
            return acc
        rnew = [d / s for d in diff]
        if replace:  # the residual does not depend on which draft was rejected
            return acc + (1 - acc) * rec(rnew, drafted, m + 1)
        return acc + sum(
            (max(qm[x] - r[x], Fraction(0)) * rec(rnew, drafted | {x}, m + 1) for x in range(n) if qm[x] > r[x]),
            Fraction(0),
        )

    return rec(list(p), frozenset(), 1)


_OWN_LAW = {"sd": "iid", "nss": "iid", "naive_tree": "iid", "rrs": "iid", "kseq": "iid", "khisti_is": "iid",
            "rrs_wor": "swor", "spechub": "spechub", "hu_greedy": "greedy"}  # fmt: skip


def measure(p: np.ndarray, q: np.ndarray, ks, *, transport: bool = False, batched: bool = True):
    """Yield (what, error) for every method, verifier and the batched path on one instance.

    Methods: |value − α*| against the exact enumeration.  Verifiers: excess of the exact
    acceptance over α* of its own draft law (never allowed above it), and, where a closed
    form exists, |acceptance − exact|.  Batched: |value − α*|.
    """
    import optaccept as oa
    from optaccept import verifiers

    pe, qe = exact(p), exact(q)
    n = len(p)
    supp = sum(1 for v in qe if v > 0)
    cache: dict[tuple[str, int], Fraction] = {}

    def star(kind: str, k: int) -> Fraction:
        if (kind, k) not in cache:
            cache[(kind, k)] = alpha_star(pe, tuple_law(kind, qe, k))
        return cache[(kind, k)]

    for k in ks:
        for kind in LAWS:
            if kind != "iid" and k > supp or (kind == "spechub" and k != 2):
                continue
            ref = star(kind, k)
            law = _law(oa, kind, q, k)
            for m in _methods(kind, n, k, transport):
                if m == "sorted" and kind == "swor" and False:
                    continue
                val = oa.optimal_acceptance(p, law, method=m).value
                yield f"method {m} / {kind}", abs(float(val) - float(ref))
            if batched and kind in ("iid", "swor", "greedy", "topk"):
                val = oa.batched_optimal_acceptance(p[None, :], q[None, :], k, drafts=kind)
                yield f"batched / {kind}", abs(float(np.asarray(val)[0]) - float(ref))
        for v in verifiers.ALL:
            if not v.supports(k):
                continue
            own = _OWN_LAW.get(v.name)
            if own is None:  # a verifier on another law: α* of the law it reports
                law = v.drafts(q, k)
                own = {"IID": "iid", "WithoutReplacement": "swor", "Greedy": "greedy", "SpecHub": "spechub"}.get(
                    type(law).__name__
                )
                if own is None:
                    continue
            if own != "iid" and k > supp:
                continue
            try:
                acc = v.acceptance(p, q, k)
            except oa.MethodError:
                continue
            a_own = star(own, k)
            yield f"verifier {v.name} (excess over α*)", max(0.0, float(acc) - float(a_own))
            ref = _exact_verifier_values(v.name, pe, qe, k, a_own)
            if ref is not None:
                yield f"verifier {v.name} (vs exact)", abs(float(acc) - float(ref))


def concentrated_p(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Most of p on a few random tokens, the rest spread, so that α* < 1: S = all but the
    heavy tokens has a small p(S) and D(S) = C(n − heavy, k)/C(n, k)."""
    heavy = 1 if k > n // 2 else 3
    rest = 1e-6 if k > n // 2 else 0.1
    p = rng.dirichlet(np.ones(n)) * rest
    idx = rng.choice(n, size=heavy, replace=False)
    p[idx] += rng.dirichlet(np.ones(heavy)) * (1 - rest)
    return p / p.sum()


def uniform_alpha(p: np.ndarray, k: int) -> float:
    """α* for uniform q without replacement: the best S of each size m holds the m
    smallest p, and D(set ⊆ S) = C(m, k)/C(n, k) (exact rationals)."""
    n = p.size
    ps = [Fraction(float(v)) for v in np.sort(p)]
    tot = sum(ps, Fraction(0))
    best, P = Fraction(1), Fraction(0)
    for m in range(1, n + 1):
        P += ps[m - 1] / tot
        best = min(best, P + 1 - Fraction(math.comb(m, k), math.comb(n, k)))
    return float(best)


def nasty_row_pairs(rng: np.random.Generator, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs (p, q) of length n: zeros on both sides, disjoint supports, ties, p = q,
    near-one-hot laws (1 − 1e-12), tiny masses, ratios equal but for their last bits."""
    zp = rng.dirichlet(np.full(n, 0.3))
    zp[: n // 3] = 0.0
    zp /= zp.sum()
    hot = np.full(n, 1e-12 / (n - 1))
    hot[n // 2] = 1.0 - 1e-12
    base = rng.dirichlet(np.ones(max(n // 6, 1)))
    ties = np.resize(np.repeat(base, 6), n)
    ties /= ties.sum()
    flat = np.full(n, 1.0 / n)
    left = np.zeros(n)
    left[: n // 2] = rng.random(n // 2)
    right = np.zeros(n)
    right[n // 2 :] = rng.random(n - n // 2)
    left /= left.sum()
    right /= right.sum()
    tiny = rng.dirichlet(np.ones(n))
    tiny[::3] *= 1e-200
    tiny /= tiny.sum()
    near = rng.dirichlet(np.ones(n))
    close = near * (1 + 1e-15 * rng.integers(-3, 4, n))
    close /= close.sum()
    mixed = 0.5 * left + 0.5 * right  # overlapping supports with both sides' zeros
    sub = rng.dirichlet(np.ones(n))
    sub[::4] = 5e-320  # subnormal masses: ratios off the normal range (the numpy order)
    sub /= sub.sum()
    return [
        (sub, rng.dirichlet(np.ones(n))),
        (rng.dirichlet(np.ones(n)), sub),
        (zp, rng.dirichlet(np.ones(n))),
        (rng.dirichlet(np.ones(n)), hot),
        (hot, flat),
        (ties, ties[::-1].copy()),
        (flat, flat),
        (zp, zp),
        (left, mixed),
        (mixed, right),
        (tiny, rng.dirichlet(np.ones(n))),
        (rng.dirichlet(np.ones(n)), tiny),
        (near, close),
    ]
