"""Sinusoidal table against the paper's formula, the rotation property, and the position modules."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    rotation_for_offset,
    sinusoidal_table,
)

FAST = settings(max_examples=40, deadline=None)


def formula_table(num_positions: int, d_model: int, base: float) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d)), entry by entry."""
    table = np.zeros((num_positions, d_model))
    for pos in range(num_positions):
        for col in range(d_model):
            two_i = col - col % 2
            angle = pos / base ** (two_i / d_model)
            table[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


@FAST
@given(num_positions=st.integers(0, 80), d_model=st.integers(1, 40),
       base=st.sampled_from([2.0, 100.0, 10000.0]) | st.floats(1.5, 1e5))
def test_table_equals_formula(num_positions, d_model, base):
    table = sinusoidal_table(num_positions, d_model, base)
    assert table.shape == (num_positions, d_model) and table.dtype == torch.float32
    np.testing.assert_allclose(table.numpy(), formula_table(num_positions, d_model, base), atol=1e-6, rtol=0)


@pytest.mark.parametrize("d_model", [1, 7, 8, 33])
def test_odd_and_even_width_layout(d_model):
    """Even columns are sines (0 at pos 0), odd columns cosines (1 at pos 0); an odd last column is a sine."""
    table = sinusoidal_table(5, d_model)
    assert torch.all(table[0, 0::2] == 0) and torch.all(table[0, 1::2] == 1)
    np.testing.assert_allclose(table[:, -1].numpy(), formula_table(5, d_model, 10000.0)[:, -1], atol=1e-7)


def test_default_base_and_large_positions():
    table = sinusoidal_table(5000, 16)
    np.testing.assert_allclose(table[4000:4010].numpy(), formula_table(5000, 16, 10000.0)[4000:4010], atol=1e-6)


@pytest.mark.parametrize("args", [(-1, 4), (4, 0), (4, 4, 0.0), (4, 4, -2.0)])
def test_table_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        sinusoidal_table(*args)


@FAST
@given(k=st.integers(-40, 60), half_d=st.integers(1, 16), base=st.sampled_from([10000.0, 100.0, 7.0]))
def test_offset_is_a_fixed_linear_map(k, half_d, base):
    """PE(pos + k) = PE(pos) @ M_k.T for every pos, with one M_k for all positions (even d)."""
    d = 2 * half_d
    table = sinusoidal_table(200, d, base).double()
    m = rotation_for_offset(k, d, base)
    assert m.shape == (d, d)
    start = max(0, -k)  # pos and pos + k both inside the table
    pos = torch.arange(start, 200 - max(k, 0))
    torch.testing.assert_close(table[pos + k], table[pos] @ m.T, atol=1e-5, rtol=0)


@FAST
@given(a=st.integers(-50, 50), b=st.integers(-50, 50), half_d=st.integers(1, 12))
def test_rotations_are_orthogonal_and_compose(a, b, half_d):
    d = 2 * half_d
    ma, mb = rotation_for_offset(a, d), rotation_for_offset(b, d)
    torch.testing.assert_close(ma @ ma.T, torch.eye(d, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(ma @ mb, rotation_for_offset(a + b, d), atol=1e-10, rtol=0)
    torch.testing.assert_close(rotation_for_offset(0, d), torch.eye(d, dtype=torch.float64))


def test_rotation_is_not_identity_for_nonzero_offset():
    assert not torch.allclose(rotation_for_offset(3, 8), torch.eye(8, dtype=torch.float64))


@pytest.mark.parametrize("seq_len", [0, 1, 9, 32])
def test_sinusoidal_module(seq_len):
    module = SinusoidalPositionalEncoding(12, max_len=32, base=500.0)
    out = module(seq_len)
    assert out.shape == (1, seq_len, 12)
    torch.testing.assert_close(out[0], sinusoidal_table(seq_len, 12, 500.0))
    assert list(module.parameters()) == [] and module.state_dict() == {}  # fixed, and not saved


@pytest.mark.parametrize("seq_len", [0, 1, 9, 32])
def test_learned_module(seq_len):
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(32, 12)
    out = module(seq_len)
    assert out.shape == (1, seq_len, 12)
    torch.testing.assert_close(out[0], module.weight[:seq_len])
    assert [n for n, _ in module.named_parameters()] == ["weight"] and module.weight.shape == (32, 12)


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding(8, max_len=16), LearnedPositionalEmbedding(16, 8)])
def test_modules_reject_sequences_beyond_max_len(module):
    module(16)
    with pytest.raises(ValueError, match="longer than max_len 16"):
        module(17)
