"""Typed errors of optaccept.

Every problem with what a caller passed in raises :class:`InputError` (a
``ValueError``), whose message names the argument and the problem.  Solver
failures raise :class:`SolverError`; a missing optional dependency raises
:class:`MissingDependencyError` naming the install step.
"""

from __future__ import annotations

__all__ = ["InputError", "MethodError", "SolverError", "MissingDependencyError"]


class InputError(ValueError):
    """Invalid input: the message names the argument and what is wrong with it."""


class MethodError(InputError):
    """The chosen method cannot handle this draft law or this problem size."""


class SolverError(RuntimeError):
    """A numerical solver failed, or its answer did not pass the independent re-check."""


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the install step."""
