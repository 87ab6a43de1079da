"""Where a token is: the sinusoidal table of "Attention Is All You Need", learned positions, and what RoPE does
instead (rotating q and k by position, so their score depends on the distance alone) beside adding the table."""
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


def rotary_frequencies(d: int, base: float) -> Tensor:
    """(d/2,) RoPE's theta_i = base^(-2i/d), radians a position: the sinusoidal table's frequencies."""
    from model.llama.attention import inverse_frequencies  # noqa: PLC0415 - RoPE's own code, where the model runs it

    return inverse_frequencies(d, float(base))


def rotary_scores(q: Tensor, k: Tensor, positions: int, theta: float) -> Tensor:
    """(P, P) RoPE's scores of one query and one key (d,) put at every position: row m is q rotated to position m,
    column n is k rotated to n (model.llama.attention's split-halves convention, pair i turning by m theta^(-2i/d)).
    The rotations compose: R(m)q · R(n)k = q · R(n - m)k, a function of the distance n - m alone."""
    from model.llama.attention import rotate, rotation  # noqa: PLC0415 - RoPE's own code, where the model runs it

    d = q.numel()
    cos, sin = rotation(0, positions, d, float(theta))  # (P, d)
    return rotate(q.expand(positions, d), cos, sin) @ rotate(k.expand(positions, d), cos, sin).T


def added_scores(q: Tensor, k: Tensor, table: Tensor) -> Tensor:
    """(P, P) the same query and key with the position vectors of table (P, d) added, as the 2017 Transformer adds
    them to x: (q + PE_m) · (k + PE_n), not a function of n - m alone."""
    return (q[None] + table) @ (k[None] + table).T


def shift_gap(scores: Tensor) -> float:
    """How far a (P, P) score table is from depending on n - m alone: the largest spread along any diagonal, i.e. the
    largest |S[m + s, n + s] - S[m, n]| over every pair and shift s."""
    P = scores.size(0)
    spreads = [scores.diagonal(offset).max() - scores.diagonal(offset).min() for offset in range(-(P - 1), P)]
    return float(torch.stack(spreads).max())
