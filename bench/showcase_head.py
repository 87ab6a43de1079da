"""Which head of all-MiniLM-L6-v2 best shows `it` attending to what it refers to (model/analysis/showcase.py's probes).

    .venv/bin/python bench/showcase_head.py

Prints, per layer and head, the mean attention from the pronoun to its referent over the probes, the five best
heads, and how often the best head's strongest word (not [CLS], [SEP] or the pronoun) is the referent.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.record import run  # noqa: E402
from model.analysis.showcase import PROBES, SHOWCASE, best_head, pronoun_attention  # noqa: E402


def main() -> None:
    from transformers import AutoTokenizer

    from model.bert import BertModel
    from model.loading.sources import packaged_model_dir

    directory = packaged_model_dir()
    model, tokenizer = BertModel.from_pretrained(directory).eval(), AutoTokenizer.from_pretrained(directory)
    scores = pronoun_attention(model, tokenizer)
    print("mean attention pronoun -> referent over", len(PROBES), "probes (rows: layers, columns: heads)")
    for layer, row in enumerate(scores):
        print(f"layer {layer}: " + " ".join(f"{v:.2f}" for v in row))
    order = np.argsort(scores.ravel())[::-1][:5]
    print("best:", ", ".join(f"L{i // scores.shape[1]} H{i % scores.shape[1]} {scores.ravel()[i]:.3f}" for i in order))
    layer, head = best_head(scores)
    hits = 0
    for sentence, pronoun, referent in PROBES:
        ids = tokenizer(sentence, return_tensors="pt")["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids[0])
        query = max(i for i, t in enumerate(tokens) if t == pronoun)
        with torch.no_grad():
            row = model(ids).attentions[layer][0, head, query].numpy().copy()
        row[[0, len(tokens) - 1, query]] = 0
        hits += tokens[int(row.argmax())] == referent
    print(f"L{layer} H{head}: the referent is the strongest word in {hits} of {len(PROBES)} probes; "
          f"shipped default {SHOWCASE['all-MiniLM-L6-v2']}")


if __name__ == "__main__":
    run(__file__, main)
