"""The Transformer block, written once: self-attention, an optional cross-attention, the feed-forward network, Post-LN
or Pre-LN (`norm_first`); and the encoder and decoder layers of torch.nn made of it.

EncoderLayer and DecoderLayer follow torch.nn.TransformerEncoderLayer and TransformerDecoderLayer's constructors,
parameter names and forward signatures, so their state_dicts load strictly. Inside, everything is batch-first.
"""
import functools
from collections.abc import Callable
from typing import NamedTuple

import torch.nn.functional as F
from torch import Tensor, nn

from model.attention import FORMULA, MultiHeadAttention, kernels_for
from model.cache import KeyValues
from model.masks import causal_mask
from model.trace import LayerTrace, ResidualTrace

# Activations by the names checkpoints' configs give them. GPT-2's "gelu_new" is GELU's tanh approximation:
# 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "gelu_new": functools.partial(F.gelu, approximate="tanh"),
               "gelu_pytorch_tanh": functools.partial(F.gelu, approximate="tanh")}


def get_activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class BlockOutput(NamedTuple):
    """What Block.run returns."""

    x: Tensor  # (B, T, E) the block's output
    attention: Tensor  # (B, nh, T, S) the self-attention's probabilities, per head
    cross_attention: Tensor | None  # (B, nh, T, M) the cross-attention's, in a block that has one
    kv: KeyValues | None  # with use_cache: the self-attention's keys and values, past ones first
    cross_kv: KeyValues | None  # with use_cache: the cross-attention's, the memory's projected once
    trace: LayerTrace | None  # only with record=True


class Block(nn.Module):
    """One Transformer block, the only one here: self-attention (a causal mask makes it a decoder's), an optional
    cross-attention to an encoder's output, then the feed-forward network; each a residual sub-layer, Post-LN
    norm(x + f(x)) or Pre-LN x + f(norm(x)) (norm_first). Every encoder, decoder and GPT here is a stack of it.

    Parameters as torch.nn's layers name them: self_attn, multihead_attn (the cross-attention), linear1, linear2,
    norm1 and norm2, and norm3 in a block with cross-attention (there the FFN's is norm3)."""

    kernels = FORMULA  # model.fast.accelerate gives a model FAST ones

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=True, norm_first=False, bias=True, cross_attention=False, device=None, dtype=None, *,
                 attention: nn.Module | None = None, mlp: nn.Module | None = None,
                 norm: Callable[[int], nn.Module] | None = None):
        """attention, mlp, norm: a family's own self-attention (with MultiHeadAttention's `attend`), feed-forward
        network (`run(h, record) -> (hidden or None, output, parts)`: parts, when recording a gated one, its gate
        and up, else ()) and norm (norm(d_model) -> a module), instead of
        multi-head attention, linear1/activation/linear2 and LayerNorm (model.llama: RoPE and grouped-query
        attention, SwiGLU, RMSNorm)."""
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = attention if attention is not None else MultiHeadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory)
        if cross_attention:
            self.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, **factory)
        self.mlp = mlp
        if mlp is None:
            self.linear1 = nn.Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = nn.Dropout(dropout)
        if mlp is None:
            self.linear2 = nn.Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first, self.cross = norm_first, cross_attention
        sublayers = 3 if cross_attention else 2
        for i in range(1, sublayers + 1):
            setattr(self, f"norm{i}", norm(d_model) if norm is not None else nn.LayerNorm(
                d_model, eps=layer_norm_eps, bias=bias, **factory))
        for i in range(1, sublayers + 1):
            setattr(self, f"dropout{i}", nn.Dropout(dropout))
        self.activation = get_activation(activation)
        self.activation_relu_or_gelu = self.activation in (F.relu, F.gelu)  # as PyTorch records it

    @property
    def ffn_norm(self) -> nn.Module:
        return self.norm3 if self.cross else self.norm2

    def run(self, x: Tensor, memory: Tensor | None = None, *, mask=None, padding=None, memory_mask=None,
            memory_padding=None, past: KeyValues | None = None, memory_kv: KeyValues | None = None,
            keep: Tensor | None = None, keep_cross: Tensor | None = None, record: bool = False,
            ffn: bool = True, use_cache: bool = False) -> BlockOutput:
        """x (B, T, E) through the block, batch-first.

        mask: over the self-attention's keys, (T, S) or (B|1, nh|1, T, S), bool (True = blocked) or additive, past
        keys included (a causal mask makes the block a decoder's); padding (B, S) True at a padding key.
        memory (B, M, E): the encoder's output, or memory_kv its keys and values projected once; memory_mask and
        memory_padding over them. past: this block's self-attention keys and values so far (a cache).
        keep, keep_cross: (nh,) 0 for a head switched off (its context zeroed before W_O), 1 for the others.
        ffn=False stops after the attention, which is all a map needs. use_cache: return the keys and values (a
        cache's next entry); without it they are freed with the block's other buffers, as soon as they are used.
        """
        h = self.norm1(x) if self.norm_first else x
        sa = self.self_attn.attend(h, h, h, padding, mask, True, False, record=record, past=past, keep=keep)
        attention, kv, sa_trace = sa.weights, sa.kv if use_cache else None, sa.trace
        x, sa_block = self._residual(x, h, sa.output, self.norm1, self.dropout1, record)
        del sa  # its output and keys: freed now, not at the return (at 512 tokens, buffers of a MB each)
        cross, cross_kv, ca_trace, ca_block = None, None, None, None
        if self.cross:
            h = self.norm2(x) if self.norm_first else x
            ca = self.multihead_attn.attend(h, memory, memory, memory_padding, memory_mask, True, False,
                                            record=record, kv=memory_kv, keep=keep_cross)
            cross, cross_kv, ca_trace = ca.weights, ca.kv if use_cache else None, ca.trace
            x, ca_block = self._residual(x, h, ca.output, self.norm2, self.dropout2, record)
            del ca
        hidden = ffn_block = None
        gated: tuple[Tensor, ...] = ()
        if ffn:
            h = self.ffn_norm(x) if self.norm_first else x
            if self.mlp is not None:
                hidden, out, gated = self.mlp.run(h, record)
            else:
                hidden = self.linear1(h)  # (B, T, d_ff)
                hidden = kernels_for(self, record, hidden).activate(hidden, self.activation)
                out = self.linear2(self.dropout(hidden))  # FFN(h) = activation(h W_1 + b_1) W_2 + b_2
            if not record:
                hidden = None  # (B, T, d_ff) freed now, not at the return: no trace keeps it
            x, ffn_block = self._residual(x, h, out, self.ffn_norm, self.dropout3 if self.cross else self.dropout2,
                                          record)
        trace = None
        if record:
            trace = LayerTrace(sa_trace, sa_block, ca_trace, ca_block, hidden, ffn_block, *gated)
        return BlockOutput(x, attention, cross, kv, cross_kv, trace)

    def _residual(self, x: Tensor, sub_in: Tensor, sub_out: Tensor, norm: nn.Module, dropout: nn.Dropout,
                  record: bool) -> tuple[Tensor, ResidualTrace | None]:
        """Post-LN: norm(x + f(x)); Pre-LN: x + f(norm(x)), from f's input and output."""
        if self.training:  # dropout is the identity otherwise: not called
            sub_out = dropout(sub_out)
        residual = kernels_for(self, record, sub_out).add(x, sub_out)
        out = residual if self.norm_first else norm(residual)
        return out, (ResidualTrace(x, sub_in, sub_out, residual, out) if record else None)


def _layout(x: Tensor, batch_first: bool) -> tuple[Tensor, bool]:
    """Any accepted input layout -> (B, T, E). Returns the tensor and whether it was unbatched."""
    if x.dim() == 2:
        return x.unsqueeze(0), True
    return (x if batch_first else x.transpose(0, 1)), False


def _restore(x: Tensor, batch_first: bool, unbatched: bool) -> Tensor:
    if unbatched:
        return x.squeeze(0)
    return x if batch_first else x.transpose(0, 1)


def _unsqueeze(mask: Tensor | None, unbatched: bool) -> Tensor | None:
    return mask.unsqueeze(0) if (unbatched and mask is not None) else mask


def _causal_or(mask: Tensor | None, is_causal: bool, query_len: int, key_len: int, device) -> Tensor | None:
    """A causal hint with no mask gets the causal mask (PyTorch's layers would raise instead)."""
    if mask is None and is_causal:
        return causal_mask(query_len, key_len, device=device)
    return mask


class EncoderLayer(Block):
    """Self-attention then feed-forward (as nn.TransformerEncoderLayer): a Block without cross-attention."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                         bias, device=device, dtype=dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False, *, record=False):
        """src (T, B, E), or (B, T, E) with batch_first, or (T, E). With record=True returns (out, LayerTrace)."""
        batch_first = self.self_attn.batch_first
        x, unbatched = _layout(src, batch_first)
        out = self.run(x, mask=_causal_or(src_mask, is_causal, x.size(1), x.size(1), x.device),
                       padding=_unsqueeze(src_key_padding_mask, unbatched), record=record)
        x = _restore(out.x, batch_first, unbatched)
        return (x, out.trace) if record else x


class DecoderLayer(Block):
    """Masked self-attention, cross-attention to the encoder's memory, feed-forward (as nn.TransformerDecoderLayer):
    a Block with cross-attention."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                         bias, cross_attention=True, device=device, dtype=dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, *, record=False):
        """As nn.TransformerDecoderLayer.forward; with record=True returns (out, LayerTrace)."""
        batch_first = self.self_attn.batch_first
        x, unbatched = _layout(tgt, batch_first)
        mem, _ = _layout(memory, batch_first)
        out = self.run(x, mem, mask=_causal_or(tgt_mask, tgt_is_causal, x.size(1), x.size(1), x.device),
                       memory_mask=_causal_or(memory_mask, memory_is_causal, x.size(1), mem.size(1), x.device),
                       padding=_unsqueeze(tgt_key_padding_mask, unbatched),
                       memory_padding=_unsqueeze(memory_key_padding_mask, unbatched), record=record)
        x = _restore(out.x, batch_first, unbatched)
        return (x, out.trace) if record else x
