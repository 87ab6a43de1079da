"""A recorded forward pass beside a busy Python thread, as in a Streamlit server (page scripts, the event loop).

An eager pass takes Python's GIL back after each of its operations; beside a thread that keeps Python busy it
waits for it every time. The compiled pass (model.compiled, one traced TorchScript graph) runs its operations
without it. CPU time of the thread that runs the pass, median per pass, one torch thread (the image's
setting), all-MiniLM-L6-v2; Hugging Face's eager BertModel (output_attentions=True) for reference.

    .venv/bin/python bench/gil.py [--lengths 30 128] [--passes 40]
"""
import argparse
import platform
import sys
import time
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import Busy, cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from model.bert import BertModel  # noqa: E402
from model.compiled import CompiledPass  # noqa: E402
from model.loading.sources import packaged_model_dir  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[30, 128])
    parser.add_argument("--passes", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    directory = packaged_model_dir()
    ours = BertModel.from_pretrained(directory).eval()
    hf = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()
    compiled = CompiledPass(ours, ours.max_positions)
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.machine()}, 1 torch thread, torch {torch.__version__}, "
          f"transformers {transformers.__version__}; thread CPU ms per pass, median of {args.passes}\n")
    print("| tokens | pass | alone | beside a busy Python thread | ratio |")
    print("|---:|---|---:|---:|---:|")
    for length in args.lengths:
        ids = torch.randint(1000, 20000, (1, length))
        runs = {"ours, eager (record=True)": lambda: ours(ids, record=True),
                "ours, compiled": lambda: compiled(ids),
                "Hugging Face, eager": lambda: hf(input_ids=ids, output_attentions=True)}
        with torch.inference_mode():
            for name, run in runs.items():
                alone = cpu_ms(run, args.passes, warmup=3)
                with Busy():
                    beside = cpu_ms(run, args.passes, warmup=3)
                print(f"| {length} | {name} | {alone:.1f} | {beside:.1f} | {beside / alone:.2f} |", flush=True)


if __name__ == "__main__":
    run(__file__, main)
