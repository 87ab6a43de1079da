"""SmolLM2-135M-Instruct, ours against transformers' reading of the same GGUF file (eager), side by side in one run:

1. a forward pass with every layer's attention, at 32, 128 and 512 tokens (median of the per-round ratios,
   each model first as often as the other). "ours" is the model with its speed path (model.fast.accelerate: the
   kernels written over their input), "formula" the tutorial's code alone. Budget: ours/HF <= 1.0.
2. greedy generation with the key/value cache: ours (model.causal.decoding.generate, each step after the prompt
   through model.compiled.CompiledStep as the app runs it; and with eager steps) against `generate`, tokens per
   second after a chat prompt. Budget: ours >= HF.
3. 48 tokens written after a chat question (its end of turn ignored), wall time. Budget: <= 2.5 s. And the answer
   itself, to its end of turn.
4. loading: the packaged GGUF's metadata read into an empty cache (first start only, in a process apart), then, in
   a fresh process, the imports, and the model (its weights de-quantized from the GGUF) and its tokenizer (every
   start). Budget: the model ready within 3 s of a server's second start.

    .venv/bin/python bench/llm.py [--lengths 32 128 512] [--rounds N] [--threads 2]
"""
import argparse
import copy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import rotating_rounds, wall  # noqa: E402
from harness.record import run  # noqa: E402
from model.causal.decoding import generate  # noqa: E402
from model.compiled import compiled_step  # noqa: E402
from model.fast import accelerate  # noqa: E402
from model.llama.smollm2 import load, packaged, prepared  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "What is attention in a Transformer? Answer in one sentence."
TEXT = ("Attention lets each token look at every other token and decide which ones matter for what comes next. "
        * 60)
_START = """
import sys, time
from pathlib import Path
t = time.perf_counter()
import torch, transformers
from model.llama.smollm2 import load, packaged
imported = time.perf_counter() - t
model, tokenizer = load(packaged(), Path(sys.argv[1]))
print(imported, time.perf_counter() - t - imported)
"""


def starts() -> tuple[float, float, float]:
    """(the metadata read into an empty cache, in its own process; the imports of a fresh process (torch,
    transformers: a server has them already, for its default model); the model and its tokenizer), seconds."""
    found = packaged()
    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        prepared(found, Path(cache))
        convert = time.perf_counter() - t
        imports, reading = map(float, subprocess.run([sys.executable, "-c", _START, cache], cwd=ROOT,
                                                  check=True, capture_output=True, text=True).stdout.split()[-2:])
    return convert, imports, reading


def forward_ratios(ours, formula, theirs, tokenizer, lengths, rounds):
    print(f"| tokens | ours (ms) | formula (ms) | HF eager (ms) | ratio ours/HF (median of {rounds} rounds) | "
          "formula/HF | max abs diff (logits) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    all_ids = tokenizer(TEXT)["input_ids"]
    for length in lengths:
        ids = torch.tensor([all_ids[:length]])
        runs = {"ours": lambda: ours(ids), "formula": lambda: formula(ids),
                "ref": lambda: theirs(ids, output_attentions=True)}
        with torch.inference_mode():
            ref = runs["ref"]().logits
            diff = max((runs[k]().logits - ref).abs().max().item() for k in ("ours", "formula"))
            for f in runs.values():
                f()
            times = rotating_rounds(runs, rounds)
        ms = {k: 1e3 * statistics.median(t) for k, t in times.items()}
        ratio = {k: statistics.median(a / b for a, b in zip(times[k], times["ref"])) for k in ("ours", "formula")}
        print(f"| {length} | {ms['ours']:.0f} | {ms['formula']:.0f} | {ms['ref']:.0f} | {ratio['ours']:.3f} | "
              f"{ratio['formula']:.3f} | {diff:.1e} |", flush=True)


def generation(ours, theirs, tokenizer, rounds):
    ids = tokenizer.apply_chat_template([{"role": "user", "content": QUESTION}], add_generation_prompt=True,
                                        return_dict=True)["input_ids"]
    prompt = torch.tensor(ids)
    theirs.generation_config.eos_token_id = None  # both write 48 tokens
    theirs.generation_config.pad_token_id = tokenizer.eos_token_id
    n = 48
    step = compiled_step(ours)
    runs = {"ours": lambda: generate(ours, prompt, n, step=step).written,
            "eager": lambda: generate(ours, prompt, n).written,
            "ref": lambda: theirs.generate(prompt[None], attention_mask=torch.ones(1, prompt.numel(), dtype=torch.long),
                                           max_new_tokens=n, do_sample=False)[0, prompt.numel():]}
    with torch.inference_mode():
        same = runs["ours"]().tolist() == runs["eager"]().tolist() == runs["ref"]().tolist()
        times = rotating_rounds(runs, rounds)
    rate = {k: n / statistics.median(t) for k, t in times.items()}
    ratio = {k: statistics.median(b / a for a, b in zip(times[k], times["ref"])) for k in ("ours", "eager")}
    print(f"\n| greedy generation, {n} tokens after a {prompt.numel()}-token chat prompt | ours | ours, eager steps | "
          "HF generate |")
    print("|---|---:|---:|---:|")
    print(f"| tokens per second (median of {rounds}) | {rate['ours']:.1f} | {rate['eager']:.1f} | "
          f"{rate['ref']:.1f} |")
    print(f"| the 48-token answer, seconds | {n / rate['ours']:.2f} | {n / rate['eager']:.2f} | "
          f"{n / rate['ref']:.2f} |")
    print(f"| ratio to HF, tokens per second (median of the rounds' ratios) | {ratio['ours']:.2f} | "
          f"{ratio['eager']:.2f} | |")
    print(f"| the same {n} tokens | {same} | | |")
    with torch.inference_mode():
        answer = generate(ours, prompt, 96, stop={tokenizer.eos_token_id}, step=step).written
        seconds = statistics.median(wall(lambda: generate(ours, prompt, 96, stop={tokenizer.eos_token_id}, step=step))
                                    for _ in range(rounds))
    print(f"\nThe answer, to its end of turn ({answer.numel()} tokens, {seconds:.2f} s, median of {rounds}): "
          f"{tokenizer.decode(answer, skip_special_tokens=True)!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[32, 128, 512])
    parser.add_argument("--rounds", type=int, default=15)  # 7 left the ratio's median +-3 % between runs
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    found = packaged()
    convert, imports, reading = starts()
    print(f"# SmolLM2-135M-Instruct, {args.threads} threads, torch {torch.__version__}, "
          f"transformers {transformers.__version__}\n")
    print(f"Start: the GGUF's metadata read into an empty cache (first start only, in a process apart) "
          f"{convert:.1f} s; a fresh process's imports of torch and transformers {imports:.1f} s; then the model "
          f"(de-quantized from the GGUF) and its tokenizer (every start) {reading:.2f} s.\n")
    formula, tokenizer = load(found)
    ours = accelerate(copy.deepcopy(formula))
    theirs = transformers.AutoModelForCausalLM.from_pretrained(
        str(found.gguf.parent), gguf_file=found.gguf.name, attn_implementation="eager", dtype=torch.float32).eval()
    forward_ratios(ours, formula, theirs, tokenizer, args.lengths, args.rounds)
    generation(ours, theirs, tokenizer, args.rounds)


if __name__ == "__main__":
    run(__file__, main)
