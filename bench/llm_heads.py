"""SmolLM2-135M-Instruct's heads measured: the attention sink, previous-token heads and induction heads.

- sink score of a head: its mean attention from every token to the first one (model.causal.probes.sink_scores), on
  a paragraph of English;
- previous-token and induction scores (model.causal.probes) on repeat probes: L random tokens (ids 100 .. 40,099,
  no special token), then the same L again; and the copy accuracy (the second copy predicted from the first).

    .venv/bin/python bench/llm_heads.py [--probes 64] [--length 24] [--top 5]
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402
from model.causal.probes import (  # noqa: E402
    copy_accuracy,
    induction_scores,
    previous_token_scores,
    repeat_probes,
    sink_scores,
)
from model.llama.smollm2 import load, packaged  # noqa: E402

PARAGRAPH = ("The Transformer reads a whole sentence at once. Each word looks at every other word and decides how "
             "much of each to take: that is attention. A language model such as this one only looks back, at the "
             "words before, and writes the next word, one at a time, until its answer is complete.")


def top(scores: torch.Tensor, n: int) -> str:
    flat = scores.flatten()
    best = flat.topk(n)
    heads = scores.size(1)
    return ", ".join(f"{i // heads}.{i % heads} ({v:.2f})" for v, i in zip(best.values.tolist(), best.indices.tolist()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probes", type=int, default=64)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(2)
    model, tokenizer = load(packaged())
    ids = torch.tensor([tokenizer(PARAGRAPH)["input_ids"]])
    probes = repeat_probes(40_000, args.probes, 1234, args.length, first_id=100)
    with torch.inference_mode():
        sinks = sink_scores(model(ids).attentions)  # (layers, heads)
        out = model(probes)
        previous = previous_token_scores(out.attentions)
        induction = induction_scores(out.attentions, args.length)
        accuracy = copy_accuracy(out.logits, probes, args.length)
    print(f"# SmolLM2-135M-Instruct: 30 layers x 9 heads; sinks on a {ids.size(1)}-token paragraph, previous-token "
          f"and induction scores on {args.probes} repeat probes of 2 x {args.length} random tokens\n")
    print("| layer | mean sink score | strongest sink head | mean previous-token | mean induction |")
    print("|---:|---:|---:|---:|---:|")
    for layer in range(sinks.size(0)):
        h = int(sinks[layer].argmax())
        print(f"| {layer} | {sinks[layer].mean():.2f} | {h} ({sinks[layer, h]:.2f}) | {previous[layer].mean():.2f} | "
              f"{induction[layer].mean():.2f} |")
    print(f"\nHeads (layer.head, score), the {args.top} strongest of each kind:\n")
    print(f"- sink: {top(sinks, args.top)}")
    print(f"- previous-token: {top(previous, args.top)}")
    print(f"- induction: {top(induction, args.top)}")
    print(f"- heads with a sink score above 0.5: {int((sinks > 0.5).sum())} of {sinks.numel()}; layers 0-1 mean "
          f"{sinks[:2].mean():.2f}, layers 2-29 mean {sinks[2:].mean():.2f}")
    print(f"- copy accuracy on the second copy: {accuracy:.3f}")


if __name__ == "__main__":
    run(__file__, main)
