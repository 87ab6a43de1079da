"""RoPE beside the sinusoidal table (model.positional): the rotated scores are the ones the Llama family's attention
computes, they depend on the distance alone (to float32 rounding) where added positions do not, and RoPE's
frequencies are the sinusoidal table's."""
import math

import pytest
import torch

from model.llama.attention import rotate, rotation
from model.positional import added_scores, rotary_frequencies, rotary_scores, shift_gap, sinusoidal_table


@pytest.fixture(scope="module")
def qk():
    g = torch.Generator().manual_seed(3)
    return torch.randn(64, generator=g), torch.randn(64, generator=g)


def test_the_rotated_scores_are_what_the_attention_computes(qk):
    q, k = qk
    scores = rotary_scores(q, k, 20, 10_000)
    cos, sin = rotation(0, 20, 64, 10_000.0)
    rq = rotate(q.expand(1, 1, 20, 64), cos, sin)[0, 0]  # (20, 64): how model.llama.attention turns a head's q
    rk = rotate(k.expand(1, 1, 20, 64), cos, sin)[0, 0]
    torch.testing.assert_close(scores, rq @ rk.T)
    assert abs(float(scores[3, 7]) - float(q @ rotate(k.expand(1, 1, 5, 64), *rotation(0, 5, 64, 1e4))[0, 0, 4])) \
        < 1e-4  # R(3)q . R(7)k = q . R(4)k


def test_rope_depends_on_the_distance_alone_and_added_positions_do_not(qk):
    q, k = qk
    assert shift_gap(rotary_scores(q, k, 64, 10_000)) < 1e-4
    assert shift_gap(added_scores(q, k, sinusoidal_table(64, 64))) > 1.0
    toeplitz = torch.tensor([[abs(m - n) for n in range(5)] for m in range(5)], dtype=torch.float32)
    assert shift_gap(toeplitz) == 0 and shift_gap(toeplitz + torch.eye(5).flip(0)) == 1


def test_ropes_frequencies_are_the_sinusoidal_tables():
    thetas = rotary_frequencies(16, 100.0)
    table = sinusoidal_table(2, 16, 100.0)  # row 1: sin(theta_i), cos(theta_i) at position 1
    torch.testing.assert_close(torch.asin(table[1, 0::2]), thetas[:8].clone(), atol=1e-6, rtol=0)
    assert math.isclose(float(thetas[0]), 1.0) and float(thetas[-1]) < float(thetas[0])
