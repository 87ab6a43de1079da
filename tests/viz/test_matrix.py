"""The generic matrix heatmap of the step-by-step page, with plain numpy arrays."""
import json

import numpy as np
import pytest

from viz.matrix import matrix_spec, shape_label, signed_limit, window


def test_window_stays_inside_the_width():
    assert window(384, 0, 64) == (0, 64)
    assert window(384, 100, 64) == (100, 164)
    assert window(384, 350, 64) == (320, 384)  # moved left to stay inside
    assert window(32, 10, 64) == (0, 32)  # narrower than the window: all of it


def test_shape_label():
    assert shape_label("T, d_k", (11, 32)) == "(T, d_k) = (11, 32)"


def test_signed_matrix_is_centred_at_zero_with_dimension_numbers():
    z = np.random.default_rng(0).normal(size=(3, 5))
    fig = matrix_spec(z, ["a", "b", "c"], col_offset=160).figure()
    heat = fig.data[0]
    assert np.asarray(heat.z).dtype == np.float32 and np.asarray(heat.z).shape == (3, 5)
    assert heat.zmin == -heat.zmax and heat.zmax > 0
    assert heat.colorscale[0][1] != heat.colorscale[-1][1]  # diverging
    assert list(heat.x) == [160, 161, 162, 163, 164]
    assert fig.layout.xaxis.title.text == "dimension" and fig.layout.xaxis.type == "linear"
    assert "%{z" in heat.hovertemplate and "dim" in heat.hovertemplate


def test_one_outlier_does_not_set_the_colour_range():
    z = np.ones((10, 20))
    z[0, 0] = 100.0
    assert signed_limit(z) < 100.0
    assert signed_limit(z, percentile=100) == 100.0
    assert signed_limit(np.zeros((2, 2))) == 1.0  # a flat matrix still gets a valid range


def test_probabilities_fixed_0_1_with_token_columns_and_nan_gaps():
    probs = np.array([[1.0, np.nan], [0.25, 0.75]])
    fig = matrix_spec(probs, ["the", "the"], ["<s>", "x"], kind="probability").figure()
    heat = fig.data[0]
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert np.isnan(np.asarray(heat.z)[0, 1]) and heat.hoverongaps is False
    assert list(heat.x) == ["&lt;s&gt;", "x"]  # escaped by axis_labels
    assert len(set(heat.y)) == 2  # repeated tokens stay two rows
    assert fig.layout.xaxis.title.text == "key"


def test_highlight_boxes_the_chosen_columns():
    fig = matrix_spec(np.zeros((2, 8)), ["a", "b"], col_offset=32, highlight=(32, 36)).figure()
    (box,) = fig.layout.shapes
    assert (box.type, box.x0, box.x1) == ("rect", 31.5, 35.5)


def test_sent_as_binary_not_lists():
    z = np.random.default_rng(1).random((64, 512)).astype(np.float32)
    spec = matrix_spec(z, [f"t{i}" for i in range(64)], [f"k{j}" for j in range(512)]).figure().to_json()
    assert "bdata" in json.loads(spec)["data"][0]["z"]
    assert len(spec) < 64 * 512 * 4 * 2  # base64 of float32 (plotly escapes "/"), labels, template; lists: ~5x


@pytest.mark.parametrize("args, message", [
    ((np.zeros((2, 3)), ["a"]), "do not fit"),
    ((np.zeros((2, 3)), ["a", "b"], ["x", "y"]), "do not fit"),
    ((np.zeros(3), ["a", "b", "c"]), "do not fit"),
])
def test_mismatched_labels_raise(args, message):
    with pytest.raises(ValueError, match=message):
        matrix_spec(*args)


def test_unknown_kind_raises():
    with pytest.raises(ValueError, match="kind"):
        matrix_spec(np.zeros((1, 1)), ["a"], kind="rainbow")
