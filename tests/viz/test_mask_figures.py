"""Mask figures, with plain numpy arrays and the model's own mask builders."""
import numpy as np
import pytest
import torch

from model.masks import causal_mask, merge_masks, square_subsequent_mask
from viz.masks import DIFF_FLOOR, blocked_from_additive, mask_spec, masked_difference_spec

TOKENS = ["[CLS]", "the", "cat", "[SEP]"]


def test_mask_heatmap_shows_blocked_as_one_in_two_colours():
    blocked = causal_mask(4).numpy()
    heat = mask_spec(blocked, TOKENS, title="causal").figure().data[0]
    z = np.asarray(heat.z)
    assert z.dtype == np.uint8 and z.shape == (4, 4)
    np.testing.assert_array_equal(z, np.triu(np.ones((4, 4)), 1))
    assert list(heat.x) == TOKENS and list(heat.y) == TOKENS
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert len({colour for _, colour in heat.colorscale}) == 2  # discrete: allowed or blocked, nothing between
    assert "query" in heat.hovertemplate and "key" in heat.hovertemplate


def test_mask_heatmap_escapes_and_separates_labels():
    heat = mask_spec(np.zeros((3, 3), bool), ["<b>", "a", "a"]).figure().data[0]
    assert heat.x[0] == "&lt;b&gt;" and len(set(heat.x)) == 3


def test_mask_heatmap_rejects_a_mismatched_matrix():
    with pytest.raises(ValueError, match="does not fit"):
        mask_spec(np.zeros((3, 4), bool), ["a", "b", "c"])


def test_blocked_from_merged_causal_and_padding_mask():
    kpm = torch.tensor([[False, False, True, True]])  # the last two keys are [PAD]
    additive = merge_masks(causal_mask(4), kpm, batch_size=1, num_heads=2, query_len=4, key_len=4)  # (1, 1, 4, 4)
    expected = causal_mask(4).numpy() | kpm.numpy()  # (4, 4)
    np.testing.assert_array_equal(blocked_from_additive(additive.numpy(), 4), expected)


def test_blocked_from_padding_only_broadcasts_over_queries():
    additive = np.zeros((1, 1, 1, 3), np.float32)
    additive[..., 2] = np.finfo(np.float32).min  # Hugging Face's "blocked": the dtype minimum, not -inf
    blocked = blocked_from_additive(additive, 3)
    np.testing.assert_array_equal(blocked, [[False, False, True]] * 3)


def test_blocked_from_additive_keeps_biases_and_none():
    assert not blocked_from_additive(None, 3).any()
    biased = np.array([[0.0, -5.0], [-1e4, 0.0]], np.float32)  # a bias is not a block
    assert not blocked_from_additive(biased, 2).any()
    np.testing.assert_array_equal(blocked_from_additive(square_subsequent_mask(3).numpy(), 3), causal_mask(3).numpy())


def test_difference_heatmap_is_diverging_and_symmetric():
    diff = np.array([[0.0, -0.3], [0.2, np.nan]])
    heat = masked_difference_spec(diff, ["a", "b"], ["a", "b"]).figure().data[0]
    assert heat.zmin == pytest.approx(-0.3) and heat.zmax == pytest.approx(0.3)
    z = np.asarray(heat.z)
    assert z.dtype == np.float32 and np.isnan(z[1, 1]) and heat.hoverongaps is False
    assert "Δp" in heat.hovertemplate
    colours = [c for _, c in heat.colorscale]
    assert colours[0] != colours[-1]  # two ends of a diverging scale


def test_difference_heatmap_keeps_float_noise_pale():
    heat = masked_difference_spec(np.full((2, 2), 1e-7), ["a", "b"], ["a", "b"]).figure().data[0]
    assert (heat.zmin, heat.zmax) == (-DIFF_FLOOR, DIFF_FLOOR)
    # nothing comparable: no crash
    heat = masked_difference_spec(np.full((1, 1), np.nan), ["a"], ["a"]).figure().data[0]
    assert heat.zmax == DIFF_FLOOR


def test_difference_heatmap_rejects_a_mismatched_matrix():
    with pytest.raises(ValueError, match="does not fit"):
        masked_difference_spec(np.zeros((2, 2)), ["a"], ["a", "b"])
