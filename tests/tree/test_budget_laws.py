"""The budget curve's stored laws: recording a model and replaying the stored laws give the
same curve bit for bit, the compact vocabulary keeps the order of ties, a missing prefix is
refused clearly, and the committed ``figures/trees_budget.csv`` is what the shipped laws give."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from optaccept import InputError, tree
from optaccept.jobs import trees as T

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "optaccept" / "data" / T.BUDGET_LAWS


class _FakeLM:
    """A stand-in for ``llm._lm_sequence.LMSequenceModel``: synthetic laws cut to their 50 largest
    entries (as top-50 warps do), with ties."""

    def __init__(self, model, ties: bool = False) -> None:
        self.m = model
        self.ties = ties
        self._cache: dict = {}
        self._runner = None

    def batch(self, prefixes):
        out = []
        for p in prefixes:
            v = np.asarray(self.m(tuple(p)), dtype=np.float64).copy()
            if self.ties:
                v = np.round(v, 3)  # many equal masses: ties broken by token id
            cut = np.sort(v)[-50]
            v[v < cut] = 0
            out.append(v / v.sum())
        return np.stack(out)


@pytest.mark.parametrize("ties", [False, True])
def test_replay_equals_recording_bit_for_bit(tmp_path, ties):
    pairs = [tree.synthetic_pair(300, rng=s, scale=2.0) for s in range(4)]
    recs = [(T._Recorder(_FakeLM(t, ties)), T._Recorder(_FakeLM(d, ties))) for t, d in pairs]
    for t, d in recs:
        t.next_token_probs(())
        d.next_token_probs(())
    budgets = (2, 4, 8, 16)
    per_prompt = [tree.budget_curve([r], budgets, calibration=recs, progress=False).values for r in recs]
    path = T._save_laws(recs, tmp_path / "laws.npz", budgets, ["fact-capital", "b", "c", "d"])
    curve = tree.budget_curve(T.stored_budget_models(path), budgets, progress=False)
    for s, v in curve.values.items():
        assert np.array_equal(np.vstack([p[s] for p in per_prompt]), v), s
    # an independent slow check of one value: the ceiling at N = 2 is the sum of the two most
    # probable target prefixes, by enumeration over the stored laws of prompt 0
    P = T.stored_budget_models(path)[0][0]
    root = P.next_token_probs(())
    cands = list(root[root > 0])
    for x in np.flatnonzero(root):
        try:
            cands += list(root[x] * P.next_token_probs((int(x),)))
        except InputError:
            pass  # a prefix the search never read: its mass is below the ones it did
    assert curve.values["ceiling"][0, 0] == pytest.approx(sum(sorted(cands)[-2:]), abs=1e-15)


def test_missing_prefix_is_refused(tmp_path):
    t, d = tree.synthetic_pair(100, rng=0, scale=2.0)
    rec = (T._Recorder(_FakeLM(t)), T._Recorder(_FakeLM(d)))
    rec[0].next_token_probs(())
    rec[1].next_token_probs(())
    path = T._save_laws([rec], tmp_path / "laws.npz", (1,), [0])
    P, _ = T.stored_budget_models(path)[0]
    with pytest.raises(InputError, match="no stored law after"):
        P.next_token_probs((0, 0, 0))


@pytest.mark.skipif(not SHIPPED.exists(), reason="the stored laws are not shipped in this checkout")
def test_committed_budget_table_is_what_the_shipped_laws_give(tmp_path):
    curve = tree.budget_curve(T.stored_budget_models(), T.BUDGETS, progress=False)
    assert curve.meta["positions"] == 36
    T.budget_report(curve, tmp_path / "trees_budget", "x")
    fresh = (tmp_path / "trees_budget.csv").read_text(encoding="utf-8")
    committed = (ROOT / "figures" / "trees_budget.csv").read_text(encoding="utf-8")
    assert fresh == committed
    rows = list(csv.DictReader(committed.splitlines()))
    # every strategy below its ceiling, budget by budget (the ceiling bounds every deterministic tree)
    ceiling = {r["budget"]: float(r["value"]) for r in rows if r["strategy"] == "ceiling"}
    assert all(float(r["value"]) <= ceiling[r["budget"]] + 1e-12 for r in rows)
