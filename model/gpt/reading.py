"""How a GPT's text becomes ids and back: the toy GPT's words (model.gpt.vocabulary), or a GPT-2 checkpoint's own
byte-level BPE tokenizer read from its directory."""
from dataclasses import dataclass
from pathlib import Path

from model.gpt.vocabulary import WordVocabulary, words_of
from model.loading.tokenizers import read_tokenizer


@dataclass(frozen=True)
class Read:
    """A text read: its tokens as shown, their ids, and the words read as <unk> (each once)."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    unknown: tuple[str, ...] = ()


class WordReader:
    """The toy GPT: one token per word; `.` and `?` tokens of their own."""

    def __init__(self, vocabulary: WordVocabulary):
        self.vocabulary = vocabulary

    def read(self, text: str) -> Read:
        words = words_of(text)
        ids = self.vocabulary.ids(words)
        return Read(tuple(self.vocabulary.tokens[i] for i in ids), tuple(ids), tuple(self.vocabulary.unknown(words)))

    def token(self, index: int) -> str:
        return self.vocabulary.tokens[index]

    def joined(self, ids) -> str:
        """Written words as text: joined by spaces."""
        return " ".join(self.token(i) for i in ids)


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


def tokenizer_reader(directory: Path) -> TokenizerReader:
    """The GPT-2 tokenizer of a checkpoint directory; raises CheckpointError when it has none or it cannot be read."""
    return TokenizerReader(read_tokenizer(Path(directory)))
