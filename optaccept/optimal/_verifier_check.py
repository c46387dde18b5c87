"""The independent re-check of an optimal verifier's certificate (beside ``optaccept.verify``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InputError
from ..drafts import IID, DraftLaw
from ._greedy_verifier import _GreedyVerifier
from ._inputs import _clean_p
from ._line import _cell_masses, _LineVerifier
from ._result import Verification
from ._verifier_base import (
    OptimalVerifier,
    _dual_bound,
)


def _recheck_line(p, law: IID, ov: _LineVerifier, exact: bool):
    """Acceptance Σ min(p, s) with s recomputed from the shares and from cell masses
    recomputed from the law's q; violation = worst of the tiling errors, |s − ov.s|,
    |Σ s − 1|, and whether the cells of the subset's complement come first."""
    q = law.q_exact if exact else law.q
    line = ov._line.tolist()
    ell, mass = _cell_masses([q[i] for i in line], law.k, exact)
    viol = ov._layout_violation()
    in_s = np.zeros(law.n, dtype=bool)
    in_s[list(ov.subset)] = True
    flags = in_s[ov._line]
    if flags.size and np.any(flags[:-1] & ~flags[1:]):  # a B cell after an A cell
        viol = max(viol, 1 if exact else 1.0)
    m = len(line)
    if exact:
        s_home = [Fraction(0)] * m
        for h in range(m):
            for j in range(ov._ptr[h], ov._ptr[h + 1]):
                c = int(ov._pcell[j])
                s_home[h] += ov._plen[j] * mass[c] / ell[c]
        s = [Fraction(0)] * law.n
        for h, tok in enumerate(line):
            s[tok] = s_home[h]
        viol = max([viol, abs(sum(s, Fraction(0)) - 1)] + [abs(a - b) for a, b in zip(s, ov.s)])
        return sum((min(p[y], s[y]) for y in range(law.n)), Fraction(0)), viol
    dens = np.where(ell > 0, mass / np.where(ell > 0, ell, 1.0), 0.0)
    tok = np.repeat(np.arange(m), np.diff(ov._ptr))
    s = np.zeros(law.n)
    s[ov._line] = np.bincount(tok, weights=ov._plen * dens[ov._pcell], minlength=m)
    viol = max(viol, abs(float(s.sum()) - 1.0), float(np.abs(s - np.asarray(ov.s)).max(initial=0.0)))
    return float(np.minimum(p, s).sum()), viol


def verify_verifier(
    p: Any, drafts: DraftLaw, ov: OptimalVerifier, *, tol: float = 1e-9, normalize: bool = False
) -> Verification:
    """Independent re-check of an :class:`OptimalVerifier`: its acceptance, recomputed
    from its rule (line verifier: from the cell shares; greedy: from its acceptance
    probabilities; flow plan: from its conditional rows), against the dual bound (★)
    at its subset from the draft law's own formula, and the layout's feasibility."""
    if not isinstance(ov, OptimalVerifier):
        raise InputError("result: must be an OptimalVerifier")

    pf, px = _clean_p(p, drafts, normalize)
    exact = ov.exact
    pv = px if exact else pf
    dual = _dual_bound(pv, drafts, ov.subset, exact)
    if isinstance(ov, _LineVerifier):
        acc, viol = _recheck_line(pv, drafts, ov, exact)
    elif isinstance(ov, _GreedyVerifier):
        qr = drafts.q_rest_exact if exact else drafts.q_rest
        top = set(drafts.top)
        zero = Fraction(0) if exact else 0.0
        acc = sum((pv[y] for y in top), zero) + sum(
            (qr[y] * ov._accept[y] for y in range(drafts.n) if y not in top), zero
        )
        viol = zero
    else:
        sl = drafts.set_law()
        zero = Fraction(0) if exact else 0.0
        acc = zero
        if exact:
            for A, pr in zip(sl.sets, sl.probs):
                acc += pr * ov._set_acceptance(ov._index[A], A)
        else:
            per_set = ov._set_acceptances()
            idx = np.array([ov._index[A] for A in sl.sets], dtype=np.int64)
            acc = float(np.asarray(sl.probs, dtype=np.float64) @ per_set[idx])
        viol = ov._layout_violation()
    if exact:
        return Verification(
            dual_value=dual,
            value_gap=abs(acc - dual) + viol,
            primal_value=None,
            tol=0.0,
            details={"acceptance": acc, "layout_violation": viol},
        )
    return Verification(
        dual_value=dual,
        value_gap=abs(float(ov.value) - dual),
        primal_value=float(acc),
        duality_gap=dual - float(acc),
        max_violation=float(viol),
        tol=tol,
    )
