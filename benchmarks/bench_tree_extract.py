"""Benchmark of tree extraction (``optaccept.llm.extract_trees``) with the built-in pair:
SmolLM2-135M-Instruct as target, its layer-skip copy (26 of 30 layers) as draft.

Tree extraction samples k chains of L tokens from the draft after each prompt and reads
the target's and the draft's full next-token laws at every node: the draft reads each
depth of all trees in one tree-masked pass, the target reads every node in one pass.
Speed is reported in nodes per second (one node = one drafted token, with p and q).

Baselines measured in the same run, on the same prompts:
- plain generation: Hugging Face ``generate`` of the target (sampling, KV cache), in
  generated tokens per second (it reads no distributions of a draft);
- chains one by one: the same trees, each chain's prefixes run through the target and
  the draft as separate uncached forward passes (what a tree mask saves).

    .venv/bin/python benchmarks/bench_tree_extract.py [--quick] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch

from optaccept import llm, tree
from optaccept._lib.rows import resolve_device
from optaccept.llm._extract import _encode


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
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"torch {torch.__version__}, device {device}, torch threads {torch.get_num_threads()}, "
        f"load average {load:.1f}"
    )
    n_prompts = 2 if args.quick else 6
    pair = llm.smollm2_layerskip().to(device)
    prompts = llm.builtin_prompts()[:n_prompts]
    llm.extract_trees(pair, prompts[:1], drafts=tree.TreeDraftLaw(), device=device, progress=False)  # warm-up
    print(
        "\n| k × L | trees | nodes | tree extraction (nodes/s) | chains one by one (nodes/s) | speed-up | "
        "max difference |"
    )
    print("|---|---|---|---|---|---|---|")
    enc = _encode(pair.tokenizer, prompts, None)
    total_nodes = 0
    for k, L in ((2, 2), (4, 4)) if args.quick else ((2, 2), (4, 4), (8, 4)):
        t0 = time.perf_counter()
        trees = llm.extract_trees(pair, prompts, drafts=tree.TreeDraftLaw(length=L, k=k), device=device, progress=False)
        t_tree = time.perf_counter() - t0
        nodes = trees.n_nodes - trees.n_trees  # drafted tokens (roots are the prompts)
        total_nodes += nodes
        # baseline: every node's prefix as its own forward pass of each model
        t0 = time.perf_counter()
        with torch.no_grad():
            for j in range(trees.n_nodes):
                ids = torch.tensor([enc[int(trees.prompt_index[trees.tree[j]])] + list(trees.path(j))], device=device)
                pt = torch.softmax(pair.target(ids).logits[0, -1].float(), -1)
                pair.draft(ids)
        t_chain = time.perf_counter() - t0
        err = float(np.abs(pt.cpu().numpy() - trees.target[-1]).max())
        print(
            f"| {k} × {L} | {trees.n_trees} | {nodes} | {nodes / t_tree:.1f} | {nodes / t_chain:.1f} | "
            f"{t_chain / t_tree:.1f}× | {err:.1e} |"
        )
    tok = pair.tokenizer
    tok.padding_side = "left"
    texts = [
        tok.apply_chat_template([{"role": "user", "content": p.text}], add_generation_prompt=True, tokenize=False)
        for p in prompts
    ]
    n_new = 16
    t0 = time.perf_counter()
    with torch.no_grad():
        for text in texts:  # one prompt at a time, as extract_trees
            e = tok(text, return_tensors="pt", add_special_tokens=False).to(device)
            torch.manual_seed(0)
            pair.target.generate(
                **e, do_sample=True, max_new_tokens=n_new, min_new_tokens=n_new, pad_token_id=tok.pad_token_id
            )
    t_gen = time.perf_counter() - t0
    print(
        f"\nplain generation (target, KV cache, {n_prompts} prompts × {n_new} tokens, one prompt at a time): "
        f"{n_prompts * n_new / t_gen:.1f} tokens/s"
    )


if __name__ == "__main__":
    main()
