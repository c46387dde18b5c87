"""One check for string options (check_choice) and one rule for ``rng`` (check_rng).

* ``check_choice`` accepts exactly the listed strings and refuses anything else with one
  message, ``"<name>: must be one of 'a', 'b' or 'c'; got <value>"``, naming the argument as the
  caller wrote it and the offending value; the public entry points use it.
* ``check_rng``: a Generator is used as it is, a non-negative integer is a seed, None is fresh
  entropy; anything else is refused naming the argument.  Public functions that take ``rng``
  default to None or to a seed.
"""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pytest

import optaccept as oa
from optaccept import audit, verifiers
from optaccept._lib.validation import check_choice, check_rng
from optaccept.drafts import law_from_name


def test_check_choice_accepts_the_choices_and_returns_them():
    for v in ("a", "b", "c"):
        assert check_choice("method", v, ("a", "b", "c")) == v
    assert check_choice("order", np.str_("p/q"), ["p", "p/q"]) == "p/q"  # numpy strings are strings
    assert check_choice("declared", None, ("sd",), allow_none=True) is None


@pytest.mark.parametrize(
    "value, shown",
    [("x", "'x'"), ("A", "'A'"), ("", "''"), (3, "3"), (None, "None"), (["a"], "['a']"), (1.5, "1.5")],
)
def test_check_choice_refuses_with_one_message(value, shown):
    with pytest.raises(oa.InputError) as e:
        check_choice("method", value, ("a", "b", "c"))
    assert str(e.value) == f"method: must be one of 'a', 'b' or 'c'; got {shown}"


def test_check_choice_message_forms():
    with pytest.raises(oa.InputError, match=r"^law: must be one of 'iid'; got 'swor'$"):
        check_choice("law", "swor", ("iid",))
    with pytest.raises(oa.InputError, match=r"^declared: must be one of 'sd', 'rrs' or None; got 'x'$"):
        check_choice("declared", "x", ("sd", "rrs"), allow_none=True)
    with pytest.raises(oa.InputError, match=r"^drafts: must be one of 'iid' or a draft-law object; got 2$"):
        check_choice("drafts", 2, ("iid",), also="a draft-law object")
    with pytest.raises(oa.InputError, match=r"^declared: must be one of 'sd'; got None$"):
        check_choice("declared", None, ("sd",))  # None only where allowed


P = np.array([0.5, 0.3, 0.2])
Q = np.array([0.2, 0.3, 0.5])


def _entry_points():
    """(argument name, a call with a bad value there, the choices it must list)."""
    tree = importlib.import_module("optaccept.tree")
    yield "method", lambda: oa.optimal_acceptance(P, oa.IID(Q, 2), method="magic"), ("auto", "lp", "sorted")
    yield "drafts", lambda: oa.batched_optimal_acceptance(P[None], Q[None], 2, drafts="spechub"), ("iid", "greedy")
    yield "verifier", lambda: verifiers.batched_acceptance(P[None], Q[None], 2, verifier="magic"), ("sd", "rrs")
    yield "declared", lambda: audit.audit_log(P[None], Q[None], [[0]], [0], declared="magic"), ("sd", "target_only")
    yield "drafts", lambda: audit.audit_log(P[None], Q[None], [[0]], [0], drafts="magic"), ("iid", "swor")
    yield "drafts", lambda: verifiers.realised_acceptance(P, Q, 2, 0, samples=10, drafts="greedy"), ("iid", "swor")
    yield "drafts", lambda: verifiers.TargetOnly("spechub"), ("iid", "swor", "greedy")
    yield "drafts", lambda: verifiers.Optimal("magic"), ("iid", "swor", "greedy", "spechub")
    yield "drafts", lambda: law_from_name("magic", Q, 2), ("iid", "spechub")
    yield "drafts", lambda: tree._draft.enumerate_trees(lambda u: Q, 1, 2, "greedy"), ("iid", "swor")


@pytest.mark.parametrize("name, call, listed", list(_entry_points()))
def test_entry_points_refuse_with_the_one_message(name, call, listed):
    with pytest.raises(oa.InputError) as e:
        call()
    msg = str(e.value)
    assert re.match(rf"^{name}: must be one of .*; got '(magic|spechub|greedy)'$", msg), msg
    for choice in listed:
        assert repr(choice) in msg


def test_no_ad_hoc_choice_messages_left():
    """Every "must be one of" message of the package comes from check_choice."""
    import pathlib

    root = pathlib.Path(oa.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.relative_to(root).as_posix() == "_lib/validation.py":  # check_choice itself
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"raise \w+Error\(f?[\"'][^\"']*must be one of", line):
                offenders.append(f"{path.relative_to(root)}:{i}")
    assert not offenders, offenders


# -- rng ---------------------------------------------------------------------------------


def test_check_rng_rule():
    g = np.random.default_rng(5)
    assert check_rng(g) is g  # used as it is
    assert check_rng(7).random() == np.random.default_rng(7).random()
    assert check_rng(np.int64(7)).random() == np.random.default_rng(7).random()
    a, b = check_rng(None), check_rng(None)  # fresh entropy: independent streams
    assert isinstance(a, np.random.Generator)
    assert a.integers(2**62) != b.integers(2**62)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "seed", np.random.RandomState(0), [1, 2]])
def test_check_rng_refuses_naming_the_argument(bad):
    with pytest.raises(oa.InputError, match=r"^generator: must be a numpy.random.Generator or a non-negative"):
        check_rng(bad, "generator")


def test_public_rng_defaults_are_none_or_a_seed():
    """No public function hides a Generator object or another rule in its default."""
    packages = ["optaccept", "optaccept.drafts", "optaccept.optimal", "optaccept.verifiers", "optaccept.audit"]
    packages += ["optaccept.tree", "optaccept.sequence", "optaccept.real", "optaccept.testing"]
    seen = 0
    for pkg in packages:
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            funcs = [obj] if inspect.isfunction(obj) else [v for v in vars(obj).values() if inspect.isfunction(v)]
            for fn in funcs:
                par = inspect.signature(fn).parameters.get("rng")
                if par is None or par.default is inspect.Parameter.empty:
                    continue
                seen += 1
                d = par.default
                assert d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0), (pkg, name, d)
    assert seen >= 5


def test_law_sample_takes_none_as_fresh_entropy():
    law = oa.WithoutReplacement(Q, 2)
    x = law.sample(None, 50)
    assert x.shape == (50, 2) and (x[:, 0] != x[:, 1]).all()
    assert np.array_equal(law.sample(3, 50), law.sample(np.random.default_rng(3), 50))


def test_seeded_defaults_are_reproducible_and_none_is_accepted():
    rng = np.random.default_rng(1)
    P2 = rng.dirichlet(np.ones(6), size=40)
    Q2 = rng.dirichlet(np.ones(6), size=40)
    X = np.array([[rng.choice(6, p=q)] for q in Q2])
    Y = np.array([rng.choice(6, p=p) for p in P2])
    a = audit.audit_log(P2, Q2, X, Y)
    b = audit.audit_log(P2, Q2, X, Y, rng=0)
    assert a.to_json() == b.to_json()  # the default is the seed 0
    audit.audit_log(P2, Q2, X, Y, rng=None)  # fresh entropy: runs
