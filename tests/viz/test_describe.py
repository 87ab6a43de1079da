"""viz.describe: a chart's text alternative, read from the figure the builders make, in English and in Chinese."""
import numpy as np
import pytest

import locales
from viz.attention import heatmap_spec
from viz.describe import describe, plain
from viz.softmax import probability_bars
from viz.spec import FigureSpec

TOKENS = ["[CLS]", "the", "cat", "the", "[SEP]"]


def probs(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(0).dirichlet(np.ones(cols), size=rows).astype(np.float32)


def test_an_attention_map_says_its_title_size_and_axes():
    figure = heatmap_spec(probs(5, 5), TOKENS, TOKENS, title="Layer 2, head 3", note="5 tokens").to_dict()
    assert describe(figure) == ("Layer 2, head 3. A heatmap of 5 rows by 5 columns. Rows: query (attending); "
                                "columns: key (attended to). On the chart: 5 tokens.")


def test_the_same_map_in_chinese_comes_from_the_catalog():
    with locales.use("zh"):
        figure = heatmap_spec(probs(5, 4), TOKENS, TOKENS[:4], title="第 2 层，第 3 个头").to_dict()
        said = describe(figure)
    assert said == "第 2 层，第 3 个头。热力图，5 行 × 4 列。行：查询（去关注）；列：键（被关注）。"


def test_a_name_stands_for_a_missing_title_and_one_row_is_one_row():
    figure = heatmap_spec(probs(1, 3), ["q"], TOKENS[:3], title="").to_dict()
    assert describe(figure).startswith("A chart. A heatmap of 1 row by 3 columns.")
    assert describe(figure, "The query's row").startswith("The query's row. A heatmap of 1 row by 3 columns.")


def test_a_chart_with_sliders_is_described_from_its_maps_shape_with_the_title_template():
    """views/charts/head_chart.py: the map's z is not in the figure (the browser picks it from the stack)."""
    figure = heatmap_spec(probs(4, 6), TOKENS[:4], TOKENS + ["x"], title="Layer {layer}, head {head}").to_dict()
    del figure["data"][0]["z"]
    said = describe(figure, shape=(4, 6))
    assert said.startswith("Layer {layer}, head {head}. A heatmap of 4 rows by 6 columns.")


def test_bars_and_two_series_of_bars():
    one = probability_bars(np.array([0.1, 0.2, 0.7]), ["a", "b", "c"], "(4) softmax probabilities")
    assert describe(one.to_dict()) == "(4) softmax probabilities. A bar chart of 3 bars. Up: probability."
    two = probability_bars(np.array([0.1, 0.9]), ["a", "b"], "Two temperatures", compare=np.array([0.4, 0.6]),
                           compare_name="T = 2", name="T = 1")
    said = describe(two.to_dict())
    assert "A bar chart of 2 series, 2 bars each. Series: T = 1, T = 2." in said


def test_horizontal_bars_say_what_their_length_is():
    figure = {"data": [{"type": "bar", "orientation": "h", "x": [0.5, 0.3], "y": ["cat", "dog"]}],
              "layout": {"title": {"text": "Next word"}, "xaxis": {"title": {"text": "probability"}}}}
    assert describe(figure) == "Next word. A bar chart of 2 bars. Length of the bars: probability."


def test_lines_are_named_and_points_counted():
    figure = {"data": [{"type": "scatter", "mode": "lines", "x": [0, 1, 2], "y": [1, 2, 3], "name": "loss"},
                       {"type": "scatter", "x": [0, 1], "y": [0, 1], "name": "accuracy"},  # plotly's default: lines
                       {"type": "scatter", "mode": "markers", "x": [0, 1, 2, 3], "y": [0, 1, 2, 3]}],
              "layout": {"xaxis": {"title": {"text": "step"}}, "yaxis": {"title": "value"}}}
    assert describe(figure, "Training") == ("Training. A line chart of 2 lines. Lines: loss, accuracy. A scatter plot "
                                            "of 4 points. Across: step; up: value.")


def test_many_lines_are_counted_not_named():
    figure = {"data": [{"type": "scatter", "mode": "lines", "x": [0, 1], "y": [0, 1], "name": f"line {i}"}
                       for i in range(20)], "layout": {}}
    assert describe(figure) == "A chart. A line chart of 20 lines."


def test_typed_arrays_and_numpy_arrays_give_the_same_size():
    """A FigureSpec's own dicts hold numpy arrays; to_dict() turns them into plotly's base64 typed arrays."""
    spec = heatmap_spec(probs(3, 7), TOKENS[:3], [str(i) for i in range(7)], title="t")
    data, layout = spec.parts()
    assert describe({"data": data, "layout": layout}) == describe(spec.to_dict())
    assert "3 rows by 7 columns" in describe(spec.to_dict())
    bars = FigureSpec([{"type": "bar", "x": ["a", "b"], "y": np.array([1.0, 2.0])}], {})
    said = describe(bars.to_dict())
    assert said == describe({"data": bars.parts()[0], "layout": {}}) == "A chart. A bar chart of 2 bars."


def test_an_image_with_points_to_click_is_an_image():
    figure = {"data": [{"type": "image", "source": "data:image/png;base64,"},
                       {"type": "scatter", "mode": "markers", "x": [1, 2], "y": [1, 2]}], "layout": {}}
    assert describe(figure, "Every head") == "Every head. An image."


def test_many_notes_are_left_out():
    """More than a few notes on a chart are numbers written in cells, not notes."""
    layout = {"title": "Map", "annotations": [{"text": f"{i / 10:.2f}"} for i in range(12)]}
    assert "On the chart" not in describe({"data": [], "layout": layout})


@pytest.mark.parametrize("label, text", [
    ("<b>Layer 1</b>, head 2", "Layer 1, head 2"),
    ("a &lt; b &amp; c", "a < b & c"),
    ("the\u200b\u200c", "the"),  # viz.attention.axis_labels' marks of a repeated token
    ("line one<br>line two", "line one · line two"),
    (None, ""),
])
def test_plain_reads_a_plotly_label_as_text(label, text):
    assert plain(label) == text


def test_a_map_drawn_over_another_is_one_map_and_subplots_are_several():
    over = {"data": [{"type": "heatmap", "z": [[1, 2], [3, 4]]}, {"type": "heatmap", "z": [[1, None], [None, None]]}],
            "layout": {}}
    assert describe(over) == "A chart. A heatmap of 2 rows by 2 columns."
    beside = {"data": [{"type": "heatmap", "z": [[1, 2]]}, {"type": "heatmap", "z": [[3]], "xaxis": "x2",
                                                             "yaxis": "y2"}], "layout": {}}
    assert describe(beside) == "A chart. 2 heatmaps side by side."


def test_lines_of_numpy_arrays_as_a_figure_spec_holds_them():
    lines = [{"type": "scatter", "mode": "lines", "x": np.arange(3), "y": np.ones(3), "name": f"dim {i}"}
             for i in (0, 1)]
    points = {"type": "scatter", "mode": "markers", "x": np.arange(4), "y": np.zeros(4)}
    said = describe({"data": [*lines, points], "layout": {"title": {"text": "Waves"}}})
    assert said.startswith("Waves. A line chart of 2 lines. Lines: dim 0, dim 1. A scatter plot of 4 points.")
