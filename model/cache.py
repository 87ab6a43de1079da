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

    def __iter__(self):
        return iter((self.k, self.v))

    @property
    def length(self) -> int:
        return self.k.size(2)

    def select(self, rows: Tensor) -> "KeyValues":
        """The rows (B',) of the batch, e.g. one per beam."""
        return KeyValues(self.k[rows], self.v[rows])


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

