"""The draft-law registry's capability flags, each checked against what the law does, and the
features that ask the registry instead of keeping lists of law names.

* ``takes_k``: the law is built with the k asked for (else it fixes k);
* ``distinct_drafts``: no tuple of the law repeats a token, and k above |supp q| is refused;
* ``sequential``: the exact tuple law is that of successive draws from q (with or without
  replacement);
* ``batched``: the row-batched solver accepts the name and agrees with optimal_acceptance.

Also: optaccept.drafts, split into modules, keeps every name of the former single module.
"""

from __future__ import annotations

import itertools
import pathlib
from fractions import Fraction

import numpy as np
import pytest

import optaccept as oa
from optaccept import drafts

Q = [Fraction(4, 10), Fraction(3, 10), Fraction(2, 10), Fraction(1, 10), Fraction(0)]


def _tuple_probs(law):
    tuples, probs = law.tuple_law()
    return {tuple(t): pr for t, pr in zip(tuples.tolist(), probs)}


@pytest.mark.parametrize("name", list(drafts.LAWS))
def test_flags_are_booleans_named_in_capabilities(name):
    cls = drafts.LAWS[name]
    for flag in drafts._registry.CAPABILITIES:
        assert isinstance(getattr(cls, flag), bool)


@pytest.mark.parametrize("name", list(drafts.LAWS))
def test_takes_k(name):
    law = drafts.law_from_name(name, Q, 3)
    assert isinstance(law, drafts.LAWS[name])
    assert (law.k == 3) == drafts.LAWS[name].takes_k


@pytest.mark.parametrize("name", list(drafts.LAWS))
def test_distinct_drafts(name):
    cls = drafts.LAWS[name]
    law = drafts.law_from_name(name, Q, 3)
    repeats = any(len(set(t)) < len(t) for t in _tuple_probs(law))
    assert repeats == (not cls.distinct_drafts)
    x = law.sample(0, 2_000)
    if cls.distinct_drafts:
        assert all(len(set(r)) == len(r) for r in x.tolist())
    if cls.takes_k:  # 5 drafts, 4 tokens with q > 0
        if cls.distinct_drafts:
            with pytest.raises(oa.InputError, match="^k: "):
                drafts.law_from_name(name, Q, 5)
        else:
            assert drafts.law_from_name(name, Q, 5).k == 5


@pytest.mark.parametrize("name", list(drafts.LAWS))
def test_sequential(name):
    """Successive draws from q: the first draft is ~q, and each next one is q renormalised
    over the tokens not drawn yet (without replacement) or q itself (i.i.d.)."""
    law = drafts.law_from_name(name, Q, 3)
    probs = _tuple_probs(law)
    without = drafts.LAWS[name].distinct_drafts

    def successive(t):
        pr, used = Fraction(1), set()
        for x in t:
            rest = 1 - sum((Q[y] for y in used), Fraction(0)) if without else Fraction(1)
            if without and x in used:
                return Fraction(0)
            pr *= Q[x] / rest
            used.add(x)
        return pr

    tuples = itertools.product(range(len(Q)), repeat=law.k)
    is_sequential = all(probs.get(t, Fraction(0)) == successive(t) for t in tuples)
    assert is_sequential == drafts.LAWS[name].sequential


@pytest.mark.parametrize("name", list(drafts.LAWS))
def test_batched(name):
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(6), size=3)
    q = rng.dirichlet(np.ones(6), size=3)
    if drafts.LAWS[name].batched:
        got = oa.batched_optimal_acceptance(p, q, 3, drafts=name)
        ref = [oa.optimal_acceptance(p[i], drafts.law_from_name(name, q[i], 3)).value for i in range(3)]
        assert np.allclose(got, ref, rtol=0, atol=1e-12)
    else:
        with pytest.raises(oa.InputError, match="^drafts: must be one of"):
            oa.batched_optimal_acceptance(p, q, 3, drafts=name)


def test_law_names_filters_the_registry():
    assert drafts.law_names() == tuple(drafts.LAWS)
    for flag in drafts._registry.CAPABILITIES:
        yes, no = drafts.law_names(**{flag: True}), drafts.law_names(**{flag: False})
        assert sorted(yes + no) == sorted(drafts.LAWS)
        assert all(getattr(drafts.LAWS[n], flag) for n in yes)
    assert drafts.law_names(sequential=True, distinct_drafts=True) == ("swor",)
    with pytest.raises(oa.InputError, match="^flags: must be one of"):
        drafts.law_names(listable=True)


def test_features_ask_the_registry():
    from optaccept import tree, verifiers
    from optaccept.optimal import _batched

    assert tree._draft.DRAFT_LAWS == drafts.law_names(sequential=True)
    assert _batched.DRAFT_LAWS == drafts.law_names(batched=True)
    # a verifier built from (q, k) takes only laws that take k
    for name in drafts.LAWS:
        if drafts.LAWS[name].takes_k:
            verifiers.TargetOnly(name)
        else:
            with pytest.raises(oa.InputError):
                verifiers.TargetOnly(name)
    # the optimal verifier of a law that fixes k allows only that k
    assert verifiers.Optimal("spechub").max_k == 2


def test_face_lists_the_laws_and_their_registry():
    for name in (
        "LAWS",
        "law_from_name",
        "DraftLaw",
        "SetLaw",
        "IID",
        "WithoutReplacement",
        "Greedy",
        "Independent",
        "SpecHub",
        "Joint",
    ):
        assert hasattr(drafts, name), name
    assert oa.IID is drafts.IID and oa.WithoutReplacement is drafts.WithoutReplacement
    folder = pathlib.Path(drafts.__file__).parent
    for path in folder.glob("*.py"):
        assert len(path.read_text().splitlines()) < 700, path.name
