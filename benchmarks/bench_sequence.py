"""Timings of the sequence-level computations, each against a baseline measured in the same run.

Run:  python benchmarks/bench_sequence.py
"""

from __future__ import annotations

import itertools
import platform

import numpy as np
from _timing import best_time_and_result

from optaccept import sequence as sq


def _paths(chain):
    """Baseline: Theorem 1 by enumerating every target path (vectorised per path)."""
    S, T = chain.states, chain.horizon
    tv = 0.5 * np.abs(chain.target - chain.draft).sum(-1)  # (T, S)
    total = 0.0
    for path in itertools.product(range(S), repeat=T):
        prob = chain.initial[path[0]]
        for t in range(1, T):
            prob *= chain.target[t - 1][path[t - 1], path[t]]
        total += prob * sum(tv[t][path[t]] for t in range(T))
    return total


def main() -> None:
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")
    chain = sq.MarkovPair.random(states=4, horizon=8, rng=np.random.default_rng(0))
    t_dp, v_dp = best_time_and_result(lambda: sq.expected_rejections(chain))
    t_en, v_en = best_time_and_result(lambda: _paths(chain), repeat=1)
    print(
        f"Theorem 1, S=4, T=8: DP {t_dp * 1e3:.3f} ms, path enumeration {t_en * 1e3:.1f} ms, "
        f"ratio {t_en / t_dp:.0f}x, |diff| = {abs(v_dp - v_en):.1e}"
    )

    seed = sq.MarkovPair.random(states=7, horizon=50, rng=np.random.default_rng(10))
    t_dp, _ = best_time_and_result(lambda: sq.expected_rejections(seed))
    t_mc, est = best_time_and_result(
        lambda: sq.simulate_rejections(seed, samples=5000, rng=np.random.default_rng(1)), repeat=1
    )
    print(
        f"Theorem 1, seed chain S=7, T=50: DP {t_dp * 1e3:.3f} ms, Monte Carlo 5000 runs "
        f"{t_mc * 1e3:.1f} ms (ratio {t_mc / t_dp:.0f}x, standard error {est.std_err:.3f})"
    )
    for M in (4, 16, 64):
        t_s, _ = best_time_and_result(lambda M=M: sq.batch_expected_rejections(seed, M))
        t_m, _ = best_time_and_result(lambda M=M: sq.batch_expected_rejections(seed, M, continuation="matching"))
        t_mc, est = best_time_and_result(
            lambda M=M: sq.simulate_batch_rejections(seed, M, samples=2000, rng=np.random.default_rng(M)), repeat=1
        )
        print(
            f"Theorem 3, seed chain, M={M}: exact single {t_s * 1e3:.2f} ms, exact matching "
            f"{t_m * 1e3:.2f} ms, Monte Carlo 2000 runs {t_mc * 1e3:.0f} ms "
            f"(Monte Carlo / exact single = {t_mc / t_s:.0f}x, standard error {est.std_err:.3f})"
        )

    rng = np.random.default_rng(2)
    logits = rng.normal(size=(64, 49152)) * 3
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    z = 0.8 * logits + rng.normal(size=logits.shape)
    q = np.exp(z - z.max(1, keepdims=True))
    q /= q.sum(1, keepdims=True)
    t_build, pair = best_time_and_result(lambda: sq.PositionPair(p, q), repeat=1)
    t_tv, _ = best_time_and_result(lambda: sq.expected_rejections(pair))
    t_b4, _ = best_time_and_result(lambda: sq.batch_expected_rejections(pair, 4), repeat=1)
    t_mc, _ = best_time_and_result(
        lambda: sq.simulate_rejections(pair, samples=2000, rng=np.random.default_rng(3)), repeat=1
    )
    t_dec, _ = best_time_and_result(lambda: sq.decoder_losses(p, q, np.linspace(0, 0.05, 11)), repeat=1)
    print(
        f"Position pair 64 x 49152: validate {t_build * 1e3:.0f} ms, Theorem 1 {t_tv * 1e3:.1f} ms, "
        f"batch M=4 exact {t_b4 * 1e3:.0f} ms ({t_b4 / t_tv:.0f}x Theorem 1), "
        f"Monte Carlo 2000 runs {t_mc * 1e3:.0f} ms, OPT/UNO over 11 eps {t_dec * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
