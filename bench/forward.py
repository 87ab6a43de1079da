"""Our BERT forward pass (with attentions) against transformers.BertModel (eager, output_attentions=True).

"ours" is the model with its speed path chosen (model.fast.accelerate); "formula" the same weights in the
tutorial's code alone (model/attention.py, model/layers.py). For each model and length: warm all three up, then
time rounds in rotating order and report the median of the per-round ratios to Hugging Face. Budget: ours/HF <= 1.0.

    .venv/bin/python bench/forward.py [--lengths 16 128 512] [--pairs N]
"""
import argparse
import copy
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import rotating_rounds  # noqa: E402
from harness.record import run  # noqa: E402
from model.bert import BertModel  # noqa: E402
from model.fast import accelerate  # noqa: E402
from model.loading.sources import packaged_model_dir  # noqa: E402


def models():
    """(name, ours, reference) for the packaged MiniLM and a random bert-base-sized checkpoint."""
    d = packaged_model_dir()
    yield "all-MiniLM-L6-v2", BertModel.from_pretrained(d), transformers.BertModel.from_pretrained(
        d, attn_implementation="eager")
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        transformers.BertModel(transformers.BertConfig()).save_pretrained(tmp)  # 768 wide, 12 layers, 12 heads
        yield "bert-base (random)", BertModel.from_pretrained(tmp), transformers.BertModel.from_pretrained(
            tmp, attn_implementation="eager")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--pairs", type=int, default=0, help="paired runs per cell (default: by length)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, transformers {transformers.__version__}\n")
    print("| model | tokens | ours (ms) | formula (ms) | HF eager (ms) | median ratio ours/HF | formula/HF | "
          "max abs diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, formula, ref in models():
        formula.eval(), ref.eval()
        ours = accelerate(copy.deepcopy(formula))
        for length in args.lengths:
            ids = torch.randint(1000, 20000, (1, length))
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                runs = {"ours": lambda: ours(ids, mask), "formula": lambda: formula(ids, mask),
                        "ref": lambda: ref(input_ids=ids, attention_mask=mask, output_attentions=True)}
                out = {k: run() for k, run in runs.items()}
                diff = max((x - y).abs().max().item() for k in ("ours", "formula")
                           for x, y in zip(out[k].attentions, out["ref"].attentions))
                diff = max([diff] + [(out[k].last_hidden_state - out["ref"].last_hidden_state).abs().max().item()
                                     for k in ("ours", "formula")])
                for _ in range(2):
                    for run in runs.values():
                        run()
                rounds = args.pairs or (40 if length <= 16 else 20 if length <= 128 else 10)
                times = rotating_rounds(runs, rounds)
            ms = {k: 1e3 * statistics.median(t) for k, t in times.items()}
            ratio = {k: statistics.median(a / b for a, b in zip(times[k], times["ref"])) for k in ("ours", "formula")}
            print(f"| {name} | {length} | {ms['ours']:.1f} | {ms['formula']:.1f} | {ms['ref']:.1f} | "
                  f"{ratio['ours']:.3f} | {ratio['formula']:.3f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    run(__file__, main)
