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
    probs: Tensor | None  # (layers, T, V) each layer's distribution over the next word, at each position (or not kept)
    chosen: Tensor  # (T,) the word written (or, without one, the model's own prediction: its last layer's top word)
    top_ids: Tensor  # (layers, T, TOP) each layer's most likely words, most likely first
    top_p: Tensor  # (layers, T, TOP) their probabilities
    chosen_p: Tensor  # (layers, T) each layer's probability of the chosen word
    chosen_rank: Tensor  # (layers, T) its rank among all words at that layer (1 = the most likely)

    @property
    def predicted(self) -> Tensor:
        """(layers, T) the word each layer would predict."""
        return self.top_ids[..., 0]


def logit_lens(outputs: Tensor, read_out: Callable[[Tensor], Tensor], chosen: Tensor | None = None,
               keep_probs: bool = True) -> Lens:
    """outputs (layers, T, E): each layer's output before the final norm; read_out: (.., E) -> (.., V) logits, what
    follows the last layer. chosen (T,): the words written (None: the last layer's predictions). Read a layer at a
    time: SmolLM2's 30 layers x 246 positions x 49,152 words would be 1.45 GB of probabilities at once; keep_probs=False
    keeps none of them (probs None), only what is read of them."""
    last = torch.softmax(read_out(outputs[-1]), -1)  # (T, V)
    chosen = last.argmax(-1) if chosen is None else chosen
    kept, tops, chosen_ps, ranks = [], [], [], []
    for layer in range(outputs.size(0)):
        probs = last if layer == outputs.size(0) - 1 else torch.softmax(read_out(outputs[layer]), -1)  # (T, V)
        tops.append(probs.topk(min(TOP, probs.size(-1)), dim=-1))
        chosen_p = probs.gather(-1, chosen[:, None])[:, 0]  # (T,)
        chosen_ps.append(chosen_p)
        ranks.append((probs > chosen_p[:, None]).sum(-1) + 1)
        if keep_probs:
            kept.append(probs)
    return Lens(torch.stack(kept) if keep_probs else None, chosen, torch.stack([t.indices for t in tops]),
                torch.stack([t.values for t in tops]), torch.stack(chosen_ps), torch.stack(ranks))
