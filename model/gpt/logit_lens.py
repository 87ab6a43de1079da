"""The logit lens on a GPT: what each layer would predict if it were the last.

Each layer's output, at every position, is put through what follows the last layer (the final LayerNorm, then the
output tied to the token embedding) and a softmax. The last layer's rows are the model's own distributions."""
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class Lens:
    probs: Tensor  # (layers, T, V) each layer's distribution over the next word, at each position
    predicted: Tensor  # (layers, T) the word each layer would predict
    final: Tensor  # (T,) the model's own prediction: the last layer's
    final_p: Tensor  # (layers, T) each layer's probability of that word


def layer_outputs(model, ids: Tensor) -> Tensor:
    """(layers, T, E): each layer's output for one text ids (T,), before the final norm (GPT.forward's pass)."""
    x, _ = model.embed(ids[None], None, False)
    mask = model.causal_attention_mask(ids.numel(), dtype=x.dtype)
    outputs = []
    for layer in model.encoder.layers:
        x = layer.encode(x, mask)[0]
        outputs.append(x[0])
    return torch.stack(outputs)


def logit_lens(model, ids: Tensor) -> Lens:
    """Every layer of the GPT read out at every position of ids (T,)."""
    probs = torch.softmax(model.lm_logits(model.encoder.norm(layer_outputs(model, ids))), -1)  # (layers, T, V)
    final = probs[-1].argmax(-1)  # (T,)
    return Lens(probs, probs.argmax(-1), final, probs.gather(-1, final.expand(probs.size(0), -1)[..., None])[..., 0])
