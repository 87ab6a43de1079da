"""Llama's self-attention: rotary position embeddings (RoPE) on the queries and keys, and grouped-query attention
(each key/value head shared by a group of query heads; K and V computed once per group). Written as
model.attention.MultiHeadAttention.attend is, so that the one block (model.layers.Block) runs it, with the same
cache, heads switched off and trace; the probabilities come from the same softmax.

RoPE, Hugging Face's split-halves convention: for position m and the dimension pair (i, i + d/2) of a head,
theta_i = rope_theta^(-2i/d), and (x_i, x_{i+d/2}) is rotated by the angle m theta_i:
    rotate(x) = x cos(m theta) + rotate_half(x) sin(m theta),  rotate_half([a, b]) = [-b, a].
Computed as x cos + swap_halves(x) sin', sin' = [-sin, sin] over the halves: the same numbers (a sign moved from x to
sin is exact), two operations fewer per rotation.

Grouped-query attention without repeating K and V for every query head, for a few queries (a step of generation):
the query heads of a group (consecutive, as Hugging Face's repeat_kv orders them) are stacked as the rows of one
product with their shared key/value head.
"""
import functools
import math

import torch
from torch import Tensor, nn

from model.attention import FORMULA, Attended, kernels_for
from model.cache import KeyValues
from model.masks import merge_masks
from model.trace import AttentionTrace


def inverse_frequencies(head_dim: int, theta: float) -> Tensor:
    """theta^(-2i/d) for i = 0 .. d/2 - 1, float32 (as Hugging Face computes them). Remembered: never written to."""
    return 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))


@functools.lru_cache(maxsize=8)
def rotation(start: int, length: int, head_dim: int, theta: float) -> tuple[Tensor, Tensor]:
    """cos and signed sin (T, d) of the angles m theta_i at positions m = start .. start + length - 1, each frequency
    twice (the two halves; the first half's sin negated, see rotate). Remembered for the few last (start, length):
    every layer of a pass asks for the same, and a step of generation asks 30 times (a pure function of its
    arguments; the tensors are never written to)."""
    with torch.inference_mode(False), torch.no_grad():  # plain tensors: a pass under autograd uses them too
        return traced_rotation(torch.arange(start, start + length), head_dim, theta)


def traced_rotation(positions: Tensor, head_dim: int, theta: float) -> tuple[Tensor, Tensor]:
    """rotation's cos and signed sin from a positions tensor, as a traced graph records them (from the input's
    length)."""
    angles = positions.float()[:, None] * inverse_frequencies(head_dim, theta)[None, :]
    sin = angles.sin()
    return torch.cat((angles, angles), dim=-1).cos(), torch.cat((-sin, sin), dim=-1)


def swap_halves(x: Tensor) -> Tensor:
    """[a, b] -> [b, a] over the last dimension's halves, x contiguous: one copy."""
    *rest, d = x.shape
    return x.reshape(*rest, 2, d // 2).flip(-2).view(*rest, d)


def rotate(x: Tensor, cos: Tensor, signed_sin: Tensor) -> Tensor:
    """x (B, heads, T, d) rotated by position: x cos + rotate_half(x) sin, bit for bit."""
    return x * cos + swap_halves(x) * signed_sin


# Up to this many queries the grouped product is the faster (a step of generation, 1 query: 31 against 45 us a
# layer; 128 queries: even); at 512 its 3 key heads share 2 cores unevenly and repeating them is faster (3.8
# against 4.2 ms a layer).
GROUPED_ROWS = 128


def shared(x: Tensor, group: int) -> Tensor:
    """(B, kv, S, d) -> (B, kv * group, S, d): each key/value head repeated for the query heads of its group."""
    return x if group == 1 else x.repeat_interleave(group, dim=1)


def grouped_scores(q: Tensor, k: Tensor) -> Tensor:
    """q k^T (B, nh, L, S) for q (B, nh, L, d) and k (B, kv, S, d), kv dividing nh: query head h against key head
    h // (nh / kv), as if k were repeated for every query head; without the copy up to GROUPED_ROWS queries."""
    B, nh, L, d = q.shape
    kv, S = k.size(1), k.size(2)
    if kv == nh or L > GROUPED_ROWS:
        return q @ shared(k, nh // kv).transpose(-2, -1)
    return (q.reshape(B, kv, nh // kv * L, d) @ k.transpose(-2, -1)).view(B, nh, L, S)


def grouped_context(probs: Tensor, v: Tensor) -> Tensor:
    """probs @ v (B, nh, L, d) for probs (B, nh, L, S) and v (B, kv, S, d), v shared as in grouped_scores."""
    B, nh, L, S = probs.shape
    kv = v.size(1)
    if kv == nh or L > GROUPED_ROWS:
        return probs @ shared(v, nh // kv)
    return (probs.reshape(B, kv, nh // kv * L, S) @ v).view(B, nh, L, v.size(-1))


class RotaryGroupedAttention(nn.Module):
    """q_proj (nh*d, E), k_proj and v_proj (kv*d, E), o_proj (E, nh*d), no biases."""

    kernels = FORMULA  # model.fast.accelerate may give faster ones

    def __init__(self, hidden: int, heads: int, kv_heads: int, head_dim: int, theta: float):
        super().__init__()
        self.num_heads, self.kv_heads, self.head_dim, self.theta = heads, kv_heads, head_dim, theta
        self.group = heads // kv_heads
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)

    def _heads(self, x: Tensor, n: int) -> Tensor:
        """(B, T, n*d) -> (B, n, T, d)."""
        return x.view(x.size(0), x.size(1), n, self.head_dim).transpose(1, 2)

    def attend(self, query, key=None, value=None, key_padding_mask=None, attn_mask=None, need_weights=True,
               average_attn_weights=True, scale=None, record=False, *, past: KeyValues | None = None,
               kv: KeyValues | None = None, keep: Tensor | None = None) -> Attended:
        """Self-attention of query (B, L, E) at positions past.length .. past.length + L - 1 (or, with
        past.starts, row b's at past.starts[b] ..); past: the rotated keys and the values before (a cache, kv heads
        wide). The rest as MultiHeadAttention.attend."""
        B, L, _ = query.shape
        start = 0 if past is None else past.length
        if past is not None and past.starts is not None:  # rows at positions of their own (model.causal.batch)
            positions = past.starts[:, None] + torch.arange(L)  # (B, L), traced or not
            cos, sin = (t.view(B, 1, L, -1) for t in traced_rotation(positions.reshape(-1), self.head_dim, self.theta))
        elif torch.jit.is_tracing():  # a traced pass (model.compiled) takes any length: computed from the input's
            cos, sin = traced_rotation(start + torch.arange(query.size(1)), self.head_dim, self.theta)
        else:
            cos, sin = rotation(start, L, self.head_dim, self.theta)
        q = rotate(self._heads(self.q_proj(query), self.num_heads), cos, sin)  # (B, nh, L, d)
        k = rotate(self._heads(self.k_proj(query), self.kv_heads), cos, sin)  # (B, kv, L, d)
        v = self._heads(self.v_proj(query), self.kv_heads)
        if past is not None and past.room is not None:  # the new words written where room was made for them
            (rk, rv), S = past.room, past.length
            rk[:, :, S:S + L], rv[:, :, S:S + L] = k, v
            k, v = rk, rv
        elif past is not None:
            k, v = torch.cat([past.k, k], dim=2), torch.cat([past.v, v], dim=2)
        attended = KeyValues(k, v)  # what a cache keeps: kv heads, not nh
        mask = merge_masks(attn_mask, key_padding_mask, B, self.num_heads, L, k.size(2), q.dtype)
        scale = 1.0 / math.sqrt(self.head_dim) if scale is None else scale
        kernels = kernels_for(self, record, q, k, v)
        scores, probs = kernels.attention_probs(q, k, scale, mask, grouped_scores)  # (B, nh, L, S)
        context = grouped_context(probs, v)  # (B, nh, L, d)
        heads = context if keep is None else context * keep.view(1, -1, 1, 1)
        output = self.o_proj(heads.transpose(1, 2).reshape(B, L, self.num_heads * self.head_dim))
        weights = None if not need_weights else (probs.mean(dim=1) if average_attn_weights else probs)
        trace = None
        if record:  # the trace's K and V: one per query head, as the pages show them
            k, v = shared(k, self.group), shared(v, self.group)
            trace = AttentionTrace(q, k, v, scores, mask, probs, context, output, scale)
        return Attended(output, weights, attended, trace)

