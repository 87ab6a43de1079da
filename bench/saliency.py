"""The rollout page's gradient x input saliency (model.analysis.rollout.saliency) from the run's layer inputs, against
the same saliency making its own first pass (what it did before, and what it still does without a run), in the same
run: all-MiniLM-L6-v2 (6 layers) and SmolLM2-135M (30 layers), texts of 16, 32, 64 and 128 tokens, each run as the
page runs it (runtime.runs.compute_run: its compiled pass once traced); CPU ms of this thread, median of --repeats,
and the largest difference between the two saliencies (the run's pass and saliency's own, one as exact as the other).

    .venv/bin/python bench/saliency.py [--repeats 3]
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from model.analysis.rollout import saliency  # noqa: E402
from model.kinds import SourceKey  # noqa: E402
from model.loading.sources import DEFAULT_KEY  # noqa: E402
from runtime.models import Choice, compiling, loaded_model  # noqa: E402
from runtime.runs import compute_run  # noqa: E402

WORDS = ("the animal did not cross the street because it was too tired so the students who watched it from the "
         "window of the old library wrote a long note about attention flow and the way each token draws on the "
         "others before the lesson ended and everyone went home").split()


def text_of(model_choice: Choice, tokens: int) -> str:
    """The longest prefix of a long text (WORDS, repeated) that the model reads as at most `tokens` tokens."""
    encode = loaded_model(model_choice).encode
    words = (WORDS * 8)[:tokens]
    while len(encode(" ".join(words)).input_ids[0]) > tokens:
        words = words[:-1]
    return " ".join(words)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"saliency of the sentence vector, median CPU ms of {args.repeats}\n")
    print("| model | tokens | its own first pass (ms) | the run's layer inputs (ms) | ratio | largest difference |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, key in (("all-MiniLM-L6-v2", DEFAULT_KEY), ("SmolLM2-135M", SourceKey.SMOLLM2)):
        choice = Choice(key)
        model = loaded_model(choice).model
        compiling(choice).wait()  # the compiled pass the page's runs take (None, if this torch cannot trace it)
        for tokens in (16, 32, 64, 128):
            r = compute_run(choice, text_of(choice, tokens))
            ids = torch.tensor([r.ids])
            with torch.inference_mode():
                own = saliency(model, ids, "sentence", 0)
                kept = saliency(model, ids, "sentence", 0, r.hidden)
                before = cpu_ms(lambda: saliency(model, ids, "sentence", 0), args.repeats)
                after = cpu_ms(lambda: saliency(model, ids, "sentence", 0, r.hidden), args.repeats)
            diff = max(float(np.abs(a - b).max()) for a, b in zip(own, kept, strict=True))
            print(f"| {name} | {len(r.ids)} | {before:.0f} | {after:.0f} | {after / before:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    run(__file__, main)
