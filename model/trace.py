"""What a recorded forward pass returns: plain frozen data, never state kept on a module.

All tensors are batch-first. Shapes: B batch, nh heads, L queries, S keys, hd head_dim, E model width.

A trace recorded without autograd (torch.inference_mode() or no_grad, as the app runs) holds no tensor that
requires grad. A view of a parameter would: the learned positions sliced to T tokens keep requires_grad even under
inference_mode, and .numpy() on them raises. Recorded with autograd on, a trace is part of the graph like the
output, and its tensors are the ones the model computed (its attentions are the output's).
"""
import dataclasses
from dataclasses import dataclass

import torch
from torch import Tensor


class _Detached:
    """Without autograd, detaches (same storage, no copy) each tensor field that still requires grad."""

    def __post_init__(self):
        if torch.is_grad_enabled():
            return
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Tensor) and value.requires_grad:
                object.__setattr__(self, field.name, value.detach())


@dataclass(frozen=True)
class AttentionTrace(_Detached):
    """One attention block: softmax(q k^T * scale + mask) v, then the output projection."""

    q: Tensor  # (B, nh, L, hd) per-head queries
    k: Tensor  # (B, nh, S, hd) per-head keys
    v: Tensor  # (B, nh, S, hd) per-head values
    scores: Tensor  # (B, nh, L, S) q.k * scale, before the mask
    mask: Tensor | None  # additive, broadcastable to (B, nh, L, S); -inf (or a huge negative) = blocked
    probs: Tensor  # (B, nh, L, S) softmax of scores + mask; each unblocked row sums to 1
    context: Tensor  # (B, nh, L, hd) probs @ v, one per head
    output: Tensor  # (B, L, E) heads concatenated, then W_O
    scale: float  # the factor applied to q.k (1/sqrt(hd) unless overridden)

    @property
    def raw_scores(self) -> Tensor:
        """(B, nh, L, S) q.k before scaling."""
        return self.scores / self.scale


@dataclass(frozen=True)
class ResidualTrace(_Detached):
    """One residual block. Post-LN: out = norm(x + f(x)); Pre-LN: out = x + f(norm(x))."""

    input: Tensor  # (B, T, E) x entering the block
    sublayer_in: Tensor  # (B, T, E) what f sees: x (Post-LN) or norm(x) (Pre-LN)
    sublayer_out: Tensor  # (B, T, E) f(...) after dropout
    residual: Tensor  # (B, T, E) x + f(...)
    output: Tensor  # (B, T, E) the state leaving the block


@dataclass(frozen=True)
class LayerTrace(_Detached):
    """An encoder layer (cross_* None) or a decoder layer."""

    self_attn: AttentionTrace
    self_attn_block: ResidualTrace
    cross_attn: AttentionTrace | None
    cross_attn_block: ResidualTrace | None
    ffn_hidden: Tensor  # (B, T, d_ff) activation(linear1(x)); a gated FFN's silu(gate(x)) * up(x)
    ffn_block: ResidualTrace
    ffn_gate: Tensor | None = None  # (B, T, d_ff) a gated FFN's (SwiGLU's) gate(x), before the SiLU; else None
    ffn_up: Tensor | None = None  # (B, T, d_ff) its up(x)

    @property
    def input(self) -> Tensor:
        return self.self_attn_block.input

    @property
    def output(self) -> Tensor:
        return self.ffn_block.output


@dataclass(frozen=True)
class EmbeddingTrace(_Detached):
    """Token ids to the first layer's input."""

    token: Tensor  # (B, T, E) token embedding (scaled by sqrt(E) where the model does so)
    position: Tensor  # (1, T, E) sinusoidal encoding or learned position embedding
    token_type: Tensor | None  # (B, T, E) BERT's segment embedding
    summed: Tensor  # (B, T, E) token + position (+ token_type)
    output: Tensor  # (B, T, E) after LayerNorm / dropout: the first layer's input


@dataclass(frozen=True)
class StackTrace(_Detached):
    """An encoder or decoder stack."""

    embeddings: EmbeddingTrace | None  # None when the stack was given vectors, not token ids
    layers: tuple[LayerTrace, ...]
    output: Tensor  # (B, T, E) after the final norm, if any

    @property
    def attentions(self) -> tuple[Tensor, ...]:
        return tuple(layer.self_attn.probs for layer in self.layers)


@dataclass(frozen=True)
class TransformerTrace:
    encoder: StackTrace
    decoder: StackTrace


@dataclass(frozen=True)
class ModelOutput:
    """What BertModel and TextEncoder return (named as in Hugging Face)."""

    last_hidden_state: Tensor  # (B, T, E)
    attentions: tuple[Tensor, ...] | None  # one (B, nh, T, T) per layer
    pooler_output: Tensor | None = None  # (B, E)
    trace: StackTrace | None = None  # only with record=True
