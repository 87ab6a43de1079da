"""Where a token is: the sinusoidal table of "Attention Is All You Need" and learned positions."""
import math

import torch
from torch import Tensor, nn


def sinusoidal_table(num_positions: int, d_model: int, base: float = 10000.0) -> Tensor:
    """PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)); (P, d) float32.

    Works for odd d_model too: the last column is then a sine with no cosine partner.
    """
    if num_positions < 0 or d_model < 1:
        raise ValueError(f"need num_positions >= 0 and d_model >= 1, got {num_positions}, {d_model}")
    if base <= 0:
        raise ValueError(f"base must be positive, got {base}")
    position = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    angle = position / base ** (two_i / d_model)  # (P, ceil(d/2)); float64 so large pos stays exact
    table = torch.zeros(num_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


def rotation_for_offset(k: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The fixed (d, d) matrix M_k with PE[pos + k] = PE[pos] @ M_k.T for every pos.

    Each (sin, cos) pair is rotated by the angle k / base^(2i/d); an odd last sine column has
    no partner, so it has no exact linear map and is left as identity (callers should use even d).
    """
    m = torch.eye(d_model, dtype=torch.float64)
    for j, two_i in enumerate(range(0, d_model - 1, 2)):
        theta = k / base ** (two_i / d_model)
        c, s = math.cos(theta), math.sin(theta)
        # sin(a + t) = sin a cos t + cos a sin t ; cos(a + t) = cos a cos t - sin a sin t
        m[2 * j, 2 * j], m[2 * j, 2 * j + 1] = c, s
        m[2 * j + 1, 2 * j], m[2 * j + 1, 2 * j + 1] = -s, c
    return m


class SinusoidalPositionalEncoding(nn.Module):
    """Adds nothing learnable: a fixed table, sliced to the sequence length."""

    def __init__(self, d_model: int, max_len: int = 512, base: float = 10000.0):
        super().__init__()
        self.max_len = max_len
        self.register_buffer("table", sinusoidal_table(max_len, d_model, base), persistent=False)

    def forward(self, seq_len: int) -> Tensor:
        """Returns (1, T, d)."""
        if not torch.jit.is_tracing() and seq_len > self.max_len:  # model.compiled checks it before the graph
            raise ValueError(f"sequence of {seq_len} tokens is longer than max_len {self.max_len}")
        return self.table[:seq_len].unsqueeze(0)


class LearnedPositionalEmbedding(nn.Module):
    """One trained vector per position, as BERT and GPT-2 use."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, seq_len: int) -> Tensor:
        """Returns (1, T, d)."""
        if not torch.jit.is_tracing() and seq_len > self.max_len:  # model.compiled checks it before the graph
            raise ValueError(f"sequence of {seq_len} tokens is longer than max_len {self.max_len}")
        return self.weight[:seq_len].unsqueeze(0)
