"""How the toy GPT's text becomes ids and back: its words (model.gpt.vocabulary); a GPT-2 checkpoint reads with its
own byte-level BPE tokenizer (model.causal.reading.TokenizerReader) read from its directory."""
from pathlib import Path

from model.causal.reading import Read, TokenizerReader
from model.gpt.vocabulary import WordVocabulary, words_of
from model.loading.tokenizers import read_tokenizer


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


def tokenizer_reader(directory: Path) -> TokenizerReader:
    """The GPT-2 tokenizer of a checkpoint directory; raises CheckpointError when it has none or it cannot be read."""
    return TokenizerReader(read_tokenizer(Path(directory)))
