"""The heatmap builder, with plain numpy arrays."""
import numpy as np
import pytest

from viz.attention import attention_heatmap, axis_labels


def test_shape_labels_and_fixed_range():
    probs = np.random.default_rng(0).dirichlet(np.ones(4), size=3)  # (3 queries, 4 keys)
    fig = attention_heatmap(probs, ["a", "b", "c"], ["w", "x", "y", "z"], title="t")
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (3, 4)
    assert np.asarray(heat.z).dtype == np.float32
    assert list(heat.y) == ["a", "b", "c"] and list(heat.x) == ["w", "x", "y", "z"]
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert "query" in heat.hovertemplate and "key" in heat.hovertemplate and "%{z" in heat.hovertemplate


def test_auto_range_lets_plotly_choose():
    heat = attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"], auto_range=True).data[0]
    assert heat.zmin is None and heat.zmax is None


def test_repeated_tokens_stay_separate_rows():
    labels = axis_labels(["the", "cat", "the", "the"])
    assert len(set(labels)) == 4
    assert [lab.replace("\u200b", "").replace("\u200c", "") for lab in labels] == ["the", "cat", "the", "the"]


def test_many_repeats_stay_unique_and_short():
    labels = axis_labels(["word"] * 600)
    assert len(set(labels)) == 600
    assert max(len(lab) for lab in labels) <= len("word") + 10  # log2(600) invisible characters at most


def test_html_in_tokens_is_escaped():
    assert axis_labels(["<script>", "a&b"]) == ["&lt;script&gt;", "a&amp;b"]


def test_blocked_cells_stay_nan_gaps():
    probs = np.array([[1.0, np.nan], [0.5, 0.5]])
    heat = attention_heatmap(probs, ["a", "b"], ["a", "b"]).data[0]
    assert np.isnan(np.asarray(heat.z)[0, 1]) and heat.hoverongaps is False


def test_mismatched_labels_raise():
    with pytest.raises(ValueError, match="do not fit"):
        attention_heatmap(np.zeros((2, 3)), ["a", "b"], ["a", "b"])
