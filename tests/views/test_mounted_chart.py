"""views.charts.mounted: what a mounted chart's payload carries, and where the app puts it (AppTest)."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs_version

from harness.apptest import bundled_traces, charts, open_page, plotly_array
from harness.students.protocol import CHART_COMPONENT
from views.charts import mounted
from views.charts.mounted import COMPONENT
from views.charts.payload import pack, received, unpacked
from viz.attention import CHART_CONFIG, heatmap_spec
from viz.masks import masked_difference_spec


def test_a_payload_gives_back_the_figure_and_config_it_was_made_of():
    rng = np.random.default_rng(1)
    tokens = [f"t{i}" for i in range(300)]
    small = heatmap_spec(rng.dirichlet(np.ones(4), size=4), tokens[:4], tokens[:4], title="small")  # float32
    two = go.Figure([go.Heatmap(z=np.arange(6.0).reshape(2, 3)), go.Heatmap(z=np.eye(3, dtype=np.float32))])
    for figure in (small, two):
        assert received(pack(figure.to_dict(), CHART_CONFIG)) == (figure.to_dict(), CHART_CONFIG)


def test_a_big_map_travels_as_ten_thousandths_and_is_drawn_as_its_values():
    rng = np.random.default_rng(1)
    tokens = [f"t{i}" for i in range(300)]
    probs = rng.dirichlet(np.ones(300), size=300)
    probs[0, 1] = np.nan  # a blocked cell
    diff = rng.uniform(-1, 1, (300, 300))
    # a FigureSpec, a go.Figure
    for figure, values, dtype in ((heatmap_spec(probs, tokens, tokens, title="big"), probs, "u2"),
                                  (masked_difference_spec(diff, tokens, tokens).figure(), diff, "i2")):
        payload = pack(figure.to_dict(), CHART_CONFIG)
        sent = unpacked(payload)["figure"]["data"][0]["z"]
        assert (sent["dtype"], sent["units"], sent["shape"]) == (dtype, 10_000, "300,300")
        drawn, config = received(payload)
        z = plotly_array(drawn["data"][0]["z"])
        assert z.dtype == np.float32 and np.nanmax(np.abs(z - values)) <= 0.5e-4 + 1e-7  # and float32
        np.testing.assert_array_equal(np.isnan(z), np.isnan(values))
        expected = figure.to_dict()
        drawn["data"][0]["z"] = expected["data"][0]["z"]
        assert (drawn, config) == (expected, CHART_CONFIG)  # all else as the figure has it: hover, range, labels


def test_a_big_map_goes_as_its_raw_bytes_not_base64():
    tokens = [f"t{i}" for i in range(512)]
    figure = heatmap_spec(np.random.default_rng(2).dirichlet(np.ones(512), size=512), tokens, tokens)
    payload = pack(figure.to_dict(), CHART_CONFIG)
    assert 512 * 512 * 2 < len(payload) < 512 * 512 * 2 + 30_000  # the uint16 map, the labels, the rest
    assert len(payload) < 0.8 * len(pio.to_json(figure.to_dict(), validate=False))  # st.plotly_chart's: base64


def test_the_load_client_counts_the_mounted_charts():
    assert CHART_COMPONENT == COMPONENT


def test_the_heatmap_page_mounts_one_chart_with_the_sessions_toolbar():
    at = open_page("heatmap", img="svg", text="Hello students", layer="2", head="3")
    (chart,) = charts(at)
    assert chart.figure["layout"]["title"]["text"] == "Layer 2, head 3"
    assert chart.config["toImageButtonOptions"]["format"] == "svg"
    assert json.dumps(chart.figure["data"][0]["y"]) == json.dumps(["[CLS]", "hello", "students", "[SEP]"])


def test_the_charts_plotly_js_is_the_cartesian_bundle_of_plotlys_own_version():
    """views/charts/plotly/plotly.min.js is plotly's cartesian partial bundle (a third of the full one over the wire),
    of the very version the installed plotly package draws its figures for."""
    head = (mounted.PLOTLY_JS / "plotly.min.js").read_text()[:200]
    assert f"plotly.js (cartesian - minified) v{get_plotlyjs_version()}" in head
    assert {"heatmap", "bar", "scatter", "image"} <= bundled_traces()
