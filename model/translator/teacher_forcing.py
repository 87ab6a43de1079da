"""Teacher forcing beside free generation. In training the decoder reads the whole correct translation shifted right
(<bos> first) in one pass under the causal mask: at each position it predicts the next word from the correct words
before it. Left to itself it reads its own words instead, so one wrong word changes what every later step sees.

Both are computed here the same way, word by word (model.translator.incremental, any heads switched off): teacher
forcing by replaying the reference (generate(forced=...)), which gives the numbers of the one forward pass
(tests/model/translator/test_teacher_forcing.py checks them against Translator.forward), free generation greedily.
"""
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model.translator import Translator
from model.translator.decoding import generate
from model.translator.vocabulary import BOS, EOS_ID


@dataclass(frozen=True)
class Reading:
    """One way of decoding a source: at each position, the word read, the word chosen next, its probability."""

    inputs: tuple[str, ...]  # <bos> w1 w2 ...: what the decoder read at each position
    chosen: tuple[str, ...]  # the most likely next word at each position (greedy's choice)
    chosen_p: np.ndarray  # (T,) its probability
    self_attention: np.ndarray  # (layers, heads, T, T) the decoder's causal self-attention, NaN where blocked


@dataclass(frozen=True)
class Comparison:
    """Teacher forcing (the reference read, <bos> first) and free generation (its own words read) of one source."""

    reference: tuple[str, ...]  # the correct words, then <eos>: what each position should predict
    forced: Reading  # positions 0..len(reference)-1
    reference_p: np.ndarray  # (T,) the probability teacher forcing gives the correct word: the loss is -log of it
    generated: Reading  # as many positions as it wrote words (<eos> included), up to its limit

    @property
    def forced_wrong(self) -> list[int]:
        """Positions where, given the correct words before, the most likely word is not the correct one."""
        return [i for i, (got, want) in enumerate(zip(self.forced.chosen, self.reference)) if got != want]

    @property
    def first_divergence(self) -> int | None:
        """The first position where free generation writes another word than the reference (or stops, or goes on
        past it); None when it writes the reference exactly."""
        for i, want in enumerate(self.reference):
            if i >= len(self.generated.chosen) or self.generated.chosen[i] != want:
                return i
        return None  # it wrote every word of the reference, and <eos> after them

    @property
    def loss(self) -> float:
        """The training loss of this sentence: the mean of -log p(correct word) over its positions (no smoothing)."""
        return float(-np.log(np.maximum(self.reference_p, 1e-12)).mean())


def _reading(model, decoding, inputs: tuple[str, ...]) -> Reading:
    probs = torch.softmax(decoding.logits[0], -1)  # (T, V)
    p, ids = probs.max(-1)
    maps = decoding.decoder[:, 0].numpy().copy()  # (layers, heads, T, T)
    later = np.triu(np.ones(maps.shape[-2:], dtype=bool), 1)
    maps[..., later] = np.nan  # blocked by the causal mask: a word never sees a later one
    return Reading(inputs, tuple(model.target.tokens[i] for i in ids.tolist()), p.numpy(), maps)


def compare(model: Translator, src_ids: Tensor, reference_ids: list[int], heads_off=()) -> Comparison:
    """src_ids (1, S) and the reference's word ids (without <bos>/<eos>; cut to fit the model's positions)."""
    reference_ids = [*reference_ids[:model.max_positions - 1], EOS_ID][:model.max_positions]
    target = torch.tensor([reference_ids])
    with torch.inference_mode():
        forced = generate(model, src_ids, heads_off=heads_off, record=True, forced=target)
        free = generate(model, src_ids, heads_off=heads_off, record=True)
    words = tuple(model.target.tokens[i] for i in reference_ids)
    reference_p = torch.softmax(forced.logits[0], -1)[torch.arange(len(reference_ids)), target[0]].numpy()
    written = free.ids[0].tolist()
    ended = written.index(EOS_ID) + 1 if EOS_ID in written else len(written)
    generated_inputs = (BOS, *(model.target.tokens[i] for i in written[:ended - 1]))
    return Comparison(words, _reading(model, forced, (BOS, *words[:-1])), reference_p,
                      _cut(_reading(model, free, generated_inputs), ended))


def _cut(reading: Reading, n: int) -> Reading:
    return Reading(reading.inputs[:n], reading.chosen[:n], reading.chosen_p[:n],
                   reading.self_attention[..., :n, :n])
