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
from ._core import FALSE_ALARM, ORDERS, AuditReport, audit_log, audit_verifier, pit_values, torch_adapter
from ._formats import (
    chain_outputs,
    flashinfer_chain_outputs,
    paths_from_eagle,
    paths_from_sglang,
    paths_from_vllm,
    paths_to_eagle,
    paths_to_sglang,
    paths_to_vllm,
    sglang_outputs,
    shape_from_layout,
    split_flat_drafts,
)
from ._gate import RegressionGate, SampleSize, regression_gate, sample_size
from ._generation import (
    ChainDrafting,
    GenerationAuditReport,
    GenerationOptions,
    audit_generation,
    serial_values,
    torch_lm,
)
from ._logs import step_values, synthetic_chain_log
from ._lossy import DECLARED_LOSSY, LossyAuditReport, audit_lossy, front_acceptance
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
    "front_acceptance",
    "LossyAuditReport",
    "DECLARED_LOSSY",
    "regression_gate",
    "sample_size",
    "RegressionGate",
    "SampleSize",
    "step_values",
    "synthetic_chain_log",
    "torch_adapter",
    "audit_generation",
    "ChainDrafting",
    "GenerationOptions",
    "torch_lm",
    "GenerationAuditReport",
    "serial_values",
    "paths_from_vllm",
    "paths_to_vllm",
    "paths_from_sglang",
    "paths_to_sglang",
    "split_flat_drafts",
    "chain_outputs",
    "paths_from_eagle",
    "paths_to_eagle",
    "sglang_outputs",
    "flashinfer_chain_outputs",
    "shape_from_layout",
    "AuditReport",
    "ChainAuditReport",
    "FALSE_ALARM",
    "ORDERS",
    "pit_values",
]
