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
    """Invalid input: the message names the argument and what is wrong with it.

    Examples
    --------
    >>> import optaccept as oa
    >>> try:
    ...     oa.IID([0.5, 0.6], k=2)
    ... except oa.InputError as err:
    ...     print(type(err).__name__, isinstance(err, ValueError))
    InputError True
    """


class MethodError(InputError):
    """The chosen method cannot handle this draft law or this problem size.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> try:
    ...     oa.optimal_acceptance(p, oa.WithoutReplacement(q, k=3), method="closed_form")
    ... except oa.MethodError as err:
    ...     print(type(err).__name__, isinstance(err, oa.InputError))
    MethodError True
    """


class SolverError(RuntimeError):
    """A numerical solver failed, or its answer did not pass the independent re-check.

    Examples
    --------
    >>> import optaccept as oa
    >>> issubclass(oa.SolverError, RuntimeError)
    True
    """


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the install step.

    Examples
    --------
    >>> import optaccept as oa
    >>> issubclass(oa.MissingDependencyError, ImportError)
    True
    """


class RenormalizedWarning(UserWarning):
    """A probability vector whose sum was off from 1 by more than float64 rounding
    (1e-9) but within what float32 rounding explains was rescaled to sum 1.

    Silence it with ``warnings.simplefilter("ignore", optaccept.RenormalizedWarning)``,
    or turn it into an error with ``"error"``.

    Examples
    --------
    >>> import warnings
    >>> import optaccept as oa
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     law = oa.IID([0.25, 0.25, 0.5 - 1e-7], k=2)  # a sum off by 1e-7
    >>> round(float(law.q.sum()), 12), [w.category.__name__ for w in caught]
    (1.0, ['RenormalizedWarning'])
    """


def for_command_line(message: str) -> str:
    """Rewrite Python-keyword advice in an error message into command-line flags
    (``normalize=True`` → ``--normalize``, ``method='lp'`` → ``--method lp``)."""

    message = message.replace("normalize=True", "--normalize")
    return re.sub(r"\bmethod=['\"]([\w-]+)['\"]", r"--method \1", message)
