"""SmolLM2-135M's output layer (49,152 words x 576) read by a few rows at once: one product against the whole matrix
(F.linear, what a user of PyTorch writes) against model.llama.model's split (OUT_WORDS words a product), in the same
run, one thread (as the image runs each model thread). The numbers are checked to be the very same, bit for bit.

    .venv/bin/python bench/output_layer.py [--repeats 25]
"""
import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from model.llama.model import OUT_WORDS, SPLIT_ROWS  # noqa: E402
from model.llama.smollm2 import load, packaged  # noqa: E402

ROWS = (1, 8, 30, 40, 128)  # one answer's step; a few; a step's logit lens (30 layers); a class's step; many


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, _ = load(packaged())
    weight = model.embed_tokens.weight if model.lm_head is None else model.lm_head.weight
    print(f"output matrix {tuple(weight.shape)}, OUT_WORDS {OUT_WORDS}, split for {SPLIT_ROWS[0]}-{SPLIT_ROWS[1]} "
          f"rows; median CPU of {args.repeats}, one thread\n")
    print("| rows | one product (ms) | model.lm_logits (ms) | ratio | equal bit for bit |")
    print("|---:|---:|---:|---:|---|")
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for rows in ROWS:
            hidden = model.final_norm(torch.randn(rows, weight.size(1), generator=generator))
            whole = cpu_ms(lambda: F.linear(hidden, weight), args.repeats)
            ours = cpu_ms(lambda: model.lm_logits(hidden), args.repeats)
            equal = torch.equal(F.linear(hidden, weight), model.lm_logits(hidden))
            print(f"| {rows} | {whole:.1f} | {ours:.1f} | {ours / whole:.2f}x | {'yes' if equal else 'NO'} |")


if __name__ == "__main__":
    run(__file__, main)
