"""Upper bounds on the sequence-level optimum that hold at vocabulary scale (docs/trees.md §4b).

For any lossless verifier, accepted length ≥ d needs the text's first d tokens to be a
node of the tree, so with π(w) = P(w is a node of the drafted tree) and p(w) the
target's probability that the text starts with w,

    P(accepted ≥ d) ≤ Σ_{|w| = d} min(p(w), π(w))          (union bound, d ≥ 1)
    P(accepted ≥ 1) ≤ α*(p(·|root), law of the root's children)   (the one-token optimum)
    P(accepted ≥ d) ≤ P(accepted ≥ d − 1).

Summing over d bounds E[accepted] (Proposition 4.2 of docs/trees.md).  The bound is
exact (the optimum itself) on a deterministic (top-k) tree and for one token.  At
vocabulary scale Σ_{|w|=d} min(p(w), π(w)) = E_T[Σ_{w ∈ T, |w|=d} min(1, p(w)/π(w))]:
each sampled tree gives an unbiased term computed from the laws along its own nodes,
and the estimate carries its standard error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._lib import stable as _stable
from .._lib.limits import show_progress
from .._lib.statistics import std_err as sample_std_err
from .._lib.validation import check_rng, one_renormalization_warning
from ..drafts import IID, WithoutReplacement
from ..optimal import optimal_acceptance
from ._checks import _is_markov, resolve_models
from ._draft import sample_tree
from ._draft_law import TreeDraftLaw, as_tree_law
from ._models import as_model
from ._result import TreeResult
from ._shape import topk_indices
from ._shaped_tree import sample_shaped, topk_tree

__all__ = ["upper_bound", "tree_bound_terms"]

Prefix = tuple[int, ...]


def _root_alpha(p: np.ndarray, q: np.ndarray, b: int, kind: str) -> float:
    """α* of the root's children: b i.i.d. draws, b draws without replacement, or top-b."""

    pf, qf = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if kind == "topk":
        return float(pf[topk_indices(qf, b)].sum())
    if b == 1:
        return float(np.minimum(pf, qf).sum())
    law = IID(qf, b) if kind == "iid" else WithoutReplacement(qf, min(b, int(np.count_nonzero(qf))))
    return float(optimal_acceptance(pf, law).value)


class _Pi:
    """π(w) = P(the string w is a node of the drafted tree), read from q along w only."""

    def __init__(self, Q: Any, shape: Any, kind: str, length: int, k: int) -> None:
        self.Q, self.shape, self.kind, self.length, self.k = Q, shape, kind, length, k
        self._laws: dict[tuple[Prefix, int], WithoutReplacement] = {}
        # swor nodes whose children carry different subtrees need the law of each draw's rank
        self._mixed: set[tuple[int, ...]] = set()
        if shape is not None and kind == "swor":
            for u in shape.internal():
                subs = {_subshape(shape, u + (j,)) for j in range(shape.branches(u))}
                if len(subs) > 1:
                    self._mixed.add(u)

    def incl(self, pre: Prefix, x: int, b: int) -> float:
        """P(x is among b draws without replacement from q(·|pre)) (the law built once per
        (pre, b))."""
        if (pre, b) not in self._laws:
            q = np.asarray(self.Q(pre), dtype=np.float64)
            self._laws[(pre, b)] = WithoutReplacement(q, min(b, int(np.count_nonzero(q))))
        return float(self._laws[(pre, b)].inclusion([x])[0])

    def __call__(self, w: Prefix) -> float:
        Q = self.Q
        if self.shape is None:  # k chains of `length` tokens
            if self.kind == "iid":
                qw = 1.0
                for i in range(len(w)):
                    qw *= float(Q(w[:i])[w[i]])
                return float(_stable.one_minus_pow1m(min(qw, 1.0), self.k)) if self.k > 1 else qw
            v = self.incl((), w[0], self.k)
            for i in range(1, len(w)):
                v *= float(Q(w[:i])[w[i]])
            return v
        return self._g((), (), w)

    def _g(self, v: tuple[int, ...], pre: Prefix, s: Prefix) -> float:
        """P(the subtree at shape node v, whose string is pre, holds the relative string s)."""
        if not s:
            return 1.0
        b = self.shape.branches(v)
        if b == 0:
            return 0.0
        x, rest = s[0], s[1:]
        q = self.Q(pre)
        if self.kind == "topk":
            kids = topk_indices(q, b)
            return self._g(v + (kids.index(x),), pre + (x,), rest) if x in kids else 0.0
        if self.kind == "iid":
            miss = 1.0
            for j in range(b):
                miss *= 1.0 - float(q[x]) * self._g(v + (j,), pre + (x,), rest)
            return 1.0 - miss
        if v in self._mixed:  # P(x is the (j+1)-th draw) = incl(j + 1) − incl(j), times child j's subtree
            out, before = 0.0, 0.0
            for j in range(b):
                upto = self.incl(pre, x, j + 1)
                if upto > before:
                    out += (upto - before) * self._g(v + (j,), pre + (x,), rest)
                before = upto
            return out
        return self.incl(pre, x, b) * self._g(v + (0,), pre + (x,), rest)


def _subshape(shape: Any, v: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(t[len(v) :] for t in shape.paths if t[: len(v)] == v and len(t) > len(v))


def _p_of(P: Any, w: Prefix) -> float:
    v = 1.0
    for i in range(len(w)):
        v *= float(P(w[:i])[w[i]])
    return v


@one_renormalization_warning
def upper_bound(
    target: Any,
    draft: Any = None,
    *,
    drafts: TreeDraftLaw | None = None,
    samples: int | None = None,
    rng: Any = None,
    prompt: int | None = None,
    temperature: float | None = None,
    progress: bool | None = None,
) -> TreeResult:
    """An upper bound on the expected accepted tokens of *any* lossless verifier.

    The draft tree's law ``drafts`` is a :class:`TreeDraftLaw`, as in :func:`accepted_tokens`.  Exact (every string with p > 0 and π > 0, small vocabularies) unless
    ``samples`` is given: then the depth ≥ 2 terms are Rao-Blackwellised estimates
    over that many sampled trees (``std_err`` set), read from the laws at the sampled
    trees' nodes only, and the depth-1 term is the exact one-token optimum α*.  Top-k
    trees are exact at any vocabulary (one tree), where the bound is the optimum.

    ``value`` is the bound; ``details["per_depth"]`` the terms of P(accepted ≥ d).
    ``progress``: a bar over sampled trees (default: on in a terminal or Jupyter).

    Parameters
    ----------
    target, draft : sequence models
        As in :func:`accepted_tokens` (a Markov pair as ``target`` alone).
    drafts : TreeDraftLaw, optional
        The draft tree's law, chains or a shape, as in :func:`accepted_tokens` (default:
        one chain of one token).
    samples : int, optional
        Estimate the depth ≥ 2 terms from this many sampled trees (at least 2).
    rng : numpy.random.Generator or int, optional
        Randomness of the sampled estimate.
    prompt : int, optional
        For a Markov pair: the state the step starts from (required).
    temperature : float, optional
        Apply p ∝ p^(1/T) to both models.
    progress : bool, optional
        A bar over sampled trees.

    Returns
    -------
    TreeResult
        ``value`` the bound (``std_err`` when sampled), ``details["per_depth"]`` its terms.

    Raises
    ------
    InputError
        If the tree is given both ways or incompletely, a Markov pair comes without
        ``prompt``, or ``samples`` is below 2.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> res = tree.upper_bound(p, q, drafts=tree.TreeDraftLaw(length=1))
    >>> round(float(res.value), 4)  # one token: alpha* = sum of min(p, q) = 2/3
    0.6667
    >>> tree.upper_bound(p, q, drafts=tree.TreeDraftLaw(length=2)).value >= F(11, 9)  # above block verification
    True
    """

    if _is_markov(target) and prompt is None:
        raise InputError("prompt: give the Markov pair's prompt state for a bound")
    P, Q = resolve_models(target, draft, prompt, temperature)
    law = as_tree_law(drafts)
    shp, L, kind, leaves = law.shape, law.length, law.children, law.k
    b0 = shp.branches(()) if shp is not None else law.k
    Pc, Qc = P.cached(), Q.cached()
    alpha1 = _root_alpha(Pc(()), Qc(()), b0, kind)
    pi = None

    def per_tree(t: Any) -> np.ndarray:
        terms = np.zeros(L + 1)
        for w in t.nodes():
            if len(w) >= 2:
                pw = _p_of(Pc, w)
                if pw > 0:
                    terms[len(w)] += min(1.0, pw / pi(w))
        return terms

    def result(per_depth: np.ndarray, method: str, trees: int, err: float | None = None, **details: Any) -> TreeResult:
        value = float(per_depth.sum())
        return TreeResult(
            value,
            "bound",
            kind,
            L,
            leaves,
            method=method,
            std_err=err,
            trees=trees,
            shape=shp,
            details={"per_depth": per_depth, "alpha_root": alpha1, **details},
        )

    if kind == "topk" and shp is not None:
        pi = _Pi(Qc, shp, kind, L, leaves)
        t = topk_tree(Qc, shp)
        terms = per_tree(t)
        terms[1] = alpha1
        return result(_monotone(terms[1:]), "exact", 1)
    if samples is None:
        terms = np.zeros(L + 1)
        pi = _Pi(Qc, shp, kind, L, leaves)
        level: list[Prefix] = [()]
        for d in range(1, L + 1):  # every string w with p(w) > 0 and π(w) > 0
            level = [
                w + (x,)
                for w in level
                for x in np.flatnonzero((np.asarray(Pc(w)) != 0) & (np.asarray(Qc(w)) != 0) | (kind == "topk"))
            ]
            level = [w for w in level if _p_of(Pc, w) > 0 and pi(w) > 0]
            terms[d] = sum(min(_p_of(Pc, w), pi(w)) for w in level)
        count = 0
        terms[1] = min(terms[1], alpha1)
        return result(_monotone(terms[1:]), "exact", count)
    from tqdm.auto import tqdm

    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 2:
        raise InputError(f"samples: must be an integer >= 2, got {samples!r}")
    gen = check_rng(rng)
    pi = _Pi(Qc, shp, kind, L, leaves)
    rows = np.empty((int(samples), L + 1))
    for i in tqdm(range(int(samples)), desc="trees", unit="tree", disable=not show_progress(progress)):
        t = sample_shaped(Qc, shp, kind, gen) if shp is not None else sample_tree(Qc, L, leaves, kind, gen)
        rows[i] = per_tree(t)
    mean = rows.mean(axis=0)
    mean[1] = alpha1
    err = sample_std_err(rows[:, 2:].sum(axis=1)) if L >= 2 else 0.0
    return result(mean[1:], "sampled", int(samples), err, values=rows)


def tree_bound_terms(t: Any, P: Any, Q: Any, drafts: str, k: int) -> np.ndarray:
    """Per-depth terms Σ_{w ∈ t, |w| = d} min(1, p(w)/π(w)) of one drafted tree of k
    chains (index d = 0 … L; the depth-1 term is to be replaced by α*_1)."""

    Pm, Qm = as_model(P, "target").cached(), as_model(Q, "draft").cached()
    pi = _Pi(Qm, getattr(t, "shape", None), drafts, t.length, k)
    terms = np.zeros(t.length + 1)
    for w in t.nodes():
        if len(w) >= 2:
            pw = _p_of(Pm, w)
            if pw > 0:
                terms[len(w)] += min(1.0, pw / pi(w))
    return terms


def _monotone(terms: np.ndarray) -> np.ndarray:
    """P(accepted ≥ d) ≤ P(accepted ≥ d − 1): cap each term by the one before."""
    out = terms.astype(np.float64).copy()
    for d in range(1, out.size):
        out[d] = min(out[d], out[d - 1])
    return out
