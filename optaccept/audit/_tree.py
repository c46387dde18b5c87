r"""Audit a tree verifier: one drafted tree of a given shape per call (docs/audit.md §7b).

``fn(tokens, parents, P, Q, rng) -> (v, Y)`` verifies a batch of drafted trees: nodes are
numbered 0 … N in the shape's order (0 is the root; then by depth, then index path, as
``tree._shape.as_shape(shape).paths``), ``parents`` int (N + 1,) (−1 for the root), ``tokens`` int
(B, N + 1) the drafted token of each node (−1 for the root and for nodes absent from a tree,
e.g. children drawn without replacement from a law with a small support), ``P`` and ``Q`` float
(B, N + 1, n) the target's and the draft's laws after each node's string; it returns the
accepted node v (B,) and the emitted token Y (B,) — the interface of engines' tree
verifiers (a token tree with parent pointers and per-node probabilities).

The text X(v), Y, then the target's continuation up to depth + 1 tokens, is tested against the
target's law by Rosenblatt transforms (as for chains, :mod:`optaccept.audit._chain`); the
accepted tokens |v| are compared with the exact value of the declared rule from
:mod:`optaccept.tree` (``verifier=`` "token", "traversal", "target_only", ...) and with the
best lossless verifier for this tree law (the sequence LP where it is solvable, else the upper
bound of docs/trees.md §4b).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.sampling import draw
from .._lib.statistics import mean_std_err
from .._lib.validation import check_rng, check_size, one_renormalization_warning
from ..tree import TreeDraftLaw, accepted_tokens, upper_bound
from ..tree._models import as_model
from ..tree._shaped_tree import sample_shaped
from ._chain import ChainAuditReport, chain_decision, depth_distances
from ._formats import chain_outputs
from ._pit import FALSE_ALARM, ORDERS, pit_values
from ._verdict import MARGIN

__all__ = ["audit_tree"]


def _tree_result(out: Any, B: int, depth: int, strings: list, lo: int) -> tuple[np.ndarray, np.ndarray]:
    """(v, Y) from what a tree verifier returns: (v, Y), or the padded output [B, depth + 1]
    that :func:`audit_chain` accepts too (the accepted path's tokens, then the emitted token,
    then −1: vLLM's ``rejection_sample`` form, read by :func:`optaccept.audit.chain_outputs`);
    its accepted node is the node whose string is that path (any one of equal strings under
    "iid" children: the audit reads the text and the depth only, the same for each)."""

    if isinstance(out, tuple) and len(out) == 2:
        return (np.asarray(out[0], dtype=np.int64).reshape(-1), np.asarray(out[1], dtype=np.int64).reshape(-1))
    if isinstance(out, tuple) or np.ndim(out) != 2:
        raise InputError(
            "fn: must return (v, Y), accepted nodes and emitted tokens, or a padded output "
            f"[B, depth + 1] = [{B}, {depth + 1}] with −1 padding (the accepted path's tokens, then the emitted token)"
        )
    if np.shape(out) != (B, depth + 1):
        raise InputError(f"fn: a padded output must have shape ({B}, {depth + 1}), got {np.shape(out)}")
    rows = np.asarray(out, dtype=np.int64)
    m, Y = chain_outputs(rows)
    v = np.empty(B, dtype=np.int64)
    for b in range(B):
        path = tuple(int(x) for x in rows[b, : m[b]])
        node = next((i for i, w in enumerate(strings[b]) if w == path), None)
        if node is None:
            raise InputError(f"fn: the accepted tokens {list(path)} of row {b} are not a path of tree {lo + b}")
        v[b] = node
    return v, Y


@one_renormalization_warning
def audit_tree(
    fn: Callable[..., Any],
    target: Any,
    draft: Any,
    drafts: TreeDraftLaw,
    *,
    samples: int = 20_000,
    rng: np.random.Generator | None = None,
    declared: str | None = None,
    false_alarm: float = FALSE_ALARM,
    batch: int = 1_000,
    samples_for_expected: int | None = None,
) -> ChainAuditReport:
    """Audit a tree verifier ``fn`` (module docstring) on ``samples`` trees drawn from ``draft``
    by the tree's draft law ``drafts``: a :class:`~optaccept.tree.TreeDraftLaw` of a shape
    whose children are filled "topk", "swor" or "iid".  The shape is given as in
    :func:`optaccept.tree.accepted_tokens` (a branching tuple or index paths, the EAGLE/Medusa
    "tree choices"), or read from a vLLM ``speculative_token_tree`` string or a mapping
    holding EAGLE's ``"retrieve_indices"`` or SGLang's ``"retrieve_next_token"`` and
    ``"retrieve_next_sibling"`` by :meth:`optaccept.tree.Shape.from_layout`; ``fn`` numbers
    the nodes in the shape's order.

    ``declared``: a rule of :func:`optaccept.tree.accepted_tokens` ("token", "traversal",
    "target_only", …) or "exact_match" (accept the child equal to the target's own sample:
    target-only's law when siblings are distinct, so "topk" or "swor" children only).  The
    exact values are computed before ``fn`` is called, so a refusal costs nothing.

    ``fn`` returns (v, Y), or the padded output [B, depth + 1] that :func:`audit_chain` reads
    as well (vLLM's ``rejection_sample`` form: the accepted path's tokens, then the emitted
    token, then −1; :func:`optaccept.audit.chain_outputs`), whose path is matched to the
    drafted tree's node.

    Returns a :class:`ChainAuditReport` titled "Tree audit report" (``length`` is the shape's
    depth; ``optimum`` the LP value, or the §4b *upper bound* when the LP is too large, printed
    as a bound: ``details["optimum_method"]``).

    Parameters
    ----------
    fn : callable
        The tree verifier under audit.
    target, draft : model
        Sequence models, ``prefix -> next-token law``.
    drafts : TreeDraftLaw
        The tree's shape and how each node's children are drafted ("topk", "swor", "iid").
    samples : int
        Calls of the verifier, at least 1.
    rng : numpy.random.Generator or int
        All randomness: drafts, continuations, ``fn``'s own and the transforms'.
    declared : str, optional
        The rule ``fn`` claims.
    false_alarm : float
        The rate at which a correct verifier is declared not lossless.
    batch : int
        Calls per batch.
    samples_for_expected : int, optional
        Estimate the exact values from this many sampled trees instead of enumerating them.

    Returns
    -------
    ChainAuditReport
        As described above.

    Raises
    ------
    InputError
        If an argument is refused (drafts, declared, steps) or ``fn`` returns
        values out of range.
    MethodError
        If the exact values cannot be computed within the size limits (before any call).

    Examples
    --------
    >>> import numpy as np
    >>> from optaccept import audit, tree
    >>> target, draft = tree.synthetic_pair(4, rng=0)
    >>> def fn(tokens, parents, P, Q, rng):  # target-only: walk down while a child is the target's sample
    ...     v, Y = np.zeros(len(tokens), dtype=int), np.zeros(len(tokens), dtype=int)
    ...     for b in range(len(tokens)):
    ...         while True:
    ...             Y[b] = rng.choice(P.shape[2], p=P[b, v[b]])
    ...             kids = [c for c in range(1, tokens.shape[1]) if parents[c] == v[b] and tokens[b, c] == Y[b]]
    ...             if not kids:
    ...                 break
    ...             v[b] = kids[0]
    ...     return v, Y
    >>> law = tree.TreeDraftLaw([(0,), (1,), (0, 0)], "topk")  # two children of the root, one grandchild
    >>> rep = audit.audit_tree(fn, target, draft, law, samples=1000, rng=0, declared="target_only")
    >>> rep.lossless, rep.length
    (True, 2)
    >>> round(rep.expected, 4), round(rep.optimum, 4)  # target-only is the optimum on top-k trees
    (1.1549, 1.1549)
    >>> abs(rep.expected_z) < 3
    True
    """

    rng = check_rng(rng)
    samples = check_size(samples, "samples")

    if not isinstance(drafts, TreeDraftLaw) or drafts.shape is None:
        raise InputError(
            f"drafts: the tree's shape and children, tree.TreeDraftLaw(shape, children), got {drafts!r}; "
            "for chains use audit_chain"
        )
    shp, children = drafts.shape, drafts.children
    paths = list(shp.paths)
    index = {(): 0} | {p: i + 1 for i, p in enumerate(paths)}
    parents = np.array([-1] + [index[p[:-1]] for p in paths], dtype=np.int64)
    depth = np.array([0] + [len(p) for p in paths], dtype=np.int64)
    L, N = shp.depth, len(paths)
    if declared == "exact_match" and children == "iid":
        raise InputError(
            "declared: 'exact_match' is defined here for distinct siblings (children 'topk' or 'swor'); "
            "with 'iid' children equal siblings may carry different subtrees"
        )
    # the exact values first: a refusal comes before any call of fn
    kw: dict[str, Any] = {}
    if samples_for_expected is not None:
        kw = dict(samples=samples_for_expected, rng=np.random.default_rng(0))
    expected = None
    exp_how = "exact"
    exp_se = 0.0
    if declared is not None:
        rule = "target_only" if declared == "exact_match" else declared
        res = accepted_tokens(target, draft, drafts, verifier=rule, **kw)
        expected = float(res.value)
        if samples_for_expected is not None:
            exp_se = float(res.std_err or 0.0)
            exp_how = f"estimate ± {res.std_err or 0.0:.4f} from {samples_for_expected:,} sampled trees"
    try:
        optimum = float(accepted_tokens(target, draft, drafts, verifier="optimal").value)
        how = "sequence LP" if children != "topk" else "exact (deterministic tree)"
    except MethodError:
        optimum = float(
            upper_bound(
                target,
                draft,
                drafts=drafts,
                samples=samples_for_expected or 500,
                rng=np.random.default_rng(0),
            ).value
        )
        how = "upper bound (docs/trees.md §4b)"
    Pm, Qm = as_model(target, "target").cached(), as_model(draft, "draft").cached()
    n = Pm(()).size
    us: dict[str, list[np.ndarray]] = {o: [] for o in ORDERS}
    accepted = []
    for lo in range(0, samples, batch):
        B = min(batch, samples - lo)
        toks = np.full((B, N + 1), -1, dtype=np.int64)
        P = np.zeros((B, N + 1, n))
        Q = np.zeros((B, N + 1, n))
        strings: list[list[tuple[int, ...] | None]] = []
        for b in range(B):
            t = sample_shaped(Qm, shp, children, rng)
            row: list[tuple[int, ...] | None] = [()]
            for i, p in enumerate(paths, start=1):
                row.append(t.prefix(p) if p in t.tokens else None)
                if p in t.tokens:
                    toks[b, i] = t.tokens[p]
            for i, w in enumerate(row):
                if w is not None:
                    P[b, i] = Pm(w)
                    Q[b, i] = Qm(w)
            strings.append(row)
        out = fn(toks.copy(), parents.copy(), P.copy(), Q.copy(), rng)
        v, Y = _tree_result(out, B, L, strings, lo)
        if v.shape != (B,) or Y.shape != (B,) or v.min() < 0 or v.max() > N or Y.min() < 0 or Y.max() >= n:
            raise InputError(f"fn: must return node indices in [0, {N}] and tokens in [0, {n}), {B} of each")
        rowsP = np.empty((B * (L + 1), n))
        rowsQ = np.empty((B * (L + 1), n))
        tt = np.empty(B * (L + 1), dtype=np.int64)
        for b in range(B):
            w = strings[b][v[b]]
            if w is None:
                raise InputError(f"fn: accepted node {v[b]} is absent from tree {lo + b}")
            text = w + (int(Y[b]),)
            while len(text) < L + 1:
                text = text + (draw(np.asarray(Pm(text), dtype=np.float64), rng),)
            for i in range(L + 1):
                r = b * (L + 1) + i
                rowsP[r] = Pm(text[:i])
                rowsQ[r] = Qm(text[:i])
                tt[r] = text[i]
        for o in ORDERS:
            us[o].append(pit_values(rowsP, rowsQ, tt, o, rng))
        accepted.append(depth[v])
    acc = np.concatenate(accepted).astype(np.float64)
    law = np.bincount(acc.astype(np.int64), minlength=L + 1) / acc.size
    accepted, accepted_se = mean_std_err(acc)
    dist, sizes = depth_distances(us, L + 1)
    decision = chain_decision(
        dist,
        sizes,
        false_alarm,
        acc,
        L,
        expected,
        optimum,
        margin=MARGIN,
        exact=samples_for_expected is None,
        unit="trees",
        reference_se=(exp_se, 0.0),
    )
    return ChainAuditReport(
        lossless=decision.lossless,
        accepted=accepted,
        std_err=accepted_se,
        expected=expected,
        optimum=optimum,
        length=L,
        steps=int(acc.size),
        false_alarm=false_alarm,
        ks_distance=dist,
        ks_threshold=decision.checks[0].threshold,
        accepted_law=[float(x) for x in law],
        declared=declared,
        decision=decision,
        details={
            "shape": [list(p) for p in paths],
            "children": children,
            "optimum_method": how,
            "expected_method": exp_how,
        },
    )
