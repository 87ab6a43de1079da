"""The logit lens on the translator's decoder: what each decoder layer would say if it were the last.

At every step of the greedy decoding, each decoder layer's output is put through what follows the last layer (the
decoder's final norm, if it has one, then the output projection to the English words) and a softmax. The last
layer's row is the decoder's own distribution, the one the word was chosen from."""
from dataclasses import dataclass

import torch

from model.translator.decoding import heads_off_for, max_steps
from model.translator.incremental import Cache, encode, step
from model.translator.vocabulary import BOS_ID, EOS_ID

TOP = 5


@dataclass(frozen=True)
class Lens:
    ids: torch.Tensor  # (T,) the words written, greedy, ending with <eos> (or cut at the longest decoding)
    probs: torch.Tensor  # (layers, T, V) each layer's distribution over the next word, at each step
    top_ids: torch.Tensor  # (layers, T, TOP) the most likely words, most likely first
    top_p: torch.Tensor  # (layers, T, TOP) their probabilities
    chosen_p: torch.Tensor  # (layers, T) each layer's probability of the word finally written
    chosen_rank: torch.Tensor  # (layers, T) its rank among all words at that layer (1 = the most likely)


def logit_lens(model, src_ids: torch.Tensor, heads_off=()) -> Lens:
    """Greedy decoding of src_ids (1, S), as model.translator.decoding.generate does it, with every layer read out."""
    off = heads_off_for(model, heads_off)
    memory, cache = encode(model, src_ids, off), Cache()
    norm, word = model.transformer.decoder.norm, torch.tensor([BOS_ID])
    written, per_step = [], []
    for _ in range(max_steps(model, src_ids)):
        outputs: list = []
        logits, cache, _self, _cross = step(model, memory, cache, word, off, outputs)
        layers = torch.stack(outputs)[:, 0]  # (layers, E)
        per_step.append(torch.softmax(model.generator(layers if norm is None else norm(layers)), -1))
        word = logits.argmax(-1)
        written.append(int(word))
        if int(word) == EOS_ID:
            break
    probs = torch.stack(per_step, dim=1)  # (layers, T, V)
    ids = torch.tensor(written)
    top_p, top_ids = probs.topk(min(TOP, probs.size(-1)), dim=-1)
    chosen_p = probs.gather(-1, ids.expand(probs.size(0), -1)[..., None])[..., 0]  # (layers, T)
    chosen_rank = (probs > chosen_p[..., None]).sum(-1) + 1
    return Lens(ids, probs, top_ids, top_p, chosen_p, chosen_rank)
