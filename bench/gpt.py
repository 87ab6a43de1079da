"""The toy GPT: which heads carry copying (ablation), and how fast its command line reads a file and writes.

- ablation: copy accuracy on the held-out repeat probes and the loss on held-out single sentences, with nothing,
  every single head, and every pair of heads of one layer switched off (model.causal.ablation), and the circuit read
  from them (the smallest set per layer whose loss breaks copying, the cheapest for the sentences).
- `python -m model.gpt --file F --predict` and `--score` on 2,000 held-out sentences, timed as a user runs them
  (the process start and the model's loading included), and the model's part alone.
- writing 40 words: incremental (keys and values cached, one new row per word) against recomputing the whole text at
  every word (the formula's path, GPT.forward); both must write the same words.

    .venv/bin/python bench/gpt.py [--rounds 5]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from model.causal.ablation import BROKEN, ablations, circuit  # noqa: E402
from model.causal.decoding import generate, logits_of  # noqa: E402
from model.causal.probes import PROBE_SEED, PROBES, repeat_probes  # noqa: E402
from model.gpt.toy import load  # noqa: E402
from training import gpt_data, train_gpt  # noqa: E402


def ablation(model, vocabulary) -> None:
    probes = repeat_probes(len(vocabulary.words), PROBES, PROBE_SEED)
    sentences = gpt_data.sentence_ids(vocabulary, train_gpt.HELD_OUT, train_gpt.HELD_OUT_SEED, held_out=True)
    found = ablations(model, probes, sentences)
    base = found[0]
    print(f"switched off -> copy accuracy on {PROBES} held-out repeat probes, loss on {len(sentences)} held-out "
          "sentences (nats/word)")
    print("| heads off | copy accuracy | loss | loss change |\n|---|---:|---:|---:|")
    for a in found:
        print(f"| {a.name} | {a.copy_accuracy:.1%} | {a.loss:.3f} | {a.loss - base.loss:+.3f} |")
    print(f"\nthe circuit (per layer, the smallest set that leaves copy accuracy <= {BROKEN:.0%}, cheapest first):")
    for layer, a in sorted(circuit(found).items()):
        print(f"- layer {layer}: {a.name}: copy accuracy {a.copy_accuracy:.1%}, loss {a.loss:.3f} "
              f"({a.loss - base.loss:+.3f})")


def cli(vocabulary, rounds: int) -> None:
    sentences = gpt_data.sentence_ids(vocabulary, 2000, 555, held_out=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sentences.txt"
        path.write_text("".join(vocabulary.text(s) + "\n" for s in sentences))
        print(f"\n`python -m model.gpt --file F` on {len(sentences)} held-out sentences (process start and loading "
              f"included; median of {rounds})")
        print("| mode | seconds | lines out |\n|---|---:|---:|")
        for mode in ("--predict", "--score"):
            times, out = [], ""
            for _ in range(rounds):
                started = time.perf_counter()
                out = subprocess.run([sys.executable, "-m", "model.gpt", "--file", str(path), mode], cwd=ROOT,
                                     check=True, capture_output=True, text=True).stdout
                times.append(time.perf_counter() - started)
            print(f"| {mode} | {statistics.median(times):.2f} | {len(out.splitlines())} |")


def writing(model, rounds: int) -> None:
    prompt = torch.tensor([2, 3, 4])
    steps = 40

    def recomputed():
        ids = prompt
        for _ in range(steps):
            ids = torch.cat([ids, model(ids[None]).logits[0, -1].argmax()[None]])
        return ids[prompt.numel():]

    ways = {"incremental (cached keys and values)": lambda: generate(model, prompt, steps).written,
            "recomputing the text at every word": recomputed}
    times = {name: [] for name in ways}
    written = {}
    with torch.inference_mode():
        for _ in range(rounds):
            for name, way in ways.items():
                started = time.perf_counter()
                written[name] = way()
                times[name].append(time.perf_counter() - started)
    assert len({tuple(w.tolist()) for w in written.values()}) == 1, "the two ways wrote different words"
    print(f"\nwriting {steps} words after a 3-word prompt (median of {rounds})")
    print("| way | ms |\n|---|---:|")
    for name, t in times.items():
        print(f"| {name} | {1000 * statistics.median(t):.1f} |")
    print("\nall 2,000 sentences scored in one batch, the model's part alone: ", end="")
    ids = torch.randint(2, model.config.vocab_size, (2000, 16))
    with torch.inference_mode():
        started = time.perf_counter()
        logits_of(model, ids)
        print(f"{time.perf_counter() - started:.3f} s")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(2)
    model, vocabulary = load()
    with torch.inference_mode():
        ablation(model, vocabulary)
    cli(vocabulary, args.rounds)
    writing(model, args.rounds)


if __name__ == "__main__":
    run(__file__, main)
