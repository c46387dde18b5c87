"""The library's one sum rule at the log entry points of optaccept.audit: rows summing to 0.5, 2
or 3 are refused (never rescaled), the message names the argument as the caller wrote it and
the row as the caller numbers it, with the sum as logged; a row off by float rounding is
rescaled with one warning per call, however many rows and chunks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit


def _log(T=12, n=6, k=2, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n), size=T)
    Q = rng.dirichlet(np.ones(n), size=T)
    X = rng.integers(0, n, size=(T, k))
    Y = rng.integers(0, n, size=T)
    return P, Q, X, Y


@pytest.mark.parametrize("total", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("which", ["P", "Q"])
def test_audit_log_refuses_rows_off_the_sum_rule(total, which):
    P, Q, X, Y = _log()
    bad = (P if which == "P" else Q).copy()
    bad[5] *= total
    args = (bad, Q) if which == "P" else (P, bad)
    with pytest.raises(oa.InputError) as e:
        audit.audit_log(*args, X, Y, chunk=2)  # row 5 lies in the third chunk
    msg = str(e.value)
    assert msg.startswith(f"{which}: row 5 ")
    assert repr(float(bad[5].sum()))[:5] in msg  # the sum as logged, not after a rescale


def test_audit_log_negative_and_nan_name_row_and_index():
    P, Q, X, Y = _log()
    P[7, 2] = -0.1
    with pytest.raises(oa.InputError, match=r"^P: negative entry at row 7, index 2"):
        audit.audit_log(P, Q, X, Y, chunk=3)
    P, Q, X, Y = _log()
    Q[4, 1] = np.nan
    with pytest.raises(oa.InputError, match=r"^Q: NaN entry at row 4, index 1"):
        audit.audit_log(P, Q, X, Y, chunk=3)


def test_audit_log_one_warning_per_call_for_float64_rounding():
    P, Q, X, Y = _log(T=40)
    P = P * (1 + 5e-7)  # every row off by 5e-7: beyond float64 rounding, within tol(6) ≈ 7.2e-7
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        rep = audit.audit_log(P, Q, X, Y, chunk=3)
    renorm = [w for w in got if issubclass(w.category, oa.RenormalizedWarning)]
    assert len(renorm) == 1
    assert "40 of 40 rows" in str(renorm[0].message) and str(renorm[0].message).startswith("P:")
    # the rescaled rows give the same report as the exact ones
    P0, *_ = _log(T=40)
    ref = audit.audit_log(P0, Q, X, Y, chunk=3)
    assert rep.alpha_star == pytest.approx(ref.alpha_star, abs=1e-12)


def test_audit_log_float32_rows_rescaled_silently():
    P, Q, X, Y = _log(T=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        audit.audit_log(P.astype(np.float32), Q.astype(np.float32), X, Y, chunk=4)


def test_topm_log_sum_rule():
    P, Q, X, Y = _log(T=10, n=8)
    ids = np.argsort(-P, axis=1)[:, :3]
    probs = np.take_along_axis(P, ids, axis=1)
    audit.audit_topm_log(ids, probs, Q, X, Y)  # partial sums below 1 are what a top-m log holds
    for total in (2.0, 3.0):
        bad = probs.copy()
        bad[4] = bad[4] / bad[4].sum() * total
        with pytest.raises(oa.InputError, match=r"^probs: row 4 sums to [123]\.\d+, above 1"):
            audit.audit_topm_log(ids, bad, Q, X, Y)
        with pytest.raises(oa.InputError, match=r"^probs: row 4 "):
            audit.audit_topm_log(ids, bad, None, X, Y, n=8)
    for total in (0.5, 2.0):
        badq = Q.copy()
        badq[6] *= total
        with pytest.raises(oa.InputError, match=r"^Q: row 6 sums to"):
            audit.audit_topm_log(ids, probs, badq, X, Y)
