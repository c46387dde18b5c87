"""Write proofs/coq/Instances.v and TreeInstances.v: exact certificates for Coq to check.

Usage (from the repository root, with the project's environment):
`.venv/bin/python proofs/coq/make_instances.py [--check]`.  For each instance below,
optaccept's max-flow LP (`optimal_acceptance(..., method="lp")`) gives a flow over draft
sets and a subset S.  The script converts the flow to exact fractions, checks it exactly
(non-negative, only on drafted tokens, within the capacities D(A) and p(y)), completes it
to a coupling of the set law and p (north-west corner rule on the deficits, which only
adds mass, so the acceptance stays at least the flow's value) and checks exactly that
the coupling's acceptance equals the value of S in (star).  Everything is then scaled by
the least common denominator N and written as natural numbers for `Certificate.check`.
The set law is computed here from q by enumerating ordered tuples, independently of
optaccept.

TreeInstances.v certifies the tree values of docs/trees.md §7 (Sun et al.'s example,
11/9; two i.i.d. chains on it, 131/81) as optima of the sequence-level LP of
docs/trees.md §4 in the form optaccept solves it (`tree.accepted_tokens(...,
verifier="optimal")`: max c·x, A x = b, 0 ≤ x ≤ 1).  The script records the LP data
and HiGHS's primal and dual solutions, converts every number to an exact fraction (each
within 1e-12 of its float), checks exactly that the primal point is feasible and that its
value equals the dual bound b·y + Σ (c − Aᵀy)⁺ and the stated value, and writes them as
rationals for `LPDuality.check`.  `--check` compares the texts with the committed files
instead of writing them (exit status 1 if they differ).  Exits 1 if a certificate fails its exact check, 2 if
optaccept cannot be imported.
"""

from __future__ import annotations

import argparse
import itertools
import math
import pathlib
import sys
from fractions import Fraction

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout's optaccept, installed or not
try:
    import optaccept as oa
    import optaccept.tree._optimal_lp as tree_lp
    from optaccept import tree
    from optaccept.drafts import IID
except ImportError as exc:
    print(
        f"make_instances.py: error: cannot import optaccept ({exc}); "
        "run it with the project's environment: .venv/bin/python proofs/coq/make_instances.py",
        file=sys.stderr,
    )
    sys.exit(2)

# name, target law, draft law q, number of i.i.d. drafts k, the value the README states
INSTANCES = [
    ("readme", ["0.40", "0.25", "0.15", "0.12", "0.08"], ["0.30", "0.10", "0.35", "0.05", "0.20"], 2, "0.9075"),
    ("coin", ["0.5", "0.5"], ["0.9", "0.1"], 1, "0.6"),
]

# name, context-free target and draft laws, chain length, i.i.d. chains k, the stated LP optimum
TREE_INSTANCES = [
    ("sun", ["1/3", "2/3"], ["2/3", "1/3"], 2, 1, "11/9"),
    ("sun_two_chains", ["1/3", "2/3"], ["2/3", "1/3"], 2, 2, "131/81"),
]


class CertificateError(Exception):
    """An exact check of a certificate failed."""


def iid_set_law(q: list[Fraction], k: int) -> dict[tuple[int, ...], Fraction]:
    """D(A) = P(set(x1..xk) = A) for k i.i.d. draws from q, by enumerating ordered tuples."""
    law: dict[tuple[int, ...], Fraction] = {}
    for t in itertools.product(range(len(q)), repeat=k):
        mass = math.prod((q[i] for i in t), start=Fraction(1))
        if mass:
            a = tuple(sorted(set(t)))
            law[a] = law.get(a, Fraction(0)) + mass
    return law


def certificate(p: list[Fraction], q: list[Fraction], k: int) -> dict:
    """An exact coupling of the i.i.d. set law and p, and the subset S of (star), checked exactly."""
    n = len(p)
    res = oa.optimal_acceptance([float(x) for x in p], IID([float(x) for x in q], k), method="lp")
    law = iid_set_law(q, k)
    sets = sorted(law, key=lambda a: (len(a), a))
    index = {a: i for i, a in enumerate(res.plan.sets)}
    flow = [[Fraction(0)] * n for _ in sets]
    for r, a in enumerate(sets):
        if a in index:
            row = res.plan.flow[index[a]]
            row = row.toarray().ravel() if hasattr(row, "toarray") else row
            for y in a:
                flow[r][y] = Fraction(float(row[y])).limit_denominator(10**6)
    # exact feasibility of the flow
    if any(f < 0 for row in flow for f in row):
        raise CertificateError("negative flow")
    rows = [sum(row) for row in flow]
    cols = [sum(flow[r][y] for r in range(len(sets))) for y in range(n)]
    if any(rows[r] > law[a] for r, a in enumerate(sets)) or any(cols[y] > p[y] for y in range(n)):
        raise CertificateError("flow over capacity")
    # north-west corner completion of the deficits into a coupling
    u = [law[a] - rows[r] for r, a in enumerate(sets)]
    v = [p[y] - cols[y] for y in range(n)]
    r = y = 0
    while r < len(sets) and y < n:
        m = min(u[r], v[y])
        flow[r][y] += m
        u[r] -= m
        v[y] -= m
        if u[r] == 0:
            r += 1
        else:
            y += 1
    if any(u) or any(v):
        raise CertificateError("completion did not reach a coupling")
    accept = sum(flow[r][y] for r, a in enumerate(sets) for y in a)
    S = tuple(res.subset)
    cut = sum(p[y] for y in S) + 1 - sum(law[a] for a in sets if set(a) <= set(S))
    if accept != cut:
        raise CertificateError(f"acceptance {accept} differs from the value {cut} of S = {S}")
    N = math.lcm(*(x.denominator for x in [*p, *law.values(), *(f for row in flow for f in row)]))
    return {
        "n": n,
        "m": len(sets),
        "N": N,
        "pp": [int(x * N) for x in p],
        "dd": [int(law[a] * N) for a in sets],
        "sets": [list(a) for a in sets],
        "flow": [[int(f * N) for f in row] for row in flow],
        "S": list(S),
        "v": int(accept * N),
        "value": accept,
    }


def coq_list(xs) -> str:
    return "[:: " + "; ".join(coq_list(x) if isinstance(x, list) else str(x) for x in xs) + "]"


def render() -> str:
    out = [
        "(* Generated by proofs/coq/make_instances.py from optaccept's max-flow LP: do not edit. *)",
        "(* Each instance: alpha* = v / N exactly, in every real field (Certificate.cert_alpha_star). *)",
        "From mathcomp Require Import all_ssreflect all_algebra.",
        "From OptAccept Require Import Duality Certificate.",
        "",
        "Import GRing.Theory Num.Theory.",
        "",
    ]
    for name, ps, qs, k, stated in INSTANCES:
        p = [Fraction(x) for x in ps]
        q = [Fraction(x) for x in qs]
        c = certificate(p, q, k)
        value = Fraction(stated)
        if c["value"] != value:
            raise CertificateError(f"{name}: alpha* = {c['value']}, not the stated {stated}")
        args = f"{c['n']} {c['m']} {name}_N {name}_pp {name}_dd {name}_sets {name}_flow {name}_S {name}_v"
        Pd = math.lcm(*(x.denominator for x in p))
        Qd = math.lcm(*(x.denominator for x in q))
        out += [
            f"(* {name}: p = [{', '.join(ps)}], IID(q = [{', '.join(qs)}], k = {k}); "
            f"alpha* = {stated} = {value.numerator}/{value.denominator}. *)",
            f"Definition {name}_N := {c['N']}.",
            f"Definition {name}_pp := {coq_list(c['pp'])}.",
            f"Definition {name}_dd := {coq_list(c['dd'])}.",
            f"Definition {name}_sets := {coq_list(c['sets'])}.",
            f"Definition {name}_flow := {coq_list(c['flow'])}.",
            f"Definition {name}_S := {coq_list(c['S'])}.",
            f"Definition {name}_v := {c['v']}.",
            "",
            f"Lemma {name}_check : check {args}.",
            "Proof. by vm_compute. Qed.",
            "",
            f"(* pp / N is p = {coq_list([int(x * Pd) for x in p])} / {Pd}, and v / N = {value} *)",
            f"Lemma {name}_data : all2 (fun a b => a * {Pd} == b * {name}_N)%N {name}_pp "
            f"{coq_list([int(x * Pd) for x in p])} && ({name}_v * {value.denominator} == {value.numerator} * {name}_N)%N.",
            "Proof. by vm_compute. Qed.",
            "",
            f"(* dd / N is the set law of {k} i.i.d. drafts from q = {coq_list([int(x * Qd) for x in q])} / {Qd} *)",
            f"Lemma {name}_set_law : iid_set_ok {name}_N {name}_dd {name}_sets {k} {Qd} "
            f"{coq_list([int(x * Qd) for x in q])}.",
            "Proof. by vm_compute. Qed.",
            "",
            f"Theorem {name}_alpha_star (R : realFieldType) :",
            f"  let p := pR (n := {c['n']}) {name}_N {name}_pp R in",
            f"  let D := DR (m := {c['m']}) {name}_N {name}_dd R in",
            f"  let draft := draftR {c['n']} (m := {c['m']}) {name}_sets in",
            f"  (exists2 pi, is_coupling p D pi & acceptance draft pi = vR {name}_N {name}_v R) /\\",
            f"  (forall pi, is_coupling p D pi -> (acceptance draft pi <= vR {name}_N {name}_v R)%R).",
            f"Proof. intros p D draft; exact (cert_alpha_star R {name}_check). Qed.",
            "",
            f"Print Assumptions {name}_alpha_star.",
            "",
        ]
    return "\n".join(out)


def exact(x: float, what: str) -> Fraction:
    """The fraction of small denominator that the float ``x`` rounds, refused if none is within 1e-12."""
    f = Fraction(float(x)).limit_denominator(10**6)
    if abs(float(f) - float(x)) > 1e-12 * max(1.0, abs(float(x))):
        raise CertificateError(f"{what} = {x!r} is not within 1e-12 of a fraction of denominator at most 10**6")
    return f


def iid_node_set_law(q: list[Fraction], length: int, k: int) -> dict[frozenset, Fraction]:
    """Law of the node set (prefixes, root included) of k i.i.d. chains of ``length`` tokens
    drawn from the context-free q, by enumerating ordered k-tuples of chains."""
    chains = list(itertools.product(range(len(q)), repeat=length))
    law: dict[frozenset, Fraction] = {}
    for t in itertools.product(chains, repeat=k):
        mass = math.prod((q[y] for c in t for y in c), start=Fraction(1))
        if mass:
            s = frozenset(c[:d] for c in t for d in range(length + 1))
            law[s] = law.get(s, Fraction(0)) + mass
    return law


def tree_certificate(p: list[Fraction], q: list[Fraction], length: int, k: int) -> dict:
    """The sequence-level LP of ``tree.accepted_tokens(..., verifier="optimal")`` with its primal
    and dual solutions, in exact fractions, checked exactly: A x = b, 0 ≤ x ≤ 1, w = (c − Aᵀy)⁺
    and c·x = b·y + Σ w."""
    seen = []
    solve = tree_lp._solve

    def recording(c, A, b, row_mass, tol):
        z, y, cert = solve(c, A, b, row_mass, tol)
        seen.append((c, A, b, z, y))
        return z, y, cert

    tree_lp._solve = recording
    try:
        law = tree.TreeDraftLaw(length=length, k=k, children="iid")
        res = tree.accepted_tokens(lambda u: p, lambda u: q, law, verifier="optimal")
    finally:
        tree_lp._solve = solve
    if len(seen) != 1:
        raise CertificateError(f"expected one LP solve, saw {len(seen)}")
    c0, A0, b0, z0, y0 = seen[0]
    A0 = A0.toarray()
    rows, cols = A0.shape
    A = [[exact(A0[i, j], f"A[{i}, {j}]") for j in range(cols)] for i in range(rows)]
    b = [exact(t, f"b[{i}]") for i, t in enumerate(b0)]
    c = [exact(t, f"c[{j}]") for j, t in enumerate(c0)]
    x = [exact(t, f"x[{j}]") for j, t in enumerate(z0)]
    y = [exact(t, f"y[{i}]") for i, t in enumerate(y0)]
    u = [Fraction(1)] * cols
    # the tree-law rows' right-hand sides are the law of the node set, recomputed here
    law = iid_node_set_law(q, length, k)
    sets = res.details["sets"]
    if set(law) != set(sets) or any(b[a] != law[s] for a, s in enumerate(sets)):
        raise CertificateError("the LP's tree-law rows are not the law of the drafted node set")
    if any(not 0 <= t <= 1 for t in x):
        raise CertificateError("primal point outside 0 <= x <= 1")
    if any(sum(a * t for a, t in zip(row, x)) != bi for row, bi in zip(A, b)):
        raise CertificateError("primal point violates A x = b")
    w = [max(c[j] - sum(A[i][j] * y[i] for i in range(rows)), Fraction(0)) for j in range(cols)]
    primal = sum(a * t for a, t in zip(c, x))
    dual = sum(a * t for a, t in zip(b, y)) + sum(a * t for a, t in zip(u, w))
    if primal != dual:
        raise CertificateError(f"primal value {primal} differs from the dual bound {dual}")
    return {"A": A, "b": b, "c": c, "u": u, "x": x, "y": y, "w": w, "value": primal}


def coq_q(f: Fraction) -> str:
    if f.denominator == 1:
        return f"({f.numerator})" if f < 0 else str(f.numerator)
    return f"({f.numerator}#{f.denominator})"


def coq_qlist(xs) -> str:
    return "[" + "; ".join(coq_qlist(x) if isinstance(x, list) else coq_q(x) for x in xs) + "]"


def render_tree() -> str:
    out = [
        "(* Generated by proofs/coq/make_instances.py from optaccept's sequence-level LP: do not edit. *)",
        '(* Each instance: the LP max c.x, A x = b, 0 <= x <= u of tree.accepted_tokens(..., verifier="optimal")',
        "   (docs/trees.md, section 4) has optimum v over the rationals (LPDuality.lp_optimum).  That the data",
        "   encode the tree problem is optaccept's construction, checked in its tests, not here. *)",
        "From Coq Require Import QArith List.",
        "From OptAccept Require Import LPDuality.",
        "Import ListNotations.",
        "",
        "Local Open Scope Q_scope.",
        "",
    ]
    for name, ps, qs, length, k, stated in TREE_INSTANCES:
        p = [Fraction(t) for t in ps]
        q = [Fraction(t) for t in qs]
        cert = tree_certificate(p, q, length, k)
        value = Fraction(stated)
        if cert["value"] != value:
            raise CertificateError(f"{name}: LP optimum {cert['value']}, not the stated {stated}")
        v = coq_q(value)
        args = " ".join(f"{name}_{t}" for t in "A b c u x y w".split())
        out += [
            f"(* {name}: context-free target p = [{', '.join(ps)}], draft q = [{', '.join(qs)}], "
            f"{k} i.i.d. chain{'s' if k > 1 else ''} of length {length}; "
            f"LP of {len(cert['A'])} rows and {len(cert['c'])} columns; optimum {stated}. *)",
            *(
                f"Definition {name}_{t} : list {'(list Q)' if t == 'A' else 'Q'} := {coq_qlist(cert[t])}."
                for t in "A b c u x y w".split()
            ),
            "",
            f"Lemma {name}_check : check {args} {v} = true.",
            "Proof. vm_compute. reflexivity. Qed.",
            "",
            f"Theorem {name}_lp_optimum :",
            f"  feasible {name}_A {name}_b {name}_u {name}_x /\\ dot {name}_c {name}_x == {v} /\\",
            f"  (forall x, feasible {name}_A {name}_b {name}_u x -> dot {name}_c x <= {v}).",
            f"Proof. exact (lp_optimum _ _ _ _ _ _ _ _ {name}_check). Qed.",
            "",
            f"Print Assumptions {name}_lp_optimum.",
            "",
        ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed Instances.v and TreeInstances.v")
    args = ap.parse_args(argv)
    try:
        texts = {HERE / "Instances.v": render(), HERE / "TreeInstances.v": render_tree()}
    except CertificateError as exc:
        print(f"make_instances.py: certificate failed: {exc}", file=sys.stderr)
        return 1
    status = 0
    for target, text in texts.items():
        if not args.check:
            target.write_text(text)
        elif not target.exists() or target.read_text() != text:
            print(f"make_instances.py: {target.name} differs from the generated text", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
