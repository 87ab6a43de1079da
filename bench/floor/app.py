"""The floor: a bare Streamlit app with the attention visualizer's interaction and nothing else.

Two pages (heatmap at "/" and "/heatmap", all heads at "/all-heads"), each: a sentence from ?text=, a layer and
a head slider, one token x token plotly heatmap. The all-heads page first draws every head, as a user would in plotly
with the fewest objects: one heatmap of the layers x heads maps side by side (NaN between them), the way the app's page
shows them in one image. No model: the map is a row softmax of numbers seeded by the text, the layer and the head
(numpy only). bench/load.py drives it with the same session script as the app, so its figures are what the framework
itself costs for this interaction.

    .venv/bin/python bench/load.py --spawn floor      # or: .venv/bin/streamlit run bench/floor/app.py
ATTNVIZ_FLOOR_FRAGMENT=1 puts the sliders and the map in an st.fragment, as the app's pages do.
ATTNVIZ_FLOOR_MODEL=compiled (the app's compiled pass of its default model) or =hf (Hugging Face's BertModel, eager)
runs a real model for each new sentence, held in the session: the floor plus the model's own cost.
ATTNVIZ_FLOOR_ALL_HEADS says what the all-heads page has: "controls" (the default) is the app's all-heads page written
as a plain Streamlit page, every control of it working (downsampling, tile size, colour range, special tokens, the
link to the big view, the two downloads); "grid" every head and the chosen one, no settings; "one" the chosen head
only (the floor's all-heads page before 2026-11-26).
ATTNVIZ_FLOOR_SIDEBAR=app (the default) has the app's sidebar on every page, as plain widgets that each work (the
language of the page's words, lecture mode, the model's pass, the charts' download format: bench/floor/sidebar.py);
=none has no sidebar (the floor before 2026-11-26, later).
"""
import streamlit as st

st.navigation([
    st.Page("heatmap.py", title="Attention heatmap", url_path="heatmap", default=True),
    st.Page("all_heads.py", title="All heads", url_path="all-heads"),
]).run()
