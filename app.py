"""Entry point: page config and navigation. Every page lives in views/.

Icons are Material Symbols, which Streamlit ships, so they show offline and without emoji fonts."""
import plotly.io as pio
import streamlit as st

from views import lone_surrogates, navigation, state

# Streamlit's chart theme replaces plotly's template (the charts are pixel-identical without it), so
# don't build and send plotly's default template, about 7 KB, with every chart on every rerun.
pio.templates.default = None

st.set_page_config(page_title="Attention visualizer", page_icon=":material/visibility:", layout="wide")
pages = navigation.pages(lambda: [
    st.Page("views/heatmap.py", title="Attention heatmap", icon=":material/grid_on:", url_path="heatmap",
            default=True),
    st.Page("views/all_heads.py", title="All heads", icon=":material/apps:", url_path="all-heads"),
    st.Page("views/softmax.py", title="Softmax rows", icon=":material/bar_chart:", url_path="softmax"),
    st.Page("views/steps.py", title="Step by step", icon=":material/stairs:", url_path="steps"),
    st.Page("views/masks.py", title="Masks", icon=":material/filter_alt:", url_path="masks"),
    st.Page("views/positional.py", title="Positional encoding", icon=":material/waves:", url_path="positional"),
    st.Page("views/architecture.py", title="Architecture", icon=":material/account_tree:", url_path="architecture"),
    st.Page("views/encoder_decoder.py", title="Encoder-decoder", icon=":material/translate:",
            url_path="encoder-decoder"),
])
lone_surrogates.replace_in_the_browser()
with state.url_writes():  # one URL message per run, not one per widget
    state.check_link()
    st.navigation(pages).run()
