"""Decoding one word at a time without redoing work: the encoder runs once (and each decoder layer projects its
output into cross-attention keys and values once), then each step reads one word through the decoder with the
keys and values of the words before it (model.cache). Any heads can be switched off (model.heads).

The translator's own stacks do it (Encoder.encode, Decoder.decode with a cache): the same block, the same numbers as
Translator.forward on the prefix decoded so far (tests/model/translator/test_decoding.py). Nothing is stored on the
model, which every session shares: the caller holds the Memory and the Cache.
"""
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from model.cache import Cache, KeyValues
from model.heads import HeadsOff
from model.translator.vocabulary import PAD_ID


@dataclass(frozen=True)
class Memory:
    """The encoder's work for a batch of sources, done once: its output and each decoder layer's cross K and V."""

    output: Tensor  # (B, S, E) after the encoder's final norm
    padding: Tensor | None  # (B, S) True at <pad>; None without padding
    cross_kv: tuple[KeyValues, ...]  # per decoder layer: K, V (B, nh, S, hd)
    attentions: Tensor  # (layers, B, nh, S, S) the encoder's self-attention

    def select(self, rows: Tensor) -> "Memory":
        """The memory of some sentences of the batch (rows (B',) indices), e.g. one per beam."""
        return Memory(self.output[rows], None if self.padding is None else self.padding[rows],
                      tuple(kv.select(rows) for kv in self.cross_kv), self.attentions[:, rows])


def encode(model, src_ids: Tensor, heads_off: HeadsOff | None = None) -> Memory:
    """The encoder over src_ids (B, S) (<pad> masked out as a key), and the decoder layers' cross K and V."""
    padding = src_ids == PAD_ID  # (B, S)
    padding = padding if padding.any() else None
    encoder, decoder = model.transformer.encoder, model.transformer.decoder
    x, _ = model.source_embedding(src_ids, False)  # (B, S, E)
    x, attentions, _ = encoder.encode(x, None, padding, need_weights=True, off=heads_off)
    if encoder.norm is not None:
        x = encoder.norm(x)
    cross_kv = tuple(layer.multihead_attn.keys_values(x, x) for layer in decoder.layers)
    return Memory(x, padding, cross_kv, torch.stack(attentions))


def step(model, memory: Memory, cache: Cache, ids: Tensor, heads_off: HeadsOff | None = None,
         layer_outputs: list | None = None):
    """The previous words ids (B,) at position cache.length -> logits (B, V) for the next word, the cache one word
    longer, and this step's attention rows per decoder layer: self (layers, B, nh, t + 1) and cross
    (layers, B, nh, S). layer_outputs: if given, each decoder layer's output (B, 1, E) is appended to it (the logit
    lens, model.translator.logit_lens)."""
    t = cache.length
    emb = model.target_embedding
    x = emb.token_embedding(ids[:, None]) * math.sqrt(emb.token_embedding.embedding_dim)  # (B, 1, E)
    x = x + emb.position(t + 1)[:, t:]  # the position of this word: row t of the table
    out, _, decoded = model.transformer.decoder.decode(
        x, None, memory_key_padding_mask=memory.padding, cache=Cache(cache.self_attn, memory.cross_kv),
        off=heads_off, outputs=layer_outputs)  # no mask: a word sees itself and every word before it
    logits = model.generator(out)[:, 0]  # (B, V)
    return (logits, decoded.cache, torch.stack([a[:, :, 0] for a in decoded.attentions]),
            torch.stack([a[:, :, 0] for a in decoded.cross_attentions]))
