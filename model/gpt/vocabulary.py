"""The toy GPT's words: `<unk>`, the sentence separator `.`, then the toy English of the translator's language (its 70
words and `?`), one token per word (docs/toy-language.md).

A text is read word by word; `.` and `?` are tokens of their own wherever they stand. A word the vocabulary lacks is
tried in lower case ("The" reads as "the"; "i" as the pronoun "I"), then it is `<unk>`.
"""
import json
from dataclasses import dataclass
from pathlib import Path

UNK, SEPARATOR = "<unk>", "."
UNK_ID, SEPARATOR_ID = 0, 1


def words_of(text: str) -> list[str]:
    """'the teacher saw. I like cats?' -> ['the', 'teacher', 'saw', '.', 'I', 'like', 'cats', '?']."""
    return text.replace(".", " . ").replace("?", " ? ").split()


@dataclass(frozen=True)
class WordVocabulary:
    """Tokens by id: <unk> and . first, then the words."""

    tokens: tuple[str, ...]

    def __post_init__(self):
        if self.tokens[:2] != (UNK, SEPARATOR) or len(set(self.tokens)) != len(self.tokens):
            raise ValueError(f"a word vocabulary starts with {UNK!r}, {SEPARATOR!r} and holds each token once")
        object.__setattr__(self, "_ids", {t: i for i, t in enumerate(self.tokens)})

    @classmethod
    def of(cls, words) -> "WordVocabulary":
        return cls((UNK, SEPARATOR, *(w for w in dict.fromkeys(words) if w not in (UNK, SEPARATOR))))

    @classmethod
    def read(cls, path: Path) -> "WordVocabulary":
        tokens = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise ValueError("a vocabulary file holds a JSON list of tokens")
        return cls(tuple(tokens))

    def write(self, path: Path):
        Path(path).write_text(json.dumps(list(self.tokens), ensure_ascii=False), encoding="utf-8")

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def words(self) -> tuple[str, ...]:
        """The tokens a probe draws from: every word, `?` included; not <unk> nor the separator."""
        return self.tokens[2:]

    def known(self, word: str) -> str | None:
        """The vocabulary's spelling of a word (itself, or in lower case, "i" as "I"), or None."""
        for form in (word, word.lower(), "I" if word.lower() == "i" else None):
            if form is not None and form in self._ids:
                return form
        return None

    def ids(self, words: list[str]) -> list[int]:
        return [self._ids[w] if (w := self.known(word)) is not None else UNK_ID for word in words]

    def unknown(self, words: list[str]) -> list[str]:
        """The words read as <unk>, each once, in order."""
        return list(dict.fromkeys(w for w in words if self.known(w) is None))

    def text(self, ids) -> str:
        return " ".join(self.tokens[i] for i in ids)
