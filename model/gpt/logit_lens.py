"""The logit lens on a GPT: what each layer would predict if it were the last.

Each layer's output, at every position, is put through what follows the last layer (the final LayerNorm, then the
output tied to the token embedding) and a softmax. The last layer's rows are the model's own distributions."""
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from model.gpt.incremental import Head, extend, heads_off_for


@dataclass(frozen=True)
class Lens:
    probs: Tensor  # (layers, T, V) each layer's distribution over the next word, at each position
    predicted: Tensor  # (layers, T) the word each layer would predict
    final: Tensor  # (T,) the model's own prediction: the last layer's
    final_p: Tensor  # (layers, T) each layer's probability of that word


def layer_outputs(model, ids: Tensor, heads: Iterable[Head] = ()) -> Tensor:
    """(layers, T, E): each layer's output for one text ids (T,), before the final norm, with `heads` switched off
    (model.gpt.incremental: the same numbers as GPT.forward)."""
    outputs = []
    extend(model, ids[None], None, heads_off_for(model, heads), outputs)
    return torch.stack([x[0] for x in outputs])


def logit_lens(model, ids: Tensor, heads: Iterable[Head] = ()) -> Lens:
    """Every layer of the GPT read out at every position of ids (T,), with `heads` switched off."""
    probs = torch.softmax(model.lm_logits(model.encoder.norm(layer_outputs(model, ids, heads))), -1)  # (layers, T, V)
    final = probs[-1].argmax(-1)  # (T,)
    return Lens(probs, probs.argmax(-1), final, probs.gather(-1, final.expand(probs.size(0), -1)[..., None])[..., 0])
