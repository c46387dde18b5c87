"""Audit any verifier implementation: is it lossless (a test with a stated false-alarm rate),
what does it accept, and how far is it from the optimum α* of its draft law (docs/audit.md).

>>> import numpy as np
>>> from optaccept import audit
>>> def sd(P, Q, X, rng):                      # speculative sampling, one draft
...     ...
>>> rep = audit.audit_verifier(sd, p, q, k=1, drafts="iid", samples=200_000,
...                            rng=np.random.default_rng(0), declared="sd")  # doctest: +SKIP
"""

from ._chain import ChainAuditReport, audit_chain, audit_chain_log
from ._core import AuditReport, audit_log, audit_verifier
from ._formats import chain_outputs, flashinfer_chain_outputs, sglang_outputs
from ._gate import RegressionGate, SampleSize, regression_gate, sample_size
from ._generation import ChainDrafting, GenerationAuditReport, GenerationOptions, audit_generation, torch_lm
from ._logs import SparseChainLog
from ._lossy import LossyAuditReport, audit_lossy
from ._tree import audit_tree
from ._truncated import audit_topm_log

__all__ = [
    "audit_verifier",
    "audit_log",
    "audit_chain",
    "audit_chain_log",
    "audit_topm_log",
    "audit_tree",
    "audit_lossy",
    "LossyAuditReport",
    "regression_gate",
    "sample_size",
    "RegressionGate",
    "SampleSize",
    "SparseChainLog",
    "audit_generation",
    "ChainDrafting",
    "GenerationOptions",
    "torch_lm",
    "GenerationAuditReport",
    "chain_outputs",
    "sglang_outputs",
    "flashinfer_chain_outputs",
    "AuditReport",
    "ChainAuditReport",
]
