"""How a causal LM's text becomes ids and back: a `Reader`. A checkpoint's own tokenizer is a TokenizerReader; a family
with its own way of reading gives its loaded model a reader of its own (the toy GPT's words: model.gpt.reading)."""
import functools
from dataclasses import dataclass
from typing import Protocol

from model.printable import visible


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
        return Read(shown_tokens(self.tokenizer, ids), tuple(ids))

    def token(self, index: int) -> str:
        return self.tokenizer.decode([index])

    def joined(self, ids) -> str:
        return self.tokenizer.decode(list(ids))


def shown_tokens(tokenizer, ids) -> tuple[str, ...]:
    """The tokens of ids as a page shows them. A byte-level BPE tokenizer's (GPT-2's, SmolLM2's) stores each byte as a
    printable stand-in ("Ġanimal" is " animal", "æľī" is "有"): shown as the text they are, a token that holds part of
    a character as its bytes ("\\xe6\\x88", the first two of 我), control characters as their pictures. Special tokens
    (<|im_start|>) and the other tokenizers' tokens (BERT's "##ing") as they are."""
    tokens = tokenizer.convert_ids_to_tokens(list(ids))
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if type(getattr(backend, "decoder", None)).__name__ != "ByteLevel":
        return tuple(tokens)
    special, byte_of = set(tokenizer.all_special_tokens), _byte_of()
    return tuple(t if t in special or any(c not in byte_of for c in t) else
                 visible(bytes(byte_of[c] for c in t).decode("utf-8", errors="backslashreplace")) for t in tokens)


@functools.cache
def _byte_of() -> dict[str, int]:
    """Byte-level BPE's stand-in character -> the byte it stands for (GPT-2's table: printable bytes stand for
    themselves, the others for 256 + n)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1), *range(ord("\u00ae"), 256)]
    moved = [b for b in range(256) if b not in kept]
    return {**{chr(b): b for b in kept}, **{chr(256 + n): b for n, b in enumerate(moved)}}
