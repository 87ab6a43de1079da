"""tests/e2e/test_mounted_chart_browser.py serves this page: one figure drawn twice, by Streamlit's st.plotly_chart
(above) and by views.charts.mounted (below), as the app draws its charts (no plotly template, the app's toolbar
config, its text in a readable grey: views.shell.lecture.figure, which views.charts.mounted.streamlit_chart also
applies)."""
import numpy as np
import plotly.io as pio
import streamlit as st

from views.charts.mounted import show_chart
from views.shell import lecture
from viz.attention import CHART_CONFIG, heatmap_spec

pio.templates.default = None  # as app.py
tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
probs = np.random.default_rng(0).dirichlet(np.ones(len(tokens)), size=len(tokens))
figure = heatmap_spec(probs, tokens, tokens, title="Layer 0, head 0", note="5 tokens")
st.plotly_chart(lecture.figure(figure), config=CHART_CONFIG)
show_chart(figure, key="pair", config=CHART_CONFIG)
