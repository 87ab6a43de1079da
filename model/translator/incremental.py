"""Decoding one word at a time without redoing work: the encoder runs once, each decoder layer keeps its keys and
values, and a step computes only the new word's row. Any heads can be switched off, as an argument.

The same numbers as Translator.forward (the formula, model/attention.py and model/layers.py) on the prefix decoded
so far, read from the same modules' weights: tests/model/test_decoding.py proves it. Nothing is stored on the
model, which every session shares: the keys and values live in a Cache the caller holds.

Switching a head off zeroes its context (softmax(q k^T / sqrt(d_k)) v) before W_O, as if it had attended to
nothing: what it adds to the residual stream is gone, the other heads are untouched. Its attention row is still
computed (and recorded), so a page can show what the head would have looked at.
"""
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

from model.kinds import Block
from model.masks import BLOCKED
from model.translator.vocabulary import PAD_ID

ENCODER, DECODER, CROSS = Block  # encoder self-, decoder (causal) self-, cross-attention
BLOCKS = tuple(Block)


def parse_head(text: str) -> tuple[Block, int, int]:
    """"cross.1.2" -> ("cross", 1, 2): block, layer, head (layer and head from 0)."""
    parts = text.strip().split(".")
    if len(parts) != 3 or parts[0] not in BLOCKS or not (parts[1].isdigit() and parts[2].isdigit()):
        raise ValueError(f"a head is block.layer.head with block one of {', '.join(BLOCKS)}, e.g. cross.1.2; "
                         f"not {text!r}")
    return Block(parts[0]), int(parts[1]), int(parts[2])


class HeadsOff:
    """Which heads are switched off, as a 0/1 factor per head for each (block, layer)."""

    def __init__(self, heads: Iterable[tuple[str, int, int]], layers: int, num_heads: int):
        self.heads = frozenset(heads)
        for block, layer, head in self.heads:
            if block not in BLOCKS or not 0 <= layer < layers or not 0 <= head < num_heads:
                raise ValueError(f"no head {block}.{layer}.{head} in a model of {layers} layers x {num_heads} heads")
        self.num_heads = num_heads

    def keep(self, block: str, layer: int) -> Tensor | None:
        """(nh,) 1 for a working head, 0 for a head switched off; None when every head works."""
        off = [h for b, ly, h in self.heads if b == block and ly == layer]
        if not off:
            return None
        keep = torch.ones(self.num_heads)
        keep[off] = 0.0
        return keep


def _heads(x: Tensor, nh: int) -> Tensor:
    """(B, L, E) -> (B, nh, L, hd)."""
    B, L, E = x.shape
    return x.view(B, L, nh, E // nh).transpose(1, 2)


def _projections(mha):
    """(W_Q, b_Q), (W_K, b_K), (W_V, b_V) of a MultiHeadAttention with in_proj_weight = [W_Q; W_K; W_V]."""
    E, b = mha.embed_dim, mha.in_proj_bias
    biases = (None, None, None) if b is None else b.split(E)
    return tuple(zip(mha.in_proj_weight.split(E), biases))


def _attend(mha, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, keep: Tensor | None):
    """softmax(q k^T / sqrt(d_k) + mask) v per head, heads switched off zeroed, then W_O. q (B, nh, L, hd),
    k and v (B, nh, S, hd). Returns (B, L, E) and the probabilities (B, nh, L, S)."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))  # (B, nh, L, S)
    probs = torch.softmax(scores if mask is None else scores + mask, dim=-1)
    context = probs @ v  # (B, nh, L, hd)
    if keep is not None:
        context = context * keep.view(1, -1, 1, 1)
    B, nh, L, hd = context.shape
    return mha.out_proj(context.transpose(1, 2).reshape(B, L, nh * hd)), probs


def _residual(layer, norm, x: Tensor, sublayer):
    """Post-LN: norm(x + f(x)); Pre-LN: x + f(norm(x)). f returns (output, extra)."""
    out, extra = sublayer(norm(x) if layer.norm_first else x)
    return (x + out if layer.norm_first else norm(x + out)), extra


def _ffn(layer, norm, x: Tensor) -> Tensor:
    return _residual(layer, norm, x, lambda h: (layer.linear2(layer.activation(layer.linear1(h))), None))[0]


@dataclass
class Memory:
    """The encoder's work for a batch of sources, done once: its output and each decoder layer's cross K and V."""

    output: Tensor  # (B, S, E) after the encoder's final norm
    padding: Tensor | None  # (B, 1, 1, S) additive: -inf at <pad>
    cross_kv: list[tuple[Tensor, Tensor]]  # per decoder layer: K, V (B, nh, S, hd)
    attentions: Tensor  # (layers, B, nh, S, S) the encoder's self-attention

    def select(self, rows: Tensor) -> "Memory":
        """The memory of some sentences of the batch (rows (B',) indices), e.g. one per beam."""
        return Memory(self.output[rows], None if self.padding is None else self.padding[rows],
                      [(k[rows], v[rows]) for k, v in self.cross_kv], self.attentions[:, rows])


@dataclass
class Cache:
    """The keys and values of every word decoded so far, per decoder layer, and the next position."""

    kv: list[tuple[Tensor, Tensor]] = field(default_factory=list)  # per layer: K, V (B, nh, t, hd)
    position: int = 0

    def select(self, rows: Tensor) -> "Cache":
        return Cache([(k[rows], v[rows]) for k, v in self.kv], self.position)


def encode(model, src_ids: Tensor, heads_off: HeadsOff | None = None) -> Memory:
    """The encoder over src_ids (B, S) (<pad> masked out as a key), and the decoder layers' cross K and V."""
    padding = src_ids == PAD_ID  # (B, S)
    mask = None if not padding.any() else torch.zeros(padding.shape).masked_fill(padding, BLOCKED)[:, None, None, :]
    x, _ = model.source_embedding(src_ids, False)  # (B, S, E)
    encoder, attentions = model.transformer.encoder, []
    for i, layer in enumerate(encoder.layers):
        mha, keep = layer.self_attn, heads_off and heads_off.keep(ENCODER, i)

        def self_attention(h, mha=mha, keep=keep):
            q, k, v = (_heads(F.linear(h, w, b), mha.num_heads) for w, b in _projections(mha))
            return _attend(mha, q, k, v, mask, keep)

        x, probs = _residual(layer, layer.norm1, x, self_attention)
        attentions.append(probs)
        x = _ffn(layer, layer.norm2, x)
    if encoder.norm is not None:
        x = encoder.norm(x)
    cross_kv = []
    for layer in model.transformer.decoder.layers:
        mha = layer.multihead_attn
        _, (wk, bk), (wv, bv) = _projections(mha)
        cross_kv.append((_heads(F.linear(x, wk, bk), mha.num_heads), _heads(F.linear(x, wv, bv), mha.num_heads)))
    return Memory(x, mask, cross_kv, torch.stack(attentions))


def step(model, memory: Memory, cache: Cache, ids: Tensor, heads_off: HeadsOff | None = None,
         layer_outputs: list | None = None):
    """The previous words ids (B,) at position cache.position -> logits (B, V) for the next word, the cache one
    word longer, and this step's attention rows per decoder layer: self (layers, B, nh, t + 1) and cross
    (layers, B, nh, S). layer_outputs: if given, each decoder layer's output (B, E) is appended to it (the logit
    lens, model.translator.logit_lens)."""
    t = cache.position
    emb = model.target_embedding
    x = emb.token_embedding(ids[:, None]) * math.sqrt(emb.token_embedding.embedding_dim)  # (B, 1, E)
    x = x + emb.position(t + 1)[:, t:]  # the position of this word: row t of the table
    new_kv, self_rows, cross_rows = [], [], []
    for i, layer in enumerate(model.transformer.decoder.layers):
        mha, cross = layer.self_attn, layer.multihead_attn

        def self_attention(h, i=i, mha=mha):
            q, k, v = (_heads(F.linear(h, w, b), mha.num_heads) for w, b in _projections(mha))  # (B, nh, 1, hd)
            if cache.kv:
                k, v = torch.cat([cache.kv[i][0], k], dim=2), torch.cat([cache.kv[i][1], v], dim=2)
            new_kv.append((k, v))  # (B, nh, t + 1, hd): no mask, a word sees itself and every word before it
            return _attend(mha, q, k, v, None, heads_off and heads_off.keep(DECODER, i))

        def cross_attention(h, i=i, cross=cross):
            (wq, bq), _, _ = _projections(cross)
            k, v = memory.cross_kv[i]
            return _attend(cross, _heads(F.linear(h, wq, bq), cross.num_heads), k, v, memory.padding,
                           heads_off and heads_off.keep(CROSS, i))

        x, probs = _residual(layer, layer.norm1, x, self_attention)
        self_rows.append(probs[:, :, 0])
        x, probs = _residual(layer, layer.norm2, x, cross_attention)
        cross_rows.append(probs[:, :, 0])
        x = _ffn(layer, layer.norm3, x)
        if layer_outputs is not None:
            layer_outputs.append(x[:, 0])
    norm = model.transformer.decoder.norm
    logits = model.generator(x if norm is None else norm(x))[:, 0]  # (B, V)
    return logits, Cache(new_kv, t + 1), torch.stack(self_rows), torch.stack(cross_rows)
