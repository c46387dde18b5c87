"""optaccept.real: the numpy-only home of real-model data."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from optaccept import InputError, llm, real, tree


def test_unknown_names_still_raise():
    with pytest.raises(AttributeError, match="no_such_name"):
        tree.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="no_such_name"):
        llm.no_such_name  # noqa: B018


def test_import_needs_no_torch_and_no_transformers():
    code = (
        "import sys, optaccept.real as r; r.Distributions.load(r.sample_path()); "
        "print(','.join(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_shipped_files_load_from_the_new_home():
    data = real.Distributions.load(real.sample_path())
    rows = np.asarray(data.target)
    assert len(data) == rows.shape[0] > 0
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=0, atol=1e-6)
    trees = real.DraftTrees.load(real.trees_path("iid"))
    assert len(trees) > 0
    with pytest.raises(InputError, match="drafts"):
        real.trees_path("nope")
