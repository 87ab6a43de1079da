"""Our BERT forward pass (with attentions) against transformers.BertModel (eager, output_attentions=True).

For each model and length: warm both up, then time paired runs (alternating which goes first)
and report the median of the per-pair ratio ours / Hugging Face. Budget: ratio <= 1.0.

    .venv/bin/python bench/forward.py [--lengths 16 128 512] [--pairs N]
"""
import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.bert import BertModel  # noqa: E402
from model.sources import packaged_model_dir  # noqa: E402


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


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--pairs", type=int, default=0, help="paired runs per cell (default: by length)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, transformers {transformers.__version__}\n")
    print("| model | tokens | ours (ms) | HF eager (ms) | median ratio ours/HF | max abs diff |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, ours, ref in models():
        ours.eval(), ref.eval()
        for length in args.lengths:
            ids = torch.randint(1000, 20000, (1, length))
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                run_ours = lambda: ours(ids, mask)  # noqa: E731
                run_ref = lambda: ref(input_ids=ids, attention_mask=mask, output_attentions=True)  # noqa: E731
                a, b = run_ours(), run_ref()
                diff = max((x - y).abs().max().item() for x, y in zip(a.attentions, b.attentions))
                diff = max(diff, (a.last_hidden_state - b.last_hidden_state).abs().max().item())
                for _ in range(2):
                    run_ours(), run_ref()
                pairs = args.pairs or (40 if length <= 16 else 20 if length <= 128 else 10)
                t_ours, t_ref, ratios = [], [], []
                for i in range(pairs):
                    if i % 2:
                        r, o = timed(run_ref), timed(run_ours)
                    else:
                        o, r = timed(run_ours), timed(run_ref)
                    t_ours.append(o), t_ref.append(r), ratios.append(o / r)
            print(f"| {name} | {length} | {1e3 * statistics.median(t_ours):.1f} | {1e3 * statistics.median(t_ref):.1f}"
                  f" | {statistics.median(ratios):.3f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
