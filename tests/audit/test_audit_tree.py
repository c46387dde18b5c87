"""audit.audit_tree: engine-style tree verifiers (token tree with parent pointers and per-node
laws) audited — a correct recursive rejection sampler without replacement and target-only
verification pass with their exact values; the without-replacement update on i.i.d. children
(a duplicate sibling then accepted whatever p says), and a token verifier run on top-k
children, are caught."""

from __future__ import annotations

import numpy as np
import pytest

from optaccept import audit, tree


def _rrs_tree(tokens, parents, P, Q, rng, *, renormalise=True, accept_ties=False):
    """Recursive rejection sampling without replacement down a token tree (written here,
    apart from optaccept.tree): at node u try its children in order, ratio against the draft
    law without the rejected tokens; on a rejection the target becomes the residual."""
    B, N1 = tokens.shape
    kids = {u: [i for i in range(N1) if parents[i] == u] for u in range(N1)}
    v_out, y_out = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
    for b in range(B):
        u = 0
        while True:
            p, q = P[b, u].copy(), Q[b, u].copy()
            nxt = None
            for c in kids[u]:
                x = tokens[b, c]
                if x < 0:
                    continue
                if rng.random() * q[x] < p[x] or (accept_ties and p[x] >= q[x]):
                    nxt = c
                    break
                r = np.maximum(p - q, 0.0)
                if r.sum() <= 0:
                    break
                p = r / r.sum()
                if renormalise:
                    q[x] = 0.0
                    if q.sum() <= 0:
                        break
                    q = q / q.sum()
            if nxt is None:
                v_out[b], y_out[b] = u, rng.choice(p.size, p=p / p.sum())
                break
            u = nxt
    return v_out, y_out


def _target_only(tokens, parents, P, Q, rng):
    B, N1 = tokens.shape
    kids = {u: [i for i in range(N1) if parents[i] == u] for u in range(N1)}
    v_out, y_out = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
    for b in range(B):
        u = 0
        while True:
            y = rng.choice(P.shape[2], p=P[b, u] / P[b, u].sum())
            nxt = next((c for c in kids[u] if tokens[b, c] == y), None)
            if nxt is None:
                v_out[b], y_out[b] = u, y
                break
            u = nxt
    return v_out, y_out


PAIR = tree.synthetic_pair(4, rng=2, scale=1.2)


@pytest.mark.parametrize("shape", [(2, 1), [(0,), (1,), (0, 0), (0, 1)]], ids=str)
def test_correct_tree_verifiers_pass_with_their_exact_values(shape):
    rep = audit.audit_tree(
        _rrs_tree, *PAIR, tree.TreeDraftLaw(shape, "swor"), samples=3000, rng=np.random.default_rng(1), declared="token"
    )
    assert rep.lossless and abs(rep.expected_z) < 5, rep
    assert rep.optimum >= rep.expected - 1e-9 and rep.details["optimum_method"] == "sequence LP"
    rep = audit.audit_tree(
        _target_only,
        *PAIR,
        tree.TreeDraftLaw(shape, "topk"),
        samples=3000,
        rng=np.random.default_rng(2),
        declared="target_only",
    )
    assert rep.lossless and abs(rep.expected_z) < 5 and abs(rep.optimum - rep.expected) < 1e-12, rep


def test_tree_verifier_bugs_are_caught():
    # i.i.d. children verified with the without-replacement update: after a rejection of x the
    # draft mass of x is 0, so an equal sibling is accepted whatever p says (the bug of trying a
    # shared child twice): not lossless
    # (written as "accept when p(x) ≥ q(x)", which then accepts at 0 ≥ 0)
    bad = audit.audit_tree(
        lambda *a: _rrs_tree(*a, accept_ties=True),
        *PAIR,
        tree.TreeDraftLaw((3,), "iid"),
        samples=4000,
        rng=np.random.default_rng(3),
    )
    assert not bad.lossless, bad
    # token-level RRS on top-k children (drafts not drawn from q): not lossless
    bad = audit.audit_tree(
        _rrs_tree, *PAIR, tree.TreeDraftLaw((2, 1), "topk"), samples=4000, rng=np.random.default_rng(4)
    )
    assert not bad.lossless, bad
