"""Public signatures: no public callable takes more than 10 parameters; the tree's draft law is
one object (tree.TreeDraftLaw); drafted token ids are ``tokens``."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import warnings
from fractions import Fraction as F

import numpy as np
import pytest

import optaccept
from optaccept import InputError, tree

MAX_PARAMETERS = 10


def _count(fn) -> int:
    """Positional and keyword-only parameters, ``*args`` and ``**kwargs`` one each, ``self``
    and ``cls`` left out (the count the house rule uses)."""
    code = inspect.unwrap(fn).__code__
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if code.co_varnames[:1] in (("self",), ("cls",)):
        n -= 1
    return n


def _public_callables():
    """(name, function) for every public function of every public module of the package, and
    every public method (``__init__`` included) written in a public class's body."""
    modules = ["optaccept"] + [
        m.name
        for m in pkgutil.walk_packages(optaccept.__path__, "optaccept.")
        if not any(part.startswith("_") for part in m.name.split(".")[1:])
    ]
    seen = {}
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError:  # an optional dependency (torch, transformers) is missing
            continue
        public = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for attr in public:
            obj = getattr(mod, attr, None)
            found = []
            if inspect.isfunction(obj):
                found.append((f"{name}.{attr}", obj))
            elif inspect.isclass(obj):
                for key, member in vars(obj).items():
                    if key.startswith("_") and key != "__init__":
                        continue
                    fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    # a dataclass's generated __init__ has no source file: its fields are the rule
                    if inspect.isfunction(fn) and not inspect.unwrap(fn).__code__.co_filename.startswith("<"):
                        found.append((f"{name}.{attr}.{key}", fn))
            for qual, fn in found:
                if (getattr(fn, "__module__", None) or "").startswith("optaccept"):
                    seen.setdefault((fn.__module__, fn.__qualname__), (qual, fn))
    return list(seen.values())


def test_counting_rule_counts_what_it_says():
    def f(a, b=1, *args, c, d=2, **kw):
        return a

    class C:
        def m(self, x, *, y):
            return x

    assert _count(f) == 6 and _count(C.m) == 2 and _count(tree.accepted_tokens) == 10


def test_no_public_callable_takes_more_than_ten_parameters():
    found = _public_callables()
    assert len(found) > 250  # the walk reaches the whole public surface (359 with every extra installed)
    names = {q for q, _ in found}
    assert {"optaccept.tree.accepted_tokens", "optaccept.audit.audit_generation"} <= names
    over = sorted((_count(fn), q) for q, fn in found if _count(fn) > MAX_PARAMETERS)
    assert not over, f"public callables with more than {MAX_PARAMETERS} parameters: {over}"


# --------------------------------------------------------------------------- the tree's draft law


def test_tree_draft_law_forms_and_checks():
    law = tree.TreeDraftLaw(length=3, k=2, children="swor")
    assert (law.shape, law.length, law.k, law.children, law.is_chains) == (None, 3, 2, "swor", True)
    assert tree.TreeDraftLaw() == tree.TreeDraftLaw(length=1, k=1, children="iid")
    shaped = tree.TreeDraftLaw([(0,), (1,), (0, 0)], "topk")
    assert (shaped.length, shaped.k, shaped.is_chains) == (2, 2, False)  # depth 2, leaves (1,), (0, 0)
    assert shaped.shape == tree._shape.as_shape([(0,), (1,), (0, 0)])
    assert tree.TreeDraftLaw((3, 2), "iid", k=6).k == 6
    for law in (tree.TreeDraftLaw(length=2, k=4), shaped, tree.TreeDraftLaw((2, 1), "swor")):
        again = pickle.loads(pickle.dumps(law))
        assert again == law and hash(again) == hash(law) and repr(again) == repr(law)
    assert tree.TreeDraftLaw((2,), "swor") != tree.TreeDraftLaw((2,), "iid")
    assert len({tree.TreeDraftLaw(length=2), tree.TreeDraftLaw(length=2, k=1, children="iid")}) == 1
    with pytest.raises(InputError, match="^children: give"):
        tree.TreeDraftLaw((2, 2))
    with pytest.raises(InputError, match="^children: must be one of"):
        tree.TreeDraftLaw((2, 2), "greedy")
    with pytest.raises(InputError, match="^k: set by the shape"):
        tree.TreeDraftLaw((2, 2), "swor", k=3)
    with pytest.raises(InputError, match="^length: set by the shape"):
        tree.TreeDraftLaw((2, 2), "swor", length=2)
    with pytest.raises(InputError, match="^children: chains are drawn"):
        tree.TreeDraftLaw(length=2, children="topk")
    with pytest.raises(InputError, match="^k: must be an integer >= 1"):
        tree.TreeDraftLaw(length=2, k=0)
    with pytest.raises(InputError, match="^length: must be an integer >= 1"):
        tree.TreeDraftLaw(length=True)
    with pytest.raises(InputError, match="^shape:"):
        tree.TreeDraftLaw([(0,), (0, 1)], "swor")
    with pytest.raises(InputError, match="^drafts: a Shape needs"):
        tree.accepted_tokens(lambda w: [0.5, 0.5], lambda w: [0.5, 0.5], tree._shape.as_shape((2,)))
    with pytest.raises(InputError, match="^drafts: a tree.TreeDraftLaw"):
        tree.accepted_tokens(lambda w: [0.5, 0.5], lambda w: [0.5, 0.5], drafts=3.5)


def test_new_spelling_on_papers_example():
    """Sun et al. (arXiv 2403.10444, §2): p = (1/3, 2/3), q = (2/3, 1/3), γ = 2: token
    verification accepts 10/9 tokens, block verification 11/9 (values from the paper)."""
    p = lambda w: [F(1, 3), F(2, 3)]  # noqa: E731
    q = lambda w: [F(2, 3), F(1, 3)]  # noqa: E731
    chain = tree.TreeDraftLaw(length=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new spelling never warns
        assert tree.accepted_tokens(p, q, chain, "token").value == F(10, 9)
        assert tree.accepted_tokens(p, q, chain, verifier="block").value == F(11, 9)
        # a chain as a shape (1, 1) with one child drawn from q: the same law, another code path
        assert tree.accepted_tokens(p, q, tree.TreeDraftLaw((1, 1), "iid"), "token").value == F(10, 9)


def _table(n, L, rng, zeros=0.3):
    """A random sequence model, prefix -> law (with zeros), for prefixes up to length L."""
    out = {}
    for d in range(L + 1):
        for w in np.ndindex(*(n,) * d):
            v = rng.dirichlet(np.ones(n))
            v[rng.random(n) < zeros] = 0.0
            if v.sum() == 0:
                v[rng.integers(n)] = 1.0
            out[tuple(int(x) for x in w)] = v / v.sum()
    return out


@pytest.mark.parametrize("seed", range(4))
def test_swor_chains_equal_their_shape(seed):
    """k chains whose first tokens are drawn without replacement (each continued by one chain)
    are the tree of shape (k, 1, …, 1) with children drawn without replacement: two
    enumerations (of chains, of shaped trees) must give the same values."""
    rng = np.random.default_rng(seed)
    n, L = 3, 2
    P, Q = _table(n, L, rng), _table(n, L, rng)
    for k in (1, 2, 3, 4):  # up to above the vocabulary
        chains = tree.TreeDraftLaw(length=L, k=k, children="swor")
        shaped = tree.TreeDraftLaw((k,) + (1,) * (L - 1), "swor")
        for v in ("token", "traversal", "target_only"):
            a = tree.accepted_tokens(P.__getitem__, Q.__getitem__, chains, v).value
            b = tree.accepted_tokens(P.__getitem__, Q.__getitem__, shaped, v).value
            assert a == pytest.approx(b, abs=1e-12), (k, v)


# --------------------------------------------------------------------------- old spellings


def _same(a, b):
    assert type(a) is type(b)
    assert a.value == b.value and a.verifier == b.verifier and a.drafts == b.drafts
    assert (a.length, a.k, a.method, a.trees, a.shape, a.std_err) == (
        b.length,
        b.k,
        b.method,
        b.trees,
        b.shape,
        b.std_err,
    )


def _rrs_tree(tokens, parents, P, Q, rng):
    """Target-only verification of a tree by hand: walk down while a child equals the
    target's own sample (distinct siblings), emit the target's sample where none does."""
    B, N1 = tokens.shape
    v = np.zeros(B, dtype=np.int64)
    Y = np.zeros(B, dtype=np.int64)
    for b in range(B):
        node = 0
        while True:
            y = int(rng.choice(P.shape[2], p=P[b, node] / P[b, node].sum()))
            kids = [c for c in range(N1) if parents[c] == node and tokens[b, c] == y]
            if not kids:
                v[b], Y[b] = node, y
                break
            node = kids[0]
    return v, Y


def test_drafted_tokens_are_tokens():
    """``drafts`` means the draft law everywhere; the drafted token ids are ``tokens``."""
    from optaccept.optimal import optimal_verifier
    from optaccept.verifiers._target_only import target_only_respond

    fns = [optimal_verifier([0.5, 0.5], optaccept.IID([0.5, 0.5], 2)).respond, target_only_respond]
    fns.append(optimal_verifier([0.5, 0.5], optaccept.IID([0.5, 0.5], 2)).conditional)
    torch = pytest.importorskip("torch")
    from optaccept.optimal import optimal_verifier_batched

    for fn in fns:
        assert "drafts" not in inspect.signature(fn).parameters
    # where a function takes both, tokens are the drafted ids and drafts the law's name
    assert {"tokens", "drafts"} <= set(inspect.signature(optimal_verifier_batched).parameters)
    with pytest.raises(InputError, match=r"^tokens: must have shape \(rows, 2\)"):
        fns[0](np.array([0, 1]), 0)
    assert torch is not None


def test_doctests_in_the_new_spelling():
    import doctest

    from optaccept.sequence import _batch
    from optaccept.tree import _api, _draft_law

    for mod in (_draft_law, _api, tree, _batch):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__


def _models():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    return (lambda prefix: p), (lambda prefix: q)
