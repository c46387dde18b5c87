"""Write proofs/coq/Instances.v: exact certificates of alpha* for Coq to check.

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
optaccept.  `--check` compares the text with the committed file instead of writing it
(exit status 1 if they differ).  Exits 1 if a certificate fails its exact check, 2 if
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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed Instances.v")
    args = ap.parse_args(argv)
    try:
        text = render()
    except CertificateError as exc:
        print(f"make_instances.py: certificate failed: {exc}", file=sys.stderr)
        return 1
    target = HERE / "Instances.v"
    if args.check:
        if not target.exists() or target.read_text() != text:
            print(f"make_instances.py: {target.name} differs from the generated text", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
