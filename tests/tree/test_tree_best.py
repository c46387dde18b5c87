"""tree.best_tree and the engine formats of tree.Shape (docs/trees.md §8c), checked
against brute force over every shape of N <= 8 nodes written here, with a value of
a top-k tree computed here from the laws (not by the library)."""

from __future__ import annotations

import ast
import json
import math
from fractions import Fraction as F

import numpy as np
import pytest

from optaccept import tree
from optaccept._errors import InputError, MethodError
from optaccept.tree._best import count_rank_paths
from optaccept.tree._budget import sequoia_shape


def all_shapes(n: int) -> list[tuple[tuple[int, ...], ...]]:
    """Every ordered rooted tree of n nodes below the root, as index paths (children of a
    node at ranks 0..b-1), built from the compositions of n into subtree sizes."""

    def forests(m: int) -> list[list[tuple[int, ...]]]:
        # forests of m nodes hanging from one parent: the first child's subtree of s
        # nodes (child + s - 1 below), then a forest of m - s nodes for ranks 1, 2, ...
        if m == 0:
            return [[]]
        out = []
        for s in range(1, m + 1):
            for below in forests(s - 1):
                for rest in forests(m - s):
                    first = [(0,)] + [(0,) + t for t in below]
                    shifted = [(t[0] + 1,) + t[1:] for t in rest]
                    out.append(first + shifted)
        return out

    return [tuple(sorted(f, key=lambda t: (len(t), t))) for f in forests(n)]


def catalan(n: int) -> int:
    return math.comb(2 * n, n) // (n + 1)


def positional_value(rates, paths) -> float:
    return sum(math.prod(rates[r] if r < len(rates) else 0.0 for r in t) for t in paths)


def topk_value(P, Q, paths) -> float:
    """Σ p(w) over the nodes of the shape filled with the draft's top-k tokens (ties to the
    smaller id); a node whose rank exceeds the vocabulary is absent with its subtree."""
    token: dict[tuple[int, ...], tuple[int, ...] | None] = {(): ()}
    total = 0.0
    for t in sorted(paths, key=lambda t: (len(t), t)):
        w = token[t[:-1]]
        if w is None:
            token[t] = None
            continue
        q = [float(v) for v in Q(w)]
        order = sorted(range(len(q)), key=lambda x: (-q[x], x))
        if t[-1] >= len(order):
            token[t] = None
            continue
        token[t] = w + (order[t[-1]],)
        pw = 1.0
        for i, x in enumerate(token[t]):
            pw *= float(P(token[t][:i])[x])
        total += pw
    return total


def test_all_shapes_are_catalan_many_and_valid():
    for n in range(1, 9):
        shapes = all_shapes(n)
        assert len(shapes) == len(set(shapes)) == catalan(n)
        for s in shapes:
            assert tree._shape.as_shape(list(s)).size == n


# ---------------------------------------------------------------- Sequoia's programme
def _rates_cases(rng):
    yield [0.5, 0.01, 0.49]  # rates rise with the rank: the N-largest-products rule fails
    yield [0.9, 0.0, 0.8, 0.0]  # zeros between positive rates
    yield [0.3, 0.3, 0.3]  # ties
    yield [1.0]  # one rank, rate one: a chain
    yield [0.0, 0.7]  # the first rank worthless
    yield [1 - 1e-12, 1e-12]  # near one-hot
    for _ in range(12):
        a = rng.random(int(rng.integers(1, 9)))
        a[rng.random(a.size) < 0.2] = 0.0
        yield list(a)


def test_sequoia_programme_against_every_shape():
    rng = np.random.default_rng(7)
    shapes = {n: all_shapes(n) for n in range(1, 9)}
    for rates in _rates_cases(rng):
        for n in range(1, 9):
            best = max(positional_value(rates, s) for s in shapes[n])
            got = sequoia_shape(rates, n)
            assert len(got) == n and tree._shape.as_shape(got).size == n
            assert positional_value(rates, got) == pytest.approx(best, rel=1e-12, abs=1e-15), (rates, n)


def test_reproducer_sequoia_at_least_the_best_shape():
    p = lambda u: [0.5, 0.01, 0.49]  # noqa: E731
    q = lambda u: [0.5, 0.3, 0.2]  # noqa: E731
    c = tree.budget_curve([(p, q)], budgets=(3,), progress=False)
    star = tree.accepted_tokens(p, q, tree.TreeDraftLaw((3,), "topk"), verifier="target_only").value
    assert star == pytest.approx(1.0)
    assert c.mean("sequoia")[0] >= star - 1e-12
    # context-free models: Sequoia's positional model is exact, so its shape is the best of all
    for n in range(1, 8):
        best = max(topk_value(p, q, s) for s in all_shapes(n))
        got = tree.best_tree([(p, q)], budget=n, progress=False)
        assert topk_value(p, q, got.paths) == pytest.approx(best, abs=1e-12)


# ---------------------------------------------------------------- best_tree
class _Memo:
    """A sequence model with its laws remembered (the brute forces read each many times)."""

    def __init__(self, fn):
        self.fn, self.memo = fn, {}

    def __call__(self, u):
        if u not in self.memo:
            self.memo[u] = np.asarray(self.fn(u), dtype=np.float64)
        return self.memo[u]


def _pairs(n, seeds, scale=1.5):
    return [tuple(_Memo(m) for m in tree.synthetic_pair(n, rng=s, scale=scale)) for s in seeds]


@pytest.mark.parametrize("vocab", [2, 3, 5])
def test_ceiling_is_the_best_static_shape(vocab):
    pairs = _pairs(vocab, (1, 2))
    for n in range(1, 9):
        values = [np.mean([topk_value(P, Q, s) for P, Q in pairs]) for s in all_shapes(n)]
        got = tree.best_tree(pairs, budget=n, strategy="ceiling", progress=False)
        mine = np.mean([topk_value(P, Q, got.paths) for P, Q in pairs])
        assert got.size == n
        assert mine == pytest.approx(max(values), abs=1e-12)
        assert got.meta["value"] == pytest.approx(mine, abs=1e-12)
        seq = tree.best_tree(pairs, budget=n, progress=False)
        assert np.mean([topk_value(P, Q, seq.paths) for P, Q in pairs]) <= mine + 1e-12
        assert seq.meta["value"] == pytest.approx(np.mean([topk_value(P, Q, seq.paths) for P, Q in pairs]))


def test_value_agrees_with_accepted_tokens():
    pairs = _pairs(40, (3, 4, 5), scale=2.5)
    for strategy in ("sequoia", "ceiling"):
        s = tree.best_tree(pairs, budget=6, strategy=strategy, progress=False)
        exact = np.mean(
            [
                float(tree.accepted_tokens(P, Q, tree.TreeDraftLaw(s, "topk"), verifier="target_only").value)
                for P, Q in pairs
            ]
        )
        assert s.meta["value"] == pytest.approx(exact, abs=1e-12)


def test_dynamic_is_one_shape_per_context():
    pairs = _pairs(4, (1, 2, 3))
    shapes = tree.best_tree(pairs, budget=5, strategy="dynamic", progress=False)
    assert isinstance(shapes, list) and len(shapes) == 3
    curve = tree.budget_curve(pairs, (5,), strategies=("dynamic",), progress=False)
    for i, ((P, Q), s) in enumerate(zip(pairs, shapes, strict=True)):
        assert isinstance(s, tree.Shape) and s.size == 5
        # the 5 strings of largest draft path probability: brute force over strings of <= 5 tokens
        qs = {}
        for w in _strings(4, 5):
            qs[w] = math.prod(float(Q(w[:j])[w[j]]) for j in range(len(w)))
        top = sorted(qs, key=lambda w: (-qs[w], w))[:5]
        ps = sum(math.prod(float(P(w[:j])[w[j]]) for j in range(len(w))) for w in top)
        assert topk_value(P, Q, s.paths) == pytest.approx(ps, abs=1e-12)
        assert curve.values["dynamic"][i, 0] == pytest.approx(ps, abs=1e-12)


def _strings(n, depth):
    level = [()]
    out = []
    for _ in range(depth):
        level = [w + (x,) for w in level for x in range(n)]
        out += level
    return out


def test_cost_picks_the_argmax_of_tokens_per_second():
    pairs = _pairs(3, (1, 2))
    best = {n: max(np.mean([topk_value(P, Q, s) for P, Q in pairs]) for s in all_shapes(n)) for n in range(1, 9)}
    for cost in (lambda n: 1.0 + 0.05 * n, lambda n: 1.0 + 0.3 * n, lambda n: 1.0 + 0.01 * n * n):
        rate = {n: (best[n] + 1.0) / cost(n) for n in best}
        want = max(rate, key=lambda n: (rate[n], -n))
        got = tree.best_tree(pairs, budget=8, cost=cost, strategy="ceiling", progress=False)
        assert got.size == want
        assert got.meta["tokens_per_second"] == pytest.approx(rate[want], abs=1e-12)
        # the same curve as a table, a mapping and a sequence (entry i: i + 1 nodes)
        table = {n: cost(n) for n in range(1, 9)}
        assert tree.best_tree(pairs, cost=table, strategy="ceiling", progress=False) == got
        assert tree.best_tree(pairs, cost=[cost(n) for n in range(1, 9)], strategy="ceiling", progress=False) == got
    # Sequoia with a cost: the argmax over its own shape of each size
    cost = lambda n: 1.0 + 0.1 * n  # noqa: E731
    got = tree.best_tree(pairs, budget=8, cost=cost, progress=False)
    rates = got.meta["rates"]
    rate = {}
    for n in range(1, 9):
        v = np.mean([topk_value(P, Q, sequoia_shape(rates, n)) for P, Q in pairs])
        rate[n] = (v + 1.0) / cost(n)
    assert got.size == max(rate, key=lambda n: (rate[n], -n))


def test_cost_flat_takes_the_largest_and_steep_the_smallest():
    pairs = _pairs(20, (1,))
    assert tree.best_tree(pairs, cost=lambda n: 1.0, budget=12, progress=False).size == 12
    assert tree.best_tree(pairs, cost=lambda n: float(n), budget=12, progress=False).size == 1


def test_children_drawn_from_q_use_the_gains_of_one_level_trees():
    """For swor/iid children the rates are a_r = v(r + 1) − v(r), v(b) the exact value of the
    shape (b,), recomputed here with Fractions through accepted_tokens."""
    p = lambda u: [F(1, 2), F(1, 3), F(1, 6)]  # noqa: E731
    q = lambda u: [F(1, 6), F(1, 2), F(1, 3)]  # noqa: E731
    for children, verifier in (("swor", "token"), ("iid", "token"), ("swor", "target_only"), ("iid", "traversal")):
        s = tree.best_tree([(p, q)], budget=4, children=children, verifier=verifier, progress=False)
        v = [0.0] + [
            float(tree.accepted_tokens(p, q, tree.TreeDraftLaw((b,), children), verifier=verifier).value)
            for b in (1, 2, 3, 4)
        ]
        want = np.maximum(np.diff(v), 0.0)
        assert np.allclose(s.meta["rates"], want, atol=1e-12)
        assert positional_value(want, s.paths) == pytest.approx(max(positional_value(want, t) for t in all_shapes(4)))


def test_best_tree_errors():
    pairs = _pairs(5, (1,))
    cases = [
        (dict(), InputError, "budget:"),
        (dict(budget=0), InputError, "budget:"),
        (dict(budget=5000), InputError, "budget:"),
        (dict(budget=4, strategy="greedy"), InputError, "strategy:"),
        (dict(budget=4, children="beam"), InputError, "children:"),
        (dict(budget=4, verifier="magic"), InputError, "verifier:"),
        (dict(budget=4, verifier="token"), MethodError, "top-k"),
        (dict(budget=4, children="swor", verifier="block"), MethodError, "block"),
        (dict(budget=4, strategy="ceiling", children="swor", verifier="token"), MethodError, "children='topk'"),
        (dict(cost=lambda n: -1.0), InputError, "cost:"),
        (dict(cost={0: 1.0}), InputError, "cost:"),
        (dict(cost=[1.0, float("nan")]), InputError, "cost:"),
        (dict(cost="fast"), InputError, "cost:"),
        (dict(budget=20, strategy="ceiling"), MethodError, "rank paths"),
        (dict(budget=2000), MethodError, "1,024"),
    ]
    for kw, err, text in cases:
        with pytest.raises(err, match=text) as e:
            tree.best_tree(pairs, progress=False, **kw)
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="pairs:"):
        tree.best_tree([], budget=3, progress=False)
    with pytest.raises(MethodError, match="1,024"):
        tree.budget_curve(pairs, budgets=(4, 2048), progress=False)
    with pytest.raises(MethodError, match="too many draft trees") as e:
        tree.best_tree(_pairs(40, (1,)), budget=6, children="swor", verifier="traversal", progress=False)
    assert "\n" not in str(e.value)
    assert tree.budget_curve(pairs, budgets=(4, 2048), strategies=("dynamic",), progress=False).budgets == (4, 2048)


def test_ceiling_refuses_before_work():
    """The size estimate (rank paths) is made before any model call."""
    calls = []

    def p(u):
        calls.append(u)
        return [0.5, 0.5] + [0.0] * 98

    with pytest.raises(MethodError, match="rank paths"):
        tree.best_tree([(p, p)], budget=40, strategy="ceiling", progress=False)
    assert len(calls) <= 2  # the root laws only (the vocabulary size)
    # the count is the number of index paths some shape of <= n nodes holds (ranks < vocab)
    for n in range(1, 8):
        for vocab in (1, 2, 3, 100):
            held = {t for s in all_shapes(n) for t in s if max(t) < vocab}
            assert count_rank_paths(n, vocab) == len(held)


# ---------------------------------------------------------------- engine formats
def test_round_trips_and_vllm_parser():
    rng = np.random.default_rng(3)
    shapes = [s for n in range(1, 7) for s in all_shapes(n)]
    for i in rng.choice(len(shapes), 60, replace=False):
        s = tree._shape.as_shape(list(shapes[i]))
        v = s.to_vllm()
        assert tree.Shape.from_vllm(v) == s
        assert tree.Shape.from_choices(s.to_choices()) == s
        # vLLM reads the string with ast.literal_eval and re-sorts it by (len(t), t)
        # (vllm/config/speculative.py); the string is already in that order
        parsed = ast.literal_eval(v)
        assert str(sorted(parsed, key=lambda t: (len(t), t))) == v
        assert all(isinstance(t, tuple) for t in parsed)
        assert json.loads(json.dumps(s.to_choices())) == [list(t) for t in s.paths]
    chain = tree._shape.as_shape((1, 1, 1))
    assert chain.to_vllm() == str([(i + 1) * (0,) for i in range(3)])  # vLLM's default chain
    assert chain.to_choices() == [[0], [0, 0], [0, 0, 0]]
    # a shape given in any order reads back in vLLM's order
    assert tree.Shape.from_vllm("[(1,), (0, 0), (0,)]").to_vllm() == "[(0,), (1,), (0, 0)]"


def test_format_errors_name_the_argument():
    for bad in ("[(1,)]", "[(0,), (0,)]", "[(0, 0)]", "[(0,), (-1,)]", "foo(", "[1, 2]", "{}", ""):
        with pytest.raises(InputError, match=r"^s: ") as e:
            tree.Shape.from_vllm(bad)
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match=r"^s: "):
        tree.Shape.from_vllm([(0,)])
    for bad in ([[1]], [[0], [0, 1]], "[[0]]", [], [0, 1]):
        with pytest.raises(InputError, match=r"^choices: "):
            tree.Shape.from_choices(bad)


def _nasty_pairs():
    """Context-dependent laws with zeros, ties, p = q and near-one-hot rows."""

    def law(kind, u):
        h = (sum((i + 1) * (x + 1) for i, x in enumerate(u)) + len(u)) % 4
        rows = {
            "zeros": [[0.0, 0.6, 0.4, 0.0], [0.5, 0.0, 0.0, 0.5], [0.0, 0.0, 1.0, 0.0], [0.25, 0.25, 0.25, 0.25]],
            "ties": [[0.3, 0.3, 0.2, 0.2], [0.25, 0.25, 0.25, 0.25], [0.1, 0.4, 0.4, 0.1], [0.5, 0.0, 0.5, 0.0]],
            "onehot": [
                [1 - 1e-12, 1e-12, 0.0, 0.0],
                [0.0, 0.0, 1e-12, 1 - 1e-12],
                [0.7, 0.1, 0.1, 0.1],
                [0.1, 0.7, 0.1, 0.1],
            ],
        }
        return rows[kind][h]

    z = lambda u: law("zeros", u)  # noqa: E731
    t = lambda u: law("ties", u)  # noqa: E731
    o = lambda u: law("onehot", u)  # noqa: E731
    return [[(z, t), (t, z)], [(t, t), (z, z)], [(o, t), (t, o)], [(z, o)]]


@pytest.mark.parametrize("case", range(4))
def test_ceiling_and_sequoia_on_nasty_laws(case):
    pairs = _nasty_pairs()[case]
    for n in (1, 2, 4, 6, 8):
        values = [np.mean([topk_value(P, Q, s) for P, Q in pairs]) for s in all_shapes(n)]
        got = tree.best_tree(pairs, budget=n, strategy="ceiling", progress=False)
        assert np.mean([topk_value(P, Q, got.paths) for P, Q in pairs]) == pytest.approx(max(values), abs=1e-12)
        seq = tree.best_tree(pairs, budget=n, progress=False)
        assert seq.size == n and seq.meta["value"] <= max(values) + 1e-12


# ------------------------------------------------- SGLang, TensorRT-LLM, Jupyter, cost tables
def sglang_tree(q, steps: int, topk: int, num_draft_tokens: int) -> tuple[tuple[int, ...], ...]:
    """The tree SGLang's EAGLE worker drafts, rewritten here from its code: ``topk`` beams;
    step 0 takes the draft's top-k tokens, each later step expands every beam into its
    top-k children (score = the beam's score × the child's probability) and keeps the
    ``topk`` best of those topk² as beams; every candidate of every step is kept, and the
    ``num_draft_tokens − 1`` of largest score are verified (``select_top_k_tokens`` and
    ``build_tree_kernel_efficient_preprocess``).  Returned as index paths (rank of each
    token among its parent's top-k)."""
    cands = []  # (score, rank path)

    def top(prefix):
        law = [float(v) for v in q(prefix)]
        return sorted(range(len(law)), key=lambda x: (-law[x], x))[:topk], law

    order, law = top(())
    beams = [(law[x], (x,), (r,)) for r, x in enumerate(order)]
    cands += [(s, path) for s, _, path in beams]
    for _ in range(steps - 1):
        children = []
        for s, w, path in beams:
            order, law = top(w)
            children += [(s * law[x], w + (x,), path + (r,)) for r, x in enumerate(order)]
        cands += [(s, path) for s, _, path in children]
        beams = sorted(children, key=lambda c: -c[0])[:topk]
    kept = sorted(cands, key=lambda c: -c[0])[: num_draft_tokens - 1]
    return tuple(sorted((path for _, path in kept), key=lambda t: (len(t), t)))


def _random_draft(vocab, seed):
    """A context-dependent draft law without ties (continuous random rows)."""

    def q(u):
        r = np.random.default_rng([seed, len(u), *u]).random(vocab) ** 3
        return r / r.sum()

    return q


def test_to_engine_round_trips_and_trtllm_reads_the_choices():
    for n in range(1, 7):
        for paths in all_shapes(n):
            s = tree._shape.as_shape(list(paths))
            v = s.to_engine("vllm")
            assert v == {"speculative_token_tree": s.to_vllm(), "num_speculative_tokens": n}
            assert tree.Shape.from_engine("vllm", v) == s
            t = s.to_engine("trtllm")
            # TensorRT-LLM's EagleDecodingConfig.check_eagle_choices, rewritten: dedup, sort by
            # (len, path), every parent listed; max_draft_len = the longest path,
            # max_total_draft_tokens = the number of choices
            choices = sorted({tuple(c) for c in t["eagle_choices"]}, key=lambda c: (len(c), c))
            assert all(c[:-1] in choices for c in choices if len(c) > 1)
            assert [list(c) for c in choices] == t["eagle_choices"]
            assert t["max_draft_len"] == max(len(c) for c in choices) and len(choices) == n
            assert tree.Shape.from_engine("trtllm", t) == s
            # TensorRT-LLM also takes the choices as a string (read with ast.literal_eval)
            assert tree.Shape.from_engine("trtllm", {"eagle_choices": str(t["eagle_choices"])}) == s


def test_sglang_parameters_draft_the_shape_in_every_context():
    """A shape SGLang drafts statically: its parameters give that shape's top-k tree in every
    context (SGLang's selection rewritten above); any other shape is refused, and its
    strict=False parameters give a tree of as many nodes that changes with the context."""
    drafts = [_random_draft(8, seed) for seed in range(12)]  # more tokens than children
    static = 0
    for n in range(1, 8):
        for paths in all_shapes(n):
            s = tree._shape.as_shape(list(paths))
            try:
                params = s.to_engine("sglang")
            except MethodError as e:
                assert "strict=False" in str(e) and "\n" not in str(e)
                params = s.to_engine("sglang", strict=False)
                # never silently (issue 46): the dict states that SGLang drafts another tree
                statement = params.pop("sglang_tree")
                assert statement.startswith(f"SGLang's dynamic tree, not {s!r}") and "(b, b)" in statement
                assert params["speculative_num_draft_tokens"] == n + 1
                assert params["speculative_num_steps"] == s.depth
                got = {sglang_tree(q, *params.values()) for q in drafts}
                assert all(len(g) == n for g in got)
                assert len(got) > 1 or got != {s.paths}, paths  # not the shape in every context
                with pytest.raises(MethodError):
                    tree.Shape.from_engine("sglang", params)
                continue
            static += 1
            assert s.to_engine("sglang", strict=False) == params  # a static shape: nothing to state
            for q in drafts:
                assert sglang_tree(q, *params.values()) == s.paths
            assert tree.Shape.from_engine("sglang", params) == s
    # chains of 1..7, (b,) for b = 2..7, (2, 2) of 6 nodes
    assert static == 7 + 6 + 1


def test_from_sglang_agrees_with_its_selection():
    drafts = [_random_draft(5, seed) for seed in range(10)]
    for steps in (1, 2, 3):
        for topk in (1, 2, 3):
            cands = topk + (steps - 1) * topk * topk
            for ndt in range(2, cands + 2):
                params = dict(
                    speculative_num_steps=steps, speculative_eagle_topk=topk, speculative_num_draft_tokens=ndt
                )
                if topk == 1:
                    ndt = steps + 1  # SGLang's server_args sets it so for topk = 1
                got = {sglang_tree(q, steps, topk, ndt) for q in drafts}
                try:
                    s = tree.Shape.from_engine("sglang", params)
                except MethodError:
                    assert len(got) > 1, params  # refused: the tree depends on the context
                    continue
                assert got == {s.paths}, params
    for bad, word in (
        ({"speculative_num_steps": 2}, "needs"),
        (dict(speculative_num_steps=2, speculative_eagle_topk=2, speculative_num_draft_tokens=8), "between"),
        (dict(speculative_num_steps=0, speculative_eagle_topk=2, speculative_num_draft_tokens=3), "positive"),
        ([1, 2], "params"),
    ):
        with pytest.raises(InputError, match=word) as e:
            tree.Shape.from_engine("sglang", bad)
        assert "\n" not in str(e.value)


def test_engine_name_and_malformed_parameters():
    s = tree._shape.as_shape((2, 1))
    with pytest.raises(InputError, match=r"^name: "):
        s.to_engine("tgi")
    with pytest.raises(InputError, match=r"^name: "):
        tree.Shape.from_engine("tgi", {})
    with pytest.raises(InputError, match=r"speculative_token_tree"):
        tree.Shape.from_engine("vllm", {"speculative_token_tree": "[(1,)]"})
    with pytest.raises(InputError, match=r"eagle_choices"):
        tree.Shape.from_engine("trtllm", {"eagle_choices": [[0], [0, 1]]})
    with pytest.raises(InputError, match=r"eagle_choices"):
        tree.Shape.from_engine("trtllm", {"eagle_choices": "[[0],"})


def test_jupyter_display_shows_the_vllm_string_and_the_values():
    pairs = _pairs(6, (1, 2))
    s = tree.best_tree(pairs, budget=5, cost=lambda n: 1.0 + 0.1 * n, progress=False)
    html = s._repr_html_()
    assert "<table>" in html and f"<code>{s.to_vllm()}</code>" in html  # no character to escape in it
    assert f"{s.meta['tokens_per_second']:.6g}" in html and f"{s.meta['value']:.6g}" in html
    assert "sequoia" in html and f"<td style='text-align:left'>{s.size}</td>" in html
    plain = tree._shape.as_shape((2,))._repr_html_()
    assert "strategy" not in plain and "[(0,), (1,)]" in plain
    text = str(s).splitlines()
    assert text[0] == f"tree.Shape: {s.size} nodes, depth {s.depth}"
    assert text[-1] == f"  vLLM speculative_token_tree: {s.to_vllm()}"
    assert f"  tokens per second: {s.meta['tokens_per_second']:.6g}" in text


def test_cost_table_searches_its_sizes_and_refuses_a_budget_beyond_it():
    pairs = _pairs(3, (1, 2))
    cost = {1: 1.0, 3: 1.1, 6: 1.15}
    got = tree.best_tree(pairs, cost=cost, strategy="ceiling", progress=False)
    assert sorted(got.meta["by_size"]) == [1, 3, 6]
    best = {n: max(np.mean([topk_value(P, Q, s) for P, Q in pairs]) for s in all_shapes(n)) for n in cost}
    rate = {n: (best[n] + 1.0) / cost[n] for n in cost}
    assert got.size == max(rate, key=lambda n: (rate[n], -n))
    assert got.meta["tokens_per_second"] == pytest.approx(rate[got.size], abs=1e-12)
    # a budget inside the table cuts it; one beyond it names the sizes without a cost
    assert sorted(tree.best_tree(pairs, 3, cost=cost, strategy="ceiling", progress=False).meta["by_size"]) == [1, 3]
    for kw, gap in ((dict(budget=9, cost=cost), "sizes 7..9"), (dict(budget=4, cost=[1.0, 1.1, 1.2]), "size 4")):
        with pytest.raises(InputError, match=f"^cost: .*no cost for {gap}") as e:
            tree.best_tree(pairs, progress=False, **kw)
        assert "\n" not in str(e.value)
