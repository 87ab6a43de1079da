"""Which heads the translator needs: its exact match on fixed sentences with any heads switched off, and a ranking
of single heads and of sets of heads by how far it falls without each.

A head switched off is model.heads': its context is zeroed before W_O, so what it adds to its layer's output is gone
and the other heads are untouched (tests/model/translator/test_ablation.py proves it equals zeroing the head's columns
of W_O in a copy of the model). Scoring a set of heads is one batched greedy decoding of the sentences (the encoder
once, one new row per step). A ranking scores each set in turn: stacking every set into one batch was slower (its
rows all run as long as the most broken set's; bench/heads_and_forcing.py).

Single heads barely matter in the shipped model (bench/translator.py: 13 of its 24 heads alone change nothing), so
the ranking also holds every head of one attention block and layer, and every head of one block.
"""
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model.heads import Head
from model.heads import head_id as written_as
from model.loading.footprint import FLOAT32, OVERHEAD, SLACK
from model.translator import BLOCKS
from model.translator.decoding import batch_of, generate, max_steps, words_of
from model.translator.vocabulary import EOS_ID, chinese_tokens, english_tokens, same_translation

# The fixed held-out sentences every score is on: training.toy_language.sample(SENTENCES, SEED, held_out=True)
SENTENCES, SEED = 200, 19


def head_id(head: Head) -> str:
    """("cross", 1, 3) -> "cross.1.3", as ?off= writes it (model.heads)."""
    return written_as(Head(*head), BLOCKS)


@dataclass(frozen=True)
class HeadSet:
    """Heads switched off together: one head ("cross.1.3"), every head of one block and layer ("cross.1.*"), or
    every head of one block ("cross.*.*")."""

    name: str
    heads: tuple[Head, ...]


def head_sets(layers: int, num_heads: int) -> list[HeadSet]:
    """Every single head, then every head of each block and layer, then every head of each block."""
    sets = [HeadSet(f"{b}.{ly}.{h}", (Head(b, ly, h),)) for b in BLOCKS for ly in range(layers)
            for h in range(num_heads)]
    sets += [HeadSet(f"{b}.{ly}.*", tuple(Head(b, ly, h) for h in range(num_heads))) for b in BLOCKS
             for ly in range(layers)]
    sets += [HeadSet(f"{b}.*.*", tuple(Head(b, ly, h) for ly in range(layers) for h in range(num_heads)))
             for b in BLOCKS]
    return sets


@dataclass(frozen=True)
class Score:
    """How the translator does on the sentences with some heads switched off."""

    heads: tuple[Head, ...]  # switched off, sorted
    written: np.ndarray  # (N, T) int16: the ids each sentence was translated to (<eos>, then <pad>)
    right: np.ndarray  # (N,) bool: written exactly as expected (the toy language's checker, docs/toy-language.md)

    @property
    def exact_match(self) -> float:
        return float(self.right.mean())


def sources_of(model, chinese: Iterable[str]) -> Tensor:
    """Chinese texts -> (N, S) source ids, padded, one token per character (an unseen one is <unk>)."""
    return batch_of(model, [model.source.ids(chinese_tokens(text)[:model.max_positions]) for text in chinese])


def steps_to_check(expected: Sequence[str]) -> int:
    """Words a decoding needs to be checked: the longest expected translation and its <eos>. A sentence still
    writing after that is wrong whatever comes next, so decoding stops there (a broken model would otherwise write
    on to its limit, 2 S + 8 words, and take three times as long)."""
    return max(len(english_tokens(e)) for e in expected) + 1


def score(model, sources: Tensor, expected: Sequence[str], heads: Iterable[Head] = ()) -> Score:
    """Greedy translations of sources (N, S) with `heads` switched off, checked against the expected English; each
    written until <eos> or steps_to_check (a longer one is cut there: wrong either way)."""
    heads = tuple(sorted(set(heads)))
    with torch.inference_mode():
        written = generate(model, sources, heads_off=heads, steps=min(steps_to_check(expected),
                                                                         max_steps(model, sources)))
    right = np.array([same_translation(words_of(model, row), want) for row, want in zip(written, expected)])
    return Score(heads, written.numpy().astype(np.int16), right)


def rank(sets: Sequence[HeadSet], exact_match: Callable[[tuple[Head, ...]], float],
         before_each: Callable[[int, HeadSet], None] | None = None) -> list[tuple[HeadSet, float]]:
    """Each set's exact_match(heads) (e.g. score(...).exact_match, or a cached one), the lowest first (the set the
    translator misses most); a tie keeps the given order, so a single head comes before a set that does no worse.
    before_each(i, set) is called before each set is scored (a progress bar)."""
    found = []
    for i, head_set in enumerate(sets):
        if before_each is not None:
            before_each(i, head_set)
        found.append((head_set, exact_match(head_set.heads)))
    return sorted(found, key=lambda pair: pair[1])


def translations(model, score: Score) -> list[str]:
    """The English each sentence was translated to ("…" at the end of one cut while still writing)."""
    return [words_of(model, row.tolist()) + ("" if EOS_ID in row else " …") for row in score.written]


def decoding_bytes(config, batch: int, source: int, steps: int, vocabulary: int) -> int:
    """Peak bytes of greedy decoding (model.translator.decoding.generate, incremental) of `batch` sources of `source`
    tokens for up to `steps` words: the encoder's maps and working set, each decoder layer's cross K and V, the growing
    self-attention K and V (twice while a step concatenates them), and each step's scores."""
    d, nh, layers = config.d_model, config.nhead, config.num_layers
    encoder = layers * nh * source * source + 4 * source * d + 2 * source * config.d_ff
    cross = layers * 2 * source * d
    keys_values = 2 * layers * 2 * steps * d
    return int(SLACK * FLOAT32 * batch * (encoder + cross + keys_values + vocabulary + 2 * steps)) + OVERHEAD


def scoring_bytes(model, sources: Tensor) -> int:
    """decoding_bytes of decoding these sources to their limit (scoring stops sooner: steps_to_check)."""
    return decoding_bytes(model.config, sources.size(0), sources.size(1), max_steps(model, sources), len(model.target))
