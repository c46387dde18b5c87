"""Readers of engines' batches: vLLM's flattened drafts and its −1 padded chain outputs (the
engines' tree layouts are :class:`optaccept.tree.Shape`'s, tests/tree/test_tree_layouts.py)."""

from __future__ import annotations

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit


def test_flattened_chain_batches():
    X = audit._formats.split_flat_drafts([5, 6, 7, 8, 9, 1], [3, 3, 6])
    assert [x.tolist() for x in X] == [[5, 6, 7], [], [8, 9, 1]]
    out = np.array([[5, 6, 2, -1], [4, -1, -1, -1], [8, 9, 1, 3]])
    m, Y = audit.chain_outputs(out, [3, 0, 3])
    assert m.tolist() == [2, 0, 3] and Y.tolist() == [2, 4, 3]
    with pytest.raises(oa.InputError, match="cu_num_draft_tokens"):
        audit._formats.split_flat_drafts([1, 2], [3, 2])
    with pytest.raises(oa.InputError, match="padding"):
        audit.chain_outputs([[1, -1, 2]])
    with pytest.raises(oa.InputError, match="num_draft_tokens"):
        audit.chain_outputs(out, [1, 0, 3])
