"""Tests of the exact double-description check of the K-draft condition."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optaccept
from optaccept._errors import InputError, MissingDependencyError, SolverError

if os.environ.get("CI"):
    # CI installs pycddlib (./run.sh): a missing module there is a failure, not a skip
    import cdd.gmp  # noqa: F401
    import sympy as sp
else:
    pytest.importorskip("cdd.gmp")
    sp = pytest.importorskip("sympy")

from optaccept import polyhedra  # noqa: E402
from optaccept.polyhedra._cone import ConeRays, normalize_ray  # noqa: E402
from optaccept.polyhedra._exact import ExactLaw, alpha_star_subsets  # noqa: E402


# --------------------------------------------------------------------------------------
# independent oracle: extreme rays of the cone {z : z_y >= z_cell for y in cell}
# (z = (-u, v)) are 1_U for the up-sets U whose U and complement are both connected.
def _oracle_rays(cone):
    m, n = len(cone.cells), cone.n
    nodes = m + n  # cells 0..m-1, tokens m..m+n-1
    adj = [set() for _ in range(nodes)]
    for i, y in cone.edges:
        adj[i].add(m + y)
        adj[m + y].add(i)

    def connected(sub):
        sub = set(sub)
        if not sub:
            return False
        start = next(iter(sub))
        seen, stack = {start}, [start]
        while stack:
            a = stack.pop()
            for b in adj[a] & sub:
                if b not in seen:
                    seen.add(b)
                    stack.append(b)
        return seen == sub

    out = set()
    for mask in range(1, (1 << nodes) - 1):
        U = {a for a in range(nodes) if mask >> a & 1}
        if any(i in U and (m + y) not in U for i, y in cone.edges):
            continue  # not an up-set
        if connected(U) and connected(set(range(nodes)) - U):
            vec = [Fraction(-1) if i in U else Fraction(0) for i in range(m)]
            vec += [Fraction(1) if m + y in U else Fraction(0) for y in range(n)]
            out.add(normalize_ray(cone, vec))
    return out


@pytest.mark.parametrize("n,k,reduced", [(2, 2, False), (2, 3, False), (3, 2, False), (3, 3, True), (4, 2, True)])
def test_rays_match_graph_oracle(n, k, reduced):
    cone = polyhedra._cone.farkas_cone(n, k, reduced=reduced)
    cr = polyhedra._cone.extreme_rays(cone)
    got = {normalize_ray(cone, r) for r in cr.rays}
    assert got == _oracle_rays(cone)
    assert len(cr.lineality) == 1


def test_khisti_anchor_3_3_full_cone():
    rep = polyhedra.check_k_draft_condition(n=3, k=3, drafts="iid")
    assert not rep.reduced
    assert len(rep.rays) == 27 + 6 and rep.lineality_dim == 1
    assert rep.counts() == {"trivial": 27, "subset": 6, "other": 0}
    assert rep.holds is True
    p, q = sp.symbols("p0:3"), sp.symbols("q0:3")
    expected = {
        sp.expand(sum(p[y] for y in S) - sum(q[y] for y in S) ** 3)
        for r in (1, 2)
        for S in itertools.combinations(range(3), r)
    }
    assert {sp.expand(e) for e in rep.inequalities} == expected
    assert all(isinstance(e, sp.Expr) for e in rep.inequalities)


@pytest.mark.parametrize("drafts", ["iid", "swor", "independent"])
def test_brute_force_sympy_reading_3_2(drafts):
    """Σ u·D + Σ v·p built by plain sympy over all tuples equals the reading's form."""
    rep = polyhedra.check_k_draft_condition(3, 2, drafts, reduce=False)
    p = sp.symbols("p0:3")
    if drafts == "independent":
        qs = [sp.symbols(f"q{i}_0:3") for i in (1, 2)]
    else:
        qs = [sp.symbols("q0:3")] * 2
    simplex = {p[2]: 1 - p[0] - p[1]}
    for g in qs:
        simplex[g[2]] = 1 - g[0] - g[1]

    def D(x):
        if drafts == "swor":
            return 0 if x[0] == x[1] else qs[0][x[0]] * qs[0][x[1]] / (1 - qs[0][x[0]])
        return qs[0][x[0]] * qs[1][x[1]]

    m = len(rep.cone.cells)
    for ray, reading in zip(rep.rays, rep.classification):
        E = sum(sp.Rational(str(ray[i])) * D(c) for i, c in enumerate(rep.cone.cells))
        E += sum(sp.Rational(str(ray[m + y])) * p[y] for y in range(3))
        target = sp.Rational(str(reading.scale)) * reading.expression
        assert reading.kind in ("trivial", "subset")
        assert sp.simplify((E - target).subs(simplex)) == 0


@pytest.mark.parametrize("drafts", ["iid", "swor", "independent"])
@pytest.mark.parametrize("n,k", [(2, 2), (3, 2), (3, 3), (4, 2)])
def test_reduced_cone_gives_same_inequalities(n, k, drafts):
    full = polyhedra.check_k_draft_condition(n, k, drafts, reduce=False, symmetry=False)
    red = polyhedra.check_k_draft_condition(n, k, drafts, reduce=True, symmetry=False)
    assert full.holds and red.holds
    assert [sp.expand(e) for e in full.inequalities] == [sp.expand(e) for e in red.inequalities]
    assert len(red.rays) < len(full.rays) or n**k == len(red.cone.cells)


def test_symmetry_transport_agrees_with_checking_every_ray():
    a = polyhedra.check_k_draft_condition(4, 3, "iid", reduce=True, symmetry=True)
    b = polyhedra.check_k_draft_condition(4, 3, "iid", reduce=True, symmetry=False)
    assert [(r.kind, r.subset) for r in a.classification] == [(r.kind, r.subset) for r in b.classification]
    assert all(r.checked for r in b.classification)
    assert sum(r.checked for r in a.classification) == len(a.orbits) < len(a.rays)


def test_swor_small_sets_are_trivial():
    rep = polyhedra.check_k_draft_condition(4, 3, "swor", reduce=True)
    assert rep.holds
    assert set(rep.subsets) == {S for S in itertools.combinations(range(4), 3)}
    assert rep.conjectured == rep.subsets


def test_verify_rays_rejects_a_non_extreme_ray():
    cone = polyhedra._cone.farkas_cone(3, 2, reduced=True)
    cr = polyhedra._cone.extreme_rays(cone)
    bad = tuple(a + b for a, b in zip(cr.rays[0], cr.rays[1]))
    with pytest.raises(SolverError, match="not extreme"):
        polyhedra._cone.verify_rays(ConeRays(cone, (bad,), cr.lineality, 0.0))
    outside = tuple(-x for x in cr.rays[0])
    with pytest.raises(SolverError, match="violates"):
        polyhedra._cone.verify_rays(ConeRays(cone, (outside,), cr.lineality, 0.0), extremality=False)


# --------------------------------------------------------------------------------------
# numeric cross-check: the rays decide alpha* = 1 exactly as the subset formula does
def _rand_dist(rng, n, den=12):
    w = rng.integers(0, den, size=n)
    if w.sum() == 0:
        w[0] = 1
    return [Fraction(int(x), int(w.sum())) for x in w]


def _law(drafts, rng, n, k):
    if drafts == "independent":
        return ExactLaw(drafts, [_rand_dist(rng, n) for _ in range(k)], k)
    while True:
        q = _rand_dist(rng, n)
        if drafts != "swor" or sum(1 for x in q if x) >= k:
            return ExactLaw(drafts, q, k)


def _q_arg(law):
    return law.qs if law.name == "independent" else law.q


def _boundary_p(p, law):
    """Move p towards the first-draft marginal (alpha* = 1 there) until alpha* hits 1."""
    star = law.first_marginal()
    n = len(p)
    t = Fraction(0)
    for r in range(1, n):
        for S in itertools.combinations(range(n), r):
            a = sum(p[y] for y in S) - law.subset_prob(S)
            if a < 0:
                b = sum(star[y] for y in S) - sum(p[y] for y in S)
                t = max(t, -a / b)
    return t, [(1 - t) * x + t * y for x, y in zip(p, star)]


@pytest.mark.parametrize("drafts", ["iid", "swor", "independent"])
@pytest.mark.parametrize("n,k", [(3, 2), (3, 3), (4, 2), (4, 3)])
def test_rays_decide_alpha_one_like_subset_formula(n, k, drafts):
    rep = polyhedra.check_k_draft_condition(n, k, drafts)
    rng = np.random.default_rng(1000 * n + k)
    on_boundary = 0
    for _ in range(25):
        law = _law(drafts, rng, n, k)
        p = _rand_dist(rng, n, den=4)  # coarse: often alpha* < 1
        for cand in (p, list(law.first_marginal())):
            alpha, _ = alpha_star_subsets(cand, law)
            assert rep.decides_alpha_one(cand, _q_arg(law)) == (alpha == 1)
        t, pb = _boundary_p(p, law)
        if 0 < t < 1:
            on_boundary += 1
            assert alpha_star_subsets(pb, law)[0] == 1
            assert rep.decides_alpha_one(pb, _q_arg(law))
            assert min(rep.ray_values(pb, _q_arg(law))) == 0  # some ray is tight
            inside = [
                (1 - (t - Fraction(1, 10**6))) * x + (t - Fraction(1, 10**6)) * y
                for x, y in zip(p, law.first_marginal())
            ]
            assert not rep.decides_alpha_one(inside, _q_arg(law))
            assert alpha_star_subsets(inside, law)[0] < 1
    if drafts == "swor" and k == n:  # the draft set is always Ω: alpha* = 1 for every p
        assert on_boundary == 0 and rep.conjectured == ()
    else:
        assert on_boundary >= (1 if drafts == "swor" else 3)


@settings(max_examples=40)
@given(st.lists(st.integers(0, 9), min_size=3, max_size=3), st.lists(st.integers(0, 9), min_size=3, max_size=3))
def test_property_iid_3_3(pw, qw):
    if sum(pw) == 0 or sum(qw) == 0:
        return
    rep = polyhedra.check_k_draft_condition(3, 3, "iid")
    p = [Fraction(x, sum(pw)) for x in pw]
    q = [Fraction(x, sum(qw)) for x in qw]
    law = ExactLaw("iid", q, 3)
    assert rep.decides_alpha_one(p, q) == (alpha_star_subsets(p, law)[0] == 1)


@pytest.mark.parametrize("drafts", ["iid", "swor", "independent"])
def test_rays_agree_with_optimal_acceptance(drafts):
    n, k = 4, 3
    rep = polyhedra.check_k_draft_condition(n, k, drafts)
    rng = np.random.default_rng(7)
    for _ in range(15):
        law = _law(drafts, rng, n, k)
        p = _rand_dist(rng, n)
        t, pb = _boundary_p(p, law)
        if drafts == "iid":
            core_law = optaccept.IID(list(law.q), k)
        elif drafts == "swor":
            core_law = optaccept.WithoutReplacement(list(law.q), k)
        else:
            core_law = optaccept.Independent([list(qi) for qi in law.qs])
        for cand in (p, pb):
            decided = rep.decides_alpha_one(cand, _q_arg(law))
            if drafts == "iid":  # exact Fraction path of the core
                val = optaccept.optimal_acceptance(list(cand), core_law, method="subsets").value
                assert (val == 1) == decided
            else:  # float path: compare where the decision is not on a knife edge
                val = optaccept.optimal_acceptance(np.array(cand, dtype=float), core_law).value
                margin = alpha_star_subsets(cand, law)[0]
                if margin == 1:
                    assert decided and val == pytest.approx(1, abs=1e-9)
                elif margin < 1 - Fraction(1, 10**6):
                    assert not decided and val < 1 - 1e-7


# --------------------------------------------------------------------------------------
def test_sorted_prefix_checker_detects_a_wrong_order(monkeypatch):
    from optaccept.polyhedra import _prefixes

    res = _prefixes.check_prefixes(3, 5, (2, 3))
    assert res["holds"] and res["all_orderings"]
    orig = _prefixes.prefix_order
    monkeypatch.setattr(_prefixes, "prefix_order", lambda a, b: orig(a, b)[::-1])
    assert not _prefixes.check_prefixes(3, 5, (2,))["holds"]


def test_bad_input():
    with pytest.raises(InputError, match="k"):
        polyhedra.check_k_draft_condition(3, 1)
    with pytest.raises(InputError, match="n"):
        polyhedra.check_k_draft_condition(1, 2)
    with pytest.raises(InputError, match="drafts"):
        polyhedra.check_k_draft_condition(3, 2, "gumbel")
    with pytest.raises(InputError, match="k <= n"):
        polyhedra.check_k_draft_condition(2, 3, "swor")


def test_missing_cdd_raises_clear_error(monkeypatch):
    from optaccept.polyhedra import _cone

    monkeypatch.setitem(sys.modules, "cdd", None)
    monkeypatch.setitem(sys.modules, "cdd.gmp", None)
    with pytest.raises(MissingDependencyError, match="apt-get install libcdd-dev libgmp-dev") as exc:
        _cone.extreme_rays(_cone.farkas_cone(2, 2), cache=False)
    assert "pip install pycddlib" in str(exc.value)


def test_import_without_cdd_in_fresh_interpreter():
    code = (
        "import sys; sys.modules['cdd'] = None; sys.modules['cdd.gmp'] = None\n"
        "import optaccept, optaccept.polyhedra as P\n"
        "try:\n    P.check_k_draft_condition(3, 2)\n"
        "except ImportError as e:\n    print('ERR', type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "ERR MissingDependencyError" in out.stdout and "libcdd-dev" in out.stdout


def test_cli_conjecture_json(capsys):
    from optaccept.cli import polyhedra as _cli

    ap = argparse.ArgumentParser(prog="optaccept")
    _cli.register(ap.add_subparsers(dest="cmd"))
    args = ap.parse_args(["conjecture", "-n", "3", "-k", "3", "--drafts", "iid", "--json"])
    assert args.func(args) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["holds"] is True and cert["n_rays"] == 33 and len(cert["rays"]) == 33
    assert cert["counts"] == {"trivial": 27, "subset": 6, "other": 0}
    args = ap.parse_args(["conjecture", "-n", "3", "-k", "2", "--drafts", "swor"])
    assert args.func(args) == 0
    assert "holds" in capsys.readouterr().out
    args = ap.parse_args(["conjecture", "-n", "3", "-k", "1"])
    with pytest.raises(InputError):
        args.func(args)


def test_job_quick_runs_every_fast_proof(tmp_path, capsys):
    from optaccept.jobs import polyhedra as _job
    from optaccept.polyhedra import _claims

    paths = _job.run(tmp_path, quick=True)
    assert {p.name for p in paths} == {f"{k}.json" for k in _claims.CLAIMS} | {
        f"proofs_table.{e}" for e in ("md", "csv", "tex")
    }
    for key in _claims.CLAIMS:
        cert = json.loads((tmp_path / "proofs" / f"{key}.json").read_text())
        assert cert["holds"] is True, key
        assert cert["software"]["pycddlib"] != "not installed"
    assert "5/5 claims verified" in capsys.readouterr().out


def test_proof_script_exit_code(tmp_path):
    import pathlib

    script = pathlib.Path(__file__).resolve().parents[2] / "proofs" / "two_draft_condition.py"
    out = subprocess.run(
        [sys.executable, str(script), "--quick", "--out", str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    cert = json.loads((tmp_path / "two_draft_condition.json").read_text())
    assert cert["holds"] and all(c["holds"] for c in cert["cases"])
    assert {"rays", "inequalities", "software"} <= set(cert["cases"][0])
