"""Main-job part: re-run every proof, write the certificates and the claims table.

One progress bar over the claims; what the proofs print goes to the run log.  Timings are
machine-dependent, so they are kept out of the written certificates and table (the run log
has them); everything written is reproducible bit for bit.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from .._lib.display import write_table
from ..polyhedra._claims import CLAIMS, run_claim

__all__ = ["run", "strip_timings", "proofs_table"]

_TIMING_KEYS = ("seconds", "wall_seconds")


def strip_timings(obj: Any) -> Any:
    """A copy of a certificate without its timing entries (keys ``seconds``, ``wall_seconds``)."""
    if isinstance(obj, dict):
        return {k: strip_timings(v) for k, v in obj.items() if k not in _TIMING_KEYS}
    if isinstance(obj, list):
        return [strip_timings(v) for v in obj]
    return obj


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Prove every claim of :data:`~optaccept.polyhedra._claims.CLAIMS` (``quick``: smaller
    (n, k) and grids), write ``figures_dir/proofs/<claim>.json`` and
    ``figures_dir/proofs_table.{md,csv,tex}``, return the paths written.

    Full mode takes about two minutes on a 2-core machine (dominated by the double
    description of the n = 6 cones); quick mode about half a minute.
    """
    from tqdm.auto import tqdm

    figures_dir = pathlib.Path(figures_dir)
    out_dir = figures_dir / "proofs"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths, certs = [], []
    bar = tqdm(list(CLAIMS), desc="polyhedra: exact proofs", unit="claim", leave=False)
    for key in bar:
        bar.set_postfix_str(key)
        cert, _ = run_claim(key, quick=quick, out_dir=None)
        certs.append(cert)
        path = out_dir / f"{key}.json"
        path.write_text(json.dumps(strip_timings(cert), separators=(",", ":")) + "\n")
        paths.append(path)
        print(f"{key}: {cert['seconds']} s")
    paths += proofs_table(certs, figures_dir)
    failed = [c["claim"] for c in certs if not c["holds"]]
    print(
        f"polyhedra: {len(certs) - len(failed)}/{len(certs)} claims verified"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return paths


def proofs_table(certs: list[dict[str, Any]], figures_dir: pathlib.Path) -> list[pathlib.Path]:
    """Write ``proofs_table.{md,csv,tex}`` from the claims' certificates (as written in
    ``figures_dir/proofs/``); return the paths."""

    rows = [
        [f"`{c['claim']}`", c["source"], "verified" if c["holds"] else "**fails**", f"{c['range']} ({c['mode']})"]
        for c in certs
    ]
    return write_table(
        figures_dir / "proofs_table",
        ["claim", "source", "status", "range of (n, k) covered"],
        rows,
        title="Exact proofs (double description in rational arithmetic)",
        notes=(
            "Each claim re-proved by `python proofs/<claim>.py`; certificates in `proofs/` (timings: the run "
            "log). Theorem 4.1 of docs/theory.md proves the K-draft statements for every n and k; these "
            "computations check it and the code independently."
        ),
        caption="Claims checked exactly by the double-description method.",
        wide=True,
    )
