"""viz.lecture: any figure made readable on a projector, without touching the original."""
import copy

import numpy as np
import plotly.graph_objects as go

from viz.attention import heatmap_spec
from viz.lecture import CELL_TEXT_TOKENS, TICK_PX, for_projector
from viz.masks import mask_spec


def _heatmap(n: int) -> dict:
    tokens = [f"t{i}" for i in range(n)]
    return heatmap_spec(np.full((n, n), 1 / n), tokens, tokens, title="Layer 0, head 0").figure().to_dict()


def test_every_font_is_at_least_20_px_and_the_height_is_the_projectors():
    figure = _heatmap(8)
    figure["layout"]["annotations"] = [{"text": "a note", "font": {"size": 13}}]
    big = for_projector(figure, 540)
    layout = big["layout"]
    assert layout["height"] == 540
    assert layout["font"]["size"] >= TICK_PX and layout["title"]["font"]["size"] >= TICK_PX
    for axis in ("xaxis", "yaxis"):
        assert layout[axis]["tickfont"]["size"] >= TICK_PX and layout[axis]["title"]["font"]["size"] >= TICK_PX
    assert layout["annotations"][0]["font"]["size"] >= TICK_PX
    assert big["data"][0]["colorbar"]["tickfont"]["size"] >= TICK_PX
    assert "height" not in figure["layout"] or figure["layout"]["height"] != 540  # the original is untouched
    assert "tickfont" not in figure["layout"]["xaxis"]


def test_a_small_map_gets_its_probabilities_in_the_cells_a_bigger_one_not():
    assert for_projector(_heatmap(CELL_TEXT_TOKENS), 540)["data"][0]["texttemplate"] == "%{z:.2f}"
    assert "texttemplate" not in for_projector(_heatmap(CELL_TEXT_TOKENS + 1), 540)["data"][0]


def test_labels_that_would_overlap_are_thinned_and_the_axis_says_so():
    small = for_projector(_heatmap(12), 540)["layout"]
    assert small["yaxis"]["tickvals"] == [f"t{i}" for i in range(12)]  # all of them, none dropped by plotly
    assert small["yaxis"]["title"]["text"] == "query (attending)"
    big = for_projector(_heatmap(100), 540)["layout"]
    shown = big["yaxis"]["tickvals"]
    assert 1 < len(shown) < 100 and shown[0] == "t0"
    k = int(shown[1][1:])  # every k-th token: t0, tk, t2k...
    assert shown == [f"t{i}" for i in range(0, 100, k)] and big["yaxis"]["ticktext"] == shown
    # upright, the note goes on a line of its own: the title runs along the plot's height
    assert big["yaxis"]["title"]["text"] == f"query (attending)<br>(100 tokens, one label in {k})"
    assert len(shown) * 20 * 1.25 <= 540  # what is labelled fits at 20 px


def test_a_map_drawn_as_two_heatmaps_says_its_thinning_once():
    """The language model's causal map draws its masked cells as a second, grey heatmap on the same axes."""
    figure = _heatmap(100)
    grey = {**{k: v for k, v in figure["data"][0].items() if k != "colorbar"}, "showscale": False}
    figure["data"].append(grey)
    layout = for_projector(figure, 540)["layout"]
    for axis in ("xaxis", "yaxis"):
        title = layout[axis]["title"]["text"]
        assert title.count("one label in") <= 1, title
    assert layout["yaxis"]["title"]["text"].count("(100 tokens") == 1


def test_a_bar_chart_and_a_figure_object_work_too():
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout={"title": {"text": "bars"}})
    big = for_projector(fig.to_dict(), 540)
    assert big["layout"]["xaxis"]["tickfont"]["size"] >= TICK_PX and big["data"][0]["type"] == "bar"
    before = copy.deepcopy(fig.to_dict())
    for_projector(fig.to_dict(), 540)
    assert fig.to_dict() == before


def test_only_probabilities_get_numbers_in_their_cells():
    mask = mask_spec(np.triu(np.ones((5, 5), bool), 1), list("abcde")).figure().to_dict()
    assert "texttemplate" not in for_projector(mask, 540)["data"][0]
