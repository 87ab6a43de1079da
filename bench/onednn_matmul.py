"""What a batch step's matrix products would cost through oneDNN with prepacked weights
(torch.ops.mkldnn._reorder_linear_weight / _linear_pointwise, what torch.compile's CPU backend emits) against
F.linear (MKL's sgemm, what the model runs), in the same run, on SmolLM2-135M's shapes: its 30 layers' seven weight
matrices (random values of the same shapes, read from memory, not cache, as a step reads them) by 1, 8, 20 and 40 rows,
and its output layer (49,152 x 576) by 30 rows (a step's logit lens) and 40. CPU ms of one pass over all the weights,
one torch thread, the median of --repeats; and the largest difference between the two products (oneDNN adds in
another order: not the same numbers bit for bit). A measurement for a decision, not a path the app takes: prepacked
weights are a second copy (537 MB for SmolLM2) unless they replace the model's own.

    .venv/bin/python bench/onednn_matmul.py [--repeats 3]
"""
import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402

LAYERS, E, FF, KV, VOCAB = 30, 576, 1536, 192, 49152
SHAPES = [(E, E), (KV, E), (KV, E), (E, E), (FF, E), (FF, E), (E, FF)]  # q, k, v, o, gate, up, down: (out, in)


def packed(weight: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.ops.mkldnn._reorder_linear_weight(weight, rows)


def onednn(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    weights = [[torch.randn(*shape) / E**0.5 for shape in SHAPES] for _ in range(LAYERS)]
    out = torch.randn(VOCAB, E) / E**0.5
    print(f"one torch thread, CPU ms, the median of {args.repeats}\n")
    print("| product | rows | F.linear, MKL (ms) | oneDNN, prepacked (ms) | ratio | largest difference |")
    print("|---|---:|---:|---:|---:|---:|")
    for rows in (1, 8, 20, 40):
        inputs = {w.shape[1]: torch.randn(rows, w.shape[1]) for w in weights[0]}
        prepacked = [[packed(w, rows) for w in layer] for layer in weights]
        mkl = cpu_ms(lambda: [F.linear(inputs[w.shape[1]], w) for layer in weights for w in layer], args.repeats)
        dnn = cpu_ms(lambda: [onednn(inputs[w.shape[1]], p) for layer, packs in zip(weights, prepacked, strict=True)
                               for w, p in zip(layer, packs, strict=True)], args.repeats)
        diff = max(float((F.linear(inputs[w.shape[1]], w) - onednn(inputs[w.shape[1]], p)).abs().max())
                   for w, p in zip(weights[0], prepacked[0], strict=True))
        print(f"| 30 layers' weights | {rows} | {mkl:.1f} | {dnn:.1f} | {dnn / mkl:.2f} | {diff:.1e} |")
    for rows in (30, 40):
        x, p = torch.randn(rows, E), packed(out, rows)
        mkl = cpu_ms(lambda: torch.cat([F.linear(x, part) for part in out.split(2048)], -1), args.repeats)
        dnn = cpu_ms(lambda: onednn(x, p), args.repeats)
        diff = float((F.linear(x, out) - onednn(x, p)).abs().max())
        print(f"| output layer, in parts of 2,048 words (the model's) | {rows} | {mkl:.1f} | {dnn:.1f} | "
              f"{dnn / mkl:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    run(__file__, main)
