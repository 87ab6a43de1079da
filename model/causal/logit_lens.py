"""The logit lens on a causal LM (model.lens): each block's output at every position read out as the model reads out
its last (its final norm, then its output layer: model.causal.CausalLM.read_out)."""
from collections.abc import Iterable

import torch
from torch import Tensor

from model.heads import Head
from model.lens import Lens
from model.lens import logit_lens as read_layers


def layer_outputs(model, ids: Tensor, heads: Iterable[Head] = ()) -> Tensor:
    """(layers, T, E): each block's output for one text ids (T,), before the final norm, with `heads` off."""
    out = model(ids[None], until=model.config.n_layer - 1, output_hidden_states=True, off=model.heads_off(heads))
    return torch.stack(out.hidden_states[1:])[:, 0]


def logit_lens(model, ids: Tensor, heads: Iterable[Head] = (), keep_probs: bool = True) -> Lens:
    """Every block of the model read out at every position of ids (T,), with `heads` switched off; keep_probs=False:
    without the (layers, T, V) probabilities (model.lens.logit_lens)."""
    return read_layers(layer_outputs(model, ids, heads), model.read_out, keep_probs=keep_probs)
