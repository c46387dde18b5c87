"""Tables written to files, written once: the CSV of a list of records (one dict per row)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["write_records_csv"]


def write_records_csv(path: str | Path, fields: Sequence[str], records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` as CSV: a header of ``fields``, then one row per record with those keys.

    The rows end in ``\\r\\n`` (the ``csv`` module's default dialect); a record's other keys
    are left out.

    Parameters
    ----------
    path : str or pathlib.Path
        The file written.
    fields : sequence of str
        The columns, in order.
    records : iterable of mapping
        The rows; each has every key of ``fields``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(fields))
        w.writeheader()
        for r in records:
            w.writerow({f: r[f] for f in fields})
    return path
