"""Scaled dot-product attention, and multi-head attention with nn.MultiheadAttention's layout."""
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.cache import KeyValues
from model.masks import fully_blocked_rows, merge_masks, to_additive
from model.trace import AttentionTrace


def masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """softmax(scores + mask) over keys; a row with every key blocked gets 0, not NaN.

    That is what F.scaled_dot_product_attention does (its "safe softmax"): such a query
    attends to nothing, so its output is 0 rather than NaN spreading through the network.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    probs = torch.softmax(scores + mask, dim=-1)
    return probs.masked_fill(fully_blocked_rows(mask), 0.0)  # (..., L, 1) rows of nothing but -inf


def dot_products(q: Tensor, k: Tensor) -> Tensor:
    """q k^T (..., L, S): every query against every key."""
    return q @ k.transpose(-2, -1)


def attention_probs(q: Tensor, k: Tensor, scale: float, mask: Tensor | None,
                    product: Callable[[Tensor, Tensor], Tensor] = dot_products) -> tuple[Tensor, Tensor]:
    """scores = q k^T * scale (B, nh, L, S), before the mask; probs = softmax(scores + mask). Returns both.
    product: q k^T for keys laid out otherwise (grouped key heads, model.llama.attention.grouped_scores)."""
    scores = product(q, k) * scale
    return scores, masked_softmax(scores, mask)


@dataclass(frozen=True)
class Kernels:
    """The three operations of a block that have a faster form written over their own input (model.fast.FAST): the
    block's arithmetic (here and in model/layers.py) is written once and calls them through its `kernels`."""

    attention_probs: Callable[..., tuple[Tensor | None, Tensor]]  # (q, k, scale, mask[, product]) -> (scores, probs)
    activate: Callable[[Tensor, Callable[[Tensor], Tensor]], Tensor]  # (hidden, activation) -> activation(hidden)
    add: Callable[[Tensor, Tensor], Tensor]  # (x, sub-layer output) -> x + output


FORMULA = Kernels(attention_probs, lambda hidden, activation: activation(hidden), lambda x, out: x + out)


def kernels_for(module: nn.Module, record: bool, *tensors: Tensor) -> Kernels:
    """The module's own kernels where they may overwrite these tensors (nothing recorded, not training, autograd
    off for them), else the formula's: a trace needs every intermediate intact, autograd the tensors it saved."""
    if record or module.training or (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return FORMULA
    return module.kernels


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    """softmax(q k^T * scale + mask) v. Returns (output (..., L, dv), probabilities (..., L, S)).

    q (..., L, dk), k (..., S, dk), v (..., S, dv). attn_mask: bool (True = blocked) or additive
    float, broadcastable to (..., L, S). scale defaults to 1/sqrt(dk); 1.0 means "no scaling".
    """
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., L, S)
    probs = masked_softmax(scores, to_additive(attn_mask, q.dtype))
    return probs @ v, probs


class Attended(NamedTuple):
    """What MultiHeadAttention.attend returns."""

    output: Tensor  # (B, L, E) heads concatenated, then W_O
    weights: Tensor | None  # (B, nh, L, S) or their mean over heads (B, L, S); None unless asked for
    kv: KeyValues  # every key and value attended to, past ones first: what a cache keeps
    trace: AttentionTrace | None  # only with record=True


class MultiHeadAttention(nn.Module):
    """Same constructor, parameters and forward as torch.nn.MultiheadAttention.

    Parameters: in_proj_weight (3E, E) = [W_Q; W_K; W_V] (or q/k/v_proj_weight when kdim/vdim
    differ from E), in_proj_bias (3E), out_proj = W_O; optional bias_k, bias_v.
    """

    kernels = FORMULA  # model.fast.accelerate gives a model FAST ones

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be > 0, got {embed_dim} and {num_heads}")
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        factory = {"device": device, "dtype": dtype}
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn
        if self._qkv_same_embed_dim:
            self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim, **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = nn.Parameter(torch.empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = nn.Parameter(torch.empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = nn.Parameter(torch.empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = nn.Parameter(torch.empty(1, 1, embed_dim, **factory))
            self.bias_v = nn.Parameter(torch.empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's initialisation: Xavier-uniform projections, zero biases."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                nn.init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            nn.init.zeros_(self.in_proj_bias)
            nn.init.zeros_(self.out_proj.bias)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                nn.init.xavier_normal_(b)

    def _weights(self):
        """(W_Q, b_Q), (W_K, b_K), (W_V, b_V): in_proj_weight = [W_Q; W_K; W_V], or the three separate weights."""
        E, b = self.embed_dim, self.in_proj_bias
        if self._qkv_same_embed_dim:
            weights = self.in_proj_weight.split(E)
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(zip(weights, (None, None, None) if b is None else b.split(E)))

    def _heads(self, x: Tensor) -> Tensor:
        """(B, L, E) -> (B, nh, L, hd)."""
        return x.view(x.size(0), -1, self.num_heads, self.head_dim).transpose(1, 2)

    def keys_values(self, key: Tensor, value: Tensor) -> KeyValues:
        """K = key W_K^T + b_K, V = value W_V^T + b_V, per head: (B, nh, S, hd) each. A decoder projects its memory
        once with this and hands the result to every step (attend's kv=)."""
        _, (wk, bk), (wv, bv) = self._weights()
        return KeyValues(self._heads(F.linear(key, wk, bk)), self._heads(F.linear(value, wv, bv)))

    def attend(self, query, key=None, value=None, key_padding_mask=None, attn_mask=None, need_weights=True,
               average_attn_weights=True, scale=None, record=False, *, past: KeyValues | None = None,
               kv: KeyValues | None = None, keep: Tensor | None = None) -> Attended:
        """The computation, batch-first: query (B, L, E), key (B, S, kdim), value (B, S, vdim).

        past: the keys and values of earlier positions (a cache), put before this call's; kv: keys and values already
        projected (a decoder's memory), instead of key and value; keep: (nh,) 1 for a working head, 0 for a head
        switched off, whose context is zeroed before W_O (its attention is still computed and returned).
        Masks cover every key attended to, past ones included.
        """
        B, L, _ = query.shape
        (wq, bq), (wk, bk), (wv, bv) = self._weights()
        q = self._heads(F.linear(query, wq, bq))  # (B, nh, L, hd)
        if kv is None:
            k, v = self._heads(F.linear(key, wk, bk)), self._heads(F.linear(value, wv, bv))  # (B, nh, S, hd)
        else:
            k, v = kv.k, kv.v
        if past is not None:
            k, v = torch.cat([past.k, k], dim=2), torch.cat([past.v, v], dim=2)
        attended = KeyValues(k, v)  # what a cache keeps, before the extra keys below
        if self.bias_k is not None:  # one learned extra key/value that every query can see
            k = torch.cat([k, self._heads(self.bias_k.expand(B, 1, -1))], dim=2)
            v = torch.cat([v, self._heads(self.bias_v.expand(B, 1, -1))], dim=2)
            attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
        if self.add_zero_attn:  # one all-zero key/value
            k = torch.cat([k, k.new_zeros(B, self.num_heads, 1, self.head_dim)], dim=2)
            v = torch.cat([v, v.new_zeros(B, self.num_heads, 1, self.head_dim)], dim=2)
            attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
        mask = merge_masks(attn_mask, key_padding_mask, B, self.num_heads, L, k.size(2), q.dtype)  # (B|1, nh|1, L, S)
        scale = 1.0 / math.sqrt(self.head_dim) if scale is None else scale
        kernels = kernels_for(self, record, q, k, v)
        scores, probs = kernels.attention_probs(q, k, scale, mask)  # (B, nh, L, S) each
        if self.training and self.dropout:
            probs = F.dropout(probs, self.dropout)
        context = probs @ v  # (B, nh, L, hd)
        heads = context if keep is None else context * keep.view(1, -1, 1, 1)  # heads switched off: 0
        output = self.out_proj(heads.transpose(1, 2).reshape(B, L, self.embed_dim))  # (B, L, E)

        weights = None
        if need_weights:
            weights = probs.mean(dim=1) if average_attn_weights else probs
        trace = AttentionTrace(q, k, v, scores, mask, probs, context, output, scale) if record else None
        return Attended(output, weights, attended, trace)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False, *, scale=None, record=False):
        """As nn.MultiheadAttention.forward; with record=True a third value, the AttentionTrace."""
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                               "module method `generate_square_subsequent_mask` to create this mask.")
        batched = query.dim() == 3
        if not batched:  # (L, E): one unbatched sequence
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:  # (L, B, E) -> (B, L, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        output, weights, _, trace = self.attend(query, key, value, key_padding_mask, attn_mask, need_weights,
                                                average_attn_weights, scale, record)
        if not batched:
            output = output.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        elif not self.batch_first:
            output = output.transpose(0, 1)
        return (output, weights, trace) if record else (output, weights)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append one never-blocked key column to a mask."""
    return None if mask is None else F.pad(mask, (0, 1))
