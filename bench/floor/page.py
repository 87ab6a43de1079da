"""One floor page: a text area bound to ?text=, sliders bound to ?layer= and ?head=, one heatmap."""
import os
import zlib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

# As the app: Streamlit's chart theme replaces plotly's template, so it is not built and sent with each chart.
pio.templates.default = None
LAYERS, HEADS = 6, 12  # all-MiniLM-L6-v2, the app's default model
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
FRAGMENT = os.environ.get("ATTNVIZ_FLOOR_FRAGMENT", "") not in ("", "0")


def attention(text: str, layer: int, head: int) -> tuple[list[str], np.ndarray]:
    """Whitespace tokens and a (T, T) float32 row softmax, the same for the same text, layer and head."""
    tokens = text.split()
    rng = np.random.default_rng(zlib.crc32(f"{layer}/{head}/{text}".encode()))
    scores = rng.standard_normal((len(tokens), len(tokens)), dtype=np.float32)
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    return tokens, probs / probs.sum(axis=1, keepdims=True)


def bound(key: str, parse, default):
    """The widget's value before it is drawn: kept in the session, else from the URL, else the default."""
    if key not in st.session_state:
        try:
            st.session_state[key] = parse(st.query_params[key])
        except (KeyError, ValueError):
            st.session_state[key] = st.session_state.get("_" + key, default)


def written(key: str):
    """Keep the value for the next page (a page switch drops the widget) and put it in the URL if it changed."""
    value = st.session_state["_" + key] = st.session_state[key]
    if st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)
    return value


def in_range(high: int):
    def parse(raw: str) -> int:
        value = int(raw)
        if not 0 <= value <= high:
            raise ValueError(raw)
        return value
    return parse


def head_view(text: str) -> None:
    bound("layer", in_range(LAYERS - 1), 0)
    bound("head", in_range(HEADS - 1), 0)
    st.slider("Layer", 0, LAYERS - 1, key="layer")
    st.slider("Head", 0, HEADS - 1, key="head")
    layer, head = written("layer"), written("head")
    tokens, probs = attention(text, layer, head)
    labels = [f"{i}:{t}" for i, t in enumerate(tokens)]  # unique: plotly merges equal categories
    st.plotly_chart(go.Figure(go.Heatmap(z=probs, x=labels, y=labels, zmin=0, zmax=1, colorscale="Viridis"),
                              layout={"title": {"text": f"Layer {layer}, head {head}"},
                                      "yaxis": {"autorange": "reversed"}}))


def page(title: str) -> None:
    st.title(title)
    bound("text", str, DEFAULT_TEXT)
    st.text_area("Sentence", key="text")
    text = written("text")
    if not text.split():
        st.info("Type a sentence above.")
        return
    (st.fragment(head_view) if FRAGMENT else head_view)(text)
