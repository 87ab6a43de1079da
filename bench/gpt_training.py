"""The toy GPT's training, beside a reference of the same size trained for the same time.

Ours: `python -m training.train_gpt` (the shipped run's metrics.json, or with --train a fresh run into a temporary
directory). The reference: a plain torch.nn decoder of the same size (nn.TransformerEncoder of Pre-LN GELU layers with
a causal mask, token and learned position embeddings, a final LayerNorm, the output tied to the token embedding:
the GPT a PyTorch user would write), trained on the same contexts (training.gpt_data, the same recipe and seed) with
the same optimiser and learning-rate schedule, for the same wall time as ours, evaluation excluded (so it gets a little
more training than ours). Both are measured on the same held-out sentences (each read alone, words 2..n) and repeat
probes; the ratio is ours / the reference.

    .venv/bin/python bench/gpt_training.py [--train]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from model.causal.ablation import mean_nll  # noqa: E402
from model.causal.probes import PROBE_SEED, PROBES, copy_accuracy, repeat_probes  # noqa: E402
from model.gpt.toy import METRICS, SHIPPED  # noqa: E402
from training import gpt_data, train_gpt  # noqa: E402


class Reference(nn.Module):
    """The GPT a PyTorch user would write with torch.nn: same sizes, same Pre-LN GELU blocks, tied output."""

    def __init__(self, vocab: int, context: int, d_model: int, heads: int, layers: int):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.size(1)
        x = self.tok(ids) + self.pos.weight[:T]
        x = self.blocks(x, mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)
        return x @ self.tok.weight.T  # (B, T, V)


def train_reference(metrics: dict, seconds: float) -> tuple[Reference, int]:
    torch.manual_seed(metrics["seed"])
    torch.set_num_threads(metrics["threads"])
    c, recipe = metrics["config"], metrics["recipe"]
    vocabulary = gpt_data.vocabulary()
    model = Reference(len(vocabulary), c["n_positions"], c["n_embd"], c["n_head"], c["n_layer"]).train()
    data = gpt_data.Contexts(vocabulary, metrics["seed"], recipe["repeat_share"], recipe["sentence_repeat"],
                             metrics["context"], tuple(recipe["repeat_words"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=metrics["learning_rate"])
    schedule = SimpleNamespace(lr=metrics["learning_rate"], warmup=metrics["warmup"],
                               decay_from=metrics.get("decay_from", 0), steps=metrics["steps"])
    started, step = time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        step += 1
        for group in optimizer.param_groups:  # ours' schedule by step (its last rate after its last step)
            group["lr"] = train_gpt.learning_rate(min(step, metrics["steps"]), schedule)
        batch = data.batch(metrics["batch"])
        loss = F.cross_entropy(model(batch[:, :-1]).flatten(0, 1), batch[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model.eval(), step


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--train", action="store_true", help="train ours afresh (about 2 minutes) instead of reading the "
                                                        "shipped metrics")
    args = p.parse_args()
    directory = SHIPPED
    if args.train:
        directory = Path(tempfile.mkdtemp())
        subprocess.run([sys.executable, "-m", "training.train_gpt", "--out", str(directory), "--no-snapshots"],
                       cwd=ROOT, check=True)
    metrics = json.loads((directory / METRICS).read_text())
    last = metrics["evaluations"][-1]
    seconds = metrics["train_seconds"]
    reference, steps = train_reference(metrics, seconds)
    vocabulary = gpt_data.vocabulary()
    rows = gpt_data.sentence_ids(vocabulary, metrics["held_out"]["sentences"], metrics["held_out"]["seed"],
                                 held_out=True)
    probes = repeat_probes(len(vocabulary.words), PROBES, PROBE_SEED)
    with torch.inference_mode():
        ref_copy = copy_accuracy(reference(probes), probes)
    ref_loss = mean_nll(reference, rows)
    print(f"same recipe (seed {metrics['seed']}, {metrics['threads']} threads), same wall time: {seconds} s")
    print("| model | steps | held-out loss (nats/word) | copy accuracy |\n|---|---:|---:|---:|")
    print(f"| ours (model.gpt, `python -m training.train_gpt`) | {metrics['steps']} | {last['held_out_loss']:.3f} | "
          f"{last['copy_accuracy']:.1%} |")
    print(f"| reference (torch.nn, the same time, no evaluations) | {steps} | {ref_loss:.3f} | {ref_copy:.1%} |")
    print(f"\nheld-out loss, ours / reference: {last['held_out_loss'] / ref_loss:.3f}")
    print(f"the jump (copy accuracy {train_gpt.JUMP[0]:.0%} -> {train_gpt.JUMP[1]:.0%}): steps "
          f"{metrics['jump']['starts']} -> {metrics['jump']['ends']}")


if __name__ == "__main__":
    run(__file__, main)
