"""Reading probability vectors for the command line: a file (.npy, .json, .txt, .csv)
or a comma-separated list typed on the command line.

Every failure (missing, unreadable, corrupt or wrong-kind file, wrong content) raises
:class:`~optaccept.InputError` naming the option and the file.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError

__all__ = ["load_vector", "parse_numbers", "VECTOR_HELP"]

#: How the command line's vector options are described in ``--help``.
VECTOR_HELP = "a .npy, .json or .txt/.csv file, or numbers separated by commas (e.g. 0.5,0.3,0.2)"

# Errors numpy and the standard library raise on unreadable or corrupt files.
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError, KeyError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def parse_numbers(text: str, name: str) -> np.ndarray:
    """Numbers separated by commas and/or whitespace, as a float64 vector."""
    parts = text.replace(",", " ").split()
    if not parts:
        raise InputError(f"{name}: expected numbers separated by commas, got nothing")
    out = np.empty(len(parts), dtype=np.float64)
    for i, t in enumerate(parts):
        try:
            out[i] = float(t)
        except ValueError:
            shown = t if len(t) <= 40 else t[:37] + "..."
            raise InputError(f"{name}: expected numbers separated by commas; item {i + 1} is {shown!r}") from None
    return out


def _looks_like_numbers(text: str) -> bool:
    parts = text.replace(",", " ").split()
    if not parts:
        return False
    try:
        [float(t) for t in parts]
    except ValueError:
        return False
    return True


def _from_json(data: Any, name: str, path: Path) -> np.ndarray:
    if isinstance(data, dict):
        for key in ("probs", "p", "q", "values"):
            if key in data:
                data = data[key]
                break
        else:
            raise InputError(f"{name}: the JSON object in {path} has no 'probs' list")
    if not isinstance(data, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data):
        raise InputError(f'{name}: {path} must hold a JSON list of numbers (or {{"probs": [...]}})')
    return np.asarray(data, dtype=np.float64)


def load_vector(source: str | Path, name: str) -> np.ndarray:
    """Load a 1-D vector from a file or a comma-separated list.

    ``source`` is a path to ``.npy``, ``.json`` (a list, or ``{"probs": [...]}``) or
    ``.txt``/``.csv`` (numbers separated by whitespace or commas), or, when no such file
    exists, the numbers themselves (``"0.5,0.3,0.2"``).  The values are not checked to
    be a distribution here; the solvers do that.

    Raises :class:`InputError` naming ``name`` (and the file) on any problem.
    """
    text = str(source)
    path = Path(source)
    if not path.exists():
        if _looks_like_numbers(text):
            return parse_numbers(text, name)
        raise InputError(f"{name}: no such file: {text} (give {VECTOR_HELP})")
    if path.is_dir():
        raise InputError(f"{name}: {path} is a folder, not a file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
            if not isinstance(arr, np.ndarray):  # an .npz archive under a .npy name
                arr.close()
                raise InputError(f"{name}: {path} is an .npz archive, not a .npy vector")
        elif suffix == ".npz":
            raise InputError(
                f"{name}: {path} is an .npz archive; give a single vector (.npy, .json, .txt) — "
                "distribution archives from 'optaccept extract' go to 'optaccept gap-table'"
            )
        elif suffix == ".json":
            arr = _from_json(json.loads(path.read_text(encoding="utf-8")), name, path)
        elif suffix in (".txt", ".csv", ""):
            arr = parse_numbers(path.read_text(encoding="utf-8"), name)
        else:
            raise InputError(f"{name}: unsupported file type {suffix!r} (use .npy, .json, .txt or .csv)")
    except InputError:
        raise
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: {path} is not valid JSON ({_first_line(exc)})") from None
    except _READ_ERRORS as exc:
        if "pickled" in str(exc) or "magic string" in str(exc):
            raise InputError(f"{name}: {path} is not a .npy file") from None
        raise InputError(f"{name}: cannot read {path} ({_first_line(exc)})") from None
    if arr.ndim != 1:
        raise InputError(f"{name}: {path} must hold a 1-D vector, got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise InputError(f"{name}: {path} must hold real numbers, got dtype {arr.dtype}")
    return arr
