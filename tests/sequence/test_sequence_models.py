"""Sequence models: construction, validation, per-position pairs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from optaccept._errors import InputError
from optaccept.sequence import MarkovPair, PositionPair, expected_rejections


def _stoch(rng, *shape):
    return rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])


def test_stationary_pair_broadcasts_and_keeps_caller_arrays():
    rng = np.random.default_rng(0)
    init, p, q = _stoch(rng, 3), _stoch(rng, 3, 3), _stoch(rng, 3, 3)
    p_before = p.copy()
    chain = MarkovPair(init, p, q, horizon=4)
    assert chain.target.shape == (4, 3, 3) and chain.horizon == 4 and chain.states == 3
    np.testing.assert_allclose(chain.target[2], p)
    assert np.array_equal(p, p_before)
    assert not chain.target.flags.writeable
    with pytest.raises(ValueError):
        chain.target[0, 0, 0] = 1.0


def test_random_pair_shapes_and_reproducibility():
    a = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(10))
    b = MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(10))
    assert a.target.shape == (50, 7, 7) and a.draft.shape == (50, 7, 7)
    assert np.array_equal(a.target, b.target) and np.array_equal(a.draft, b.draft)
    np.testing.assert_allclose(a.target.sum(-1), 1.0)
    s = MarkovPair.random(states=4, horizon=9, rng=1, stationary=True)
    assert s.horizon == 9 and np.array_equal(s.target[0], s.target[8])


def test_marginals_match_matrix_powers():
    rng = np.random.default_rng(1)
    init, p, q = _stoch(rng, 4), _stoch(rng, 4, 4), _stoch(rng, 4, 4)
    chain = MarkovPair(init, p, q, horizon=5)
    np.testing.assert_allclose(chain.marginals()[5], init @ np.linalg.matrix_power(p, 5))


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"initial": [0.5, 0.5], "target": [[0.5, 0.6], [0.5, 0.5]], "draft": np.eye(2), "horizon": 3}, "target"),
        ({"initial": [0.5, 0.5], "target": np.eye(2), "draft": [[1.2, -0.2], [0, 1]], "horizon": 3}, "draft"),
        ({"initial": [0.5, 0.5], "target": np.eye(2), "draft": np.eye(2), "horizon": 0}, "horizon"),
        ({"initial": [0.5, 0.5], "target": np.eye(2), "draft": np.eye(2)}, "horizon"),
        ({"initial": [0.5, 0.5], "target": np.eye(2), "draft": np.eye(3), "horizon": 2}, "draft"),
        ({"initial": [0.2, 0.2, 0.6], "target": np.eye(2), "draft": np.eye(2), "horizon": 2}, "initial"),
        ({"initial": [0.4, 0.4], "target": np.eye(2), "draft": np.eye(2), "horizon": 2}, "initial"),
        ({"initial": [0.5, 0.5], "target": np.ones((2, 2, 3)) / 3, "draft": np.ones((2, 2, 3)) / 3}, "target"),
        (
            {
                "initial": [0.5, 0.5],
                "target": np.stack([np.eye(2)] * 3),
                "draft": np.stack([np.eye(2)] * 3),
                "horizon": 4,
            },
            "horizon",
        ),
        ({"initial": [0.5, 0.5], "target": [[np.nan, 1], [0, 1]], "draft": np.eye(2), "horizon": 2}, "target"),
        ({"initial": [0.5, 0.5], "target": np.eye(2), "draft": np.eye(2), "horizon": 2.5}, "horizon"),
    ],
)
def test_bad_markov_input_names_the_argument(kwargs, word):
    with pytest.raises(InputError, match=word):
        MarkovPair(**kwargs)


def test_bad_random_arguments():
    with pytest.raises(InputError, match="states"):
        MarkovPair.random(states=0, horizon=3, rng=0)
    with pytest.raises(InputError, match="horizon"):
        MarkovPair.random(states=3, horizon=0, rng=0)
    with pytest.raises(InputError, match="rng"):
        MarkovPair.random(states=3, horizon=2, rng="seed")


def test_position_pair_from_distributions_object_and_torch():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    logits_p = torch.randn(6, 50, generator=g)
    logits_q = torch.randn(6, 50, generator=g)
    dists = SimpleNamespace(target=logits_p.softmax(-1), draft=logits_q.softmax(-1))
    pair = MarkovPair.from_distributions(dists)
    assert isinstance(pair, PositionPair) and pair.horizon == 6 and pair.n == 50
    p = dists.target.double().numpy()
    q = dists.draft.double().numpy()
    expected = 0.5 * np.abs(p / p.sum(1, keepdims=True) - q / q.sum(1, keepdims=True)).sum()
    assert expected_rejections(pair) == pytest.approx(expected, rel=1e-12)


def test_position_pair_errors():
    with pytest.raises(InputError, match="dists"):
        PositionPair.from_distributions(object())
    with pytest.raises(InputError, match="draft"):
        PositionPair(np.ones((3, 4)) / 4, np.ones((3, 5)) / 5)
    with pytest.raises(InputError, match="target"):
        PositionPair(np.ones(4) / 4, np.ones(4) / 4)
    with pytest.raises(InputError, match="target"):
        PositionPair(np.full((2, 4), 0.3), np.ones((2, 4)) / 4)
