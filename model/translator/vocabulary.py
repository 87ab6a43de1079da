"""The translator's two vocabularies and how its texts become tokens: a Chinese character, an English word.

docs/toy-language.md: Chinese is one token per character (spaces ignored; a final 。 or ？ dropped); English one token
per word, `?` a token of its own; output lower case except the pronoun `I`.
"""
from dataclasses import dataclass

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)  # ids 0, 1, 2, 3 in both vocabularies
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)
SENTENCE_END = "。？.?"  # dropped at the end of a Chinese text (the language's 。/？ and what a keyboard types)


def chinese_tokens(text: str) -> list[str]:
    """One token per character; spaces ignored; a final 。 or ？ (or ASCII . ?) dropped."""
    chars = [c for c in text if not c.isspace()]
    if chars and chars[-1] in SENTENCE_END:
        chars.pop()
    return chars


def english_tokens(text: str) -> list[str]:
    """One token per word; `?` a token of its own."""
    return text.replace("?", " ? ").split()


def english_text(tokens: list[str]) -> str:
    """Tokens -> the sentence as the language writes it: words joined by spaces, `?` too."""
    return " ".join(tokens)


def same_translation(got: str, expected: str) -> bool:
    """The toy language's checker (docs/toy-language.md): case-insensitive, the space before `?` ignored."""
    def norm(s: str) -> str:
        return " ".join(english_tokens(s.lower()))

    return norm(got) == norm(expected)


@dataclass(frozen=True)
class Vocabulary:
    """Tokens by id: the four specials first (<pad> <bos> <eos> <unk>), then the language's tokens."""

    tokens: tuple[str, ...]

    def __post_init__(self):
        if self.tokens[:len(SPECIALS)] != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}")
        if len(set(self.tokens)) != len(self.tokens):
            raise ValueError("a vocabulary holds each token once")
        object.__setattr__(self, "_ids", {t: i for i, t in enumerate(self.tokens)})

    @classmethod
    def of(cls, words) -> "Vocabulary":
        return cls((*SPECIALS, *(w for w in dict.fromkeys(words) if w not in SPECIALS)))

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._ids

    def ids(self, tokens: list[str]) -> list[int]:
        """Token ids; a token outside the vocabulary is <unk>."""
        return [self._ids.get(t, UNK_ID) for t in tokens]

    def unknown(self, tokens: list[str]) -> list[str]:
        """The tokens this vocabulary has never seen, each once, in order."""
        return list(dict.fromkeys(t for t in tokens if t not in self._ids))

    def words(self, ids) -> list[str]:
        """Ids -> tokens, up to (not including) the first <eos>; <bos> and <pad> left out."""
        out = []
        for i in ids:
            if i == EOS_ID:
                break
            if i not in (BOS_ID, PAD_ID):
                out.append(self.tokens[i])
        return out
