"""The softmax-row math (checked against torch) and its bar charts, with plain numpy arrays."""
import math

import numpy as np
import pytest
import torch

from viz.softmax import as_neg_inf, entropy, probability_bars, score_bars, softmax_row, with_temperature

INF = np.inf


@pytest.mark.parametrize("row", [
    [0.3, -1.2, 2.5, 0.0],
    [1000.0, 1001.0, 999.0],  # exp would overflow without subtracting the max
    [-1000.0, -1001.0],
    [1.0, -INF, 2.0, -INF],  # blocked keys
    [5.0],
])
def test_softmax_row_equals_torch(row):
    expected = torch.softmax(torch.tensor(row, dtype=torch.float64), dim=-1).numpy()
    got = softmax_row(row)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert got.sum() == pytest.approx(1.0)


def test_blocked_keys_get_exactly_zero():
    p = softmax_row([1.0, -INF, 2.0])
    assert p[1] == 0.0 and p[0] > 0 and p[2] > p[0]


def test_fully_blocked_row_is_nan_like_torch():
    got = softmax_row([-INF, -INF, -INF])
    assert np.isnan(got).all()
    assert torch.softmax(torch.full((3,), -math.inf), dim=-1).isnan().all()


def test_entropy_uniform_one_hot_and_torch():
    assert entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    assert entropy([0.0, 1.0, 0.0]) == 0.0
    p = torch.softmax(torch.tensor([0.5, -0.2, 1.7, 0.0, -3.0], dtype=torch.float64), dim=-1)
    assert entropy(p.numpy()) == pytest.approx(float(torch.distributions.Categorical(probs=p).entropy()))


def test_entropy_ignores_blocked_keys():
    p = softmax_row([0.0, -INF, 0.0, -INF])  # two equal allowed keys
    assert entropy(p) == pytest.approx(math.log(2))


def test_temperature_one_is_the_row_above_one_flatter_below_one_sharper():
    scores = np.array([3.0, 1.0, -2.0, 0.5, 2.0, -INF])
    np.testing.assert_allclose(with_temperature(scores, 1.0), softmax_row(scores), atol=1e-12)
    temperatures = [0.25, 0.5, 1.0, 2.0, 4.0]
    entropies = [entropy(with_temperature(scores, t)) for t in temperatures]
    assert entropies == sorted(entropies) and len(set(entropies)) == len(entropies)  # T up: flatter, always
    assert entropies[-1] < math.log(5)  # the blocked key stays at 0, however flat
    assert with_temperature(scores, 0.25).max() > softmax_row(scores).max() > with_temperature(scores, 4.0).max()
    assert with_temperature(scores, 3.0)[-1] == 0.0
    with pytest.raises(ValueError, match="positive"):
        with_temperature(scores, 0.0)


def test_as_neg_inf_turns_huge_negatives_into_minus_inf():
    m = as_neg_inf([0.0, -1e30, np.finfo(np.float32).min, -INF, -5.0])
    assert np.isneginf(m).tolist() == [False, True, True, True, False]
    assert m[4] == -5.0


def test_score_bars_draw_minus_inf_as_marked_bars_at_the_bottom():
    tokens = ["[CLS]", "cat", "<b>", "[PAD]"]
    fig = score_bars([1.5, -0.5, 2.0, -INF], tokens, "t", "s").figure()
    main, blocked = fig.data
    y = np.asarray(main.y)
    assert y.dtype == np.float32 and np.isnan(y[3]) and y[0] == pytest.approx(1.5)
    assert list(main.x) == ["[CLS]", "cat", "&lt;b&gt;", "[PAD]"]  # via axis_labels: escaped
    assert list(blocked.x) == ["[PAD]"] and blocked.text == "-inf"
    bottom, top = fig.layout.yaxis.range
    assert bottom < -0.5 and top > 2.0
    assert np.asarray(blocked.y)[0] == pytest.approx(bottom)  # reaches the bottom of the axis
    assert blocked.marker.pattern.shape == "/" and "-inf" in blocked.hovertemplate
    assert fig.layout.showlegend is True


def test_score_bars_without_blocked_keys_have_one_trace():
    fig = score_bars([0.0, 0.0, 0.0], ["a", "b", "c"], "mask", "M", show_values=True).figure()
    assert len(fig.data) == 1 and fig.layout.showlegend is False
    assert list(fig.data[0].text) == ["0", "0", "0"]  # zeros written on the (invisible) bars
    assert fig.layout.yaxis.range[0] < 0 < fig.layout.yaxis.range[1]


def test_mask_row_with_minus_inf_labels_only_blocked():
    fig = score_bars([0.0, -INF, 0.0], ["a", "b", "c"], "mask", "M", show_values=True).figure()
    assert list(fig.data[0].text) == ["0", "", "0"] and list(fig.data[1].x) == ["b"]


def test_all_blocked_row_still_draws():
    fig = score_bars([-INF, -INF], ["a", "b"], "t", "s").figure()
    assert len(fig.data) == 2 and list(fig.data[1].x) == ["a", "b"]


def test_probability_bars_fixed_axis_and_overlay():
    p = softmax_row([1.0, 2.0, 0.0])
    q = softmax_row([2.0, 4.0, 0.0])
    fig = probability_bars(p, ["a", "b", "c"], "p", compare=q, compare_name="x2").figure()
    assert tuple(fig.layout.yaxis.range) == (0.0, 1.0)
    assert len(fig.data) == 2 and fig.data[1].name == "x2" and fig.layout.barmode == "group"
    assert np.asarray(fig.data[0].y).dtype == np.float32
    np.testing.assert_allclose(np.asarray(fig.data[1].y), q, rtol=1e-6)


def test_repeated_tokens_stay_separate_bars():
    fig = probability_bars([0.5, 0.5], ["the", "the"], "p").figure()
    assert len(set(fig.data[0].x)) == 2


@pytest.mark.parametrize("build", [lambda: score_bars([1.0, 2.0], ["a"], "t", "s"),
                                   lambda: probability_bars([1.0], ["a", "b"], "p")])
def test_mismatched_labels_raise(build):
    with pytest.raises(ValueError, match="do not fit"):
        build()
