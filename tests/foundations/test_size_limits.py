"""Size guards of the exact and exponential paths: every refusal happens before any work (no
solver, no enumeration is reached), in one line naming the limit and the way out; the size
formulas agree with the objects they describe; accepted sizes show progress when asked."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept._errors import InputError, MethodError
from optaccept._lib.limits import show_progress
from optaccept.cli._main import main

if os.environ.get("CI"):
    import cdd.gmp  # noqa: F401
    import sympy  # noqa: F401
else:
    pytest.importorskip("cdd.gmp")
    pytest.importorskip("sympy")

from optaccept import polyhedra  # noqa: E402
from optaccept.polyhedra import _claims, _cone, _exact, _prefixes, _report  # noqa: E402


def _no_work(monkeypatch):
    """Make every expensive step of the cone check fail loudly if it is reached."""

    def boom(*a, **k):
        raise AssertionError("work started before the size check")

    monkeypatch.setattr(_cone, "require_cdd", boom)
    monkeypatch.setattr(_report, "farkas_cone", boom)
    monkeypatch.setattr(_report, "symbolic_law", boom)
    monkeypatch.setattr(_report, "extreme_rays", boom)


# --------------------------------------------------------------------------------------
# the command-line reproducer: `optaccept conjecture -n 30 -k 3`
def test_cli_conjecture_30_3_refused_in_one_line(monkeypatch, capsys):
    _no_work(monkeypatch)
    assert main(["conjecture", "-n", "30", "-k", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optaccept: error: n = 30, k = 3:")
    assert "13,080 rows" in err[0] and "over the limit of 10 s (--max-seconds)" in err[0]
    assert "use n <= 7 at k = 3" in err[0]


def test_cli_conjecture_30_3_subprocess():
    r = subprocess.run(
        [sys.executable, "-m", "optaccept", "conjecture", "-n", "30", "-k", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optaccept: error: n = 30, k = 3:") and "Traceback" not in r.stderr


def test_cli_full_cone_advice_uses_flags(monkeypatch, capsys):
    _no_work(monkeypatch)
    assert main(["conjecture", "-n", "5", "-k", "3", "--full"]) == 2
    err = capsys.readouterr().err
    assert "(--reduced)" in err and "(--max-seconds)" in err and "reduce=True" not in err


def test_cli_max_seconds_and_quiet(capsys):
    # n = 3, k = 3 uses the 27-cell tuple cone, estimated at 0.13 s: a limit of 0.01 s refuses it
    assert main(["conjecture", "-n", "3", "-k", "3", "--max-seconds", "0.01"]) == 2
    assert "over the limit of 0.01 s" in capsys.readouterr().err
    assert main(["conjecture", "-n", "3", "-k", "3", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "holds" in captured.out and captured.err == ""


# --------------------------------------------------------------------------------------
# check_k_draft_condition: each refusal before any work
@pytest.mark.parametrize(
    ("n", "k", "drafts", "reduce", "words"),
    [
        (30, 3, "iid", None, ["at least 1,073,746,347 extreme rays", "n <= 7 at k = 3"]),
        (12, 2, "iid", None, ["set cone", "n <= 11 at k = 2"]),
        (7, 4, "swor", None, ["294 rows", "k <= 3 at n = 7"]),
        (5, 3, "iid", False, ["full tuple cone has 305 rows", "the set cone (reduce=True)"]),
        (5, 20, "iid", None, ["2,571,492 polynomial terms", "k <= 15 at n = 5"]),
        (3, 10, "independent", None, ["polynomial terms", "k <= 9 at n = 3"]),
        (2, 2000, "iid", None, ["k = 2000", "k <= 1000"]),
    ],
)
def test_check_refuses_before_work(monkeypatch, n, k, drafts, reduce, words):
    _no_work(monkeypatch)
    with pytest.raises(MethodError) as exc:
        polyhedra.check_k_draft_condition(n, k, drafts, reduce=reduce)
    msg = str(exc.value)
    assert "\n" not in msg and "over the limit of" in msg
    for w in words:
        assert w in msg


def test_bad_input_still_comes_first(monkeypatch):
    _no_work(monkeypatch)
    with pytest.raises(InputError, match="k <= n"):
        polyhedra.check_k_draft_condition(30, 31, "swor")
    with pytest.raises(InputError, match="drafts"):
        polyhedra.check_k_draft_condition(30, 3, "gumbel")


def test_way_out_is_accepted():
    """The sizes a refusal advises are accepted, and one more is not."""
    _cone.check_cone_size(7, 3, reduced=True, auto=True)
    with pytest.raises(MethodError):
        _cone.check_cone_size(8, 3, reduced=True, auto=True)
    assert _report.symbolic_terms("iid", 5, 15) <= _report.MAX_SYMBOLIC_TERMS < _report.symbolic_terms("iid", 5, 16)
    assert _report.symbolic_terms("independent", 3, 9) <= _report.MAX_SYMBOLIC_TERMS
    assert _cone.check_cone_size(5, 3, reduced=False, max_seconds=30.0).constraints == 305


def test_extreme_rays_and_farkas_cone_refuse(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("cddlib reached")

    monkeypatch.setattr(_cone, "require_cdd", boom)
    with pytest.raises(MethodError, match="max_seconds"):
        polyhedra._cone.extreme_rays(polyhedra._cone.farkas_cone(5, 3), cache=False)

    class NoEnumeration:
        def __getattr__(self, name):
            raise AssertionError("cells enumerated before the size check")

    monkeypatch.setattr(_cone, "itertools", NoEnumeration())
    with pytest.raises(MethodError, match="200,000 cells"):
        polyhedra._cone.farkas_cone(30, 10)
    with pytest.raises(MethodError, match="set cone"):
        polyhedra._cone.farkas_cone(40, 5, reduced=True)


# --------------------------------------------------------------------------------------
# the size formulas against the objects they describe
@pytest.mark.parametrize("reduced", [False, True])
@pytest.mark.parametrize("n,k", [(2, 2), (2, 5), (3, 2), (3, 4), (4, 3), (5, 2), (4, 6), (6, 3)])
def test_cone_size_formulas_count_the_built_cone(n, k, reduced):
    size = polyhedra._cone.cone_size(n, k, reduced=reduced)
    cone = polyhedra._cone.farkas_cone(n, k, reduced=reduced)
    assert size.cells == len(cone.cells) and size.dim == cone.dim
    assert size.constraints == len(cone.edges) == len(cone.constraint_rows())
    assert size.rays == 2**n - 2 + len(cone.cells) - (1 if reduced and n == 2 else 0)


@pytest.mark.parametrize(
    "n,k,reduced", [(2, 2, True), (2, 3, False), (3, 3, False), (3, 2, True), (4, 3, True), (5, 2, True)]
)
def test_ray_count_is_exact_where_the_condition_holds(n, k, reduced):
    cr = polyhedra._cone.extreme_rays(polyhedra._cone.farkas_cone(n, k, reduced=reduced))
    assert len(cr.rays) == polyhedra._cone.cone_size(n, k, reduced=reduced).rays


def test_ray_count_matches_every_committed_certificate():
    import json
    import pathlib

    folder = pathlib.Path(__file__).resolve().parents[2] / "proofs" / "certificates"
    checked = 0
    for path in sorted(folder.glob("k_draft_*.json")) + [folder / "two_draft_condition.json"]:
        for case in json.loads(path.read_text())["cases"]:
            size = polyhedra._cone.cone_size(case["n"], case["k"], reduced=case["cone"] == "set")
            assert (case["n_rays"], case["constraints"], case["dimension"]) == (size.rays, size.constraints, size.dim)
            if "full_cone" in case:
                assert (
                    case["full_cone"]["n_rays"] == polyhedra._cone.cone_size(case["n"], case["k"], reduced=False).rays
                )
            checked += 1
    assert checked >= 40


def test_symbolic_terms_counts_monomials():
    """The i.i.d. and independent monomial counts, by expanding with sympy."""
    import sympy as sp

    n, k = 3, 4
    q = sp.symbols("q0:3")
    last = 1 - q[0] - q[1]
    assert len(sp.Poly(sp.expand(last**k), q[0], q[1]).terms()) == math.comb(n - 1 + k, k)
    qs = [sp.symbols(f"r{i}_0:2") for i in range(k)]
    prod = sp.expand(sp.Mul(*[1 - a - b for a, b in qs]))
    assert len(sp.Add.make_args(prod)) == n**k
    cells = sum(math.comb(n, r) * 2**r for r in range(1, min(n, k) + 1))
    assert _report.symbolic_terms("iid", n, k) == math.comb(n - 1 + k, k) * cells
    perms = sum(
        1 for r in range(2, 5) for S in itertools.combinations(range(4), r) for _ in itertools.permutations(S, 2)
    )
    assert _report.symbolic_terms("swor", 4, 2) == perms


def test_every_claim_case_is_within_the_limits(monkeypatch):
    """Run every claim's case list (quick and full) through the size checks only."""
    seen = []

    class Stub:
        holds = True
        inequalities = ()
        rays = ()

        def to_json(self, include_rays=True):
            return {}

        def summary(self):
            return ""

    def stub(n, k, drafts, *, reduce=None, progress=None, **kw):
        reduced = (n**k > _report.AUTO_FULL_CELLS) if reduce is None else reduce
        _cone.check_cone_size(n, k, reduced=reduced)
        assert _report.symbolic_terms(drafts, n, k) <= _report.MAX_SYMBOLIC_TERMS
        seen.append((n, k, drafts, reduced))
        return Stub()

    monkeypatch.setattr(_report, "check_k_draft_condition", stub)
    monkeypatch.setattr(_claims, "check_k_draft_condition", stub)  # where the claims look it up
    for key in ("two_draft_condition", "k_draft_conjecture_iid", "k_draft_without_replacement", "k_draft_independent"):
        for quick in (True, False):
            _claims.CLAIMS[key].prove(quick)
    assert (6, 6, "iid", True) in seen and (5, 5, "independent", True) in seen and (8, 2, "iid", True) in seen


# --------------------------------------------------------------------------------------
# progress bars
def test_check_progress_bars(capsys):
    polyhedra.check_k_draft_condition(3, 3, progress=True)
    err = capsys.readouterr().err
    assert "double description, n = 3, k = 3" in err and "/1 cone" in err and "orbit" in err
    polyhedra.check_k_draft_condition(3, 2, "swor", progress=False)
    assert capsys.readouterr().err == ""


def test_show_progress_default():
    assert show_progress(True) is True and show_progress(False) is False
    assert show_progress(None) is False  # pytest captures stderr: not a terminal


def test_transport_progress_bar(monkeypatch, capsys):
    from optaccept.optimal import _transport

    p = np.array([0.5, 0.3, 0.2])
    law = oa.IID([0.2, 0.3, 0.5], 2)
    _transport.transport_lp(p, law, progress=True)  # below PROGRESS_VARIABLES: no bar
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_transport, "PROGRESS_VARIABLES", 1)
    res = _transport.transport_lp(p, law, progress=True)
    err = capsys.readouterr().err
    assert "transport LP (27 variables)" in err and "3/3 steps" in err
    assert abs(res.value - oa.optimal_acceptance(p, law, method="subsets").value) <= 1e-9


def test_transport_refuses_before_building(monkeypatch):
    import cvxpy

    from optaccept.optimal import _transport

    def boom(*a, **k):
        raise AssertionError("a model was built")

    monkeypatch.setattr(cvxpy, "Variable", boom)
    rng = np.random.default_rng(0)
    q = rng.dirichlet(np.ones(8))
    with pytest.raises(MethodError, match="2,097,152 variables, over the limit of 300,000"):
        _transport.transport_lp(rng.dirichlet(np.ones(8)), oa.IID(q, 6))


# --------------------------------------------------------------------------------------
# 2^n subsets
def test_subset_arrays_refuse_large_vocabularies():
    from optaccept._lib import subsets as _subsets

    q = np.full(25, 1 / 25)
    with pytest.raises(MethodError, match="n = 25: enumerating all 2\\^25"):
        _subsets.subset_sums(q)
    with pytest.raises(MethodError, match="2\\^24 subsets"):
        _subsets.zeta_transform(np.zeros(4), 25)
    with pytest.raises(MethodError, match="Fractions"):
        _subsets.subset_sums_exact([Fraction(1, 21)] * 21)
    with pytest.raises(MethodError):
        oa.IID(q, 2).all_subset_probs()
    assert _subsets.subset_sums(np.array([0.25, 0.75])).tolist() == [0.0, 0.25, 0.75, 1.0]


def _float_fractions(rng, n):
    v = [Fraction(x) for x in rng.dirichlet(np.ones(n))]
    v[-1] = 1 - sum(v[:-1])
    return v


def test_exact_subsets_refuses_a_slow_zeta_transform(monkeypatch):
    from optaccept import drafts as d

    rng = np.random.default_rng(1)
    q, p = _float_fractions(rng, 14), _float_fractions(rng, 14)
    law = oa.WithoutReplacement(q, 7)

    def boom(self):
        raise AssertionError("the zeta transform ran")

    monkeypatch.setattr(d.DraftLaw, "all_subset_probs", boom)
    with pytest.raises(MethodError) as exc:
        oa.optimal_acceptance(p, law, method="subsets")
    assert "bit-operations" in str(exc.value) and "method='sorted'" in str(exc.value)


def test_exact_zeta_work_estimate():
    from optaccept.optimal._exhaustive import MAX_EXACT_ZETA_WORK, exact_zeta_work

    rng = np.random.default_rng(2)
    q = _float_fractions(rng, 10)
    assert exact_zeta_work(oa.IID(q, 3)) == 0  # a product formula, no zeta transform
    assert exact_zeta_work(oa.WithoutReplacement(np.array([float(x) for x in q]), 3)) == 0  # floats
    law = oa.WithoutReplacement(q, 3)
    bits = math.lcm(*(x.denominator for x in q)).bit_length()
    assert exact_zeta_work(law) == 10 * 2**9 * (1 + 10 + 45) * bits
    assert exact_zeta_work(law) <= MAX_EXACT_ZETA_WORK
    # accepted: the exact answer agrees with the float one
    p = _float_fractions(rng, 10)
    ex = oa.optimal_acceptance(p, law, method="subsets")
    fl = oa.optimal_acceptance(
        np.array([float(x) for x in p]), oa.WithoutReplacement(np.array([float(x) for x in q]), 3)
    )
    assert isinstance(ex.value, Fraction) and abs(float(ex.value) - fl.value) <= 1e-12


def test_subsets_n_limit_message():
    q = np.full(21, 1 / 21)
    with pytest.raises(MethodError, match="over the limit of n <= 20"):
        from optaccept.optimal import _exhaustive

        _exhaustive.check_size(oa.IID(q, 2), False)


# --------------------------------------------------------------------------------------
# the exact helpers of the polyhedra package
@pytest.mark.parametrize("drafts", ["iid", "swor", "independent"])
def test_exact_set_law_by_sets_equals_enumeration(monkeypatch, drafts):
    rng = np.random.default_rng(3)
    n, k = 4, 3

    def dist():
        w = rng.integers(1, 9, size=n)
        return [Fraction(int(x), int(w.sum())) for x in w]

    law = _exact.ExactLaw(drafts, [dist() for _ in range(k)] if drafts == "independent" else dist(), k)
    enumerated = law.set_law()
    monkeypatch.setattr(_exact, "MAX_TUPLES", 0)
    assert law.set_law() == enumerated
    assert sum(enumerated.values()) == 1


def test_exact_helpers_refuse():
    with pytest.raises(MethodError, match="n <= 16"):
        _exact.alpha_star_subsets([Fraction(1, 17)] * 17, _exact.ExactLaw("iid", [Fraction(1, 17)] * 17, 2))
    with pytest.raises(MethodError, match="pairs"):
        _prefixes.check_prefixes(6, 12, (2, 3, 4))
    with pytest.raises(MethodError, match="pairs"):
        _prefixes.check_orderings(9, (2, 3, 4))


def test_astronomical_sizes_refused_without_big_numbers(monkeypatch):
    _no_work(monkeypatch)
    with pytest.raises(MethodError, match="2\\^1000000 - 2 extreme rays"):
        polyhedra.check_k_draft_condition(10**6, 3)
    with pytest.raises(MethodError, match="k <= 1000"):
        polyhedra._cone.cone_size(3, 10**9, reduced=False)


def test_prefix_checks_show_progress(capsys):
    res = _prefixes.check_prefixes(3, 3, (2,), progress=True)
    err = capsys.readouterr().err
    assert res["holds"] and "prefix check n = 3, 1/3" in err and "10/10" in err and "q/s" in err
    res = _prefixes.check_orderings(3, (2,), reps=1, progress=True)
    err = capsys.readouterr().err
    assert res["holds"] and "orderings n = 3" in err and "6/6" in err
