"""Monte Carlo simulators: each verifier run step by step with real coin flips.

Written independently of the exact per-tree formulas (``_verifiers.py``) so that
the two check each other: a simulator draws a tree from the draft model, runs the
verification algorithm with a :class:`numpy.random.Generator`, and returns the
accepted tokens and the emitted (correction or bonus) token.  The test-suite
compares the mean accepted length with the exact value (5σ) and the law of the
generated text with the target's (losslessness).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.limits import show_progress
from .._lib.stable import residual
from .._lib.validation import check_choice, check_rng, one_renormalization_warning
from ._draft import sample_tree
from ._draft_law import TreeDraftLaw, as_tree_law
from ._models import as_model
from ._shaped_tree import sample_shaped

__all__ = ["simulate_step", "simulate"]

Prefix = tuple[int, ...]


def _f(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def _sample(law: np.ndarray, rng: np.random.Generator) -> int:
    law = _f(law)
    return int(rng.choice(law.size, p=law / law.sum()))


def _residual(p: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """The residual law (:func:`optaccept._lib.stable.residual`), or None when it has no mass."""
    law, mass = residual(p, q)
    return None if mass <= 0 else law


def _run_token(tree: Any, P, Q, rng) -> tuple[Prefix, int]:
    u: Prefix = ()
    while True:
        nodes = tree.candidate_nodes(u)
        w = tree.prefix(u)
        p, q = _f(P(w)), _f(Q(w))
        nxt = None
        for c in nodes:
            x = tree.token(c)
            if rng.random() < min(1.0, p[x] / q[x]):
                nxt = c
                break
            r = _residual(p, q)
            if r is None:  # p == q: a rejection has probability 0
                break
            p = r
            if tree.drafts == "swor":
                q = q.copy()
                q[x] = 0.0
                if q.sum() <= 0:
                    break
                q = q / q.sum()
        if nxt is None:
            return w, _sample(p, rng)
        u = nxt


def _run_target_only(tree: Any, P, Q, rng) -> tuple[Prefix, int]:
    """Draw Y from the target; follow the first child carrying Y, else emit Y."""
    u: Prefix = ()
    while True:
        w = tree.prefix(u)
        y = _sample(P(w), rng)
        nxt = next((c for c in tree.child_nodes(u) if tree.token(c) == y), None)
        if nxt is None:
            return w, y
        u = nxt


def _run_block(tree: Any, P, Q, rng) -> tuple[Prefix, int]:
    """Sun et al. Algorithm 2, as written: weights p_i, stopping rates h_i, then
    τ = max{i : η_i = 1} and the token from the residual at τ (bonus at γ)."""
    (chain,) = tree.chains
    gamma = len(chain)
    ps = [1.0]
    hs = [1.0]
    for i in range(1, gamma + 1):
        u = chain[: i - 1]
        ps.append(min(1.0, ps[-1] * _f(P(u))[chain[i - 1]] / _f(Q(u))[chain[i - 1]]))
        if i < gamma:
            v = chain[:i]
            s = np.maximum(ps[i] * _f(P(v)) - _f(Q(v)), 0.0).sum()
            hs.append(1.0 if s + 1 - ps[i] <= 0 else s / (s + 1 - ps[i]))
        else:
            hs.append(ps[gamma])
    eta = [True] + [rng.random() < hs[i] for i in range(1, gamma + 1)]
    tau = max(i for i in range(gamma + 1) if eta[i])
    v = chain[:tau]
    if tau == gamma:
        return v, _sample(P(v), rng)
    r = _residual(ps[tau] * _f(P(v)), _f(Q(v)))
    return v, _sample(P(v) if r is None else r, rng)


def _run_traversal(tree: Any, P, Q, rng) -> tuple[Prefix, int]:
    """Weng et al.: visit the first leaf of the live tree in post-order, accept the
    whole path with its sequence-level rate, else delete the leaf and update the
    parent (residual target, rate, draft law without the leaf's token)."""
    if tree.drafts == "topk":
        raise MethodError("verifier 'traversal' needs children drawn from q, not top-k children")
    live = {u: tree.child_nodes(u) for u in tree.internal_nodes()}
    mb = {u: _f(P(tree.prefix(u))) for u in live}
    ms = {u: _f(Q(tree.prefix(u))) for u in live}
    rate = {(): 1.0}

    def refresh(u: Prefix) -> None:
        for c in live.get(u, ()):
            rate[c] = min(1.0, rate[u] * mb[u][tree.token(c)] / ms[u][tree.token(c)])
            refresh(c)

    refresh(())
    while True:
        c: Prefix = ()
        while live.get(c):
            c = live[c][0]
        if c == () or rng.random() < rate[c]:
            return tree.prefix(c), _sample(mb[c] if c in mb else P(tree.prefix(c)), rng)
        u, x = c[:-1], tree.token(c)
        live[u].remove(c)
        r = np.maximum(rate[u] * mb[u] - ms[u], 0.0)
        s = r.sum()
        if s > 0:
            mb[u] = r / s
        rate[u] = 1.0 if s + 1 - rate[u] <= 0 else s / (s + 1 - rate[u])
        if tree.distinct_siblings:
            m = ms[u].copy()
            m[x] = 0.0
            if m.sum() <= 0:
                live[u] = []
            else:
                ms[u] = m / m.sum()
        refresh(u)


_RUNNERS = {"token": _run_token, "block": _run_block, "traversal": _run_traversal, "target_only": _run_target_only}


def simulate_step(tree: Any, P: Callable, Q: Callable, verifier: str, rng: Any) -> tuple[Prefix, int]:
    """Run ``verifier`` once on ``tree``: (accepted tokens, emitted token).

    Parameters
    ----------
    tree : DraftTree or ShapedTree
        The drafted tree.
    P, Q : callable
        Target and draft models, ``prefix -> next-token probabilities``.
    verifier : {"token", "block", "traversal", "target_only"}
        The rule run.
    rng : numpy.random.Generator or int
        Source of the rule's coin flips.

    Returns
    -------
    accepted : tuple of int
        The accepted drafted tokens, root first.
    emitted : int
        The token emitted after them (correction or bonus).

    Raises
    ------
    InputError
        If ``verifier`` has no simulator.
    MethodError
        If the rule is not lossless on this tree (``"block"`` with k > 1; ``"token"`` or
        ``"block"`` on top-k children).
    """
    check_choice("verifier", verifier, _RUNNERS)
    if verifier == "block" and tree.k != 1:
        raise MethodError("verifier 'block' verifies one chain (k = 1)")
    if verifier in ("token", "block") and tree.drafts == "topk":
        raise MethodError(f"verifier {verifier!r} is lossless only for children drawn from q, not top-k children")
    return _RUNNERS[verifier](tree, P, Q, check_rng(rng))


@one_renormalization_warning
def simulate(
    target: Any,
    draft: Any,
    *,
    drafts: TreeDraftLaw | None = None,
    verifier: str = "token",
    samples: int = 10_000,
    rng: np.random.Generator,
    progress: bool | None = None,
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Draft and verify ``samples`` times: the accepted lengths, and the generated texts
    (accepted tokens + emitted token, before the target continues).

    The tree's law ``drafts`` is k chains of ``length`` tokens or a tree of a shape
    whose children are filled by ``children``, as in :func:`accepted_tokens`.  ``progress``: a bar over steps (default: on in a
    terminal or Jupyter).

    Parameters
    ----------
    target, draft : sequence models
        ``prefix -> next-token probabilities``.
    drafts : TreeDraftLaw, optional
        The tree's draft law (default: one chain of one token).
    verifier : {"token", "block", "traversal", "target_only"}
        The rule run.
    samples : int
        Steps simulated, at least 1.
    rng : numpy.random.Generator or int
        Source of randomness.
    progress : bool, optional
        A bar over steps.

    Returns
    -------
    accepted : ndarray of int, shape (steps,)
        Accepted drafted tokens of each step.
    texts : list of tuple of int
        The generated text of each step.

    Raises
    ------
    InputError
        If the tree is given both ways or incompletely, ``samples`` is below 1, or an
        argument is refused.
    MethodError
        If the rule is not lossless on this tree.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from optaccept import tree
    >>> p = lambda prefix: [F(1, 3), F(2, 3)]
    >>> q = lambda prefix: [F(2, 3), F(1, 3)]
    >>> import numpy as np
    >>> law = tree.TreeDraftLaw(length=2)
    >>> accepted, texts = tree.simulate(p, q, drafts=law, samples=400, rng=np.random.default_rng(0), progress=False)
    >>> accepted.shape, int(accepted.max()) <= 2, len(texts)
    ((400,), True, 400)
    >>> round(float(accepted.mean()), 2)  # the exact mean: 10/9
    1.07
    """
    from tqdm.auto import tqdm

    Pm, Qm = as_model(target, "target"), as_model(draft, "draft")
    gen = check_rng(rng)
    law = as_tree_law(drafts)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InputError(f"samples: must be an integer >= 1, got {samples!r}")
    lengths = np.empty(samples, dtype=np.int64)
    texts = []
    for i in tqdm(range(samples), desc="steps", unit="step", disable=not show_progress(progress)):
        P, Q = Pm.cached(), Qm.cached()  # per-step caches: memory stays O(tree)
        if law.shape is not None:
            tree = sample_shaped(Q, law.shape, law.children, gen)
        else:
            tree = sample_tree(Q, law.length, law.k, law.children, gen)
        acc, y = simulate_step(tree, P, Q, verifier, gen)
        lengths[i] = len(acc)
        texts.append(acc + (y,))
    return lengths, texts
