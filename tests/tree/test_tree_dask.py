"""tree.sweep on a real Dask cluster: a LocalCluster of worker processes on loopback,
started and stopped here, gives exactly the numbers of the default joblib backend."""

from __future__ import annotations

import pytest

from optaccept import tree

distributed = pytest.importorskip("distributed")


def test_sweep_on_a_dask_cluster_matches_the_default_backend():
    import joblib

    pair = tree.synthetic_pair(30, rng=4, scale=1.5)
    sources = {"synthetic": pair}
    laws = [tree.TreeDraftLaw(length=L, k=k, children=c) for k in (1, 2) for L in (1, 2) for c in ("iid", "swor")]
    kw = dict(
        drafts=laws,
        verifiers=("token", "traversal", "target_only"),
        samples=40,
        rng=7,
    )
    local = tree.sweep(sources, n_jobs=1, **kw)
    swor2 = [tree.TreeDraftLaw(length=1, k=2, children="swor")]
    exact_local = tree.sweep(sources, drafts=swor2, verifiers=("optimal",), n_jobs=1)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert len(client.scheduler_info()["workers"]) == 2
        with joblib.parallel_backend("dask"):
            remote = tree.sweep(sources, **kw)
            exact_remote = tree.sweep(sources, drafts=swor2, verifiers=("optimal",))
    assert len(remote) == len(local) == 2 * 2 * 2 * 3
    key = lambda r: (r["k"], r["length"], r["drafts"], r["verifier"])  # noqa: E731
    for a, b in zip(sorted(local, key=key), sorted(remote, key=key), strict=True):
        assert key(a) == key(b) and a["value"] == b["value"] and a["std_err"] == b["std_err"]
        assert a["skipped"] == b["skipped"]
    # the LP (HiGHS) may differ in the last bits between processes; its certificate tolerance is 1e-7
    assert abs(exact_local[0]["value"] - exact_remote[0]["value"]) < 1e-12 and exact_local[0]["method"] == "lp"
