"""What incremental decoding keeps: the keys and values of the words read so far, for every model here.

A block's self-attention appends each new word's key and value to its KeyValues; a decoder's cross-attention
projects the encoder's output once into its own. The caller holds the Cache (the model, which every session
shares, keeps nothing): a prompt is read once, then each new word costs one row.
"""
from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True)
class KeyValues:
    """One attention block's keys and values, per head."""

    k: Tensor  # (B, nh, S, hd)
    v: Tensor  # (B, nh, S, hd)
    # (B,) each row's position of the next word, when the rows are at different positions (left padding: a batch of
    # answers written together, model.causal.batch); None: every row's next word is at position S. Rotary attention
    # reads it (model.llama.attention); the rows' padding is masked by the caller.
    starts: Tensor | None = None
    # (k, v) each (B, nh, S + L, hd), of which k and v are the first S columns: room made for the L new words, which
    # the attention writes in place instead of concatenating a copy (model.causal.batch, where the cache is padded
    # for the step anyway). None: the new words are concatenated.
    room: tuple[Tensor, Tensor] | None = None

    def __iter__(self):
        return iter((self.k, self.v))

    @property
    def length(self) -> int:
        return self.k.size(2)

    def select(self, rows: Tensor) -> "KeyValues":
        """The rows (B',) of the batch, e.g. one per beam."""
        return KeyValues(self.k[rows], self.v[rows], None if self.starts is None else self.starts[rows],
                         None if self.room is None else (self.room[0][rows], self.room[1][rows]))


@dataclass(frozen=True)
class Cache:
    """Every layer's self-attention keys and values so far; a decoder's cross-attention ones (the memory, projected
    once) beside them."""

    self_attn: tuple[KeyValues, ...] = ()
    cross_attn: tuple[KeyValues, ...] = ()

    @property
    def length(self) -> int:
        """Positions read so far."""
        return self.self_attn[0].length if self.self_attn else 0

    def layer(self, index: int) -> tuple[KeyValues | None, KeyValues | None]:
        """Layer `index`'s (self, cross) keys and values, None where there are none yet."""
        return (self.self_attn[index] if self.self_attn else None,
                self.cross_attn[index] if self.cross_attn else None)

    def select(self, rows: Tensor) -> "Cache":
        return Cache(tuple(kv.select(rows) for kv in self.self_attn), tuple(kv.select(rows) for kv in self.cross_attn))

