"""The translator: sentences per second, one decoding step, training time, and which head matters most.

- `--file` throughput: 2,000 held-out sentences decoded greedily in batches of 256, three ways, in rotating order:
  ours incremental (the encoder once, one new row per step: what `python -m model.translator --file` does), ours
  recomputing the whole prefix at every step (the formula's path), and torch.nn.Transformer with the same weights
  recomputing the prefix (the reference). Every way must give the same words.
- one decoding step at position 10, batch 1 and batch 256: incremental vs recomputing the prefix.
- training: the time to 99.5 % held-out exact match and the test's exact match, read from the metrics file that
  `python -m training.train` wrote (or, with --train, a fresh run into a temporary directory).
- heads: the test's exact match with each single head switched off (24 heads: encoder, decoder, cross x 2 layers x
  4 heads), on 2,000 held-out sentences drawn with a seed training never used.

    .venv/bin/python bench/translator.py [--rounds 5] [--train]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from model.cache import Cache  # noqa: E402
from model.masks import causal_mask  # noqa: E402
from model.translator import BLOCKS, SHIPPED, load_shipped  # noqa: E402
from model.translator.decoding import batch_of, formula_memory, formula_step, generate, words_of  # noqa: E402
from model.translator.incremental import encode, step  # noqa: E402
from model.translator.vocabulary import BOS_ID, EOS_ID, PAD_ID, same_translation  # noqa: E402
from training import toy_language  # noqa: E402


def reference_of(model) -> nn.Transformer:
    c = model.config
    ref = nn.Transformer(c.d_model, c.nhead, c.num_layers, c.num_layers, c.d_ff, 0.0, "relu", batch_first=True)
    ref.load_state_dict(model.transformer.state_dict())
    return ref.eval()


def reference_generate(model, ref: nn.Transformer, src: torch.Tensor) -> torch.Tensor:
    """Greedy with torch.nn.Transformer, the prefix recomputed at every step (the encoder once)."""
    padding = src == PAD_ID
    memory = ref.encoder(model.source_embedding(src, False)[0], src_key_padding_mask=padding)
    ids, done = torch.full((src.size(0), 1), BOS_ID), torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(min(model.max_positions - 1, 2 * src.size(1) + 8)):
        tgt = model.target_embedding(ids, False)[0]
        out = ref.decoder(tgt, memory, tgt_mask=causal_mask(ids.size(1)), memory_key_padding_mask=padding)
        word = model.generator(out[:, -1]).argmax(-1).masked_fill(done, PAD_ID)
        ids = torch.cat([ids, word[:, None]], 1)
        done |= word == EOS_ID
        if done.all():
            break
    return ids[:, 1:]


def throughput(model, sentences, rounds: int) -> None:
    ref = reference_of(model)
    batches = [batch_of(model, [model.source.ids(list(s.chinese())) for s in sentences[i:i + 256]])
               for i in range(0, len(sentences), 256)]
    ways = {"ours, incremental": lambda src: generate(model, src),
            "ours, prefix recomputed": lambda src: generate(model, src, incremental=False),
            "torch.nn.Transformer, prefix recomputed": lambda src: reference_generate(model, ref, src)}
    words = {name: [words_of(model, row) for src in batches for row in way(src)] for name, way in ways.items()}
    assert len({tuple(w) for w in words.values()}) == 1, "the three ways disagree"
    right = sum(same_translation(w, s.english()) for w, s in zip(words["ours, incremental"], sentences))
    times = {name: [] for name in ways}
    for r in range(rounds):
        for name in list(ways)[r % 3:] + list(ways)[:r % 3]:
            start = time.perf_counter()
            for src in batches:
                ways[name](src)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["ours, incremental"])
    print(f"\n--file: {len(sentences)} held-out sentences, batches of 256, greedy; {right} right; median of {rounds}")
    print("| way | ms per sentence | sentences per second | time / incremental |\n|---|---:|---:|---:|")
    for name, t in times.items():
        m = statistics.median(t)
        print(f"| {name} | {1000 * m / len(sentences):.3f} | {len(sentences) / m:,.0f} | {m / base:.2f} |")


def one_step(model, rounds: int) -> None:
    print("\none decoding step at position 10 (median of rounds, ms)")
    print("| batch | incremental | prefix recomputed | ratio |\n|---:|---:|---:|---:|")
    sentence = toy_language.sample(1, seed=7, held_out=True)[0]
    for batch in (1, 256):
        src = batch_of(model, [model.source.ids(list(sentence.chinese()))] * batch)
        prefix = torch.full((batch, 11), 5)
        prefix[:, 0] = BOS_ID
        memory, cache = encode(model, src), Cache()
        for t in range(10):
            _, cache, _, _ = step(model, memory, cache, prefix[:, t])
        by_formula = formula_memory(model, src)

        def recompute():
            return formula_step(model, by_formula, src, prefix)

        inc, full = [], []
        for _ in range(rounds * 20):
            start = time.perf_counter()
            step(model, memory, cache, prefix[:, 10])
            inc.append(time.perf_counter() - start)
            start = time.perf_counter()
            recompute()
            full.append(time.perf_counter() - start)
        a, b = statistics.median(inc) * 1000, statistics.median(full) * 1000
        print(f"| {batch} | {a:.3f} | {b:.3f} | {b / a:.2f} |")


def training(train: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = SHIPPED
        if train:
            directory = Path(tmp)
            subprocess.run([sys.executable, "-m", "training.train", "--out", tmp], cwd=ROOT, check=True)
        m = json.loads((directory / "metrics.json").read_text())
    reached = next((e for e in m["evaluations"] if e["exact_match"] >= 0.995), None)
    print(f"\ntraining ({'a fresh run' if train else 'the shipped metrics.json'}): seed {m['seed']}, "
          f"{m['parameters']:,} parameters, {m['threads']} threads; {m['steps']} steps in {m['train_seconds']} s")
    if reached:
        print(f"held-out validation >= 99.5 % first at step {reached['step']}, {reached['seconds']} s")
    test = m["test"]
    print(f"test: {test['exact_match']:.2%} of {test['sentences']} held-out sentences (seed {test['seed']})")


def heads(model, sentences) -> None:
    src = batch_of(model, [model.source.ids(list(s.chinese())) for s in sentences])
    rows = []
    with torch.inference_mode():
        for block in BLOCKS:
            for layer in range(model.config.num_layers):
                for head in range(model.config.nhead):
                    out = generate(model, src, heads_off=[(block, layer, head)])
                    right = sum(same_translation(words_of(model, ids), s.english()) for ids, s in zip(out, sentences))
                    rows.append((right / len(sentences), f"{block}.{layer}.{head}"))
    rows.sort()
    print(f"\nexact match with one head switched off ({len(sentences)} held-out sentences), worst first")
    print("| head off | exact match |\n|---|---:|")
    for score, name in rows:
        print(f"| {name} | {score:.2%} |")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--train", action="store_true", help="train afresh (about 1-3 minutes) instead of reading metrics")
    args = p.parse_args()
    torch.set_num_threads(2)
    model = load_shipped()
    sentences = toy_language.sample(2000, seed=777, held_out=True)
    with torch.inference_mode():
        throughput(model, sentences, args.rounds)
        one_step(model, args.rounds)
    training(args.train)
    heads(model, sentences)


if __name__ == "__main__":
    run(__file__, main)
