"""Entry point: page config and navigation. Every page lives in views/."""
import streamlit as st

st.set_page_config(page_title="Attention visualizer", page_icon="🔎", layout="wide")
st.navigation([
    st.Page("views/heatmap.py", title="Attention heatmap", icon="🟪", url_path="heatmap", default=True),
    st.Page("views/all_heads.py", title="All heads", icon="🔲", url_path="all-heads"),
    st.Page("views/softmax.py", title="Softmax rows", icon="📊", url_path="softmax"),
    st.Page("views/steps.py", title="Step by step", icon="🪜", url_path="steps"),
    st.Page("views/masks.py", title="Masks", icon="🎭", url_path="masks"),
    st.Page("views/positional.py", title="Positional encoding", icon="〰️", url_path="positional"),
    st.Page("views/architecture.py", title="Architecture", icon="🏗️", url_path="architecture"),
    st.Page("views/encoder_decoder.py", title="Encoder-decoder", icon="🔁", url_path="encoder-decoder"),
]).run()
