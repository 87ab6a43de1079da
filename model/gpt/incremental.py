"""The GPT one chunk of words at a time, keeping each layer's keys and values: a prompt is read once, then each new
word costs one row. Heads can be switched off, as an argument.

The same numbers as GPT.forward (the formula, model/layers.py) on the whole text, from the same modules' weights:
tests/model/test_gpt_decoding.py proves it. Nothing is stored on the model, which every session shares: the keys and
values live in a Cache the caller holds.

A head switched off has its context (softmax(q k^T / sqrt(d_k)) v) zeroed before W_O, as the translator's
ablation does: what it adds to the residual stream is gone, the other heads are untouched. Its attention row is still
computed and returned, so a page can show what it would have looked at.
"""
import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from model.attention import masked_softmax
from model.masks import BLOCKED

Head = tuple[int, int]  # (layer, head), from 0


def parse_heads(text: str) -> tuple[Head, ...]:
    """"1.2,0.3" -> ((1, 2), (0, 3)): layer.head, comma-separated; an empty text switches nothing off."""
    heads = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        layer, dot, head = part.partition(".")
        if not (dot and layer.isdigit() and head.isdigit()):
            raise ValueError(f"a head is layer.head (from 0), e.g. 1.2; not {part!r}")
        heads.append((int(layer), int(head)))
    return tuple(heads)


class HeadsOff:
    """Heads switched off, as a 0/1 factor per head of each layer."""

    def __init__(self, heads: Iterable[Head], layers: int, num_heads: int):
        self.heads = frozenset(heads)
        for layer, head in self.heads:
            if not (0 <= layer < layers and 0 <= head < num_heads):
                raise ValueError(f"no head {layer}.{head} in a model of {layers} layers x {num_heads} heads")
        self.num_heads = num_heads

    def keep(self, layer: int) -> Tensor | None:
        """(nh,) 1 for a working head, 0 for a head switched off; None when every head of the layer works."""
        off = [h for ly, h in self.heads if ly == layer]
        if not off:
            return None
        keep = torch.ones(self.num_heads)
        keep[off] = 0.0
        return keep


@dataclass(frozen=True)
class Cache:
    """Every layer's keys and values so far: (B, nh, S, hd) each."""

    keys: tuple[Tensor, ...] = ()
    values: tuple[Tensor, ...] = ()

    @property
    def length(self) -> int:
        return self.keys[0].size(2) if self.keys else 0

    def select(self, rows: Tensor) -> "Cache":
        return Cache(tuple(k[rows] for k in self.keys), tuple(v[rows] for v in self.values))


def _heads(x: Tensor, nh: int) -> Tensor:
    """(B, t, E) -> (B, nh, t, hd)."""
    B, t, E = x.shape
    return x.view(B, t, nh, E // nh).transpose(1, 2)


def extend(model, ids: Tensor, cache: Cache | None = None, off: HeadsOff | None = None,
           outputs: list | None = None):
    """Read ids (B, t) after what the cache holds. Returns (logits (B, t, V), the cache with these words, and each
    layer's attention rows of the new words (B, nh, t, S), S = words read so far). outputs: a list that gets each
    layer's output (B, t, E), before the final norm (the logit lens reads them)."""
    cache = cache or Cache()
    past, t = cache.length, ids.size(1)
    if past + t > model.max_positions:
        raise ValueError(f"{past + t} words is more than this model's {model.max_positions} positions")
    x = model.wte(ids) + model.wpe.weight[past:past + t]  # (B, t, E)
    blocked = torch.ones(t, past + t, dtype=torch.bool).triu(past + 1)  # word past+q sees keys 0 .. past+q
    mask = torch.zeros(t, past + t).masked_fill(blocked, BLOCKED)
    keys, values, rows = [], [], []
    for i, layer in enumerate(model.encoder.layers):
        attn = layer.self_attn
        h = layer.norm1(x)
        q, k, v = (_heads(p, attn.num_heads) for p in attn._project(h, h, h))  # (B, nh, t, hd)
        if past:
            k, v = torch.cat([cache.keys[i], k], dim=2), torch.cat([cache.values[i], v], dim=2)
        probs = masked_softmax((q @ k.transpose(-2, -1)) / math.sqrt(attn.head_dim), mask)  # (B, nh, t, S)
        context = probs @ v  # (B, nh, t, hd)
        keep = None if off is None else off.keep(i)
        if keep is not None:
            context = context * keep[:, None, None]
        x = x + attn.out_proj(context.transpose(1, 2).reshape(x.shape))
        x = x + layer.linear2(layer.activation(layer.linear1(layer.norm2(x))))
        if outputs is not None:
            outputs.append(x)
        keys.append(k)
        values.append(v)
        rows.append(probs)
    logits = model.lm_logits(model.encoder.norm(x))  # (B, t, V)
    return logits, Cache(tuple(keys), tuple(values)), tuple(rows)


def heads_off_for(model, heads: Iterable[Head]) -> HeadsOff | None:
    heads = list(heads)
    return HeadsOff(heads, model.config.n_layer, model.config.n_head) if heads else None


def logits_of(model, ids: Tensor, heads: Iterable[Head] = ()) -> Tensor:
    """(B, T) ids -> (B, T, V) next-word logits at every position, with `heads` switched off. A row padded on the
    right reads its words as if alone: no word sees a later one."""
    return extend(model, ids, None, heads_off_for(model, heads))[0]
