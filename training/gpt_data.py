"""What the toy GPT reads: 64-word contexts of toy English, and contexts where copying from context pays.

- A sentence context: toy English sentences of the training split, each followed by the separator `.`, from a
  sentence's start (so that a sentence read alone, at position 0, is what training saw); some sentences repeat one
  written earlier in the same context.
- A repeat context: a random sequence of words (8 to 16 of them, uniform over the vocabulary) written twice, then
  another, until the context is full: the only way to predict the second copy is to find the first.

Held-out sentences (training.toy_language's held-out split) are never trained on.
"""
import torch
from torch import Tensor

from model.gpt.vocabulary import SEPARATOR_ID, WordVocabulary
from model.translator.vocabulary import english_tokens
from training import toy_language

CONTEXT = 64
POOL, POOL_SEED = 20_000, 7  # training sentences drawn once, then sampled from
REPEAT_RANGE = (8, 16)  # short enough that the previous-token head is one head, not three half ones


def vocabulary() -> WordVocabulary:
    return WordVocabulary.of(toy_language.english_vocabulary())


def sentence_ids(vocab: WordVocabulary, n: int, seed: int, held_out: bool = False) -> list[list[int]]:
    """n sentences of the toy language's English (training or held-out split) as id lists."""
    return [vocab.ids(english_tokens(s.english())) for s in toy_language.sample(n, seed, held_out=held_out)]


class Contexts:
    """Batches of (B, CONTEXT + 1) ids from a seed: a share of repeat contexts, the rest sentence contexts."""

    def __init__(self, vocab: WordVocabulary, seed: int, repeat_share: float = 0.25, sentence_repeat: float = 0.1,
                 context: int = CONTEXT, repeat_range: tuple[int, int] = REPEAT_RANGE):
        self.vocab, self.context, self.repeat_range = vocab, context, repeat_range
        self.repeat_share, self.sentence_repeat = repeat_share, sentence_repeat
        self.pool = sentence_ids(vocab, POOL, POOL_SEED + seed)
        self.generator = torch.Generator().manual_seed(seed)

    def _int(self, low: int, high: int) -> int:
        """Uniform in low .. high - 1, from the seeded generator."""
        return int(torch.randint(low, high, (1,), generator=self.generator))

    def repeat_context(self, length: int) -> list[int]:
        out = []
        while len(out) < length + 1:
            words = self._int(self.repeat_range[0], self.repeat_range[1] + 1)
            seq = torch.randint(2, len(self.vocab), (words,), generator=self.generator).tolist()
            out += seq + seq
        return out[:length + 1]

    def sentence_context(self, length: int) -> list[int]:
        out, written = [], []
        while len(out) < length + 1:
            if written and float(torch.rand(1, generator=self.generator)) < self.sentence_repeat:
                sentence = written[self._int(0, len(written))]
            else:
                sentence = self.pool[self._int(0, len(self.pool))]
            written.append(sentence)
            out += sentence + [SEPARATOR_ID]
        return out[:length + 1]

    def batch(self, size: int) -> Tensor:
        """(size, context + 1) ids: contexts and the word after each."""
        length = self.context
        rows = [self.repeat_context(length) if float(torch.rand(1, generator=self.generator)) < self.repeat_share
                else self.sentence_context(length) for _ in range(size)]
        return torch.tensor(rows, dtype=torch.long)
