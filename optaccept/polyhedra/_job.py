"""Main-job hook: re-run every proof and write the certificates and the proofs table."""

from __future__ import annotations

import pathlib

__all__ = ["run"]


def run(figures_dir: pathlib.Path, *, quick: bool = False) -> list[pathlib.Path]:
    """Prove every claim of :data:`~optaccept.polyhedra._claims.CLAIMS` (``quick``: smaller
    (n, k) and grids), write ``figures_dir/proofs/<claim>.json`` and
    ``figures_dir/proofs_table.md``, print a summary, return the paths written.

    Full mode takes about two minutes on a 2-core machine (dominated by the double
    description of the n = 6 cones); quick mode about half a minute.
    """
    from ._claims import CLAIMS, proofs_table, run_claim

    figures_dir = pathlib.Path(figures_dir)
    out_dir = figures_dir / "proofs"
    paths, certs = [], []
    for key in CLAIMS:
        cert, path = run_claim(key, quick=quick, out_dir=out_dir)
        certs.append(cert)
        if path is not None:
            paths.append(path)
    table = figures_dir / "proofs_table.md"
    table.write_text(proofs_table(certs))
    paths.append(table)
    failed = [c["claim"] for c in certs if not c["holds"]]
    print(
        f"polyhedra: {len(certs) - len(failed)}/{len(certs)} claims verified"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return paths
