"""Benchmark of optaccept.llm: extraction speed with SmolLM2-135M-Instruct and
batched α* throughput at vocabulary 49,152 on real next-token rows.

Baselines measured in the same run:
- extraction: Hugging Face ``generate`` (sampling, KV cache) of the same number of
  tokens for the same prompts, which reads no distributions;
- batched α*: the numpy core, one row at a time
  (``optimal_acceptance(p, law, method="sorted")``).

    .venv/bin/python benchmarks/bench_llm.py [--quick] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch
from _timing import best_time

import optaccept as oa
from optaccept import llm
from optaccept._lib.rows import resolve_device


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve_device("auto")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
        f"device {device}, torch threads {torch.get_num_threads()}, load average {load:.1f}"
    )
    n_prompts, n_tokens = (4, 8) if args.quick else (8, 16)
    pair = llm.ModelPair.smollm2(draft_temperature=1.5)
    prompts = llm.builtin_prompts()[:n_prompts]

    print("\n## Extraction (SmolLM2-135M-Instruct, target T=1.0, draft T=1.5, one batch)\n")
    llm.extract(pair, prompts[:1], max_new_tokens=2, device=device, progress=False)  # warm-up
    t0 = time.perf_counter()
    data = llm.extract(pair, prompts, max_new_tokens=n_tokens, device=device, progress=False)
    t_extract = time.perf_counter() - t0
    tok = pair.tokenizer
    tok.padding_side = "left"
    texts = [
        tok.apply_chat_template([{"role": "user", "content": p.text}], add_generation_prompt=True, tokenize=False)
        for p in prompts
    ]
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    with torch.no_grad():
        pair.target.generate(
            **enc, do_sample=True, max_new_tokens=n_tokens, min_new_tokens=n_tokens, pad_token_id=tok.pad_token_id
        )
    t_gen = time.perf_counter() - t0
    print("| what | tokens | seconds | tokens/s | ratio to generate |")
    print("|---|---|---|---|---|")
    print(
        f"| HF generate (baseline) | {n_prompts * n_tokens} | {t_gen:.2f} | {n_prompts * n_tokens / t_gen:.1f} | 1.0 |"
    )
    print(
        f"| llm.extract (generate + teacher forcing + p, q rows) | {len(data)} | "
        f"{t_extract:.2f} | {len(data) / t_extract:.1f} | "
        f"{(t_extract / len(data)) / (t_gen / (n_prompts * n_tokens)):.2f} |"
    )

    print("\n## Batched α* at vocabulary 49,152 (real SmolLM2 rows, float64)\n")
    B = min(len(data), 32 if args.quick else 64)
    p, q = data.rows(0, B)
    print("| draft law | k | batched positions/s | numpy core positions/s | speed-up |")
    print("|---|---|---|---|---|")
    laws = {"iid": oa.IID, "swor": oa.WithoutReplacement, "greedy": oa.Greedy}
    for k in (2, 4, 8):
        for name, law in laws.items():
            t_b = best_time(
                lambda name=name, k=k: oa.batched_optimal_acceptance(p, q, k, name, device=device), repeat=2
            )
            m = 2 if name == "swor" and k > 2 else 8
            t_c = best_time(
                lambda law=law, k=k, m=m: [
                    oa.optimal_acceptance(p[i], law(q[i], k), method="sorted") for i in range(m)
                ],
                repeat=1,
            )
            rb, rc = B / t_b, m / t_c
            print(f"| {name} | {k} | {rb:.1f} | {rc:.1f} | {rb / rc:.1f} |")
    if device.type == "cuda":
        print("\n## GPU, float32, random LLM-like rows (B = 4096)\n")
        g = torch.Generator(device=device).manual_seed(0)
        logits = torch.randn(4096, 49152, device=device, generator=g) * 3
        pt, qt = torch.softmax(logits, 1), torch.softmax(logits / 1.5, 1)
        for name in ("iid", "greedy"):
            oa.batched_optimal_acceptance(pt, qt, 4, name)
            torch.cuda.synchronize()
            t = best_time(
                lambda name=name: (oa.batched_optimal_acceptance(pt, qt, 4, name), torch.cuda.synchronize()), repeat=2
            )
            print(f"| {name} | 4 | {4096 / t:.0f} positions/s |")


if __name__ == "__main__":
    main()
