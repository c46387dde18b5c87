"""Helpers written once and used by several modules: the CSV of a list of records (tables of
trees, budget curves, paired differences), how every extraction starts (the pair checked), and
the draft laws' common start (q, k and the rule k <= |supp q| for distinct drafts)."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

import optaccept as oa
from optaccept import real, tree
from optaccept._errors import InputError
from optaccept._lib.display.files import write_records_csv


def test_write_records_csv_by_hand(tmp_path):
    recs = [{"a": 1, "b": "x", "extra": 9}, {"a": 2.5, "b": None}]
    out = write_records_csv(tmp_path / "t.csv", ["b", "a"], recs)
    assert out == tmp_path / "t.csv"
    assert out.read_bytes() == b"b,a\r\nx,1\r\n,2.5\r\n"  # the csv module's default dialect, written by hand
    with pytest.raises(KeyError):
        write_records_csv(tmp_path / "u.csv", ["a", "c"], recs)
    assert write_records_csv(tmp_path / "e.csv", ["a"], []).read_bytes() == b"a\r\n"


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_table_csvs_give_back_their_rows(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trees = {d: real.DraftTrees.load(real.trees_path(d)).select(np.arange(6)) for d in ("iid", "swor")}
        t = real.tree_table(trees, ks=(1, 2), lengths=(1, 2), progress=False)
    rows = _read(t.to_csv(tmp_path / "t.csv"))
    assert len(rows) == len(t.rows) and rows
    for got, want in zip(rows, t.rows, strict=True):
        assert (got["verifier"], got["drafts"], int(got["k"]), int(got["length"])) == (
            want["verifier"],
            want["drafts"],
            want["k"],
            want["length"],
        )
        assert float(got["value"]) == pytest.approx(float(want["value"]), rel=1e-12)
    diffs = _read(t.differences_csv(tmp_path / "d.csv"))
    assert [float(d["value"]) for d in diffs] == pytest.approx([d["value"] for d in t.differences], rel=1e-12)
    curve = tree.budget_curve([tree.synthetic_pair(30, rng=s, scale=2.0) for s in range(2)], (2, 4), progress=False)
    back = _read(curve.to_csv(tmp_path / "c.csv"))
    assert [int(r["budget"]) for r in back] == [r["budget"] for r in curve.rows()]
    assert [float(r["value"]) for r in back] == pytest.approx([r["value"] for r in curve.rows()], rel=1e-12)


@pytest.mark.parametrize(
    "law, what",
    [(oa.Greedy, "greedy drafts with k = 3"), (oa.WithoutReplacement, "3 draws without replacement")],
)
def test_distinct_drafts_need_k_tokens_of_q(law, what):
    q = [0.5, 0.5, 0.0, 0.0]
    with pytest.raises(InputError, match=rf"^k: {what} need at least 3 tokens with q > 0, but q has 2$"):
        law(q, 3)
    assert law(q, 2).k == 2 and law(q, 2).n == 4
    assert oa.IID(q, 7).k == 7  # i.i.d. drafts may repeat a token: no such limit


@pytest.mark.parametrize("name", ["extract", "extract_sweep", "extract_trees"])
def test_every_extraction_checks_its_pair_first(name):
    pytest.importorskip("torch")
    from optaccept import llm
    from optaccept.llm import _extract  # noqa: F401  (llm._extract.extract_sweep)

    args = ([1.0],) if name == "extract_sweep" else ()
    with pytest.raises(InputError, match="^pair: must be a ModelPair$"):
        fn = getattr(llm._extract, name) if name == "extract_sweep" else getattr(llm, name)
        fn("not a pair", *args, progress=False)
