"""viz.contrast: a chart's text in a grey of at least 4.5:1 on white wherever the figure sets no colour itself."""
import numpy as np

from harness.axe import contrast
from viz.architecture import FLOPS_COLOUR, PARAMS_COLOUR
from viz.attention import heatmap_spec
from viz.contrast import GREY, readable


def test_the_grey_reads_on_white_and_the_themes_did_not():
    assert contrast(GREY) >= 4.5
    assert contrast("#808495") < 4.5  # Streamlit's chart theme's text (views/charts/static/theme.json)


def test_every_text_of_a_heatmap_gets_the_grey():
    figure = heatmap_spec(np.eye(3, dtype=np.float32), ["a", "b", "c"], ["a", "b", "c"], title="t").to_dict()
    out = readable(figure)
    layout = out["layout"]
    assert layout["font"]["color"] == GREY and layout["hoverlabel"]["font"]["color"] == GREY
    for axis in ("xaxis", "yaxis"):
        assert layout[axis]["tickfont"]["color"] == GREY and layout[axis]["title"]["font"]["color"] == GREY
    assert layout["xaxis"]["title"]["text"] == "key (attended to)"  # the rest of the axis as it was
    assert layout["yaxis"]["autorange"] == "reversed" and layout["legend"]["title"]["font"]["color"] == GREY
    assert "font" not in figure["layout"] and "tickfont" not in figure["layout"]["xaxis"]  # the input is not changed
    assert out["data"] is figure["data"]


def test_a_colour_the_figure_sets_stays_and_subplot_axes_get_the_grey():
    figure = {"data": [], "layout": {"font": {"size": 20, "color": "#000000"}, "xaxis2": {"title": "step"},
                                     "yaxis": {"tickfont": {"color": "#c0392b", "size": 11}}}}
    layout = readable(figure)["layout"]
    assert layout["font"] == {"size": 20, "color": "#000000"}
    assert layout["yaxis"]["tickfont"] == {"color": "#c0392b", "size": 11}
    assert layout["xaxis2"]["title"] == {"text": "step", "font": {"color": GREY}}
    assert layout["xaxis"]["tickfont"]["color"] == GREY  # plotly's default axes are drawn too


def test_the_numbers_plotly_writes_inside_the_cost_bars_read_on_them():
    """textposition "auto": a number that fits is written inside its bar in white."""
    assert contrast(PARAMS_COLOUR) >= 4.5 and contrast(FLOPS_COLOUR) >= 4.5
