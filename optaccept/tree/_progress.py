"""The default of ``progress=`` for the tree functions that can run long (the package's one
rule, :func:`optaccept._limits.show_progress`, re-exported for the tree modules)."""

from __future__ import annotations

from .._limits import show_progress

__all__ = ["show_progress"]
