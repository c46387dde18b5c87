"""End to end: Hugging Face assisted generation on the built-in pair, logged through hooks
around its speculative sampler and audited from the log (optaccept audit-assisted)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_smollm2

pytest.importorskip("torch")
pytest.importorskip("transformers")

from optaccept import audit, llm  # noqa: E402


@pytest.fixture(scope="module")
def logged():
    pair = llm.smollm2_layerskip(top_k=50)
    return llm.log_assisted_generation(pair, llm.builtin_prompts()[:4], max_new_tokens=32, top_k=50, progress=False)


@needs_smollm2
def test_log_is_the_generated_text(logged):
    """The calls' accepted candidates and emitted tokens, call after call, are the text that
    generate() returned (a token generated outside the sampler, when no candidate was
    proposed, is the only allowed difference); every logged row is a law."""
    for i, seq in enumerate(logged.sequences):
        calls = [c for c in range(len(logged)) if logged.prompt[c] == i]
        text = [t for c in calls for t in list(logged.X[c][: logged.m[c]]) + [logged.Y[c]]]
        assert len(seq) == 32 and len(text) >= 32 - 3
        # the logged stream is the returned text with at most a few tokens made elsewhere
        pos, matched = 0, 0
        for t in text:
            while pos < len(seq) and seq[pos] != t:
                pos += 1
            matched += pos < len(seq)
            pos += 1
        assert matched == len(text)
    for c in range(len(logged)):
        assert logged.P[c].shape == (logged.X[c].size + 1, 49152) and logged.Q[c].shape == (logged.X[c].size, 49152)
        assert np.allclose(logged.P[c].sum(1), 1, atol=1e-4) and (logged.P[c] > 0).sum(1).max() <= 60  # top-50


@needs_smollm2
def test_audit_of_the_log_and_a_corrupted_log(logged):
    rep = audit.audit_chain_log(logged.P, logged.Q, logged.X, logged.m, logged.Y)
    assert rep.lossless and rep.details["drafts_follow_q"], rep
    assert abs(rep.expected_z) < 5
    # negative control: every emitted token replaced by the least likely token of its law
    Y_bad = []
    for c in range(len(logged)):
        row = logged.P[c][logged.m[c]]
        Y_bad.append(int(np.flatnonzero(row == row[row > 0].min())[0]))
    bad = audit.audit_chain_log(logged.P, logged.Q, logged.X, logged.m, Y_bad)
    assert not bad.lossless
