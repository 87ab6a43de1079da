"""A model read from a checkpoint directory (or the packaged one), with its own tokenizer: the loaded form that BERT,
the random encoder and a GPT-2 checkpoint share (model.loading.source_types.Loaded)."""
import dataclasses
import functools
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import nn

from model.causal.reading import TokenizerReader, shown_tokens
from model.facts import ModelFacts, SpecialTokens
from model.loading.source_types import Encoded, ModelSource

# A page reads at most this many tokens of a text, whatever the model's positions (SmolLM2 has 8,192): BERT's length,
# and what the pages are measured at (30 layers x 9 heads x 512^2 maps are read a layer at a time, runtime.layer_maps)
MAX_TOKENS = 512


class Tokenizer(Protocol):
    """What the app asks of a Hugging Face tokenizer."""

    def __call__(self, text: str, truncation: bool = False, max_length: int | None = None) -> dict: ...

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]: ...

    def __len__(self) -> int: ...


def with_tokenizer(facts: ModelFacts, tokenizer: Tokenizer) -> ModelFacts:
    return dataclasses.replace(facts, special_tokens=SpecialTokens.from_tokenizer(tokenizer))


def encode_text(tokenizer: Tokenizer, max_positions: int, text: str) -> Encoded:
    """Token ids with special tokens, at most max_positions of them; says whether any were cut."""
    total = len(tokenizer(text)["input_ids"])
    ids = tokenizer(text, truncation=True, max_length=max_positions)["input_ids"]
    return Encoded(torch.tensor([ids]), shown_tokens(tokenizer, ids), total > len(ids), total)


class WithTokenizer:
    """A loaded model (.model) with its tokenizer (.tokenizer): texts encoded for it, and what it is."""

    model: nn.Module
    tokenizer: Tokenizer

    @property
    def reader(self) -> TokenizerReader:
        """Text <-> ids and back, by the tokenizer (what a causal LM's writing reads and writes with)."""
        return TokenizerReader(self.tokenizer)

    def encode(self, text: str) -> Encoded:
        """Tokenise a text, cutting it to the model's maximum positions, or MAX_TOKENS."""
        return encode_text(self.tokenizer, min(self.model.max_positions, MAX_TOKENS), text)

    @functools.cached_property
    def facts(self) -> ModelFacts:
        """The model's facts with its tokenizer's special tokens."""
        return with_tokenizer(self.model.facts, self.tokenizer)

    @property
    def modules(self) -> nn.Module:
        return self.model


@dataclass(frozen=True)
class LoadedModel(WithTokenizer):
    source: ModelSource
    model: nn.Module  # BertModel, TextEncoder or GPT, in eval mode; shared, never mutated
    tokenizer: Tokenizer
