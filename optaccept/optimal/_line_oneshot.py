r"""One position, one draft tuple: the optimal verifier's selection in compiled passes.

:func:`pick` runs, in compiled passes without the GIL, what the one-shot answer of the line
device needs after the α* solve (docs/optimal_verifier.md §8): the layout's order with q and p
read into it (:func:`optaccept.optimal._line_order.line_order_py`, no full sort), the drafted
tokens' places in it (:func:`optaccept.optimal._line_order.locate_py`, a binary search each),
the cell masses and the swap scan of both sides (:func:`optaccept.optimal._line_kernel._device_py`),
and the drafted tokens' pieces straight from the scan's matches
(:func:`optaccept.optimal._line_kernel._pick_homes_py`).  Every step is the kept verifier's own,
on the same order, with the same additions in the same order, so the selected draft and the
realised marginal at its token are those of ``optimal_verifier(p, IID(q, k))`` bit for bit; the
shares of every other token are assembled only on rejection (``all_s``), and the residual's draw
(:func:`residual_draw`) takes two compiled passes.  (Each kernel is compiled and cached with the
module of its source, and none calls a compiled function of another file: numba's cache would
not see a change there.)

All arrays live in per-thread scratch memory (no page faults on fresh memory), so rows can
run in threads at once.
"""

from __future__ import annotations

import threading

import numpy as np

from .._errors import InputError
from .._lib import jit as _jit
from . import _line_kernel, _line_order

__all__ = ["available", "pick", "residual_draw", "residual_choice"]

_HOMES = None
_RESID = None
_LOCK = threading.Lock()
_scratch = threading.local()


def available(n: int | None = None) -> bool:
    """Whether the compiled one-shot passes can be used for a row of n tokens (numba
    importable, not disabled, n at least the ``line`` threshold)."""
    return _kernel(n) is not None


def _kernel(n: int | None = None):
    global _HOMES, _RESID
    if not _jit.compiled_for(n, "line") or _line_kernel._kernel() is None or _line_order._kernel() is None:
        return None
    if _HOMES is None:
        with _LOCK:
            if _HOMES is None:
                jit = _jit.njit()
                if jit is None:
                    _HOMES = False
                else:
                    _RESID = (jit(residual_parts_py), jit(residual_cdf_py), jit(scale_py), jit(choice_cdf_py))
                    _HOMES = jit(_line_order.locate_py)  # last: it marks "ready"
    return _HOMES or None


def _arrays(n: int):
    """Per-thread scratch arrays for rows of up to n tokens (kept for n ≤ 2²¹)."""
    kept = getattr(_scratch, "arrays", None)
    if kept is None or kept["line"].size < n:
        size = max(n, 1024)
        kept = {
            "line": np.empty(size, dtype=np.int64),
            "keys": np.empty(size, dtype=np.uint64),
            "work": np.empty(2 * size + 2, dtype=np.uint64),
            "ell": np.empty(size),
            "pl": np.empty(size),
            "mass": np.empty(size),
            "dens": np.empty(size),
            "x": np.empty(size + 2),
            "qpos": np.empty(size + 2, dtype=np.int64),
            "qrem": np.empty(size + 2),
            "mp": np.empty(size + 2, dtype=np.int64),
            "mc": np.empty(size + 2, dtype=np.int64),
            "ma": np.empty(size + 2),
            "mark": np.zeros(size, dtype=np.int64),
            "ent_s": np.empty(2 * size + 4, dtype=np.int64),
            "ent_c": np.empty(2 * size + 4, dtype=np.int64),
            "ent_l": np.empty(2 * size + 4),
            "ptr": np.empty(size + 1, dtype=np.int64),
            "pcell": np.empty(3 * size + 4, dtype=np.int64),
            "plen": np.empty(3 * size + 4),
            "s_home": np.empty(size),
            "info": np.empty(_line_order.INFO, dtype=np.uint64),
            "pos": np.empty(size),
            "cdf": np.empty(size),
        }
        if n <= 1 << 21:
            _scratch.arrays = kept
    return kept


def pick(p: np.ndarray, q: np.ndarray, k: int, side_a: np.ndarray, x: np.ndarray, u: np.ndarray):
    """The selected draft of tuple ``x`` from uniforms ``u`` (as ``_respond_uniform``), for
    cleaned float rows p, q and the minimiser's indicator ``side_a``.

    Returns ``(i, s_y, all_s)`` — the index of the selected draft, the realised marginal at its
    token, and a function giving ``(line, s_home)`` (the layout order and every token's realised
    marginal, for the residual; call it before this thread's next call) — or None where the
    compiled passes are unavailable or a ratio leaves the normal range (the caller then takes
    the numpy path).

    Raises
    ------
    InputError
        If a drafted token has q = 0 (it owns no cell).
    """
    homes_fn = _kernel(p.size)
    if homes_fn is None:
        return None
    a = _arrays(p.size)
    p = np.ascontiguousarray(p, dtype=np.float64)
    q = np.ascontiguousarray(q, dtype=np.float64)
    side_a = np.ascontiguousarray(side_a, dtype=np.bool_)
    x = np.ascontiguousarray(x, dtype=np.int64)
    line, keys, ell, pl = a["line"], a["keys"], a["ell"], a["pl"]
    info = a["info"]
    m = _line_order._kernel()(p, q, side_a, line, keys, keys.view(np.float64), a["work"], ell, pl, info)
    if m < 0:
        return None
    homes = np.empty(x.size, dtype=np.int64)
    nb = homes_fn(q, x, line, m, keys, a["work"], info, homes)
    if homes.min(initial=0) < 0:
        raise InputError("drafts: a drafted token has q = 0 under this draft law")
    ell, dens = ell[:m], a["dens"][:m]
    mp, mc, ma, qpos, qrem = a["mp"], a["mc"], a["ma"], a["qpos"], a["qrem"]
    nm = _line_kernel._KERNEL(ell, pl[:m], k, nb, a["mass"][:m], dens, a["x"], qpos, qrem, mp, mc, ma)
    i, sy = _line_kernel._PICK_HOMES(
        homes,
        x,
        np.ascontiguousarray(u, dtype=np.float64),
        ell,
        dens,
        mp,
        mc,
        ma,
        nm,
        a["mark"],
        a["ent_s"],
        a["ent_c"],
        a["ent_l"],
        qpos,
        qrem,
    )

    def all_s():
        s_home = a["s_home"][:m]
        _line_kernel._SHARES(ell, dens, mp[:nm], mc[:nm], ma[:nm], a["ptr"][: m + 1], a["pcell"], a["plen"], s_home)
        return line[:m], s_home

    return int(i), float(sy), all_s


def residual_draw(p: np.ndarray, line: np.ndarray, s_home: np.ndarray, u: float) -> int:
    """A draw from the residual law (p − s)₊ at the uniform ``u``, s the realised marginal
    (``s_home`` of the tokens ``line``, 0 elsewhere), as ``pick``'s ``all_s`` gives them:
    the index ``inverse_cdf(_residual(p, s), u)`` gives (:func:`optaccept._lib.stable.residual`
    and :func:`optaccept._lib.sampling.inverse_cdf`, the same operations in the same order:
    the positive parts, their sum by numpy's pairwise ``np.sum``, then the quotients' running
    sums and the first one above u times the last), in two compiled passes and this thread's
    scratch memory instead of eight numpy passes over fresh arrays."""
    a = _arrays(p.size)
    parts, cdf = _RESID[:2]
    pos = a["pos"][: p.size]
    parts(p, line, s_home, pos)
    tot = np.sum(pos)  # numpy's pairwise sum, as residual() takes it
    if tot > 0:
        return int(cdf(pos, tot, u, a["cdf"]))
    tot = np.sum(p)  # no positive part: the law is p itself (residual()'s convention)
    return int(cdf(p, tot if tot > 0 else 1.0, u, a["cdf"]))


def residual_choice(p: np.ndarray, line: np.ndarray, s_home: np.ndarray, u: float) -> int:
    """The index ``rng.choice(n, size=1, p=res / res.sum())`` draws from the uniform ``u``
    (its one ``rng.random``), ``res = _residual(p, s)`` with s the realised marginal as in
    :func:`residual_draw`: the draw of a built verifier's rejection
    (:func:`optaccept.optimal._verifier_base._speculative_step`), bit for bit — the residual
    as :func:`optaccept._lib.stable.residual` writes it (positive parts, numpy's pairwise sum,
    the quotients), its quotients by its own pairwise sum, their running sums (numpy's
    sequential cumsum) each divided by the last, and the first one above u
    (``searchsorted(..., side="right")``) — in compiled passes over this thread's scratch
    memory instead of a dozen numpy passes over fresh arrays."""
    a = _arrays(p.size)
    parts, _, scale, choice_cdf = _RESID
    pos = a["pos"][: p.size]
    parts(p, line, s_home, pos)
    m = np.sum(pos)  # numpy's pairwise sum, as residual() takes it
    if m > 0:
        scale(pos, m, pos)  # the residual law, in place
    else:  # no positive part: the law is p itself (residual()'s convention)
        tot = np.sum(p)
        scale(p, tot if tot > 0 else 1.0, pos)
    return int(choice_cdf(pos, np.sum(pos), u, a["cdf"]))


def scale_py(num, den, out):
    """``out = num / den`` (one correctly rounded quotient an entry, as numpy's)."""
    for t in range(num.shape[0]):
        out[t] = num[t] / den


def choice_cdf_py(law, den, u, cdf):
    """What ``Generator.choice(n, p=law / den)`` does with its uniform u: the running sums of
    the quotients (numpy's sequential cumsum), each divided by the last, and the first index
    whose quotient exceeds u (``searchsorted(..., side="right")``; n where none does)."""
    n = law.shape[0]
    run = 0.0
    for t in range(n):
        run += law[t] / den
        cdf[t] = run
    last = run
    lo = 0
    hi = n
    while lo < hi:  # the first index with cdf / last > u (non-decreasing in the index)
        mid = (lo + hi) >> 1
        if cdf[mid] / last > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


def residual_parts_py(p, line, s_home, pos):
    """``pos`` = (p − s)₊ as :func:`optaccept._lib.stable.residual` writes it (``0·d`` where
    d = p − s ≤ 0), s = ``s_home`` on the tokens ``line`` and 0 elsewhere (p − 0 = p there)."""
    for t in range(p.shape[0]):
        d = p[t]
        pos[t] = d if d > 0.0 else 0.0 * d
    for h in range(line.shape[0]):
        t = line[h]
        d = p[t] - s_home[h]
        pos[t] = d if d > 0.0 else 0.0 * d


def residual_cdf_py(law, den, u, cdf):
    """``first_above(cumsum(law / den), u · last running sum)``: the running sums of the
    quotients (numpy's sequential cumsum), then a binary search for the first one above the
    point (``searchsorted(..., side="right")``), clamped to the last index."""
    n = law.shape[0]
    run = 0.0
    for t in range(n):
        run += law[t] / den
        cdf[t] = run
    x = u * run
    lo = 0
    hi = n
    while lo < hi:  # the first index with cdf > x (cdf is non-decreasing)
        mid = (lo + hi) >> 1
        if cdf[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo if lo < n else n - 1
