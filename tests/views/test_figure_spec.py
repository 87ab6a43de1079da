"""A page that draws a viz.spec.FigureSpec sends the browser the chart message it sends for the same figure built
as a go.Figure (Streamlit's own st.plotly_chart, run by AppTest): the same spec and config."""
import json

from streamlit.testing.v1 import AppTest


def page(kind: str):
    import numpy as np  # noqa: PLC0415 - AppTest runs this function's source alone
    import streamlit as st  # noqa: PLC0415 - AppTest runs this function's source alone

    from viz.attention import heatmap_spec  # noqa: PLC0415 - AppTest runs this function's source alone
    from viz.mosaic import build_mosaic, mosaic_spec  # noqa: PLC0415 - AppTest runs this function's source alone

    rng = np.random.default_rng(3)
    if kind == "heatmap":
        spec = heatmap_spec(rng.dirichlet(np.ones(6), size=6).astype(np.float32), list("abcdef"), list("abcdef"),
                            title="Layer 1, head 2")
    else:
        spec = mosaic_spec(build_mosaic(rng.dirichlet(np.ones(5), size=(2, 3, 5)).astype(np.float32), tile=32),
                           highlight=(1, 2))
    chart = spec.figure() if st.session_state.get("as_figure") else spec
    st.plotly_chart(chart, config={"displaylogo": False}, key="chart")


def chart_message(kind: str, as_figure: bool):
    at = AppTest.from_function(page, args=(kind,))
    at.session_state["as_figure"] = as_figure
    at.run()
    assert not at.exception
    (chart,) = at.get("plotly_chart")
    return chart.proto


def test_a_spec_sends_the_chart_message_its_figure_sends():
    for kind in ("heatmap", "mosaic"):
        spec, figure = chart_message(kind, False), chart_message(kind, True)
        assert json.loads(spec.spec) == json.loads(figure.spec)
        assert (spec.config, spec.theme) == (figure.config, figure.theme)
        assert '"bdata"' in spec.spec
