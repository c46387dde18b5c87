"""Every α* method agrees with every other one, to 1e-9, on many random instances."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_pair

import optaccept as oa

N_INSTANCES = 500


def _laws(q: np.ndarray, k: int, rng: np.random.Generator):
    supp = int(np.count_nonzero(q))
    laws = [oa.IID(q, k)]
    if k <= supp:
        laws += [oa.WithoutReplacement(q, k), oa.Greedy(q, k)]
    if supp >= 2:
        laws.append(oa.SpecHub(q))
    return laws


@pytest.mark.parametrize("law_name", ["iid", "swor", "greedy", "spechub", "independent"])
def test_methods_agree(law_name: str) -> None:
    """sorted / closed form / subsets / lp agree on N_INSTANCES random small instances per law;
    every result passes the independent re-check."""
    rng = np.random.default_rng({"iid": 1, "swor": 2, "greedy": 3, "spechub": 4, "independent": 5}[law_name])
    done = 0
    worst = 0.0
    while done < N_INSTANCES:
        p, q = random_pair(rng, nmax=7)
        supp = int(np.count_nonzero(q))
        k = int(rng.integers(1, 6))
        if law_name == "iid":
            law = oa.IID(q, k)
        elif law_name == "swor":
            law = oa.WithoutReplacement(q, min(k, supp))
        elif law_name == "greedy":
            law = oa.Greedy(q, min(k, supp))
        elif law_name == "spechub":
            if supp < 2:
                continue
            law = oa.SpecHub(q)
        else:
            k = int(rng.integers(1, 4))
            qs = [q] + [random_pair(rng, n=q.size)[1] for _ in range(k - 1)]
            law = oa.Independent(qs)
        methods = ["subsets", "lp"]
        if law_name != "independent":
            methods.append("sorted")
        if law_name == "iid" and law.k == 2:
            methods.append("closed_form")
        vals = {}
        for m in methods:
            res = oa.optimal_acceptance(p, law, m)
            chk = oa.verify(p, law, res)
            assert chk.ok, (m, p, q, law, chk)
            vals[m] = float(res.value)
        spread = max(vals.values()) - min(vals.values())
        worst = max(worst, spread)
        assert spread <= 1e-9, (p, q, law, vals)
        done += 1
    assert worst <= 1e-9


@pytest.mark.parametrize("law_name", ["iid", "swor", "greedy", "spechub"])
def test_transport_agrees_with_lp(law_name: str) -> None:
    """The primal transport LP (ordered tuples × tokens, cvxpy) agrees with the flow LP on
    N_INSTANCES instances per law; its coupling has marginals D and p and passes verify."""
    rng = np.random.default_rng({"iid": 71, "swor": 72, "greedy": 73, "spechub": 74}[law_name])
    done = 0
    while done < N_INSTANCES:
        p, q = random_pair(rng, nmax=5)
        supp = int(np.count_nonzero(q))
        k = min(int(rng.integers(1, 4)), supp)
        if law_name == "spechub" and supp < 2:
            continue
        if law_name == "spechub":
            law = oa.SpecHub(q)
        else:
            law = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}[law_name](q, k)
        a = oa.optimal_acceptance(p, law, "transport")
        b = oa.optimal_acceptance(p, law, "lp")
        assert abs(a.value - b.value) <= 1e-9, (p, q, law)
        chk = oa.verify(p, law, a)
        assert chk.ok, (p, q, law, chk)
        coupling = a.plan.coupling
        _, D = law.tuple_law()
        assert np.abs(coupling.sum(axis=1) - D / D.sum()).max() <= 1e-9
        assert np.abs(coupling.sum(axis=0) - p).max() <= 1e-9
        done += 1


def test_joint_law_matches_its_source() -> None:
    """A Joint law built from another law's tuple law gives the same α*."""
    rng = np.random.default_rng(8)
    for _ in range(50):
        p, q = random_pair(rng, nmax=6)
        supp = int(np.count_nonzero(q))
        law = oa.WithoutReplacement(q, min(2, supp))
        tuples, D = law.tuple_law()
        joint = oa.Joint(tuples, D / D.sum(), n=q.size)
        a = oa.optimal_acceptance(p, joint).value
        b = oa.optimal_acceptance(p, law, "subsets").value
        assert abs(a - b) <= 1e-9
