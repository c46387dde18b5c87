"""The default of ``progress=`` for the tree functions that can run long: a bar where
someone watches (a terminal or a Jupyter kernel), none in scripts whose output is
redirected or in tests."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["show_progress"]


def show_progress(progress: Any) -> bool:
    """``progress`` as given, or (None) whether stderr is a terminal or the code runs in
    a Jupyter kernel."""
    if progress is not None:
        return bool(progress)
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    shell = sys.modules.get("IPython")
    if shell is not None:
        ip = getattr(shell, "get_ipython", lambda: None)()
        return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
    return False
