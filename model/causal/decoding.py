"""How a causal LM writes (model.causal): the next word's distribution, and a generation of N words, greedy or sampled
(model.sampling), with any heads switched off (model.heads); the prompt read once, then one row per word (the
forward pass's cache)."""
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from model.heads import Head
from model.sampling import Sampling


@dataclass(frozen=True)
class Generation:
    """A prompt and the words written after it, with each step's scores and attention."""

    prompt: Tensor  # (P,) ids
    written: Tensor  # (N,) ids
    logits: Tensor  # (N, V): word k of `written` was chosen from row k
    attentions: tuple[Tensor, ...]  # per layer (nh, P + N - 1, P + N - 1): causal self-attention of every word read

    @property
    def ids(self) -> Tensor:
        return torch.cat([self.prompt, self.written])


def logits_of(model, ids: Tensor, heads: Iterable[Head] = ()) -> Tensor:
    """(B, T) ids -> (B, T, V) next-word logits at every position, with `heads` switched off. A row padded on the
    right reads its words as if alone: no word sees a later one."""
    return model(ids, off=model.heads_off(heads)).logits


def next_word(model, ids: Tensor, heads: Iterable[Head] = ()) -> Tensor:
    """(P,) prompt ids -> (V,) the probability of each next word."""
    return torch.softmax(logits_of(model, ids[None], heads)[0, -1], -1)


def choices(logits: Tensor, sampling: Sampling | None, k: int) -> tuple[Tensor, Tensor, Tensor]:
    """What a page shows of the steps' scores (N, V): (the k most likely words' ids (N, k), by score; the probability
    each was drawn with, after the temperature and the cuts (N, k); softmax(z / T) before any cut (N, k)). Row by
    row: a step's row gives the same numbers alone or among others."""
    tempered = torch.softmax(logits if sampling is None else logits / sampling.temperature, -1)  # no copy to / 1
    final = sampling.probabilities(logits) if sampling else tempered
    candidates = logits.topk(min(k, logits.size(-1)), -1).indices
    return candidates, final.gather(-1, candidates), tempered.gather(-1, candidates)


def generate(model, prompt: Tensor, steps: int, sampling: Sampling | None = None, heads: Iterable[Head] = (),
             stop: Collection[int] = (), step: Callable | None = None,
             on_word: Callable[[int], None] | None = None) -> Generation:
    """Write `steps` words after the prompt (P,) (fewer if the context runs out, or after a word of `stop`, which is
    written: a chat model's end of turn): greedy, or drawn as sampling says with a generator seeded by its seed.
    step: the model's model.compiled.CompiledStep, which reads each word after the prompt with the same numbers;
    used when no head is switched off. on_word(id): called with each word as soon as it is chosen (a page streams the
    answer with it)."""
    if prompt.numel() == 0:
        raise ValueError("a generation starts from at least one word")
    off = model.heads_off(heads)
    steps = max(0, min(steps, model.max_positions - prompt.numel()))
    generator = None if sampling is None else torch.Generator().manual_seed(sampling.seed)
    out = model(prompt[None], off=off, use_cache=True)
    written, chosen_from, row_steps = [], [], [out.attentions]
    for k in range(steps):
        scores = out.logits[:, -1]  # (1, V)
        if sampling is None:
            word = scores.argmax(-1)
        else:
            word = torch.multinomial(sampling.probabilities(scores), 1, generator=generator)[:, 0]
        written.append(int(word))
        chosen_from.append(scores[0])
        if on_word is not None:
            on_word(written[-1])
        if written[-1] in stop:
            break
        if k + 1 < steps:
            out = (model(word[:, None], cache=out.cache, off=off) if step is None or off is not None
                   else step(word[:, None], out.cache))
            row_steps.append(out.attentions)
    total = prompt.numel() + max(0, len(written) - 1)
    attentions = []
    for layer in range(model.config.n_layer):
        full = row_steps[0][layer].new_zeros(model.config.n_head, total, total)
        start = 0
        for rows in row_steps:
            block = rows[layer][0]  # (nh, t, S)
            full[:, start:start + block.size(1), :block.size(2)] = block
            start += block.size(1)
        attentions.append(full)
    V = model.config.vocab_size
    return Generation(prompt, torch.tensor(written, dtype=torch.long),
                      torch.stack(chosen_from) if chosen_from else torch.zeros(0, V), tuple(attentions))
