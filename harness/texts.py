"""Texts of a known length that tests and benchmarks type into the app."""

WORDS = ("the quick brown fox jumps over a lazy dog while students watch attention heads learn "
         "which words matter most in every sentence they read").split()


def sentence(tokens: int) -> str:
    """A text of about `tokens` word-piece tokens ([CLS] and [SEP] included) for the MiniLM vocabulary."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(tokens - 2))
