"""audit.audit_tree: engine-style tree verifiers (token tree with parent pointers and per-node
laws) audited — a correct recursive rejection sampler without replacement and target-only
verification pass with their exact values; the without-replacement update on i.i.d. children
(a duplicate sibling then accepted whatever p says), and a token verifier run on top-k
children, are caught."""

from __future__ import annotations

import numpy as np
import pytest

from optaccept import InputError, audit, tree


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


def _padded(fn):
    """``fn``'s (v, Y) as the padded output [B, depth + 1] audit_chain reads (vLLM's form):
    the accepted path's tokens, the emitted token, then −1."""

    def padded(tokens, parents, P, Q, rng):
        v, Y = fn(tokens, parents, P, Q, rng)
        depth = max(_depth(parents, i) for i in range(parents.size))
        out = np.full((tokens.shape[0], depth + 1), -1, dtype=np.int64)
        for b, (u, y) in enumerate(zip(v, Y)):
            path = []
            while u > 0:
                path.append(int(tokens[b, u]))
                u = parents[u]
            out[b, : len(path) + 1] = path[::-1] + [int(y)]
        return out

    return padded


def _depth(parents, i):
    d = 0
    while parents[i] >= 0:
        i, d = parents[i], d + 1
    return d


@pytest.mark.parametrize("children", ["swor", "iid"])
def test_padded_output_and_title_are_those_of_the_chain_audit(children):
    """Issue 46: audit_tree reads the padded output audit_chain accepts (same report as the
    (v, Y) form at the same seed) and titles its report "Tree audit report"."""
    law = tree.TreeDraftLaw([(0,), (1,), (0, 0)], children)
    kw = dict(samples=600, declared="token", batch=200)
    rep = audit.audit_tree(_rrs_tree, *PAIR, law, rng=np.random.default_rng(5), **kw)
    pad = audit.audit_tree(_padded(_rrs_tree), *PAIR, law, rng=np.random.default_rng(5), **kw)
    assert pad.accepted == rep.accepted and pad.ks_distance == rep.ks_distance
    assert pad.accepted_law == rep.accepted_law and pad.lossless == rep.lossless
    for r in (rep, pad):
        assert str(r).startswith("Tree audit report\n") and "Chain" not in str(r)
        assert "Tree audit report" in r._repr_html_() and "tree verifier" in r.to_latex()
    # the chain audit keeps its title
    chain = audit.ChainAuditReport(**{k: getattr(rep, k) for k in rep.__dataclass_fields__ if k != "details"})
    assert str(chain).startswith("Chain audit report\n")


def test_padded_output_is_checked():
    law = tree.TreeDraftLaw((2, 1), "swor")

    def wrong_shape(tokens, parents, P, Q, rng):
        return np.zeros((tokens.shape[0], 4), dtype=np.int64)

    with pytest.raises(InputError, match="fn: a padded output"):
        audit.audit_tree(wrong_shape, *PAIR, law, samples=10, rng=0)

    def off_tree(tokens, parents, P, Q, rng):  # accepts a token no child carries
        out = np.full((tokens.shape[0], 3), -1, dtype=np.int64)
        for b in range(tokens.shape[0]):
            out[b, 0] = next(x for x in range(4) if x not in tokens[b, 1:3])
            out[b, 1] = 0
        return out

    with pytest.raises(InputError, match="not a path of tree 0"):
        audit.audit_tree(off_tree, *PAIR, law, samples=10, rng=0)
