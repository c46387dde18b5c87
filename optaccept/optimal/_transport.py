"""The primal transport LP over ordered tuples × tokens (docs/theory.md §2; SpecTr's optimal
transport formulation, Hu et al.'s eq. (7)), modelled in cvxpy and solved by HiGHS.

    maximise Σ_{x̄, y ∈ set(x̄)} π(x̄, y)  s.t.  π ≥ 0, Σ_y π(x̄, y) = D(x̄), Σ_x̄ π(x̄, y) = p(y).

It has one variable per (tuple of positive probability, token): n^{k+1} for i.i.d.
drafts with full support.  Its size is estimated before anything is built
(``optaccept.optimal._advice.transport_variables``) and refused above
:data:`MAX_TRANSPORT_VARIABLES` = 300,000 variables; HiGHS answers in one call that reports
nothing while it runs, so an accepted size of at least :data:`PROGRESS_VARIABLES` shows a
bar over the three steps (build the model, solve, check the certificate) where someone
watches.  Measured on a 2-core machine shared with other work (CPU seconds): 4,096
variables (n = 4, k = 5) 1.5 s; 78,125 (n = 5, k = 6) 7.6 s.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import numpy as np

from .._errors import MethodError, MissingDependencyError, SolverError
from .._lib.limits import count, show_progress
from ._advice import MAX_TRANSPORT_VARIABLES
from ._flow import _certified
from ._result import TransportPlan

__all__ = ["transport_lp", "MAX_TRANSPORT_VARIABLES", "PROGRESS_VARIABLES"]

#: Sizes (variables) from which the transport LP shows a progress bar: about 2 s and more.
PROGRESS_VARIABLES = 20_000


def transport_lp(p: np.ndarray, law, *, progress: bool | None = None):
    """Solve the transport LP of the module docstring and certify its answer.

    Parameters
    ----------
    p : numpy.ndarray
        Target distribution (cleaned: non-negative, sums to 1).
    law : DraftLaw
        The draft law; its ordered tuples are listed (at most
        :data:`MAX_TRANSPORT_VARIABLES` tuples × tokens).
    progress : bool, optional
        A ``tqdm`` bar (unit: step; build, solve, check) on stderr for problems of at
        least :data:`PROGRESS_VARIABLES` variables.  ``None``: where someone watches (a
        terminal or Jupyter).

    Returns
    -------
    AcceptanceResult
        Checked by the flow certificate (``_flow._certified``); the coupling as ``plan``.

    Raises
    ------
    MethodError
        More than :data:`MAX_TRANSPORT_VARIABLES` variables (refused before any model is built).
    SolverError
        HiGHS failed, or its answer did not pass the certificate check.
    """
    try:
        import cvxpy as cp
    except ImportError:  # pragma: no cover - cvxpy is a core dependency
        raise MissingDependencyError("method 'transport' needs cvxpy: pip install cvxpy") from None
    try:
        tuples, D = law.tuple_law(max_tuples=MAX_TRANSPORT_VARIABLES)
    except MethodError as exc:
        raise MethodError(f"method 'transport': {exc}") from None
    D = np.asarray(D, dtype=np.float64)
    m, n = tuples.shape[0], law.n
    if m * n > MAX_TRANSPORT_VARIABLES:
        raise MethodError(
            f"method 'transport': {count(m)} tuples × {n} tokens = {count(m * n)} variables, over the limit of "
            f"{count(MAX_TRANSPORT_VARIABLES)}; use method='lp'"
        )
    from tqdm.auto import tqdm

    bar = tqdm(
        total=3,
        unit="step",
        desc=f"transport LP ({count(m * n)} variables)",
        disable=not (show_progress(progress) and m * n >= PROGRESS_VARIABLES),
        bar_format="{desc}: {n_fmt}/{total_fmt} steps [{elapsed}]{postfix}",
    )
    bar.set_postfix_str("building the model")
    hit = np.zeros((m, n))
    hit[np.repeat(np.arange(m), tuples.shape[1]), tuples.ravel()] = 1.0
    pi = cp.Variable((m, n), nonneg=True)
    # Equal totals on both sides keep the equality system consistent in floats.
    Dn = D / D.sum()
    constraints = [cp.sum(pi, axis=1) == Dn, cp.sum(pi, axis=0) == p]
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(hit, pi))), constraints)
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    bar.update(1)
    bar.set_postfix_str("HiGHS solving (no report until it ends)")
    # HiGHS's presolve can declare this (feasible) system infeasible when D or p has entries
    # near 1e-14; the retry without presolve solves it.  The certificate check below
    # guards whatever comes back.
    for options in (tight, {**tight, "presolve": "off"}):
        try:
            with _quiet_stdout():
                prob.solve(solver=cp.HIGHS, output_flag=False, **options)
        except cp.error.SolverError as exc:
            bar.close()
            raise SolverError(f"method 'transport': HiGHS failed ({exc})") from None
        if prob.status == cp.OPTIMAL and pi.value is not None:
            break
    else:
        bar.close()
        raise SolverError(f"method 'transport': solver status {prob.status!r}")
    bar.update(1)
    bar.set_postfix_str("checking the certificate")
    coupling = np.clip(np.asarray(pi.value), 0.0, None)
    plan = TransportPlan(tuples, coupling)
    flow_plan = plan.to_flow()
    sl_D = np.zeros(len(flow_plan.sets))
    index = {s: a for a, s in enumerate(flow_plan.sets)}
    for row, d in zip(tuples.tolist(), Dn.tolist()):
        sl_D[index[tuple(sorted(set(row)))]] += d
    try:
        return _certified(p, law, flow_plan, sl_D, "transport", shown_plan=plan)
    finally:
        bar.update(1)
        bar.close()


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence the process's standard output (file descriptor 1) while HiGHS runs: its
    banner is written by the C++ library when the first solver object is built, whatever
    its options, and would otherwise precede the JSON of ``optaccept alpha --json``."""
    try:
        sys.stdout.flush()
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        saved = os.dup(fd)
    except (OSError, ValueError, AttributeError):  # no real descriptor (an embedding host)
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
