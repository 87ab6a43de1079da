"""Entry point: page config and navigation. Every page lives in views/."""
import streamlit as st

st.set_page_config(page_title="Attention visualizer", page_icon="🔎", layout="wide")
st.navigation([
    st.Page("views/heatmap.py", title="Attention heatmap", icon="🟪", default=True),
]).run()
