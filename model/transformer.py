"""Stacks of blocks: Encoder, Decoder and the encoder-decoder Transformer, as torch.nn has them."""
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.cache import Cache
from model.heads import HeadsOff, keep_of
from model.kinds import Block
from model.layers import DecoderLayer, EncoderLayer, _causal_or, _layout, _restore, _unsqueeze
from model.masks import square_subsequent_mask
from model.recording import Stack, inputs_and_maps
from model.trace import StackTrace, TransformerTrace


def _padding_positions(key_padding_mask: Tensor) -> Tensor:
    """(B, S) bool, True at padding, for a bool or float key padding mask."""
    return key_padding_mask if key_padding_mask.dtype == torch.bool else key_padding_mask != 0


class Encoder(Stack):
    """N encoder layers and an optional final norm (as nn.TransformerEncoder)."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__(encoder_layer, num_layers, norm)
        self.mask_check = mask_check
        self.enable_nested_tensor = enable_nested_tensor
        attn = encoder_layer.self_attn
        self.use_nested_tensor = enable_nested_tensor and isinstance(encoder_layer, EncoderLayer) and not (
            encoder_layer.norm_first or not attn.batch_first or not attn._qkv_same_embed_dim
            or attn.in_proj_bias is None or not encoder_layer.activation_relu_or_gelu
            or encoder_layer.norm1.eps != encoder_layer.norm2.eps or attn.num_heads % 2 == 1)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None, *, record=False):
        """As nn.TransformerEncoder.forward; with record=True returns (out, StackTrace)."""
        batch_first = self.layers[0].self_attn.batch_first
        x, unbatched = _layout(src, batch_first)
        kpm = _unsqueeze(src_key_padding_mask, unbatched)
        out, _, trace = self.encode(x, _causal_or(mask, bool(is_causal), x.size(1), x.size(1), x.device), kpm, record)
        if not unbatched and self._zeroes_padding(src, mask, kpm):
            out = out.masked_fill(_padding_positions(kpm).unsqueeze(-1), 0.0)
        if self.norm is not None:
            out = self.norm(out)
        if record:
            trace = StackTrace(None, trace.layers, out)
        out = _restore(out, batch_first, unbatched)
        return (out, trace) if record else out

    def encode(self, x, attn_mask=None, key_padding_mask=None, record=False, embeddings=None, need_weights=False,
               until=None, off: HeadsOff | None = None, outputs: list | None = None):
        """x (B, T, E) through every layer, or layers 0..until (no final norm), with the heads `off` switched off.
        outputs: a list that gets each layer's output (B, T, E) (the logit lens).

        Returns (B, T, E), per-layer attention probabilities (B, nh, T, T) or None, StackTrace or None.
        """
        maps, traces = [], []
        for i, layer in enumerate(self.layers_until(until)):
            out = layer.run(x, mask=attn_mask, padding=key_padding_mask, keep=keep_of(off, Block.ENCODER, i),
                            record=record)
            x = out.x
            maps.append(out.attention)
            traces.append(out.trace)
            if outputs is not None:
                outputs.append(x)
        trace = StackTrace(embeddings, tuple(traces), x) if record else None
        return x, tuple(maps) if need_weights else None, trace

    def inputs_and_attentions(self, x, attn_mask=None, key_padding_mask=None,
                              maps: bool = True) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """Each layer's input and attention probabilities as encode(x, record=True) computes them, bit for bit,
        without the last layer's feed-forward, which no attention map depends on: with d_ff = 4E, two thirds of
        that layer's multiply-adds (2 E d_ff of 4 E^2 + 2 E d_ff per token).

        Returns inputs (layers, B, T, E), probabilities (layers, B, nh, T, T), and the additive mask every layer
        applied (B|1, nh|1, T, T) or None. maps=False: no probabilities (None).
        """
        inputs, probs, _, last = inputs_and_maps(self.layers, x, maps, mask=attn_mask, padding=key_padding_mask)
        return inputs, probs, last.self_attn.mask

    def _zeroes_padding(self, src: Tensor, mask, key_padding_mask) -> bool:
        """Whether PyTorch would take its nested-tensor path here, which returns 0 at padded positions.

        nn.TransformerEncoder does so in inference with a left-aligned padding mask and no
        attention mask; we reproduce the result (not the speed-up) so outputs stay equal.
        """
        first = self.layers[0]
        if not (self.use_nested_tensor and torch.backends.mha.get_fastpath_enabled() and not first.training
                and key_padding_mask is not None and mask is None and not torch.is_autocast_enabled()):
            return False
        keep = ~_padding_positions(key_padding_mask)
        if self.mask_check and not bool((keep[:, 1:] <= keep[:, :-1]).all()):  # padding only at the end
            return False
        args = [src, *first.self_attn.parameters(), *first.norm1.parameters(), *first.norm2.parameters(),
                *first.linear1.parameters(), *first.linear2.parameters()]
        return not (torch.is_grad_enabled() and any(t.requires_grad for t in args))


class Decoder(Stack):
    """N decoder layers and an optional final norm (as nn.TransformerDecoder)."""

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False, *, record=False):
        """As nn.TransformerDecoder.forward; with record=True returns (out, StackTrace)."""
        batch_first = self.layers[0].self_attn.batch_first
        x, unbatched = _layout(tgt, batch_first)
        mem, _ = _layout(memory, batch_first)
        T, S = x.size(1), mem.size(1)
        out, trace, _ = self.decode(x, mem, _causal_or(tgt_mask, bool(tgt_is_causal), T, T, x.device),
                                 _causal_or(memory_mask, memory_is_causal, T, S, x.device),
                                 _unsqueeze(tgt_key_padding_mask, unbatched),
                                 _unsqueeze(memory_key_padding_mask, unbatched), record)
        out = _restore(out, batch_first, unbatched)
        return (out, trace) if record else out

    def decode(self, x, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
               memory_key_padding_mask=None, record=False, embeddings=None, until=None, *,
               cache: Cache | None = None, off: HeadsOff | None = None, outputs: list | None = None):
        """Batch-first (B, T, E) through every layer and the final norm, or through layers 0..until (no final norm).

        cache: the keys and values of the words before x, and the memory's (then memory may be None): x is then
        the next words only, and the returned cache holds them too. off: heads switched off. outputs: a list that
        gets each layer's output (B, T, E) (the logit lens).

        Returns (B, T, E), StackTrace or None, and a Decoded: each layer's attention and the cache with x's words.
        """
        traces, self_maps, cross_maps, kv, cross_kv = [], [], [], [], []
        for i, layer in enumerate(self.layers_until(until)):
            past, memory_kv = (None, None) if cache is None else cache.layer(i)
            out = layer.run(x, memory, mask=tgt_mask, memory_mask=memory_mask, padding=tgt_key_padding_mask,
                            memory_padding=memory_key_padding_mask, past=past, memory_kv=memory_kv,
                            keep=keep_of(off, Block.DECODER, i), keep_cross=keep_of(off, Block.CROSS, i),
                            record=record, use_cache=cache is not None)
            x = out.x
            traces.append(out.trace)
            self_maps.append(out.attention)
            cross_maps.append(out.cross_attention)
            kv.append(out.kv)
            cross_kv.append(out.cross_kv)
            if outputs is not None:
                outputs.append(x)
        if until is None and self.norm is not None:
            x = self.norm(x)
        trace = StackTrace(embeddings, tuple(traces), x) if record else None
        new_cache = None if cache is None else Cache(tuple(kv), tuple(cross_kv))
        return x, trace, Decoded(tuple(self_maps), tuple(cross_maps), new_cache)

    def inputs_and_attentions(self, x, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                              memory_key_padding_mask=None):
        """Each layer's input and both attention maps as decode(record=True) computes them, bit for bit, without the
        last layer's feed-forward. A decoding step t is row t of every map (the self-attention is causal).

        Returns inputs (layers, B, T, E), self-attention (layers, B, nh, T, T), cross-attention
        (layers, B, nh, T, S), and the additive masks of the self- and the cross-attention (or None).
        """
        inputs, self_maps, cross_maps, last = inputs_and_maps(
            self.layers, x, memory=memory, mask=tgt_mask, memory_mask=memory_mask, padding=tgt_key_padding_mask,
            memory_padding=memory_key_padding_mask)
        return inputs, self_maps, cross_maps, last.self_attn.mask, last.cross_attn.mask


class Decoded(NamedTuple):
    """What Decoder.decode keeps beside its output: each layer's maps, and the cache with the words just read."""

    attentions: tuple[Tensor, ...]  # per layer (B, nh, T, S): the causal self-attention, S = words read so far
    cross_attentions: tuple[Tensor, ...]  # per layer (B, nh, T, M): the attention to the memory
    cache: Cache | None  # given a cache: it, with the words just read


class Transformer(nn.Module):
    """The encoder-decoder of "Attention Is All You Need" (as nn.Transformer; no embeddings)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        self.encoder = custom_encoder or Encoder(
            EncoderLayer(*layer_args, **factory), num_encoder_layers,
            nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self.decoder = custom_decoder or Decoder(
            DecoderLayer(*layer_args, **factory), num_decoder_layers,
            nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        for p in self.parameters():  # PyTorch's initialisation
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False, *, record=False):
        """As nn.Transformer.forward; with record=True returns (out, TransformerTrace)."""
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal, record=record)
        memory, enc_trace = memory if record else (memory, None)
        out = self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal, record=record)
        if record:
            return out[0], TransformerTrace(enc_trace, out[1])
        return out

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None) -> Tensor:
        return square_subsequent_mask(sz, device=device, dtype=dtype or torch.float32)
