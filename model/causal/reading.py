"""How a causal LM's text becomes ids and back: a `Reader`. A checkpoint's own tokenizer is a TokenizerReader; a family
with its own way of reading gives its loaded model a reader of its own (the toy GPT's words: model.gpt.reading)."""
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Read:
    """A text read: its tokens as shown, their ids, and the words read as <unk> (each once)."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    unknown: tuple[str, ...] = ()


class Reader(Protocol):
    def read(self, text: str) -> Read: ...

    def token(self, index: int) -> str:
        """One token as written."""

    def joined(self, ids) -> str:
        """Written tokens as text."""


class TokenizerReader:
    """A GPT-2 checkpoint: its byte-level BPE tokenizer (a transformers tokenizer)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def read(self, text: str) -> Read:
        ids = self.tokenizer(text)["input_ids"]
        return Read(tuple(self.tokenizer.convert_ids_to_tokens(ids)), tuple(ids))

    def token(self, index: int) -> str:
        return self.tokenizer.decode([index])

    def joined(self, ids) -> str:
        return self.tokenizer.decode(list(ids))
