"""Assertions and hypothesis strategies for an engine's own test suite (docs/engines.md §3).

>>> from optaccept import testing
>>> testing.assert_lossless(fn, p, q, k=2, drafts="iid", rng=0)           # doctest: +SKIP
>>> testing.assert_acceptance(fn, p, q, k=2, declared="rrs", rng=0)       # doctest: +SKIP
>>> from optaccept.testing import strategies                              # needs hypothesis

``fn(P, Q, X, rng) -> Y`` is the engine's verifier with the interface of
:func:`optaccept.audit.audit_verifier`.  Both assertions raise ``AssertionError`` carrying the
audit's report, at a stated false-alarm rate: a correct verifier fails one call with
probability at most ``false_alarm`` over the seed (default 1e-6).  :func:`verifier_fn` turns a
verifier of :mod:`optaccept.verifiers` into such an ``fn``.

:mod:`optaccept.testing.strategies` needs hypothesis (``pip install hypothesis``); it is
imported on use only, so ``import optaccept.testing`` does not need it.
"""

from ._assert import assert_acceptance, assert_lossless, verifier_fn

__all__ = [
    "assert_lossless",
    "assert_acceptance",
    "verifier_fn",
]
