"""The logit lens, for every model that writes words: what each layer would say if it were the last.

Each layer's output, at every position (a GPT's prompt, a translator's decoding steps), is put through what follows
the last layer (the final norm, if the model has one, then the output projection to the words) and a softmax. The
last layer's row is the model's own distribution; `chosen` is the word the model wrote or predicts there.
"""
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

TOP = 5  # the most likely words kept per layer and position


@dataclass(frozen=True)
class Lens:
    probs: Tensor  # (layers, T, V) each layer's distribution over the next word, at each position
    chosen: Tensor  # (T,) the word written (or, without one, the model's own prediction: its last layer's top word)
    top_ids: Tensor  # (layers, T, TOP) each layer's most likely words, most likely first
    top_p: Tensor  # (layers, T, TOP) their probabilities
    chosen_p: Tensor  # (layers, T) each layer's probability of the chosen word
    chosen_rank: Tensor  # (layers, T) its rank among all words at that layer (1 = the most likely)

    @property
    def predicted(self) -> Tensor:
        """(layers, T) the word each layer would predict."""
        return self.top_ids[..., 0]


def logit_lens(outputs: Tensor, read_out: Callable[[Tensor], Tensor], chosen: Tensor | None = None) -> Lens:
    """outputs (layers, T, E): each layer's output before the final norm; read_out: (.., E) -> (.., V) logits, what
    follows the last layer. chosen (T,): the words written (None: the last layer's predictions)."""
    probs = torch.softmax(read_out(outputs), -1)  # (layers, T, V)
    if chosen is None:
        chosen = probs[-1].argmax(-1)
    top_p, top_ids = probs.topk(min(TOP, probs.size(-1)), dim=-1)
    chosen_p = probs.gather(-1, chosen.expand(probs.size(0), -1)[..., None])[..., 0]  # (layers, T)
    chosen_rank = (probs > chosen_p[..., None]).sum(-1) + 1
    return Lens(probs, chosen, top_ids, top_p, chosen_p, chosen_rank)
