"""What model.causal.batch keeps of each answer it writes: a row's own storage while it is written (Row), and the
finished answer as the pages read it (Written)."""
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import torch
from torch import Tensor

from model.sampling import Sampling

TOP = 10  # the likeliest words kept per step (what the pages show)


@dataclass(frozen=True)
class Written:
    """A finished row, as the pages read it. Step t reads the prompt and words[:t] and writes written[t]."""

    prompt: Tensor  # (P,) ids
    written: Tensor  # (N,) ids
    candidates: Tensor  # (N, TOP) the likeliest words' ids at each step, by score
    final: Tensor  # (N, TOP) the probability each was drawn with (after the temperature and the cuts)
    tempered: Tensor  # (N, TOP) softmax(z / T) before any cut
    attentions: Tensor  # (layers, nh, T, T), T = P + N - 1: every word read; 0 above the diagonal
    hidden: Tensor  # (layers, N, E) each block's output at the word each step read (the prompt's last, then the
    # words written but the last), before the final norm: what a step's logit lens reads


@dataclass(frozen=True)
class Joining:
    """A prompt to join a batch (Batch.join's arguments)."""

    prompt: Tensor
    steps: int
    sampling: Sampling | None = None
    stop: Collection[int] = ()
    on_word: Callable[[int], None] | None = None
    shared: int = 0


@dataclass(eq=False)
class Row:
    """One answer being written: its own storage, allocated once when it joins for its prompt and its most words (its
    keys and values; its maps, the prompt's square then one attention row per later step, end to end; its layer
    outputs and likeliest words per step), each step writing into it in place: what it holds is what it was promised
    (Batch.row_bytes), and no step leaves small blocks behind in the heap (kept per step, 40 rows' rows took 25 MB of
    heap a step, 3x what they hold). Made by Batch.join; `done` once written (or left)."""

    prompt: Tensor
    steps: int  # words written at most
    sampling: Sampling | None
    stop: frozenset[int]
    on_word: Callable[[int], None] | None
    cache: Tensor  # (layers, 2, kv, P + steps, d): its keys, then its values, laid out as a step's padded ones, so
    # that a step copies a row's keys and values of a layer at once
    maps: Tensor  # (layers, nh, P * P + the later steps' rows): the prompt's square, then step t's P + t entries
    hidden: Tensor  # (layers, steps, E) the outputs at the word each step reads
    candidates: Tensor  # (steps, k) long
    final: Tensor  # (steps, k)
    tempered: Tensor  # (steps, k)
    length: int = 0  # words in its cache
    written: list[int] = field(default_factory=list)
    done: bool = False
    left: bool = False  # taken out before its end (Batch.leave)
    generator: torch.Generator | None = None
    _filled: int = 0  # entries of `maps` written

    @property
    def keys(self) -> Tensor:
        return self.cache[:, 0]  # (layers, kv, P + steps, d)

    @property
    def values(self) -> Tensor:
        return self.cache[:, 1]

    @property
    def cache_bytes(self) -> int:
        return self.cache.nbytes

    @property
    def held_bytes(self) -> int:
        """Everything it holds."""
        return sum(t.nbytes for t in (self.cache, self.maps, self.hidden, self.candidates, self.final, self.tempered))

    def result(self) -> Written:
        """The finished row (assembled once, when it is done): its maps spread into the square the pages read."""
        if not self.done or self.left:
            raise ValueError("a row's result is read once it is written")
        P, N = self.prompt.numel(), len(self.written)
        T = P + max(0, N - 1)
        layers, nh = self.maps.shape[:2]
        attentions = self.maps.new_zeros(layers, nh, T, T)
        attentions[:, :, :P, :P] = self.maps[:, :, :P * P].view(layers, nh, P, P)
        at = P * P
        for i in range(N - 1):  # step i + 1 reads the word at position P + i
            attentions[:, :, P + i, :P + i + 1] = self.maps[:, :, at:at + P + i + 1]
            at += P + i + 1
        return Written(self.prompt, torch.tensor(self.written, dtype=torch.long), self.candidates[:N].clone(),
                       self.final[:N].clone(), self.tempered[:N].clone(), attentions, self.hidden[:, :N].clone())


def map_entries(prompt: int, steps: int) -> int:
    """A row's maps per head and layer: the prompt's square, then the rows of the steps after the first word."""
    later = max(0, steps - 1)
    return prompt * prompt + later * prompt + later * (later + 1) // 2
