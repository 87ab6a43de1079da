"""Feed-forward, encoder layer and decoder layer, Post-LN or Pre-LN (`norm_first`).

Constructors, parameter names and forward signatures follow torch.nn.TransformerEncoderLayer
and TransformerDecoderLayer, so their state_dicts load strictly. Inside, everything is batch-first.
"""
import functools
from collections.abc import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from model.attention import MultiHeadAttention
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


class _ResidualLayer(nn.Module):
    """What encoder and decoder layers share: the FFN and the residual wiring."""

    def _init_ffn(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, factory):
        self.linear1 = nn.Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.activation = get_activation(activation)
        self.activation_relu_or_gelu = self.activation in (F.relu, F.gelu)  # as PyTorch records it

    def _residual(self, x: Tensor, norm: nn.LayerNorm, dropout: nn.Dropout, sublayer, record: bool):
        """Post-LN: norm(x + f(x)); Pre-LN: x + f(norm(x)). f returns (output, extra)."""
        sub_in = norm(x) if self.norm_first else x
        sub_out, extra = sublayer(sub_in)
        sub_out = dropout(sub_out)
        residual = x + sub_out
        out = residual if self.norm_first else norm(residual)
        return out, extra, (ResidualTrace(x, sub_in, sub_out, residual, out) if record else None)

    def _ffn(self, x: Tensor, norm: nn.LayerNorm, dropout: nn.Dropout, record: bool):
        def ffn(h):  # FFN(h) = activation(h W_1 + b_1) W_2 + b_2
            hidden = self.activation(self.linear1(h))  # (B, T, d_ff)
            return self.linear2(self.dropout(hidden)), hidden

        return self._residual(x, norm, dropout, ffn, record)

    def _self_attention(self, x, norm, dropout, attn_mask, key_padding_mask, record, need_weights=False):
        """Returns (out, (per-head weights or None, AttentionTrace or None), ResidualTrace or None)."""
        def sa(h):
            out, weights, trace = self.self_attn.attend(h, h, h, key_padding_mask, attn_mask, need_weights,
                                                        average_attn_weights=False, record=record)
            return out, (weights, trace)

        return self._residual(x, norm, dropout, sa, record)


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


class EncoderLayer(_ResidualLayer):
    """Self-attention then feed-forward, each wrapped in a residual block (as nn.TransformerEncoderLayer)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self._init_ffn(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, factory)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False, *, record=False):
        """src (T, B, E), or (B, T, E) with batch_first, or (T, E). With record=True returns (out, LayerTrace)."""
        batch_first = self.self_attn.batch_first
        x, unbatched = _layout(src, batch_first)
        out, _, trace = self.encode(x, _causal_or(src_mask, is_causal, x.size(1), x.size(1), x.device),
                                 _unsqueeze(src_key_padding_mask, unbatched), record)
        out = _restore(out, batch_first, unbatched)
        return (out, trace) if record else out

    def encode(self, x, attn_mask=None, key_padding_mask=None, record=False, need_weights=False):
        """x (B, T, E) -> (B, T, E), self-attention probabilities (B, nh, T, T) or None, LayerTrace or None."""
        x, (probs, sa_trace), sa_block = self.self_attention_block(x, attn_mask, key_padding_mask, record,
                                                                   need_weights)
        x, hidden, ffn_block = self._ffn(x, self.norm2, self.dropout2, record)
        return x, probs, (LayerTrace(sa_trace, sa_block, None, None, hidden, ffn_block) if record else None)

    def self_attention_block(self, x, attn_mask=None, key_padding_mask=None, record=False, need_weights=False):
        """The first residual block alone, as encode runs it: (out, (probabilities or None, AttentionTrace or
        None), ResidualTrace or None)."""
        return self._self_attention(x, self.norm1, self.dropout1, attn_mask, key_padding_mask, record, need_weights)


class DecoderLayer(_ResidualLayer):
    """Masked self-attention, cross-attention to the encoder's memory, feed-forward."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 **factory)
        self._init_ffn(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, factory)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, *, record=False):
        """As nn.TransformerDecoderLayer.forward; with record=True returns (out, LayerTrace)."""
        batch_first = self.self_attn.batch_first
        x, unbatched = _layout(tgt, batch_first)
        mem, _ = _layout(memory, batch_first)
        out, trace = self.decode(
            x, mem,
            _causal_or(tgt_mask, tgt_is_causal, x.size(1), x.size(1), x.device),
            _causal_or(memory_mask, memory_is_causal, x.size(1), mem.size(1), x.device),
            _unsqueeze(tgt_key_padding_mask, unbatched), _unsqueeze(memory_key_padding_mask, unbatched), record,
        )
        out = _restore(out, batch_first, unbatched)
        return (out, trace) if record else out

    def decode(self, x, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
               memory_key_padding_mask=None, record=False):
        """x (B, T, E), memory (B, S, E) -> (B, T, E), LayerTrace or None."""
        x, sa_trace, sa_block, ca_trace, ca_block = self.attention_blocks(
            x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, record)
        x, hidden, ffn_block = self._ffn(x, self.norm3, self.dropout3, record)
        return x, (LayerTrace(sa_trace, sa_block, ca_trace, ca_block, hidden, ffn_block) if record else None)

    def attention_blocks(self, x, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                         memory_key_padding_mask=None, record=False):
        """The first two residual blocks, as decode runs them: masked self-attention, then cross-attention to the
        memory. Returns (out, self AttentionTrace, its ResidualTrace, cross AttentionTrace, its ResidualTrace),
        the traces None without record."""
        x, (_, sa_trace), sa_block = self._self_attention(x, self.norm1, self.dropout1, tgt_mask,
                                                          tgt_key_padding_mask, record)

        def cross(h):
            out, _, trace = self.multihead_attn.attend(h, memory, memory, memory_key_padding_mask, memory_mask,
                                                       need_weights=False, record=record)
            return out, trace

        x, ca_trace, ca_block = self._residual(x, self.norm2, self.dropout2, cross, record)
        return x, sa_trace, sa_block, ca_trace, ca_block
