"""Masks (PyTorch semantics: bool True = blocked, float = added) and what they do to attention."""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from model import MultiHeadAttention, Transformer, scaled_dot_product_attention
from model.masks import (
    causal_mask,
    fully_blocked_rows,
    key_padding_mask,
    merge_masks,
    square_subsequent_mask,
    to_additive,
)

FAST = settings(max_examples=30, deadline=None)
NEG_INF = float("-inf")


def random_bool(shape, seed, p=0.4):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g) < p


# --- the masks themselves ---------------------------------------------------------------------

@pytest.mark.parametrize("size,key_size", [(1, None), (5, None), (4, 7), (6, 3)])
def test_causal_mask_blocks_exactly_the_future(size, key_size):
    mask = causal_mask(size, key_size)
    S = size if key_size is None else key_size
    i, j = torch.arange(size).unsqueeze(1), torch.arange(S).unsqueeze(0)
    assert mask.dtype == torch.bool and mask.shape == (size, S)
    assert torch.equal(mask, j > i)


@pytest.mark.parametrize("size", [1, 2, 7])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_square_subsequent_mask_equals_torch(size, dtype):
    expected = nn.Transformer.generate_square_subsequent_mask(size, dtype=dtype)
    for ours in (square_subsequent_mask(size, dtype=dtype),
                 Transformer.generate_square_subsequent_mask(size, dtype=dtype)):
        assert ours.dtype == expected.dtype
        assert torch.equal(ours, expected)


def test_key_padding_mask_from_hugging_face_attention_mask():
    assert torch.equal(key_padding_mask(torch.tensor([[1, 1, 0], [1, 0, 0]])),
                       torch.tensor([[False, False, True], [False, True, True]]))


def test_to_additive():
    assert to_additive(None) is None
    bool_mask = torch.tensor([[True, False], [False, True]])
    assert torch.equal(to_additive(bool_mask), torch.tensor([[NEG_INF, 0.0], [0.0, NEG_INF]]))
    assert to_additive(bool_mask, torch.float64).dtype == torch.float64
    float_mask = torch.tensor([[0.5, NEG_INF]], dtype=torch.float64)
    out = to_additive(float_mask, torch.float32)
    assert out.dtype == torch.float32 and torch.equal(out, float_mask.float())
    with pytest.raises(TypeError, match="bool or float"):
        to_additive(torch.tensor([[0, 1]]))


def additive(mask):
    return torch.zeros(mask.shape).masked_fill(mask, NEG_INF) if mask.dtype == torch.bool else mask


@pytest.mark.parametrize("as_bool", [True, False])
@pytest.mark.parametrize("attn_dims", [None, 2, 3])
@pytest.mark.parametrize("with_padding", [True, False])
def test_merge_masks_shapes_and_values(as_bool, attn_dims, with_padding):
    B, nh, L, S = 2, 3, 4, 5
    convert = (lambda m: m) if as_bool else additive
    attn = None if attn_dims is None else convert(random_bool((L, S) if attn_dims == 2 else (B * nh, L, S), 1))
    padding = convert(random_bool((B, S), 2)) if with_padding else None
    merged = merge_masks(attn, padding, B, nh, L, S)
    if attn is None and padding is None:
        assert merged is None
        return
    expected = torch.zeros(B, nh, L, S)
    if attn is not None:
        expected = expected + additive(attn).reshape(-1, nh if attn_dims == 3 else 1, L, S)
    if padding is not None:
        expected = expected + additive(padding).view(B, 1, 1, S)
    broadcast_shape = {None: (B, 1, 1, S), 2: (1, 1, L, S), 3: (B, nh, L, S)}[attn_dims]
    if attn is not None and padding is not None:
        broadcast_shape = (B, nh if attn_dims == 3 else 1, L, S)
    assert merged.shape == broadcast_shape and merged.dtype == torch.float32
    assert torch.equal(merged.expand(B, nh, L, S), expected)


@pytest.mark.parametrize("attn_mask,padding,message", [
    (torch.zeros(3, 5), None, r"attn_mask should be of size \(4, 5\), got \(3, 5\)"),
    (torch.zeros(5, 4, 5), None, r"attn_mask should be of size \(6, 4, 5\), got \(5, 4, 5\)"),
    (torch.zeros(1, 2, 4, 5), None, r"attn_mask should be of size \(2, 3, 4, 5\) \(or 1 for the batch and heads\), got "
                                    r"\(1, 2, 4, 5\)"),
    (torch.zeros(1, 1, 1, 4, 5), None, "attn_mask must be 2-D, 3-D or 4-D, got 5-D"),
    (None, torch.zeros(2, 4, dtype=torch.bool), r"key_padding_mask should be of size \(2, 5\), got \(2, 4\)"),
    (None, torch.zeros(5, dtype=torch.bool), r"key_padding_mask should be of size \(2, 5\), got \(5,\)"),
])
def test_merge_masks_wrong_shapes(attn_mask, padding, message):
    with pytest.raises(RuntimeError, match=message):
        merge_masks(attn_mask, padding, batch_size=2, num_heads=3, query_len=4, key_len=5)


def test_fully_blocked_rows():
    mask = torch.tensor([[NEG_INF, NEG_INF], [0.0, NEG_INF], [-1e9, NEG_INF]])
    assert torch.equal(fully_blocked_rows(mask), torch.tensor([[True], [False], [False]]))


# --- properties through attention -------------------------------------------------------------

def check_probabilities(probs, blocked):
    """Blocked entries exactly 0; rows with an open key sum to 1; fully blocked rows all 0."""
    blocked = blocked.expand_as(probs)
    assert not probs.isnan().any()
    assert torch.all(probs[blocked] == 0.0)
    open_rows = ~blocked.all(-1)
    torch.testing.assert_close(probs.sum(-1)[open_rows], torch.ones(int(open_rows.sum())), atol=1e-6, rtol=0)
    assert torch.all(probs[~open_rows] == 0.0)


@FAST
@given(seed=st.integers(0, 2**16), B=st.integers(1, 3), nh=st.integers(1, 3), L=st.integers(1, 6),
       S=st.integers(1, 6), p=st.sampled_from([0.0, 0.3, 0.7, 1.0]))
def test_sdpa_masked_probabilities_and_safe_softmax(seed, B, nh, L, S, p):
    torch.manual_seed(seed)
    q, k, v = torch.randn(B, nh, L, 4), torch.randn(B, nh, S, 4), torch.randn(B, nh, S, 3)
    blocked = random_bool((B, nh, L, S), seed, p)
    # F.scaled_dot_product_attention's bool mask is the other way round: True = may attend
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=~blocked)
    for mask in (blocked, additive(blocked)):
        out, probs = scaled_dot_product_attention(q, k, v, mask)
        check_probabilities(probs, blocked)
        assert torch.all(out[blocked.all(-1)] == 0.0)  # a query that sees nothing outputs 0
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=additive(blocked)),
                                   atol=1e-5, rtol=1e-5)


def mha_pair(E, nh, batch_first=True, seed=0):
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(E, nh, batch_first=batch_first).eval()
    ours = MultiHeadAttention(E, nh, batch_first=batch_first).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


@FAST
@given(seed=st.integers(0, 2**16), B=st.integers(1, 3), T=st.integers(1, 7), p=st.sampled_from([0.2, 0.5, 0.9]))
def test_mha_causal_and_padding_probabilities(seed, B, T, p):
    ours, _ = mha_pair(8, 2, seed=seed)
    x = torch.randn(B, T, 8)
    padding = random_bool((B, T), seed, p)
    _, weights = ours(x, x, x, key_padding_mask=padding, attn_mask=causal_mask(T), average_attn_weights=False)
    blocked = causal_mask(T).view(1, 1, T, T) | padding.view(B, 1, 1, T)
    check_probabilities(weights, blocked)
    assert torch.all(weights[..., causal_mask(T)] == 0.0)  # exactly zero above the diagonal


@FAST
@given(seed=st.integers(0, 2**16), B=st.integers(1, 3), T=st.integers(1, 6), S=st.integers(1, 6),
       as_bool=st.booleans(), batch_first=st.booleans())
def test_mha_fully_blocked_rows_match_torch_sdpa_path(seed, B, T, S, as_bool, batch_first):
    """A query with every key blocked: output 0 after W_O (= out_proj bias), no NaN, as torch's SDPA path."""
    ours, ref = mha_pair(8, 2, batch_first, seed)
    nn.init.normal_(ref.out_proj.bias)
    ours.load_state_dict(ref.state_dict())
    q, kv = torch.randn(B, T, 8), torch.randn(B, S, 8)
    attn = random_bool((T, S), seed, 0.5)
    attn[0] = True  # query 0 sees nothing
    padding = random_bool((B, S), seed + 1, 0.3)
    if not as_bool:
        attn, padding = additive(attn), additive(padding)
    if not batch_first:
        q, kv = q.transpose(0, 1), kv.transpose(0, 1)
    with torch.enable_grad():
        expected, _ = ref(q, kv, kv, key_padding_mask=padding, attn_mask=attn, need_weights=False)
    assert not expected.isnan().any()
    for need_weights in (False, True):
        out, _ = ours(q, kv, kv, key_padding_mask=padding, attn_mask=attn, need_weights=need_weights)
        assert not out.isnan().any()
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    out, _, trace = ours(q, kv, kv, key_padding_mask=padding, attn_mask=attn, record=True)
    assert torch.all(trace.probs[:, :, 0] == 0.0) and torch.all(trace.context[:, :, 0] == 0.0)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
