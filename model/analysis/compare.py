"""Two attention maps compared: B − A, over the tokens both have.

Two sentences need not have the same tokens. Their token sequences are aligned (difflib's longest matching blocks,
in order), and the difference is taken on the matched positions only: row i of A against row j of B when token i of
A is matched with token j of B, and the same for the columns. One sentence compared with itself (two models with one
tokenizer, two heads, two masks) matches every position."""
import difflib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Alignment:
    a: np.ndarray  # (M,) positions in A's tokens
    b: np.ndarray  # (M,) the matched positions in B's tokens

    @property
    def size(self) -> int:
        return int(self.a.size)


def align(tokens_a, tokens_b) -> Alignment:
    """The matched positions of two token sequences, in order (the identity when they are equal)."""
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    if tokens_a == tokens_b:
        same = np.arange(len(tokens_a))
        return Alignment(same, same)
    blocks = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False).get_matching_blocks()
    pairs = [(blk.a + k, blk.b + k) for blk in blocks for k in range(blk.size)]
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    return Alignment(a, b)


def difference(map_a: np.ndarray, map_b: np.ndarray, alignment: Alignment) -> np.ndarray:
    """(M, M) B − A on the matched queries (rows) and keys (columns)."""
    a = np.asarray(map_a, dtype=np.float32)[np.ix_(alignment.a, alignment.a)]
    b = np.asarray(map_b, dtype=np.float32)[np.ix_(alignment.b, alignment.b)]
    return b - a
