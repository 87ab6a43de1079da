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
    follows the last layer. chosen (T,): the words written (None: the last layer's predictions). Read a layer and at
    most CHUNK_VALUES probabilities at a time: SmolLM2's 30 layers x 246 positions x 49,152 words would be 1.45 GB of
    them at once; keep_probs=False keeps none of them (probs None), only what is read of them."""
    (layers, t, _), rows = outputs.shape, _rows(outputs, read_out)
    if chosen is None:
        chosen = torch.cat([read_out(part).argmax(-1) for part in outputs[-1].split(rows)])
    kept, tops, chosen_ps, ranks = [], [], [], []
    for layer in range(layers):
        for part, words in zip(outputs[layer].split(rows), chosen.split(rows), strict=True):
            probs = torch.softmax(read_out(part), -1)  # (rows, V)
            tops.append(probs.topk(min(TOP, probs.size(-1)), dim=-1))
            chosen_p = probs.gather(-1, words[:, None])[:, 0]  # (rows,)
            chosen_ps.append(chosen_p)
            ranks.append((probs > chosen_p[:, None]).sum(-1) + 1)
            if keep_probs:
                kept.append(probs)

    def stacked(parts) -> Tensor:  # (layers, T, ...) from each layer's chunks in order
        return torch.cat(parts).reshape(layers, t, *parts[0].shape[1:])

    return Lens(stacked(kept) if keep_probs else None, chosen, stacked([p.indices for p in tops]),
                stacked([p.values for p in tops]), stacked(chosen_ps), stacked(ranks))


CHUNK_VALUES = 1 << 21  # probabilities read at once: 8 MB of float32 (42 positions of SmolLM2's 49,152 words)


def _rows(outputs: Tensor, read_out: Callable[[Tensor], Tensor]) -> int:
    """Positions read out at once: CHUNK_VALUES over the vocabulary's size (read from no position's logits: the
    shape without the product, which for one position of SmolLM2 costs 9 ms, a third of a step's whole lens)."""
    return max(1, CHUNK_VALUES // read_out(outputs[0, :0]).size(-1))
