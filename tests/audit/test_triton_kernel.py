"""Auditing a Triton verifier kernel on the CPU (docs/audit.md, "Auditing a Triton kernel on
the CPU"): the project's own chain-verification kernel (tests/audit/triton_chain_kernel.py)
runs in Triton's interpreter on torch CPU tensors and is audited with ``audit.audit_chain``,
with uniforms from the host and drawn in the kernel; copies with one line changed are caught.

Triton's interpreter is chosen by ``TRITON_INTERPRET=1`` when a kernel is decorated, so the
variable is set here before triton (and the kernel's module) is imported.  Without triton
>= 3.8 the module skips with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the kernels run on the CPU

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optaccept import audit, tree  # noqa: E402

torch = pytest.importorskip("torch")
triton = pytest.importorskip(
    "triton", minversion="3.8", reason="needs triton >= 3.8 (in the dev extra) for its CPU interpreter"
)
tl = pytest.importorskip("triton.language")
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

SOURCE = Path(__file__).parent / "triton_chain_kernel.py"


def _load(path: Path, name: str):
    """The module at ``path`` under ``name`` (triton reads the kernels' source from the file)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


kernel = _load(SOURCE, "_triton_chain_kernel")
if not (
    isinstance(kernel.chain_verify_kernel, InterpretedFunction) and isinstance(tl.rand, InterpretedFunction)
):  # pragma: no cover - triton imported before TRITON_INTERPRET=1 (tests/conftest.py sets it first)
    pytest.skip("triton was imported before TRITON_INTERPRET=1 was set: no CPU interpreter", allow_module_level=True)

# One line changed in a copy of the kernel's file; each changes the law of the generated text.
BUGS = {
    # accept with the target's probability instead of the ratio p/q
    "ratio": ("accept = (qx > 0) & (u * qx < px)", "accept = (qx > 0) & (u < px)"),
    # the correction drawn from the target instead of the residual (p − q)+
    "residual": ("return tl.maximum(p - q, 0.0)", "return p"),
}


def _mutant(tmp_path: Path, bug: str):
    """A copy of the kernel's file with the one line of ``BUGS[bug]`` changed."""
    old, new = BUGS[bug]
    source = SOURCE.read_text()
    assert source.count(old) == 1, old
    path = tmp_path / f"triton_chain_kernel_{bug}.py"
    path.write_text(source.replace(old, new))
    return _load(path, f"_triton_chain_kernel_{bug}")


def chain_verifier(module, uniforms="host"):
    """``fn(P, Q, X, rng) -> output`` for ``audit.audit_chain``: one request per drafted chain,
    all in one launch of ``module.verify_chains``.

    Mapped: ``X`` (B, γ) -> ``draft_ids`` (B·γ,) int32 with the cumulative counts ``ends`` =
    γ, 2γ, …; ``Q`` (B, γ, n) -> ``draft_probs`` (B·γ, n) float32; ``P[:, :γ]`` ->
    ``target_probs`` (B·γ, n) float32; the bonus token is drawn here from ``P[:, γ]`` (engines
    draw it with their ordinary sampler).  Uniforms: ``"host"`` passes ``coins`` and ``picks``
    drawn from the audit's ``rng``; ``"kernel"`` passes a seed drawn from it, for ``tl.rand``.
    The padded output [B, γ + 1] goes back as it is; the accepted tokens are checked to be the
    drafted ones (the audit reads only their count).
    """

    def fn(P, Q, X, rng):
        B, gamma = X.shape
        n = P.shape[-1]
        cdf = np.cumsum(P[:, gamma], axis=-1)
        bonus = np.minimum((rng.random((B, 1)) * cdf[:, -1:] < cdf).argmax(-1), n - 1)
        args = dict(
            draft_ids=torch.as_tensor(X.reshape(-1), dtype=torch.int32),
            ends=torch.arange(1, B + 1, dtype=torch.int32) * gamma,
            target_probs=torch.as_tensor(P[:, :gamma], dtype=torch.float32).reshape(B * gamma, n),
            draft_probs=torch.as_tensor(Q, dtype=torch.float32).reshape(B * gamma, n),
            bonus_ids=torch.as_tensor(bonus, dtype=torch.int32),
            max_draft=gamma,
        )
        if uniforms == "host":
            coins = torch.as_tensor(rng.random(B * gamma, dtype=np.float32))
            picks = torch.as_tensor(rng.random(B * gamma, dtype=np.float32))
            out = module.verify_chains(**args, coins=coins, picks=picks)
        else:
            out = module.verify_chains(**args, seed=int(rng.integers(2**31)), offset=0)
        out = out.numpy().astype(np.int64)
        m, _ = audit.chain_outputs(out, num_draft_tokens=[gamma] * B)
        accepted = np.arange(gamma)[None, :] < m[:, None]
        assert np.array_equal(np.where(accepted, out[:, :gamma], -1), np.where(accepted, X, -1))
        return out

    return fn


# A context-dependent pair over 5 tokens, chains of 2: the interpreter runs one Triton program
# per request, so the audit is sized in chains (docs/audit.md).
GAMMA = 2
PAIR = dict(n=5, rng=7, scale=1.5, noise=1.5)
SAMPLES = 1_000


def _audit(module, uniforms="host", false_alarm=1e-6):
    target, draft = tree.synthetic_pair(**PAIR)
    fn = chain_verifier(module, uniforms)
    return audit.audit_chain(
        fn, target, draft, GAMMA, samples=SAMPLES, rng=0, declared="token", false_alarm=false_alarm, batch=500
    )


@pytest.mark.parametrize("uniforms", ["host", "kernel"])
def test_kernel_audited_lossless_at_its_exact_acceptance(uniforms):
    start = time.process_time()
    rep = _audit(kernel, uniforms)
    seconds = time.process_time() - start
    assert rep.lossless, str(rep)
    # token-level verification of one chain: the exact value from optaccept.tree's enumeration
    assert abs(rep.expected_z) < 5, str(rep)
    assert rep.accepted < rep.optimum  # block verification (the one-chain optimum) would add
    print(f"\n{SAMPLES} chains of {GAMMA} through the interpreter ({uniforms}): {seconds:.1f} s of CPU\n{rep}")


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_one_line_bugs_in_a_copy_are_caught(tmp_path, bug):
    rep = _audit(_mutant(tmp_path, bug), false_alarm=1e-3)
    print(f"\n{bug}: {rep}")
    assert not rep.lossless, str(rep)
    if bug == "ratio":  # it also accepts far less than the rule it declares
        assert rep.expected_z < -5, str(rep)
    else:  # it accepts as declared: only the law of the text gives it away
        assert abs(rep.expected_z) < 5, str(rep)


def _run(module, P, Q, X, seed=0):
    return chain_verifier(module)(P, Q, X, np.random.default_rng(seed))


def test_kernel_on_nasty_rows():
    """Cases whose outcome is known without sampling: p = q accepts every draft and appends the
    bonus; disjoint supports reject the first draft and correct from p; a draft with q = 0 at
    its token is rejected; a near-one-hot p (1 − 1e-12) equal to q accepts; requests with
    different numbers of drafts (0 included) are padded with −1."""
    rng = np.random.default_rng(1)
    B, g, n = 16, 3, 5
    p = rng.dirichlet(np.ones(n), size=(B, g + 1))
    X = rng.integers(n, size=(B, g))
    out = _run(kernel, p, p[:, :g], X)
    assert np.array_equal(out[:, :g], X)  # all accepted
    assert np.all((out[:, g] >= 0) & (out[:, g] < n))  # the bonus
    # disjoint: q on tokens {0, 1}, p on {2, 3, 4}
    q = np.zeros((B, g, n))
    q[..., :2] = 0.5
    pd = np.zeros((B, g + 1, n))
    pd[..., 2:] = rng.dirichlet(np.ones(3), size=(B, g + 1))
    Xd = rng.integers(2, size=(B, g))
    out = _run(kernel, pd, q, Xd)
    assert np.all(out[:, 0] >= 2) and np.all(out[:, 1:] == -1)
    # q = 0 at the drafted token: rejected at once, whatever p says there
    qz = np.tile([0.0, 0.25, 0.25, 0.25, 0.25], (B, g, 1))
    pz = np.tile([0.1, 0.5, 0.2, 0.1, 0.1], (B, g + 1, 1))
    out = _run(kernel, pz, qz, np.zeros((B, g), dtype=np.int64))
    assert np.all(out[:, 1:] == -1)  # rejected at the first position
    assert np.all(np.isin(out[:, 0], [0, 1]))  # corrected from (p − q)+ = (0.1, 0.25, 0, 0, 0)
    # near-one-hot, equal laws: accepted
    one = np.full((B, g + 1, n), 1e-12 / (n - 1))
    one[..., 3] = 1 - 1e-12
    out = _run(kernel, one, one[:, :g], np.full((B, g), 3))
    assert np.all(out[:, :g] == 3)
    # ragged batch, p = q so every draft is accepted: counts 2, 0, 3 under max_draft 3
    counts = [2, 0, 3]
    ids = torch.tensor([1, 2, 0, 4, 3], dtype=torch.int32)
    rows = torch.full((5, n), 1.0 / n)
    out = kernel.verify_chains(
        ids,
        torch.tensor(np.cumsum(counts), dtype=torch.int32),
        rows,
        rows,
        torch.tensor([7, 8, 9], dtype=torch.int32),
        3,
        coins=torch.full((5,), 0.5),
        picks=torch.full((5,), 0.5),
    )
    assert out.tolist() == [[1, 2, 7, -1], [8, -1, -1, -1], [0, 4, 3, 9]]


def test_vocabulary_in_blocks_gives_the_same_tokens():
    """The correction's inverse-CDF draw over the vocabulary in blocks of 4 and in one block."""
    rng = np.random.default_rng(3)
    B, g, n = 64, 2, 11
    P = rng.dirichlet(np.ones(n), size=(B, g + 1))
    Q = rng.dirichlet(np.ones(n), size=(B, g))
    args = (
        torch.as_tensor(rng.integers(n, size=B * g), dtype=torch.int32),
        torch.arange(1, B + 1, dtype=torch.int32) * g,
        torch.as_tensor(P[:, :g], dtype=torch.float32).reshape(B * g, n),
        torch.as_tensor(Q, dtype=torch.float32).reshape(B * g, n),
        torch.zeros(B, dtype=torch.int32),
        g,
    )
    a = kernel.verify_chains(*args, seed=11, block_v=4)
    b = kernel.verify_chains(*args, seed=11)
    assert torch.equal(a, b)
    assert (a[:, 0] != -1).all() and (a[:, :g] == -1).any()  # some rejections were corrected


# Random123's known-answer vectors for Philox4x32-10 (counter c0..c3, key k0 k1 -> output).
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def _philox4x32_10(counter, key):
    """Philox4x32-10 (Salmon et al., SC 2011), written from its definition in Python integers."""
    M0, M1, W0, W1, mask = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 0xFFFFFFFF
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & mask, (p0 >> 32) ^ c3 ^ k1, p0 & mask
        k0, k1 = (k0 + W0) & mask, (k1 + W1) & mask
    return c0, c1, c2, c3


@triton.jit
def _randint4x_kernel(out_ptr, seed, N: tl.constexpr):
    offsets = tl.arange(0, N)
    a, b, c, d = tl.randint4x(seed, offsets)
    tl.store(out_ptr + offsets, a)
    tl.store(out_ptr + N + offsets, b)
    tl.store(out_ptr + 2 * N + offsets, c)
    tl.store(out_ptr + 3 * N + offsets, d)


@triton.jit
def _rand_kernel(out_ptr, seed, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(out_ptr + offsets, tl.rand(seed, offsets))


def test_interpreter_random_numbers_are_philox_keyed_as_on_the_gpu():
    """``tl.randint4x(seed, offset)`` in the interpreter is Philox4x32-10 with counter
    (offset, 0, 0, 0) and key (seed mod 2³², seed div 2³²) — the stream a GPU run of the same
    kernel draws, number for number; ``tl.rand`` maps the first word to [0, 1) as Triton's
    ``uint_to_uniform_float`` does."""
    for counter, key, expected in PHILOX_KAT:  # the reference implementation first
        assert _philox4x32_10(counter, key) == expected
    N = 16
    for seed in (0, 12345, 2**40 + 7):
        got = torch.empty(4 * N, dtype=torch.int32)
        _randint4x_kernel[(1,)](got, seed, N=N)
        words = got.numpy().view(np.uint32).reshape(4, N)
        key = (seed & 0xFFFFFFFF, seed >> 32)
        for i in range(N):
            assert tuple(int(w) for w in words[:, i]) == _philox4x32_10((i, 0, 0, 0), key)
        u = torch.empty(N, dtype=torch.float32)
        _rand_kernel[(1,)](u, seed, N=N)
        signed = words[0].view(np.int32).astype(np.int64)
        expected_u = np.where(signed < 0, -signed - 1, signed).astype(np.float32) * np.float32(4.6566127342e-10)
        np.testing.assert_array_equal(u.numpy(), expected_u)


def _philox_uniform(seed, counter):
    """``tl.rand(seed, counter)`` from the reference Philox: the first word, as a signed int32
    folded to [0, 2³¹) and scaled to [0, 1) in float32."""
    word = _philox4x32_10((counter, 0, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))[0]
    signed = word - 2**32 if word >= 2**31 else word
    folded = -signed - 1 if signed < 0 else signed
    return np.float32(folded) * np.float32(4.6566127342e-10)


def test_kernel_uniforms_replay_from_the_host():
    """The kernel's own draws are ``tl.rand(seed, offset + 2j)`` (acceptance) and
    ``tl.rand(seed, offset + 2j + 1)`` (correction) for the j-th drafted token of the batch:
    the same numbers computed on the host by the reference Philox and passed as ``coins`` and
    ``picks`` give the same output, token for token."""
    rng = np.random.default_rng(5)
    B, g, n, seed, offset = 40, 2, 5, 2024, 1000
    P = rng.dirichlet(np.ones(n), size=(B, g + 1))
    Q = rng.dirichlet(np.ones(n), size=(B, g))
    args = (
        torch.as_tensor(rng.integers(n, size=B * g), dtype=torch.int32),
        torch.arange(1, B + 1, dtype=torch.int32) * g,
        torch.as_tensor(P[:, :g], dtype=torch.float32).reshape(B * g, n),
        torch.as_tensor(Q, dtype=torch.float32).reshape(B * g, n),
        torch.full((B,), 4, dtype=torch.int32),
        g,
    )
    coins = torch.tensor([_philox_uniform(seed, offset + 2 * j) for j in range(B * g)])
    picks = torch.tensor([_philox_uniform(seed, offset + 2 * j + 1) for j in range(B * g)])
    inside = kernel.verify_chains(*args, seed=seed, offset=offset)
    host = kernel.verify_chains(*args, coins=coins, picks=picks)
    assert torch.equal(inside, host)
    assert (inside[:, :g] == -1).any() and (inside[:, g] == 4).any()  # both outcomes occur
