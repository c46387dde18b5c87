"""Command line and main job of the sequence module."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from optaccept import real
from optaccept._errors import InputError
from optaccept.cli.sequence import register
from optaccept.jobs.sequence import run
from optaccept.sequence import (
    MarkovPair,
    PositionPair,
    batch_expected_rejections,
    decoder_losses,
    expected_rejections,
)


def _parser():
    parser = argparse.ArgumentParser(prog="optaccept")
    register(parser.add_subparsers(dest="command"))
    return parser


def test_cli_rejections(capsys):
    args = _parser().parse_args(
        ["sequence", "rejections", "--states", "3", "--horizon", "4", "-k", "1", "3", "--runs", "200"]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "k = 3" in out and "Monte Carlo" in out and "limit" in out


def test_cli_pareto(capsys):
    args = _parser().parse_args(["sequence", "pareto", "--p", "0.5,0.5", "--q", "0.9,0.1"])
    assert args.func(args) == 0
    assert "TV(p, q) = 0.400000" in capsys.readouterr().out
    bad = _parser().parse_args(["sequence", "pareto", "--p", "0.5,x", "--q", "0.9,0.1"])
    with pytest.raises(InputError, match="p"):
        bad.func(bad)


def test_job_quick_writes_figures(tmp_path):
    paths = run(tmp_path, quick=True)
    names = {p.name for p in paths}
    assert {"sequence_rejections.png", "sequence_pareto.png", "sequence_values.md"} <= names
    for p in paths:
        assert p.exists() and p.stat().st_size > 0


def _fake_distributions(positions=6, vocab=300, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(positions, vocab)) * 2
    p = np.exp(logits)
    q = np.exp(0.7 * logits)
    p[:, 100:] = 0.0  # truncated supports, as in top-k extraction
    q[:, 120:] = 0.0
    p /= p.sum(1, keepdims=True)
    q /= q.sum(1, keepdims=True)
    return real.Distributions(p, q, meta={"target_model": "fake", "draft_model": "fake"})


def test_language_model_distributions_feed_the_sequence_theory():
    dists = _fake_distributions()
    pair = MarkovPair.from_distributions(dists)
    p = dists.target.astype(np.float64)
    q = dists.draft.astype(np.float64)
    p /= p.sum(1, keepdims=True)
    q /= q.sum(1, keepdims=True)
    assert expected_rejections(pair) == pytest.approx(0.5 * np.abs(p - q).sum(), rel=1e-9)
    d = decoder_losses(pair.target, pair.draft, [0.0, 0.01, 0.05])
    assert np.all(d.loss_opt <= d.loss_uno + 1e-12)
    np.testing.assert_allclose(d.rejection + d.loss_opt, d.tv, atol=1e-12)


def test_job_uses_language_model_rows_when_present(tmp_path, monkeypatch):
    path = _fake_distributions().save(tmp_path / "fake.npz")
    monkeypatch.setattr(real, "sample_path", lambda: path)
    paths = run(tmp_path / "figs", quick=True)
    table = next(p for p in paths if p.suffix == ".md").read_text(encoding="utf-8")
    assert "real distributions (6 positions, fake" in table


def test_shipped_language_model_rows_if_available():
    path = real.sample_path()
    if not path.exists():
        pytest.skip("the shipped distribution file is not present")
    pair = PositionPair.from_distributions(real.Distributions.load(path))
    d = decoder_losses(pair.target, pair.draft, np.linspace(0, 0.1, 6))
    assert np.all(d.loss_opt <= d.loss_uno + 1e-12)
    np.testing.assert_allclose(d.rejection + d.loss_opt, d.tv, atol=1e-9)
    assert batch_expected_rejections(pair, 4) <= expected_rejections(pair)
