"""The same attention and layers, faster for inference without a trace. Beside the formula, never in it.

model/attention.py and model/layers.py are the tutorial's formula, written to be read. This module computes the
same numbers with fewer and smaller allocations, and only where nothing is recorded and autograd is off (a trace
needs every intermediate intact; autograd needs the tensors it saved):
- the scale, the mask and the softmax written over the scores tensor, the activation over the FFN's hidden
  tensor, and each residual sum over the sub-layer's output: no fresh (heads x T x T) or (T x d_ff) tensor per
  step, which is where the time goes at a few hundred tokens.
Q, K and V in one matrix multiply saved under 3 % and is not here (bench/README.md).

Chosen explicitly: `accelerate(model)` switches the model's MultiHeadAttention, EncoderLayer and DecoderLayer
modules to the subclasses below, in place (same parameters, same module tree, nothing copied). Equal to the
formula's outputs, tests/model/test_fast.py; the measured gain is in bench/README.md (bench/forward.py).
"""
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.attention import MultiHeadAttention
from model.layers import DecoderLayer, EncoderLayer
from model.masks import fully_blocked_rows, merge_masks

_IN_PLACE = {F.relu: torch.relu_, F.gelu: torch.ops.aten.gelu_}


def _inference(*tensors: Tensor) -> bool:
    """True when autograd will need none of these tensors as they are, so they may be overwritten."""
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))


class FastMultiHeadAttention(MultiHeadAttention):
    """MultiHeadAttention with the scale, the mask and the softmax written over the scores tensor."""

    def attend(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
               average_attn_weights=True, scale=None, record=False):
        if record or self.training or self.bias_k is not None or self.add_zero_attn or not _inference(query, key,
                                                                                                          value):
            return super().attend(query, key, value, key_padding_mask, attn_mask, need_weights,
                                  average_attn_weights, scale, record)
        B, L, _ = query.shape
        nh, hd = self.num_heads, self.head_dim
        q, k, v = (t.view(B, -1, nh, hd).transpose(1, 2) for t in self._project(query, key, value))  # (B, nh, *, hd)
        mask = merge_masks(attn_mask, key_padding_mask, B, nh, L, k.size(2), q.dtype)
        scores = (q @ k.transpose(-2, -1)).mul_(1.0 / math.sqrt(hd) if scale is None else scale)  # (B, nh, L, S)
        if mask is not None:
            scores.add_(mask)
        probs = torch._softmax(scores, -1, False, out=scores)  # over the scores: no second (B, nh, L, S) tensor
        if mask is not None:
            blocked = fully_blocked_rows(mask)
            if blocked.any():
                probs.masked_fill_(blocked, 0.0)
        context = probs @ v  # (B, nh, L, hd)
        output = self.out_proj(context.transpose(1, 2).reshape(B, L, self.embed_dim))
        weights = None
        if need_weights:
            weights = probs.mean(dim=1) if average_attn_weights else probs
        return output, weights, None


class _InPlaceResidual:
    """The FFN's activation and each residual sum written over tensors nobody keeps (without a trace)."""

    def _residual(self, x: Tensor, norm: nn.LayerNorm, dropout: nn.Dropout, sublayer, record: bool):
        if record:
            return super()._residual(x, norm, dropout, sublayer, record)
        sub_out, extra = sublayer(norm(x) if self.norm_first else x)
        sub_out = dropout(sub_out)
        residual = sub_out.add_(x) if _inference(sub_out) else x + sub_out
        return (residual if self.norm_first else norm(residual)), extra, None

    def _ffn(self, x: Tensor, norm: nn.LayerNorm, dropout: nn.Dropout, record: bool):
        in_place = _IN_PLACE.get(self.activation)
        if record or in_place is None:
            return super()._ffn(x, norm, dropout, record)

        def ffn(h):
            hidden = self.linear1(h)  # (B, T, d_ff)
            hidden = in_place(hidden) if _inference(hidden) else self.activation(hidden)
            return self.linear2(self.dropout(hidden)), None

        return self._residual(x, norm, dropout, ffn, record)


class FastEncoderLayer(_InPlaceResidual, EncoderLayer):
    pass


class FastDecoderLayer(_InPlaceResidual, DecoderLayer):
    pass


FAST = {MultiHeadAttention: FastMultiHeadAttention, EncoderLayer: FastEncoderLayer, DecoderLayer: FastDecoderLayer}


def accelerate(model: nn.Module) -> nn.Module:
    """The model, its attention and layers switched to this module's subclasses in place; returned for chaining."""
    for module in model.modules():
        fast = FAST.get(type(module))
        if fast is not None:
            module.__class__ = fast
    return model
