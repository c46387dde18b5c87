"""The claims kept as re-runnable proofs (``proofs/*.py``), each writing a JSON certificate.

Every claim function returns a certificate dict with ``holds`` (bool), ``range``
(what was covered), ``seconds`` and the software versions; the proof scripts write
it to ``proofs/certificates/<claim>.json`` and exit 1 when ``holds`` is False.  A claim
prints one line per case as it goes (its progress); every case lies within the size
limits of :func:`~optaccept.polyhedra.check_k_draft_condition` (tested).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._prefixes import check_orderings, check_prefixes
from ._report import check_k_draft_condition, software_versions

__all__ = ["Claim", "CLAIMS", "run_claim", "main", "proofs_table"]


@dataclass(frozen=True)
class Claim:
    """A claim: key (script name), statement, source, and the function proving it."""

    key: str
    statement: str
    source: str
    prove: Callable[[bool], dict[str, Any]]


def _cone_claim(drafts: str, pairs: list[tuple[int, int]], compare_full: list[tuple[int, int]]) -> dict[str, Any]:
    """Run the exact check for every (n, k) in ``pairs``; on ``compare_full`` also with the
    full tuple cone, and require the same inequalities from both cones."""

    cases, ok = [], True
    for n, k in pairs:
        t0 = time.perf_counter()
        rep = check_k_draft_condition(n, k, drafts, reduce=True, progress=False)
        case = rep.to_json(include_rays=True)
        case["wall_seconds"] = round(time.perf_counter() - t0, 3)
        if (n, k) in compare_full:
            t0 = time.perf_counter()
            full = check_k_draft_condition(n, k, drafts, reduce=False, progress=False)
            same = full.holds == rep.holds and [str(e) for e in full.inequalities] == [str(e) for e in rep.inequalities]
            case["full_cone"] = {
                "n_rays": len(full.rays),
                "holds": full.holds,
                "same_inequalities": same,
                "seconds": round(time.perf_counter() - t0, 3),
            }
            ok = ok and same and full.holds
        ok = ok and rep.holds
        cases.append(case)
        print(f"  {rep.summary()}", flush=True)
    ns = sorted({n for n, _ in pairs})
    return {
        "holds": ok,
        "range": f"{len(pairs)} cases (n, k): " + ", ".join(f"({n},{k})" for n, k in pairs),
        "n_max": max(ns),
        "full_cone_compared": [list(x) for x in compare_full],
        "cases": cases,
        "software": software_versions(),
    }


def _pairs(n_max: int, *, k_min: int = 2, k_le_n: bool = True, extra: tuple = ()) -> list[tuple[int, int]]:
    out = [(n, k) for n in range(2, n_max + 1) for k in range(k_min, n + 1)] if k_le_n else []
    return sorted(set(out) | set(extra))


def _two_draft(quick: bool) -> dict[str, Any]:
    n_max = 5 if quick else 8
    pairs = [(n, 2) for n in range(2, n_max + 1)]
    return _cone_claim("iid", pairs, [(n, 2) for n in range(2, 5)])


def _iid(quick: bool) -> dict[str, Any]:
    n_max = 4 if quick else 6
    extra = ((2, 3), (2, 4), (2, 5), (3, 4)) if quick else ((2, 3), (2, 4), (2, 5), (2, 6), (3, 4), (3, 5))
    pairs = _pairs(n_max, extra=extra)
    return _cone_claim("iid", pairs, [(2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (4, 3), (2, 4)])


def _swor(quick: bool) -> dict[str, Any]:
    pairs = _pairs(4 if quick else 6)
    return _cone_claim("swor", pairs, [(2, 2), (3, 2), (3, 3), (4, 2), (4, 3)])


def _independent(quick: bool) -> dict[str, Any]:
    pairs = _pairs(4 if quick else 5)
    return _cone_claim("independent", pairs, [(2, 2), (3, 2), (3, 3), (4, 2)])


def _prefixes(quick: bool) -> dict[str, Any]:
    grids = [(3, 6), (4, 5)] if quick else [(3, 9), (4, 7)]
    n_orders = 4 if quick else 5
    parts, order_parts = [], []
    for law in ("iid", "swor"):
        for n, m in grids:
            t0 = time.perf_counter()
            res = check_prefixes(n, m, (2, 3, 4), law, progress=False)
            res["seconds"] = round(time.perf_counter() - t0, 2)
            print(
                f"  {law} n={n} grid 1/{m}: holds={res['holds']} all orderings={res['all_orderings']}"
                f" ({res['seconds']} s)",
                flush=True,
            )
            parts.append(res)
        for n in range(3, n_orders + 1):
            t0 = time.perf_counter()
            res = check_orderings(n, (2, 3, 4), law, reps=3, seed=n, progress=False)
            res["seconds"] = round(time.perf_counter() - t0, 2)
            print(f"  {law} n={n} every ordering x 3: holds={res['holds']} ({res['seconds']} s)", flush=True)
            order_parts.append(res)
    return {
        "holds": all(r["holds"] and r["all_orderings"] for r in parts) and all(r["holds"] for r in order_parts),
        "range": "all (p, q) on grids "
        + ", ".join(f"n={n} step 1/{m}" for n, m in grids)
        + f"; every ordering of p/q for n <= {n_orders} (3 instances each); k = 2, 3, 4; iid and swor",
        "n_max": max(max(n for n, _ in grids), n_orders),
        "parts": parts,
        "orderings": order_parts,
        "software": software_versions(),
    }


CLAIMS: dict[str, Claim] = {
    c.key: c
    for c in (
        Claim(
            "two_draft_condition",
            "k = 2 i.i.d. drafts: alpha* = 1 iff p(S) >= q(S)^2 for every S (the cone's "
            "non-trivial extreme rays are exactly these inequalities)",
            "Khisti et al., ICLR 2025, Theorem 2",
            _two_draft,
        ),
        Claim(
            "k_draft_conjecture_iid",
            "k i.i.d. drafts: alpha* = 1 iff p(S) >= q(S)^k for every S",
            "Khisti et al., ICLR 2025, Remark 2 (conjecture, checked numerically in their paper on small alphabets)",
            _iid,
        ),
        Claim(
            "k_draft_without_replacement",
            "k drafts without replacement: alpha* = 1 iff p(S) >= P(first k draws in S) for every S",
            "analogue of Remark 2 (docs/theory.md §2.2); Hu et al., ICLR 2025, §3 for the subset dual",
            _swor,
        ),
        Claim(
            "k_draft_independent",
            "k independent drafts q1..qk: alpha* = 1 iff p(S) >= prod_i q_i(S) for every S",
            "analogue of Remark 2 for Khisti et al.'s non-identical drafts (docs/theory.md §2.4)",
            _independent,
        ),
        Claim(
            "sorted_prefixes_suffice",
            "min over S of p(S) + 1 - D(set in S) is attained at one of the n + 1 prefixes of "
            "the tokens sorted by p/q (so n + 1 checks decide alpha* = 1)",
            "Hu et al., ICLR 2025, §4 (i.i.d.; docs/theory.md §2.1); without replacement: docs/theory.md Theorem 2.7 (stated by Hu et al.)",
            _prefixes,
        ),
    )
}


def run_claim(
    key: str, *, quick: bool = False, out_dir: pathlib.Path | None = None
) -> tuple[dict[str, Any], pathlib.Path | None]:
    """Prove one claim, write ``out_dir/<key>.json`` (if given), return (certificate, path)."""
    claim = CLAIMS[key]
    print(f"{key}: {claim.statement}", flush=True)
    t0 = time.perf_counter()
    cert = claim.prove(quick)
    cert = {
        "claim": key,
        "statement": claim.statement,
        "source": claim.source,
        "mode": "quick" if quick else "full",
        "seconds": round(time.perf_counter() - t0, 2),
        **cert,
    }
    print(f"{key}: {'HOLDS' if cert['holds'] else 'FAILS'} ({cert['seconds']} s)", flush=True)
    path = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{key}.json"
        path.write_text(json.dumps(cert, separators=(",", ":")) + "\n")
    return cert, path


def proofs_table(certs: list[dict[str, Any]]) -> str:
    """Markdown table: claim, source, status, range covered, time."""
    lines = ["| claim | source | status | range of (n, k) covered | time (s) |", "|---|---|---|---|---|"]
    for c in certs:
        status = "verified" if c["holds"] else "**fails**"
        lines.append(f"| `{c['claim']}` | {c['source']} | {status} | {c['range']} ({c['mode']}) | {c['seconds']} |")
    return "\n".join(lines) + "\n"


def main(key: str, argv: list[str] | None = None, default_out: pathlib.Path | None = None) -> int:
    """Entry point of a proof script: ``--quick``, ``--out DIR`` and ``--update``; exit 1 if
    the claim fails.

    ``default_out`` is the committed certificate folder (``proofs/certificates``): it is
    written only with ``--update``.  Otherwise the certificate goes to ``local/certificates``
    beside it (ignored by git), so re-running a proof never modifies a committed file."""
    ap = argparse.ArgumentParser(description=CLAIMS[key].statement)
    ap.add_argument("--quick", action="store_true", help="smaller range of (n, k)")
    ap.add_argument(
        "--out",
        type=pathlib.Path,
        default=None,
        help="certificate folder (default: proofs/local/certificates, ignored by git)",
    )
    ap.add_argument(
        "--update", action="store_true", help="write the committed certificate (proofs/certificates) instead"
    )
    args = ap.parse_args(argv)
    if args.update and args.out is not None:
        ap.error("--update and --out: give one of them")
    out = args.out
    if out is None and default_out is not None:
        out = default_out if args.update else default_out.parent / "local" / default_out.name
    cert, path = run_claim(key, quick=args.quick, out_dir=out)
    if path is not None:
        print(f"certificate: {path}")
    return 0 if cert["holds"] else 1
