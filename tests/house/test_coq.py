"""The machine-checked proofs of proofs/coq: every file compiles, every main theorem is
closed under the global context, the checker refuses incomplete or axiomatic proofs, and
the certified instances are the ones optaccept's max-flow LP and sequence-level tree LP
produce."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
COQ = ROOT / "proofs" / "coq"
PACKAGES = "coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra"


def _mathcomp_missing() -> str | None:
    coqc = shutil.which("coqc")
    if coqc is None:
        return f"coqc is not installed (Debian: apt-get install {PACKAGES})"
    where = subprocess.run([coqc, "-where"], capture_output=True, text=True).stdout.strip()
    if not (Path(where) / "user-contrib" / "mathcomp" / "algebra").is_dir():
        return f"mathcomp is not installed for coqc (Debian: apt-get install {PACKAGES})"
    return None


needs_coq = pytest.mark.skipif(_mathcomp_missing() is not None, reason=str(_mathcomp_missing()))


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "coq"
    shutil.copytree(COQ, dst, ignore=shutil.ignore_patterns("*.vo", "*.vok", "*.vos", "*.glob", ".*.aux"))
    return dst


def _check(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(folder / "check.sh")], capture_output=True, text=True, timeout=600)


@needs_coq
def test_every_file_compiles_and_every_theorem_is_closed(tmp_path):
    r = _check(_copy(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    files = [ln for ln in (COQ / "_CoqProject").read_text().splitlines() if ln.endswith(".v")]
    for f in files:
        asked = sum(ln.startswith("Print Assumptions") for ln in (COQ / f).read_text().splitlines())
        assert asked > 0, f
        assert f"{f}: {asked} theorems closed under the global context" in r.stdout
    # the main theorems named in README.md and proofs/README.md are all asked about
    text = "".join((COQ / f).read_text() for f in files)
    for name in (
        "spec_lossless",
        "spec_acceptance",
        "spec_formula",
        "weak_duality",
        "kdraft_necessary",
        "kdraft_sufficient",
        "kdraft_condition",
        "target_only_lossless",
        "target_only_acceptance",
        "target_only_lossless_law",
        "target_only_acceptance_law",
        "one_draft_strong_duality",
        "one_draft_alpha_star",
        "cert_alpha_star",
        "readme_alpha_star",
        "lp_optimum",
        "sun_lp_optimum",
        "sun_two_chains_lp_optimum",
    ):
        assert f"Print Assumptions {name}." in text, name


@needs_coq
def test_check_refuses_an_admitted_proof(tmp_path):
    folder = _copy(tmp_path)
    f = folder / "Duality.v"
    src = f.read_text()
    start = src.index("Lemma acceptance_le1")
    proof = src.index("Proof.", start)
    end = src.index("Qed.", proof)
    f.write_text(src[:proof] + "Proof.\nAdmitted." + src[end + len("Qed.") :])
    r = _check(folder)
    assert r.returncode == 1
    assert "Admitted" in r.stdout and "incomplete or assume axioms" in r.stderr


@needs_coq
def test_check_refuses_a_theorem_that_rests_on_an_assumption(tmp_path):
    # a section-less Variable is an axiom that the keyword scan does not see:
    # the Print Assumptions check must catch it
    folder = _copy(tmp_path)
    f = folder / "Speculative.v"
    f.write_text(
        f.read_text()
        + "\nVariable cheat : False.\nLemma bad : False. Proof. exact cheat. Qed.\nPrint Assumptions bad.\n"
    )
    r = _check(folder)
    assert r.returncode == 1
    assert "Speculative.v: 3 of 4 theorems closed under the global context" in r.stderr


@needs_coq
def test_check_refuses_a_wrong_lp_optimum(tmp_path):
    # a value above the certified one: the exact check must fail under vm_compute
    folder = _copy(tmp_path)
    f = folder / "TreeInstances.v"
    src = f.read_text()
    assert src.count("(11#9)") == 3
    f.write_text(src.replace("(11#9)", "(4#3)"))
    r = _check(folder)
    assert r.returncode == 1
    assert "TreeInstances.v does not compile" in r.stderr


def _make_instances():
    spec = importlib.util.spec_from_file_location("make_instances", COQ / "make_instances.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_instances_file_is_the_generated_one():
    r = subprocess.run(
        [sys.executable, str(COQ / "make_instances.py"), "--check"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr


def test_certificate_is_an_exact_coupling_of_value_alpha_star():
    mi = _make_instances()
    p = [Fraction(x) for x in ["0.40", "0.25", "0.15", "0.12", "0.08"]]
    q = [Fraction(x) for x in ["0.30", "0.10", "0.35", "0.05", "0.20"]]
    c = mi.certificate(p, q, 2)
    N = c["N"]
    # independent set law: D({i}) = q_i^2, D({i, j}) = 2 q_i q_j
    want = {(i,): q[i] ** 2 for i in range(5)} | {(i, j): 2 * q[i] * q[j] for i in range(5) for j in range(i + 1, 5)}
    assert {tuple(a): Fraction(d, N) for a, d in zip(c["sets"], c["dd"])} == want
    assert [Fraction(x, N) for x in c["pp"]] == p
    for row, d in zip(c["flow"], c["dd"]):
        assert min(row) >= 0 and sum(row) == d
    assert [sum(row[y] for row in c["flow"]) for y in range(5)] == c["pp"]
    accept = sum(row[y] for row, a in zip(c["flow"], c["sets"]) for y in a)
    assert Fraction(accept, N) == Fraction(c["v"], N) == Fraction("0.9075")
    # the cut, recomputed: p(S) + 1 - D(set within S)
    S = set(c["S"])
    cut = sum(p[y] for y in S) + 1 - sum(v for a, v in want.items() if set(a) <= S)
    assert cut == Fraction("0.9075")


def test_generator_refuses_a_wrong_stated_value(monkeypatch):
    mi = _make_instances()
    monkeypatch.setattr(mi, "INSTANCES", [("wrong", ["0.5", "0.5"], ["0.9", "0.1"], 1, "0.7")])
    with pytest.raises(mi.CertificateError, match="not the stated 0.7"):
        mi.render()


def _lp_checks(c):
    """The exact checks of an LP certificate, recomputed here: the value of the primal point and
    the dual bound b·y + Σ (c − Aᵀy)⁺ (every variable lies in [0, 1])."""
    A, b, cc, x, y = c["A"], c["b"], c["c"], c["x"], c["y"]
    assert all(0 <= t <= 1 for t in x) and c["u"] == [1] * len(x)
    assert [sum(a * t for a, t in zip(row, x)) for row in A] == b
    reduced = [cc[j] - sum(A[i][j] * y[i] for i in range(len(A))) for j in range(len(x))]
    assert c["w"] == [max(r, 0) for r in reduced]
    primal = sum(a * t for a, t in zip(cc, x))
    assert primal == sum(a * t for a, t in zip(b, y)) + sum(c["w"])
    return primal


def test_tree_certificates_are_exact_and_agree_with_independent_values():
    from _reference_lp import optimal_lp as reference_lp

    from optaccept import tree
    from optaccept.tree._draft import enumerate_trees

    mi = _make_instances()
    p, q = [Fraction(1, 3), Fraction(2, 3)], [Fraction(2, 3), Fraction(1, 3)]
    one = mi.tree_certificate(p, q, 2, 1)
    two = mi.tree_certificate(p, q, 2, 2)
    assert _lp_checks(one) == Fraction(11, 9) and _lp_checks(two) == Fraction(131, 81)
    # k = 1: block verification, computed exactly without an LP, attains the optimum
    block = tree.accepted_tokens(lambda u: p, lambda u: q, drafts=tree.TreeDraftLaw(length=2), verifier="block").value
    assert block == Fraction(11, 9)
    # k = 2: the LP as docs/trees.md §4 first states it (one variable per tree, node and token)
    trees = enumerate_trees(lambda u: np.array([float(t) for t in q]), 2, 2, "iid", max_trees=10**4)
    value, cert, _ = reference_lp(trees, lambda u: np.array([float(t) for t in p]), 2, 2)
    assert cert.ok and abs(value - 131 / 81) < 1e-8


def test_tree_node_set_law_by_enumeration():
    mi = _make_instances()
    q = [Fraction(2, 3), Fraction(1, 3)]
    law = mi.iid_node_set_law(q, 2, 2)
    assert sum(law.values()) == 1 and len(law) == 10  # 4 chains: 4 alone and 6 pairs
    root_a = frozenset({(), (0,), (0, 0), (0, 1)})
    assert law[root_a] == 2 * Fraction(4, 9) * Fraction(2, 9)  # chains aa and ab, in either order


def test_generator_refuses_a_wrong_stated_tree_value(monkeypatch):
    mi = _make_instances()
    monkeypatch.setattr(mi, "TREE_INSTANCES", [("wrong", ["1/3", "2/3"], ["2/3", "1/3"], 2, 1, "4/3")])
    with pytest.raises(mi.CertificateError, match="not the stated 4/3"):
        mi.render_tree()
