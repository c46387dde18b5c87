"""Every public result speaks one vocabulary: ``value``, ``std_err`` (None for an exact value),
``method`` and ``ok``; ``to_pandas()`` gives back the numbers the object holds in its own fields;
``to_latex()`` compiles with pdflatex and fits its page; the old names of the standard error
still work, with a DeprecationWarning, and return the same number.

The result classes are found by walking the package's public modules, so that a new public
class fails here until it is built below (or listed as not a result, with the reason)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import warnings
from fractions import Fraction as F

import numpy as np
import pytest
from _generation_loops import sd_loop
from test_latex_tables import _check_fits, _check_form, needs_tex

import optaccept as oa
from optaccept import audit, polyhedra, real, sequence, tree, verifiers
from optaccept._lib.display import VOCABULARY

P = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
Q = np.array([0.30, 0.10, 0.35, 0.05, 0.20])

#: Public classes that are not results, and why.
NOT_RESULTS = {
    **dict.fromkeys(
        ["InputError", "MethodError", "MissingDependencyError", "RenormalizedWarning", "SolverError"], "an error"
    ),
    **dict.fromkeys(
        ["DraftLaw", "SetLaw", "IID", "WithoutReplacement", "Greedy", "SpecHub", "TopK", "Independent", "Joint"],
        "a draft law (an input)",
    ),
    **dict.fromkeys(
        ["Verifier", "OptimalVerifier", "SD", "NSS", "NaiveTree", "RRS", "RRSWithoutReplacement", "KSeq"]
        + ["SpecHubVerifier", "KhistiIS", "HuGreedy", "Optimal", "TargetOnly"],
        "a verifier (a rule)",
    ),
    **dict.fromkeys(["FlowPlan", "TransportPlan", "LPCertificate"], "a certificate held by a result"),
    "Draws": "raw samples of a verifier, not a summary",
    **dict.fromkeys(
        ["DraftTree", "Model", "SequenceModel", "Shape", "ShapedTree", "TreeDraftLaw", "SequencePair"]
        + ["MarkovPair", "PositionPair"],
        "a tree, shape, law or model (an input)",
    ),
    **dict.fromkeys(["Distributions", "DraftTrees", "StoredModel"], "stored data (an input)"),
    **dict.fromkeys(
        ["AssistedLog", "LMSequenceModel", "ModelPair", "Warp", "Prompt", "SparseChainLog"], "a model, prompt or log"
    ),
    **dict.fromkeys(["ChainTerms", "StoredLaws"], "a figure job's working data"),
    **dict.fromkeys(["ChainDrafting", "GenerationOptions"], "options of a function (an input)"),
    "Parser": "the command line's parser",
    "SymbolicLaw": "a draft law with symbolic probabilities (an input)",
}


def _public_classes() -> dict[str, type]:
    names = ["optaccept"] + [
        m.name
        for m in pkgutil.walk_packages(oa.__path__, "optaccept.")
        if not any(part.startswith("_") for part in m.name.split(".")[1:])
    ]
    out: dict[str, type] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # names that moved warn when read
        for name in names:
            try:
                mod = importlib.import_module(name)
            except ImportError:  # an optional dependency (torch) is missing
                continue
            for attr in getattr(mod, "__all__", ()):
                obj = getattr(mod, attr, None)
                if inspect.isclass(obj) and obj.__module__.startswith("optaccept."):
                    out[obj.__name__] = obj
    return out


# ----------------------------------------------------------------------------- small real results


def _tree_pair():
    return tree.synthetic_pair(3, rng=2)


def _chains(length: int, k: int = 1) -> dict:
    """The tree's draft law, by the keywords the tree functions take."""
    if hasattr(tree, "TreeDraftLaw"):
        return {"drafts": tree.TreeDraftLaw(length=length, k=k, children="iid")}
    return {"length": length, "k": k}


def _chain_exact_match(Pm, Qm, X, rng):
    """Accept a drafted token iff the target's own sample equals it (lossless)."""
    B, g = X.shape
    m = np.zeros(B, dtype=np.int64)
    Y = np.empty(B, dtype=np.int64)
    for b in range(B):
        for i in range(g + 1):
            y = int(rng.choice(Pm.shape[2], p=Pm[b, i]))
            if i == g or y != X[b, i]:
                m[b], Y[b] = i, y
                break
    return m, Y


def _from_p(Pm, Qm, X, rng):
    """Output a fresh draw from p whatever the drafts (lossless)."""
    cum = np.cumsum(Pm, axis=1)
    return np.minimum((cum < rng.random(Pm.shape[0])[:, None]).sum(axis=1), Pm.shape[1] - 1)


def _uno(Pm, Qm, X, rng):
    """Accept min(1, p/q), on a rejection draw from p itself (lossy)."""
    p, q = Pm[0], Qm[0]
    x = X[:, 0]
    acc = rng.random(x.size) * q[x] < p[x]
    return acc, np.where(acc, x, rng.choice(p.size, size=x.size, p=p))


def _counts_log(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"accepted": rng.integers(0, 4, size=150), "request": np.repeat(np.arange(30), 5)}


def _real_data():
    return real.Distributions.load(real.sample_path()).subset(np.arange(4))


def _generation_report():
    target, draft = _tree_pair()
    gen = sd_loop(target, draft, 2, 8)
    if hasattr(audit, "ChainDrafting"):
        how = {"drafting": audit.ChainDrafting(draft, 2, "sd")}
    else:
        how = {"draft": draft, "gamma": 2, "declared": "sd"}
    return audit.audit_generation(gen, target, prompts=[(1,), (2, 0)], samples=60, new_tokens=8, rng=2, **how)


def _position_gap_table():
    from optaccept import llm

    return llm.position_gap_table(_real_data(), ks=(2, 3), progress=False, slow_verifiers=False, cross_check=0)


def _k_draft_report():
    return polyhedra.check_k_draft_condition(3, 2, "iid", progress=False)


BUILDERS = {
    "AcceptanceResult": lambda: oa.optimal_acceptance(P, oa.IID(Q, k=2), method="lp"),
    "Verification": lambda: oa.verify(P, oa.IID(Q, k=2), oa.optimal_acceptance(P, oa.IID(Q, k=2))),
    "TreeResult": lambda: tree.accepted_tokens(*_tree_pair(), verifier="optimal", **_chains(2)),
    "BudgetCurve": lambda: tree.budget_curve(
        [tree.synthetic_pair(40, rng=s, scale=2.0) for s in range(2)],
        (2, 4),
        strategies=("ceiling", "dynamic"),
        progress=False,
    ),
    "AcceptanceProfile": lambda: tree.acceptance_profile(
        [tree.synthetic_pair(40, rng=s, scale=2.0) for s in range(2)], (2, 1), positions=3, rng=4
    ),
    "AuditReport": lambda: audit.audit_verifier(_from_p, P, Q, k=2, drafts="iid", samples=5_000, rng=0),
    "ChainAuditReport": lambda: audit.audit_chain(
        _chain_exact_match, *_tree_pair(), 2, samples=2_000, rng=3, declared="exact_match"
    ),
    "GenerationAuditReport": _generation_report,
    "LossyAuditReport": lambda: audit.audit_lossy(_uno, P, Q, samples=20_000, rng=2),
    "RegressionGate": lambda: audit.regression_gate(_counts_log(0), _counts_log(1)),
    "SampleSize": lambda: audit.sample_size(_counts_log(0)),
    "GapTable": lambda: verifiers.gap_table(P, Q, ks=(1, 2, 3), progress=False),
    "AlphaTable": lambda: oa.optimal.alpha_table(P, Q, ks=(1, 2, 3, 9)),
    "CanonicalDecomposition": lambda: verifiers.canonical_decomposition(P, oa.IID(Q, 2)),
    "RealisedAcceptance": lambda: verifiers.realised_acceptance(P, Q, 2, np.random.default_rng(0), samples=2_000),
    "RealisedTable": lambda: real.realised_optimal(
        _real_data(), ks=(2,), positions=2, rng=np.random.default_rng(0), samples=50, progress=False
    ),
    "TreeTable": lambda: real.tree_table(
        {d: real.DraftTrees.load(real.trees_path(d)).select(np.arange(4)) for d in ("iid", "swor")},
        ks=(1, 2),
        lengths=(1, 2),
        progress=False,
    ),
    "PositionGapTable": _position_gap_table,
    "RejectionEstimate": lambda: sequence.simulate_rejections(
        sequence.MarkovPair.random(states=3, horizon=6, rng=np.random.default_rng(0)),
        samples=200,
        rng=np.random.default_rng(1),
    ),
    "DecoderLosses": lambda: sequence.decoder_losses(P, Q, [0.0, 0.01, 0.05]),
    "ConeSize": lambda: polyhedra._cone.cone_size(4, 3, reduced=True),
    "FarkasCone": lambda: polyhedra._cone.farkas_cone(3, 2),
    "ConeRays": lambda: polyhedra._cone.extreme_rays(polyhedra._cone.farkas_cone(3, 2, reduced=True), cache=False),
    "KDraftReport": _k_draft_report,
    "RayReading": lambda: next(r for r in _built("KDraftReport").classification if r.kind == "subset"),
}

#: Results whose builders need pycddlib and sympy.
NEEDS_CDD = {"ConeRays", "KDraftReport", "RayReading"}


def _rows(t, names):
    return [(n, k) for n in names for k in t.ks]


#: For each result: column of to_pandas() -> the values the object holds in its own fields.
OWN_NUMBERS = {
    "AcceptanceResult": lambda r: {"value": [r.value], "upper_bound": [r.upper_bound], "lower_bound": [r.lower_bound]},
    "Verification": lambda v: {"dual_value": [v.dual_value], "value_gap": [v.value_gap], "ok": [v.ok]},
    "TreeResult": lambda r: {"value": [r.value], "k": [r.k], "trees": [r.trees]},
    "BudgetCurve": lambda c: {
        "value": np.concatenate([c.values[s].mean(axis=0) for s in c.values]),
        "budget": list(c.budgets) * len(c.values),
    },
    "AcceptanceProfile": lambda a: {"rate": list(a.rates), "depth": list(range(1, len(a.rates) + 1))},
    "AuditReport": lambda a: {"value": [a.acceptance], "std_err": [a.std_err], "alpha_star": [a.alpha_star]},
    "ChainAuditReport": lambda a: {"value": [a.accepted], "std_err": [a.std_err], "optimum": [a.optimum]},
    "GenerationAuditReport": lambda a: {"value": [a.tokens_per_call], "expected": [a.expected], "calls": [a.calls]},
    "LossyAuditReport": lambda a: {"value": [a.accepted], "bias": [a.bias], "front": [a.front]},
    "RegressionGate": lambda g: {"value": [g.difference], "std_err": [g.std_err], "critical": [g.critical]},
    "SampleSize": lambda s: {"requests_counts": [s.requests_counts], "baseline_al": [s.baseline_al]},
    "GapTable": lambda t: {
        "alpha": [t.alpha[n][k] for n, k in _rows(t, t.names)],
        "alpha_star": [t.alpha_star[n][k] for n, k in _rows(t, t.names)],
    },
    "AlphaTable": lambda t: {
        "alpha_star": [t.values[d][k] for d in t.drafts for k in t.ks],
        "certified": [t.certified[d][k] for d in t.drafts for k in t.ks],
    },
    "CanonicalDecomposition": lambda c: {"value": [c.value], "alpha_star": [c.alpha_star]},
    "RealisedAcceptance": lambda r: {"value": [r.value], "mean": [r.mean], "std_err": [r.std_err], "tv": [r.tv]},
    "RealisedTable": lambda t: {
        "realised": [float(t.values[(k, "realised")].mean()) for k in t.ks],
        "k": t.ks,
    },
    "TreeTable": lambda t: {"value": [r["value"] for r in t.rows], "k": [r["k"] for r in t.rows]},
    "PositionGapTable": lambda t: {"mean": [float(v.mean()) for v in t.values.values()]},
    "RejectionEstimate": lambda e: {"value": [float(e.counts.mean())], "runs": [e.counts.size]},
    "DecoderLosses": lambda d: {"eps": list(d.eps), "loss_opt": list(d.loss_opt), "loss_uno": list(d.loss_uno)},
    "ConeSize": lambda c: {
        "value": [c.rays],
        "cells": [c.cells],
        "constraints": [c.constraints],
        "seconds": [c.seconds],
    },
    "FarkasCone": lambda c: {"value": [len(c.cells) + c.n], "cells": [len(c.cells)], "constraints": [len(c.edges)]},
    "ConeRays": lambda r: {"value": [len(r.rays)], "lineality_dim": [len(r.lineality)], "seconds": [r.seconds]},
    "KDraftReport": lambda r: {
        "value": [len(r.rays)],
        "subset_rays": [sum(c.kind == "subset" for c in r.classification)],
        "inequalities": [len(r.subsets)],
        "holds": [r.holds],
    },
    "RayReading": lambda r: {"value": [r.scale], "scale": [r.scale], "checked": [r.checked]},
}

#: Old names of the standard error: class -> (old, new).
RENAMED = {
    "AuditReport": ("acceptance_se", "std_err"),
    "ChainAuditReport": ("accepted_se", "std_err"),
    "GenerationAuditReport": ("tokens_per_call_se", "std_err"),
    "LossyAuditReport": ("accepted_se", "std_err"),
    "RealisedAcceptance": ("se", "std_err"),
    "RealisedTable": ("se", "position_std_err"),
    "RejectionEstimate": ("stderr", "std_err"),
}

_BUILT: dict[str, object] = {}


def _built(name: str):
    if name not in _BUILT:
        if name == "PositionGapTable":
            pytest.importorskip("torch")
        if name in NEEDS_CDD:
            pytest.importorskip("cdd.gmp")
            pytest.importorskip("sympy")
        _BUILT[name] = BUILDERS[name]()
    return _BUILT[name]


def test_every_public_class_is_a_result_built_here_or_listed_as_not_one():
    classes = _public_classes()
    unknown = sorted(set(classes) - set(BUILDERS) - set(NOT_RESULTS))
    assert not unknown, f"public classes neither built in BUILDERS nor listed in NOT_RESULTS: {unknown}"
    assert set(BUILDERS) == set(OWN_NUMBERS)
    for name in BUILDERS:
        assert name not in NOT_RESULTS


def _is_number(x) -> bool:
    return isinstance(x, int | float | F | np.integer | np.floating) and not isinstance(x, bool)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_vocabulary(name):
    r = _built(name)
    assert type(r).__name__ == name
    for attr in VOCABULARY:
        assert hasattr(r, attr), f"{name} has no {attr}"
    assert isinstance(r.method, str) and r.method, name
    assert isinstance(r.ok, bool), name
    assert r.ok, f"{name}: a correct small instance should pass its own checks"
    value, err = (r.value(), r.std_err()) if name == "BudgetCurve" else (r.value, r.std_err)
    if isinstance(value, np.ndarray):
        assert value.ndim == 1 and value.size == len(r.to_pandas()), name
        assert err is None or (isinstance(err, np.ndarray) and err.shape == value.shape), name
    else:
        assert _is_number(value), (name, value)
        assert err is None or (_is_number(err) and (math.isnan(err) or err >= 0)), (name, err)


def _same(got, want) -> None:
    got = [None if (isinstance(g, float) and math.isnan(g)) else g for g in list(got)]
    want = [None if (isinstance(w, float) and math.isnan(w)) else w for w in list(want)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None or g is None:
            assert g is None and w is None, (g, w)
        elif isinstance(w, bool | np.bool_):
            assert bool(g) == bool(w)
        else:
            assert float(g) == pytest.approx(float(w), rel=1e-12, abs=1e-15), (g, w)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_to_pandas_gives_back_the_objects_numbers(name):
    pytest.importorskip("pandas")
    r = _built(name)
    df = r.to_pandas()
    for column, want in OWN_NUMBERS[name](r).items():
        assert column in df.columns, (name, column, list(df.columns))
        _same(df[column].astype(object).where(df[column].notna(), None).tolist(), want)


@needs_tex
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_to_latex_compiles_and_fits(name, tmp_path):
    table = _built(name).to_latex()
    _check_form(table, name)
    _check_fits(table, name, tmp_path)


def test_tree_value_type_rule():
    """value is a Fraction exactly when the models give Fractions and no LP or sampling is
    used; float(result) is the float either way."""
    p = lambda prefix: [F(1, 3), F(2, 3)]  # noqa: E731
    q = lambda prefix: [F(2, 3), F(1, 3)]  # noqa: E731
    exact = tree.accepted_tokens(p, q, verifier="token", **_chains(2))
    assert exact.exact and isinstance(exact.value, F) and exact.value == F(10, 9)  # 1/3·... by hand in test_tree
    assert isinstance(float(exact), float) and float(exact) == 10 / 9 and exact.std_err is None
    fl = tree.accepted_tokens(lambda u: [1 / 3, 2 / 3], lambda u: [2 / 3, 1 / 3], verifier="token", **_chains(2))
    assert not fl.exact and isinstance(fl.value, float) and fl.value == pytest.approx(10 / 9, rel=1e-12)
    lp = tree.accepted_tokens(p, q, verifier="optimal", **_chains(2))
    assert lp.method == "lp" and isinstance(lp.value, float)


def test_ok_fails_where_a_check_fails():
    law = oa.IID(Q, k=2)
    good = oa.optimal_acceptance(P, law)
    assert good.ok and good.std_err is None and float(good) == float(good.value)
    bad = oa.AcceptanceResult(good.value, "sorted", law, subset=good.subset, upper_bound=good.value + 1e-6)
    assert not bad.ok
    ex = oa.optimal_acceptance([F(1, 2), F(1, 2)], oa.IID([F(1, 3), F(2, 3)], k=2), method="subsets")
    assert (
        ex.ok
        and not oa.AcceptanceResult(ex.value, "subsets", ex.law, subset=(), upper_bound=ex.value + F(1, 10**30)).ok
    )

    def always_first(Pm, Qm, X, rng):  # accepts every draft: above α*, so not lossless
        return X[:, 0]

    rep = audit.audit_verifier(always_first, P, Q, k=2, drafts="iid", samples=5_000, rng=0)
    assert rep.above_optimum and not rep.ok and rep.value == rep.acceptance
    nan = dataclasses.replace(_built("TreeResult"), value=float("nan"), certificate=None)
    assert not nan.ok
    t = verifiers.gap_table(np.full(2000, 1 / 2000), np.full(2000, 1 / 2000), ks=(3,), progress=False)
    assert t.ok == (not any(t.why(n, 3) not in (None, "not defined for this k") for n in t.names))


def test_ok_of_the_polyhedral_results_fails_where_their_check_fails():
    size = polyhedra._cone.cone_size(3, 2, reduced=False)
    assert size.ok and not polyhedra._cone.cone_size(5, 3, reduced=False).ok  # 19 s estimated: refused (_size's table)
    cone = polyhedra._cone.farkas_cone(3, 2)
    assert cone.ok and len(cone.edges) == 3 * (3**2 - 2**2)  # n·(n^k - (n-1)^k) rows, counted by hand
    assert not dataclasses.replace(cone, edges=cone.edges[:-1]).ok
    wrong = ((0, (cone.cells[0][0] + 1) % 3),) + cone.edges[1:]  # a token outside its cell
    assert not dataclasses.replace(cone, edges=wrong).ok
    pytest.importorskip("cdd.gmp")
    pytest.importorskip("sympy")
    rays = polyhedra._cone.extreme_rays(polyhedra._cone.farkas_cone(3, 2, reduced=True), cache=False)
    assert rays.ok and rays.value == 2**3 - 2 + 6  # one ray per proper subset and per cell (cone_size)
    bad = tuple(tuple(-x for x in r) for r in rays.rays)  # the opposite of a ray leaves the cone
    assert not dataclasses.replace(rays, rays=bad).ok
    rep = _built("KDraftReport")
    assert rep.ok and rep.holds and rep.value == 2**3 - 2 + 3**2  # the full cone: 3² ordered pairs
    assert rep.counts()["subset"] == 6  # p(S) >= q(S)² for the 6 nonempty proper S (Khisti et al., Theorem 2)
    assert not dataclasses.replace(rep, holds=False).ok
    other = dataclasses.replace(_built("RayReading"), kind="other", subset=None, scale=F(0))
    assert not other.ok and other.value == 0
    moved = [r for r in rep.classification if not r.checked]
    assert all(r.method == "transported" for r in moved)
    assert all(r.method == "symbolic" for r in rep.classification if r.checked)
