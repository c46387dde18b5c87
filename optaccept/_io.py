"""Reading probability vectors from files (.npy, .json, .txt) for the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ._errors import InputError

__all__ = ["load_vector"]


def load_vector(path: str | Path, name: str) -> np.ndarray:
    """Load a 1-D vector from ``.npy``, ``.json`` (a list, or {"probs": [...]}) or
    ``.txt``/``.csv`` (numbers separated by whitespace or commas).

    Raises :class:`InputError` naming ``name`` and the file on any problem.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{name}: file not found: {path}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix == ".json":
            data = json.loads(path.read_text())
            if isinstance(data, dict):
                for key in ("probs", "p", "q", "values"):
                    if key in data:
                        data = data[key]
                        break
                else:
                    raise InputError(f"{name}: JSON object in {path} has no 'probs' list")
            arr = np.asarray(data, dtype=np.float64)
        elif suffix in (".txt", ".csv", ""):
            text = path.read_text().replace(",", " ").split()
            arr = np.array([float(t) for t in text], dtype=np.float64)
        else:
            raise InputError(f"{name}: unsupported file type {suffix!r} (use .npy, .json or .txt)")
    except InputError:
        raise
    except (ValueError, OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{name}: cannot read {path}: {exc}") from None
    if arr.ndim != 1:
        raise InputError(f"{name}: {path} must hold a 1-D vector, got shape {arr.shape}")
    return arr
