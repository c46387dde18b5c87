"""Typed errors and warnings of optaccept.

Every problem with what a caller passed in raises :class:`InputError` (a
``ValueError``), whose message names the argument and the problem.  Solver
failures raise :class:`SolverError`; a missing optional dependency raises
:class:`MissingDependencyError` naming the install step.  A probability vector
accepted although its sum was off by more than float64 rounding (but by no more
than float32 rounding explains) is renormalised with a :class:`RenormalizedWarning`.

Messages that advise rescaling say ``normalize=True`` (the Python keyword); the
command line rewrites that advice to its own flag with :func:`for_command_line`.
"""

from __future__ import annotations

import re

__all__ = [
    "InputError",
    "MethodError",
    "SolverError",
    "MissingDependencyError",
    "RenormalizedWarning",
    "NORMALIZE_ADVICE",
    "for_command_line",
]

#: The advice every "sum is off" message ends with (rewritten by the command line).
NORMALIZE_ADVICE = "pass normalize=True to rescale"


class InputError(ValueError):
    """Invalid input: the message names the argument and what is wrong with it."""


class MethodError(InputError):
    """The chosen method cannot handle this draft law or this problem size."""


class SolverError(RuntimeError):
    """A numerical solver failed, or its answer did not pass the independent re-check."""


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the install step."""


class RenormalizedWarning(UserWarning):
    """A probability vector whose sum was off from 1 by more than float64 rounding
    (1e-9) but within what float32 rounding explains was rescaled to sum 1.

    Silence it with ``warnings.simplefilter("ignore", optaccept.RenormalizedWarning)``,
    or turn it into an error with ``"error"``.
    """


def for_command_line(message: str) -> str:
    """Rewrite Python-keyword advice in an error message into command-line flags
    (``normalize=True`` → ``--normalize``, ``method='lp'`` → ``--method lp``)."""

    message = message.replace("normalize=True", "--normalize")
    return re.sub(r"\bmethod=['\"]([\w-]+)['\"]", r"--method \1", message)
