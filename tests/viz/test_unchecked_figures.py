"""The figures built without plotly's checks (viz.attention.unchecked_figure) send the same figure to the
browser as the same figure checked: Streamlit's st.plotly_chart runs plotly.io.to_json on what it is given, and
plotly's check (what go.Figure(dict) does) would change any property not already in its final form."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.attention import attention_heatmap
from viz.mosaic import build_mosaic, mosaic_figure

RNG = np.random.default_rng(0)
PROBS = RNG.dirichlet(np.ones(7), size=5).astype(np.float32)  # (5 queries, 7 keys)
BLOCKED = np.where(np.tri(5, 7, dtype=bool), PROBS, np.nan)
ATTN = RNG.dirichlet(np.ones(9), size=(3, 4, 9)).astype(np.float32)  # (layers, heads, T, T)


def sent(fig: go.Figure) -> dict:
    """What Streamlit puts in the chart's message, parsed (the order of keys differs, as it may in JSON)."""
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def checked(fig: go.Figure) -> go.Figure:
    return go.Figure(fig.to_dict())


FIGURES = {
    "heatmap": lambda: attention_heatmap(PROBS, list("abcde"), list("vwxyzab"), title="Layer 0, head 1"),
    "auto range": lambda: attention_heatmap(PROBS, list("abcde"), list("vwxyzab"), auto_range=True),
    "blocked cells, repeats, html": lambda: attention_heatmap(BLOCKED, ["<b>", "a", "a", "&", "a"], list("vwxyzab")),
    "mosaic": lambda: mosaic_figure(build_mosaic(ATTN, tile=32)),
    "mosaic, highlight, title": lambda: mosaic_figure(build_mosaic(ATTN, tile=48, auto_range=True), title="t",
                                                      highlight=(2, 3), first_layer=1, first_head=2),
}


@pytest.mark.parametrize("name", FIGURES)
def test_an_unchecked_figure_sends_what_the_checked_one_sends(name):
    fig = FIGURES[name]()
    assert sent(fig) == sent(checked(fig))


def test_the_check_would_catch_a_property_left_unfinished():
    """The comparison above can fail: a colour scale given by name is expanded by the check."""
    fig = attention_heatmap(PROBS, list("abcde"), list("vwxyzab"))
    fig.data[0].colorscale = "Viridis"
    assert sent(fig) != sent(checked(fig))
