"""A new user's first mistakes and first real inputs, each refused or accepted clearly (one line,
naming the right argument; one warning per call, not one per distribution)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, testing, tree


def test_acceptance_result_repr_says_how_many_tokens_it_leaves_out():
    p = np.full(50, 1 / 50)
    q = np.random.default_rng(0).dirichlet(np.ones(50))
    res = oa.optimal_acceptance(p, oa.IID(q, 2))
    text = repr(res)
    assert "'...'" not in text  # no string among the token ids
    shown = text.split("subset=(")[1].split(")")[0]
    assert shown.endswith(f"... {len(res.subset) - 8} more")
    assert [int(t) for t in shown.split(", ")[:8]] == list(res.subset[:8])


def test_spechub_names_q_not_k():
    with pytest.raises(oa.InputError) as e:
        oa.SpecHub([1.0, 0.0, 0.0])
    msg = str(e.value)
    assert msg.startswith("q: ") and "greedy" not in msg and "k " not in msg, msg


def _p_q():
    return np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])


def test_wrong_shaped_output_is_named_by_its_shape():
    p, q = _p_q()
    with pytest.raises(oa.InputError, match=r"got shape \(50000, 2\)$"):
        testing.assert_lossless(lambda P, Q, X, rng: np.zeros((len(X), 2), dtype=int), p, q, k=1, rng=0)


def test_float_token_ids_are_an_input_error_not_a_verdict():
    """Casting 0.9 to 0 silently would turn a caller's mistake into 'not lossless'."""
    p, q = _p_q()
    with pytest.raises(oa.InputError, match="integer token ids, got dtype float64"):
        testing.assert_lossless(lambda P, Q, X, rng: X[:, 0] + 0.0, p, q, k=1, rng=0)
    # integer ids of the right shape pass (the one-draft rule that returns the draft is not
    # lossless, which is the verdict's business, not an input error)
    with pytest.raises(AssertionError, match="not lossless"):
        testing.assert_lossless(lambda P, Q, X, rng: X[:, 0], p, q, k=1, rng=0)


@pytest.mark.parametrize(
    "which, want",
    [("Q", r"^Q: must have 10 rows"), ("X", r"^X: must have shape \(10, k\)"), ("Y", r"^Y: must hold 10 token ids")],
)
def test_audit_log_names_the_array_of_the_wrong_length(which, want):
    p, q = _p_q()
    arrays = {"P": np.tile(p, (10, 1)), "Q": np.tile(q, (10, 1)), "X": np.zeros((10, 1), int), "Y": np.zeros(10, int)}
    arrays[which] = arrays[which][:9]
    with pytest.raises(oa.InputError, match=want):
        audit.audit_log(arrays["P"], arrays["Q"], arrays["X"], arrays["Y"])


def test_float32_softmax_rows_warn_once_per_call_with_a_count():
    """Rows of a float32 softmax cast to float64 sum to 1 ± 1e-7: every prefix of a tree is
    rescaled, and the call warns once (at the caller's line), saying how many."""

    def law(seed):
        def f(prefix):
            g = np.random.default_rng([seed, *prefix])
            logits = g.normal(size=40).astype(np.float32)
            e = np.exp(logits - logits.max())
            return (e / e.sum()).astype(np.float64) * (1 + 3e-8)

        return f

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree.accepted_tokens(law(0), law(1), drafts=tree.TreeDraftLaw(length=2, k=2), samples=50, rng=0)
    rescaled = [w for w in caught if issubclass(w.category, oa.RenormalizedWarning)]
    assert len(rescaled) == 1, [str(w.message) for w in caught]
    assert "distributions in this call" in str(rescaled[0].message)
    assert rescaled[0].filename == __file__
    assert "\n" not in str(rescaled[0].message)
