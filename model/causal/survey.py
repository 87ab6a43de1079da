"""The induction circuit of any causal LM, measured over a batch of repeat probes (model.causal.probes): every head's
previous-token and induction score, the copy accuracy and the second copy's loss, and what switching off the
strongest induction heads (or, as controls, the strongest previous-token heads and as many heads drawn at random)
does to them. The same survey on the toy GPT's 2-layer circuit and on a 30-layer LLM puts the two side by side."""
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model.causal.ablation import LayerHead, rows_per_batch
from model.causal.probes import PROBE_LENGTH, copy_accuracy, copy_losses, induction_scores, previous_token_scores

TOPS = (1, 3, 5, 10)  # the strongest induction heads switched off together
CONTROLS = 5  # the strongest previous-token heads, and heads drawn at random, switched off as controls


@dataclass(frozen=True)
class Ablation:
    what: str  # "induction", "previous" or "random"
    heads: tuple[LayerHead, ...]
    accuracy: float
    second_loss: float  # nats a word, on the second copy after its first word


@dataclass(frozen=True)
class Survey:
    probes: int
    induction: np.ndarray  # (layers, heads)
    previous: np.ndarray  # (layers, heads)
    accuracy: float  # copy accuracy, the whole model
    first_loss: float  # nats a word on the first copy (random words: nothing predicts them)
    second_loss: float
    ablations: tuple[Ablation, ...]

    def strongest(self, scores: np.ndarray, k: int) -> tuple[LayerHead, ...]:
        order = np.argsort(-scores, axis=None, kind="stable")[:k]
        return tuple((int(i // scores.shape[1]), int(i % scores.shape[1])) for i in order)


def _read(model, probes: Tensor, heads=()) -> tuple[float, float, float, list[Tensor] | None]:
    """(copy accuracy, first copy's loss, second copy's loss, attention maps or None) of the probes, in batches."""
    off = model.heads_off(heads)
    batch = rows_per_batch(model, probes.size(1), probes.size(0))
    parts, maps = [], []
    for chunk in probes.split(batch):
        out = model(chunk, off=off)
        parts.append((copy_accuracy(out.logits, chunk), *copy_losses(out.logits, chunk), chunk.size(0)))
        if not heads:
            maps.append(out.attentions)
    n = probes.size(0)
    acc, first, second = (sum(p[i] * p[3] for p in parts) / n for i in range(3))
    attentions = [torch.cat([m[layer] for m in maps]) for layer in range(len(maps[0]))] if maps else None
    return acc, first, second, attentions


def survey(model, probes: Tensor, seed: int = 0) -> Survey:
    """probes (n, 2L) with L = PROBE_LENGTH; under torch.inference_mode()."""
    accuracy, first, second, attentions = _read(model, probes)
    induction = induction_scores(attentions, PROBE_LENGTH).numpy()
    previous = previous_token_scores(attentions).numpy()
    later = induction.copy()
    if later.shape[0] > 1:
        later[0] = -1  # an induction head reads what an earlier layer wrote: never in the first layer
    s = Survey(probes.size(0), induction, previous, accuracy, first, second, ())
    layers, heads = induction.shape
    picked = np.random.default_rng(seed).choice(layers * heads, min(CONTROLS, layers * heads), replace=False)
    sets = [("induction", s.strongest(later, k)) for k in TOPS if k <= layers * heads]
    sets += [("previous", s.strongest(previous, CONTROLS)),
             ("random", tuple((int(i // heads), int(i % heads)) for i in sorted(picked)))]
    ablations = []
    for what, chosen in sets:
        acc, _first, loss, _maps = _read(model, probes, chosen)
        ablations.append(Ablation(what, chosen, acc, loss))
    return Survey(s.probes, induction, previous, accuracy, first, second, tuple(ablations))
