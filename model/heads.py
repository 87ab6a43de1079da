"""Heads named and switched off, for every model here: one head type, one parser of ?off=, one HeadsOff.

A head is (attention block, layer, head), from 0. A model whose attention is all of one block (an encoder's
self-attention, a GPT's causal self-attention) writes a head as layer.head ("1.2"); an encoder-decoder as
block.layer.head ("cross.1.2"), the block one of model.kinds.Block.

A head switched off has its context (softmax(q k^T / sqrt(d_k)) v) zeroed before W_O (model.attention's keep=):
what it adds to the residual stream is gone, the other heads are untouched, and its attention row is still computed,
so a page can show what it would have looked at.
"""
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from model.kinds import Block


class Head(NamedTuple):
    block: Block
    layer: int
    head: int


def head_id(head: Head, blocks: Sequence[Block]) -> str:
    """A head as ?off= writes it: "1.2" in a model of one block, "cross.1.2" in one of several."""
    return f"{head.layer}.{head.head}" if len(blocks) == 1 else f"{head.block}.{head.layer}.{head.head}"


def parse_head(text: str, blocks: Sequence[Block]) -> Head:
    """"1.2" (a model of one block) or "cross.1.2" (block.layer.head) -> Head; ValueError says the form."""
    parts = text.strip().split(".")
    if len(parts) == 2 and len(blocks) == 1:
        parts = [blocks[0], *parts]
    if len(parts) != 3 or parts[0] not in blocks or not (parts[1].isdigit() and parts[2].isdigit()):
        if len(blocks) == 1:
            raise ValueError(f"a head is layer.head (from 0), e.g. 1.2; not {text.strip()!r}")
        raise ValueError(f"a head is block.layer.head with block one of {', '.join(blocks)}, e.g. "
                         f"{blocks[-1]}.1.2; not {text.strip()!r}")
    return Head(Block(parts[0]), int(parts[1]), int(parts[2]))


def parse_heads(text: str, blocks: Sequence[Block]) -> tuple[Head, ...]:
    """"1.2,0.3" -> (Head(..., 1, 2), Head(..., 0, 3)): comma-separated; an empty text switches nothing off."""
    return tuple(parse_head(part, blocks) for part in text.split(",") if part.strip())


class HeadsOff:
    """Heads switched off, as a 0/1 factor per head of each (block, layer)."""

    def __init__(self, heads: Iterable[Head | tuple[int, int]], layers: int, num_heads: int, blocks: Sequence[Block]):
        """heads: Heads; in a model of one block, (layer, head) pairs too."""
        self.heads = frozenset(Head(blocks[0], *h) if len(h) == 2 and len(blocks) == 1 else Head(Block(h[0]), *h[1:])
                               for h in heads)
        for block, layer, head in self.heads:
            if block not in blocks or not (0 <= layer < layers and 0 <= head < num_heads):
                name = head_id(Head(block, layer, head), blocks) if block in blocks else f"{block}.{layer}.{head}"
                raise ValueError(f"no head {name} in a model of {layers} layers x {num_heads} heads")
        self.num_heads = num_heads

    def keep(self, block: Block, layer: int) -> Tensor | None:
        """(nh,) 1 for a working head, 0 for a head switched off; None when every head of the layer works."""
        off = [h for b, ly, h in self.heads if b == block and ly == layer]
        if not off:
            return None
        keep = torch.ones(self.num_heads)
        keep[off] = 0.0
        return keep


def keep_of(off: HeadsOff | None, block: Block, layer: int) -> Tensor | None:
    return None if off is None else off.keep(block, layer)


def heads_off(heads: Iterable[Head | tuple[int, int]], layers: int, num_heads: int,
              blocks: Sequence[Block]) -> HeadsOff | None:
    """HeadsOff of these heads, or None when there are none (every head works); a head the model lacks: ValueError."""
    heads = tuple(heads)
    return HeadsOff(heads, layers, num_heads, blocks) if heads else None
