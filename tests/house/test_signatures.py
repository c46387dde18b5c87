"""Public signatures: no public callable takes more than 10 parameters; the tree's draft law is
one object (tree.TreeDraftLaw); the previous spellings (length=, k=, drafts="iid", shape=,
children=; sequence's M=; audit_generation's draft=, gamma=, bins=, ...) still work, warn with a
DeprecationWarning and give results identical to the new spelling."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import warnings
from fractions import Fraction as F

import numpy as np
import pytest

import optaccept
from optaccept import InputError, audit, sequence, tree
from optaccept._lib.display import write_table
from optaccept.sequence import MarkovPair

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
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # names kept for one release
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
    assert shaped.shape == tree.as_shape([(0,), (1,), (0, 0)])
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
        tree.accepted_tokens(lambda w: [0.5, 0.5], lambda w: [0.5, 0.5], tree.as_shape((2,)))
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


def _old(fn, *args, match, **kwargs):
    """Call in the previous spelling: it must warn, naming what is deprecated."""
    with pytest.warns(DeprecationWarning, match=match):
        return fn(*args, **kwargs)


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


@pytest.mark.parametrize("seed", range(3))
def test_accepted_tokens_old_spellings(seed):
    rng = np.random.default_rng(seed)
    P, Q = _table(3, 2, rng), _table(3, 2, rng)
    p, q = P.__getitem__, Q.__getitem__
    for k, law, v in [(1, "iid", "block"), (2, "iid", "token"), (3, "swor", "traversal"), (2, "swor", "optimal")]:
        new = tree.accepted_tokens(p, q, tree.TreeDraftLaw(length=2, k=k, children=law), v)
        _same(_old(tree.accepted_tokens, p, q, length=2, k=k, drafts=law, verifier=v, match="length=, k="), new)
        _same(_old(tree.accepted_tokens, p, q, 2, k, law, v, match="length="), new)  # old positional order
    new = tree.accepted_tokens(p, q, verifier="token")  # defaults: one chain of one token
    _same(_old(tree.accepted_tokens, p, q, drafts="iid", match="drafts='iid'"), new)
    for shape, children in [((2, 1), "swor"), ([(0,), (1,), (0, 0)], "topk"), ((2,), "iid")]:
        new = tree.accepted_tokens(p, q, tree.TreeDraftLaw(shape, children), "target_only")
        old = _old(tree.accepted_tokens, p, q, shape=shape, children=children, verifier="target_only", match="shape=")
        _same(old, new)
    pair = MarkovPair.random(states=3, horizon=2, rng=seed)
    new = tree.accepted_tokens(pair, None, tree.TreeDraftLaw(length=2, k=2, children="swor"), "token")
    _same(_old(tree.accepted_tokens, pair, None, 2, 2, "swor", "token", match="length="), new)


def test_old_spellings_refused_when_mixed_or_wrong():
    p = q = lambda w: [0.5, 0.5]  # noqa: E731
    law = tree.TreeDraftLaw(length=2)
    with pytest.raises(InputError, match="^drafts: give the tree's law once"):
        tree.accepted_tokens(p, q, drafts=law, length=2)
    with pytest.raises(InputError, match="^shape: give either"):
        with pytest.warns(DeprecationWarning):
            tree.accepted_tokens(p, q, shape=(2,), children="swor", length=2)
    with pytest.raises(InputError, match="^children: give"):
        with pytest.warns(DeprecationWarning):
            tree.accepted_tokens(p, q, shape=(2,))
    with pytest.raises(InputError, match="^children: goes with shape"):
        with pytest.warns(DeprecationWarning):
            tree.accepted_tokens(p, q, children="swor")
    with pytest.raises(InputError, match="^drafts: must be one of"):
        with pytest.warns(DeprecationWarning):
            tree.accepted_tokens(p, q, length=2, drafts="greedy")
    with pytest.raises(InputError, match="^k: must be an integer"):
        with pytest.warns(DeprecationWarning):
            tree.accepted_tokens(p, q, length=2, k=0)
    with pytest.raises(InputError, match="^M: give k= only"):
        sequence.batch_improvement([0.5, 0.5], [0.5, 0.5], k=2, M=2)


def test_sample_accepted_tokens_upper_bound_simulate_old_spellings():
    rng = np.random.default_rng(7)
    P, Q = _table(3, 3, rng), _table(3, 3, rng)
    p, q = P.__getitem__, Q.__getitem__
    law = tree.TreeDraftLaw(length=3, k=2, children="swor")
    new = tree.sample_accepted_tokens(p, q, drafts=law, trees=30, rng=3, progress=False)
    old = _old(
        tree.sample_accepted_tokens,
        p,
        q,
        length=3,
        k=2,
        drafts="swor",
        trees=30,
        rng=3,
        progress=False,
        match="length=",
    )
    assert new.keys() == old.keys()
    for v in new:
        _same(old[v], new[v])
        np.testing.assert_array_equal(old[v].details["values"], new[v].details["values"])
    shaped = tree.TreeDraftLaw((2, 2), "iid")
    new = tree.sample_accepted_tokens(p, q, drafts=shaped, trees=20, rng=1, progress=False)
    old = _old(
        tree.sample_accepted_tokens, p, q, shape=(2, 2), children="iid", trees=20, rng=1, progress=False, match="shape="
    )
    for v in new:
        _same(old[v], new[v])
    # prompt= of a Markov pair: now the models of one state, tree.model_pair(pair, prompt=s)
    pair = MarkovPair.random(states=3, horizon=3, rng=2)
    new = tree.sample_accepted_tokens(*tree.model_pair(pair, prompt=1), drafts=law, trees=10, rng=0, progress=False)
    old = _old(
        tree.sample_accepted_tokens, pair, drafts=law, prompt=1, trees=10, rng=0, progress=False, match="prompt="
    )
    for v in new:
        _same(old[v], new[v])

    for kw, new_law in [
        ({"length": 2, "k": 2, "drafts": "iid"}, tree.TreeDraftLaw(length=2, k=2)),
        ({"shape": (2, 1), "children": "swor"}, tree.TreeDraftLaw((2, 1), "swor")),
    ]:
        new = tree.upper_bound(p, q, drafts=new_law)
        _same(_old(tree.upper_bound, p, q, match="=", **kw), new)
        np.testing.assert_array_equal(
            _old(tree.upper_bound, p, q, match="=", **kw).details["per_depth"], new.details["per_depth"]
        )
        new = tree.upper_bound(p, q, drafts=new_law, samples=5, rng=4)
        old = _old(tree.upper_bound, p, q, samples=5, rng=4, match="=", **kw)
        np.testing.assert_array_equal(old.details["values"], new.details["values"])
        a_new, t_new = tree.simulate(p, q, drafts=new_law, verifier="target_only", steps=50, rng=9, progress=False)
        a_old, t_old = _old(
            tree.simulate, p, q, verifier="target_only", steps=50, rng=9, progress=False, match="=", **kw
        )
        np.testing.assert_array_equal(a_old, a_new)
        assert t_old == t_new


def test_sweep_old_grid():
    rng = np.random.default_rng(11)
    P, Q = _table(2, 2, rng), _table(2, 2, rng)
    src = {"s": (P.__getitem__, Q.__getitem__)}
    laws = [tree.TreeDraftLaw(length=L, k=k, children=d) for k in (1, 2) for L in (1, 2) for d in ("iid", "swor")]
    new = tree.sweep(src, drafts=laws, verifiers=("token", "block"))
    old = _old(
        tree.sweep,
        src,
        ks=(1, 2),
        lengths=(1, 2),
        drafts=("iid", "swor"),
        verifiers=("token", "block"),
        match="ks=, lengths=, drafts=",
    )
    assert old == new and len(new) == 16
    new = tree.sweep(src, drafts=laws[:2], samples=10, seed=3)
    old = _old(tree.sweep, src, lengths=(1,), drafts=("iid", "swor"), samples=10, seed=3, match="lengths=")
    assert old == new
    with pytest.raises(InputError, match=r"^drafts\[0\]: the grid takes chain laws"):
        tree.sweep(src, drafts=[tree.TreeDraftLaw((2,), "topk")])


def test_sequence_m_is_k():
    p, q = [0.5, 0.3, 0.2, 0.0], [0.1, 0.2, 0.3, 0.4]
    for fn in (sequence.batch_improvement, sequence.batch_rejection_probability):
        assert _old(fn, p, q, M=3, match="M=") == fn(p, q, k=3) == fn(p, q, 3)
    res_old, tv_old = _old(sequence.residual_chain, p, q, M=2, match="M=")
    res_new, tv_new = sequence.residual_chain(p, q, k=2)
    np.testing.assert_array_equal(res_old, res_new)
    np.testing.assert_array_equal(tv_old, tv_new)
    assert _old(sequence.uniform_batch_improvement, 3.0, M=4, match="M=") == sequence.uniform_batch_improvement(
        3.0, k=4
    )
    assert _old(
        sequence.bernoulli_batch_improvement, 0.3, 0.6, M=4, match="M="
    ) == sequence.bernoulli_batch_improvement(0.3, 0.6, k=4)
    chain = MarkovPair.random(states=3, horizon=4, rng=1)
    assert _old(sequence.batch_expected_rejections, chain, M=3, match="M=") == sequence.batch_expected_rejections(
        chain, k=3
    )
    np.testing.assert_array_equal(
        _old(sequence.round_start_measure, chain, M=2, match="M="), sequence.round_start_measure(chain, k=2)
    )
    np.testing.assert_array_equal(
        _old(sequence.batch_rejection_profile, chain, M=2, match="M="), sequence.batch_rejection_profile(chain, k=2)
    )
    a = _old(sequence.simulate_batch_rejections, chain, M=3, runs=50, rng=5, match="M=")
    b = sequence.simulate_batch_rejections(chain, k=3, runs=50, rng=5)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    for name in sequence.__all__:
        fn = getattr(sequence, name)
        if callable(fn) and not inspect.isclass(fn):
            assert "M" not in inspect.signature(fn).parameters, name


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


def test_audit_tree_old_spelling():
    rng = np.random.default_rng(0)
    P, Q = _table(3, 3, rng, zeros=0.0), _table(3, 3, rng, zeros=0.0)
    args = (_rrs_tree, P.__getitem__, Q.__getitem__)
    kw = dict(steps=300, rng=5, declared="exact_match", batch=100)
    new = audit.audit_tree(*args, tree.TreeDraftLaw((2, 1), "topk"), **kw)
    old = _old(audit.audit_tree, *args, (2, 1), "topk", match="shape=, children=", **kw)
    old_kw = _old(audit.audit_tree, *args, shape="[(0,), (1,), (0, 0), (1, 0)]", children="topk", match="shape=", **kw)
    for r in (old, old_kw):
        assert (r.lossless, r.accepted, r.std_err, r.expected, r.optimum) == (
            new.lossless,
            new.accepted,
            new.std_err,
            new.expected,
            new.optimum,
        )
    # the old default children were drawn without replacement
    swor = audit.audit_tree(*args, tree.TreeDraftLaw((2, 1), "swor"), **kw)
    old = _old(audit.audit_tree, *args, (2, 1), match="shape=", **kw)
    assert (old.accepted, old.expected) == (swor.accepted, swor.expected)
    with pytest.raises(InputError, match="^drafts: the tree's shape and children"):
        audit.audit_tree(*args, tree.TreeDraftLaw(length=2), **kw)


def test_audit_generation_old_spelling():
    target, draft = tree.synthetic_pair(4, seed=3)
    n = 4

    def loop(prompt, rng):  # plain sampling from the target, one token per call (0 drafted accepted)
        out = []
        for _ in range(4):
            law = np.asarray(target(tuple(prompt) + tuple(out)))
            out.append(int(rng.choice(n, p=law / law.sum())))
        return out, [0] * 4

    kw = dict(prompts=[(1,), (2,)], runs=20, new_tokens=4, rng=2, progress=False)
    new = audit.audit_generation(
        loop,
        target,
        drafting=audit.ChainDrafting(draft, 2, "sd"),
        options=audit.GenerationOptions(bins=3, max_lag=2),
        **kw,
    )
    old = _old(
        audit.audit_generation,
        loop,
        target,
        draft=draft,
        gamma=2,
        declared="sd",
        bins=3,
        max_lag=2,
        match="is deprecated",
        **kw,
    )
    assert repr(dataclasses.asdict(old)) == repr(dataclasses.asdict(new))
    with pytest.raises(InputError, match="^draft: gamma and declared need"):
        with pytest.warns(DeprecationWarning):
            audit.audit_generation(loop, target, gamma=2, **kw)
    with pytest.raises(InputError, match="^drafting: an audit.ChainDrafting"):
        audit.audit_generation(loop, target, drafting=(draft, 2), **kw)


def test_write_table_latex_header_is_latex(tmp_path):
    rows = [[1, 0.5], [2, 0.25]]
    a = write_table(tmp_path / "a", ["k", "value"], rows, title="t", latex=["$k$", "value"])
    with pytest.warns(DeprecationWarning, match="latex_header="):
        b = write_table(tmp_path / "b", ["k", "value"], rows, title="t", latex_header=["$k$", "value"])
    for x, y in zip(a, b, strict=True):
        assert x.read_text() == y.read_text()
    assert "$k$" in a[2].read_text()


def test_drafted_tokens_are_tokens():
    """``drafts`` means the draft law everywhere; the drafted token ids are ``tokens``."""
    from optaccept.drafts import IID
    from optaccept.optimal import optimal_verifier
    from optaccept.verifiers import target_only_respond

    p, q = [0.5, 0.3, 0.2], [0.2, 0.2, 0.6]
    ver = optimal_verifier(p, IID(q, 2))
    x = np.array([[0, 2], [2, 2], [1, 0]])
    np.testing.assert_array_equal(_old(ver.respond, drafts=x, rng=4, match="drafts="), ver.respond(tokens=x, rng=4))
    np.testing.assert_array_equal(_old(ver.conditional, drafts=(0, 2), match="drafts="), ver.conditional((0, 2)))
    y_old, a_old = _old(target_only_respond, p, drafts=x, rng=np.random.default_rng(1), match="drafts=")
    y_new, a_new = target_only_respond(p, tokens=x, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(y_old, y_new)
    np.testing.assert_array_equal(a_old, a_new)
    with pytest.raises(InputError, match=r"^tokens: must have shape \(rows, 2\)"):
        ver.respond(np.array([0, 1]), 0)
    torch = pytest.importorskip("torch")
    from optaccept.optimal import optimal_verifier_batched

    P = torch.tensor([p, p], dtype=torch.float64)
    Q = torch.tensor([q, q], dtype=torch.float64)
    X = torch.tensor([[0, 2], [1, 1]])
    old = _old(optimal_verifier_batched, P, Q, drafts=X, generator=torch.Generator().manual_seed(0), match="drafts=")
    new = optimal_verifier_batched(P, Q, tokens=X, generator=torch.Generator().manual_seed(0))
    assert torch.equal(old, new)
    for fn in (ver.respond, ver.conditional, target_only_respond, optimal_verifier_batched):
        assert "drafts" not in inspect.signature(fn).parameters


def test_doctests_in_the_new_spelling():
    import doctest

    from optaccept.sequence import _batch
    from optaccept.tree import _api, _draft_law

    for mod in (_draft_law, _api, tree, _batch):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # examples use the new spelling
            result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__


def test_shape_split_keeps_old_import_paths():
    from optaccept.tree import _shape, _shaped_tree

    for name in ("ShapedTree", "enumerate_shaped", "count_shaped", "sample_shaped", "topk_tree"):
        assert getattr(_shape, name) is getattr(_shaped_tree, name)
    assert tree.ShapedTree is _shaped_tree.ShapedTree and tree.Shape is _shape.Shape
    with pytest.raises(AttributeError, match="no_such_name"):
        _shape.no_such_name  # noqa: B018
    for mod in (_shape, _shaped_tree):
        with open(mod.__file__, encoding="utf-8") as fh:
            assert sum(1 for _ in fh) <= 700, mod.__name__


def _models():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    return (lambda prefix: p), (lambda prefix: q)


def test_old_spelling_warns_at_the_callers_line():
    """Python's default filters show a DeprecationWarning only where it is attributed to the
    user's code: every old spelling points at the call, however many wrappers stand between."""
    P, Q = _models()
    calls = [
        lambda: tree.accepted_tokens(P, Q, length=2),
        lambda: tree.sample_accepted_tokens(P, Q, length=2, trees=5, rng=0, progress=False),
        lambda: tree.sweep((P, Q), ks=(2,), verifiers=("token",)),
        lambda: tree.simulate(P, Q, length=2, steps=5, rng=0, progress=False),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            call()
        deprecations = [w for w in record if issubclass(w.category, DeprecationWarning)]
        assert deprecations and all(w.filename == __file__ for w in deprecations), [
            (w.filename, w.lineno) for w in deprecations
        ]


def test_sweep_refuses_a_law_spelled_twice():
    P, Q = _models()
    law = tree.TreeDraftLaw(length=2, k=3, children="swor")
    with pytest.raises(InputError, match="drafts: give the tree's laws once"):
        tree.sweep((P, Q), ks=(2,), drafts=(law,))


def test_previous_defaults_beside_a_shape_still_work():
    """The previous release ignored its defaults k=1, drafts="iid" beside shape=: passing them
    explicitly still gives the shape's law."""
    P, Q = _models()
    new = tree.simulate(P, Q, drafts=tree.TreeDraftLaw((2,), "iid"), steps=50, rng=3, progress=False)
    with pytest.warns(DeprecationWarning):
        old = tree.simulate(P, Q, shape=(2,), children="iid", k=1, drafts="iid", steps=50, rng=3, progress=False)
    assert np.array_equal(new[0], old[0]) and new[1] == old[1]
    with pytest.raises(InputError, match="shape"):
        tree.simulate(P, Q, shape=(2,), children="iid", k=3, steps=5, rng=0)
