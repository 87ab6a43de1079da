"""Attention heatmap: one layer, one head (or their mean), token x token."""
import numpy as np
import streamlit as st

from viz.attention import CHART_CONFIG, attention_heatmap
from views.shared import DEFAULT_TEXT, MAX_TEXT_CHARS, attention_for, int_param
from model.sources import DEFAULT_KEY

st.title("Attention heatmap")
st.caption("Each row is a query token; its cells are the softmax probabilities over the keys it attends to. "
           "Rows sum to 1.")

notices: list[str] = []
text = st.text_area("Sentence", value=st.query_params.get("text", DEFAULT_TEXT), max_chars=None, height=80)
if len(text) > MAX_TEXT_CHARS:
    notices.append(f"The text was cut to its first {MAX_TEXT_CHARS:,} characters.")
    text = text[:MAX_TEXT_CHARS]
if not text.strip():
    st.info("Type a sentence above to see its attention.")
    st.stop()

try:
    result = attention_for(DEFAULT_KEY, text)
except Exception as e:  # a missing package or unreadable checkpoint: say so, never a traceback
    st.error(f"The model could not run: {e}")
    st.stop()

layers, heads, T, _ = result.probs.shape
if result.truncated:
    notices.append(f"The text has {result.total_tokens} tokens; the model reads at most {T}, so it was cut.")

col1, col2, col3 = st.columns([2, 2, 1])
layer = col1.slider("Layer", 0, layers - 1, int_param("layer", 0, 0, layers - 1, notices))
head_default = st.query_params.get("head", "0")
mean = col3.toggle("Mean of heads", value=head_default == "mean")
head = col2.slider("Head", 0, heads - 1, int_param("head", 0, 0, heads - 1, notices) if head_default != "mean" else 0,
                   disabled=mean)
auto_range = col3.toggle("Auto colour range", value=st.query_params.get("range") == "auto")

for notice in notices:
    st.warning(notice)

st.query_params.update({"text": text, "layer": str(layer), "head": "mean" if mean else str(head)})
if auto_range:
    st.query_params["range"] = "auto"
elif "range" in st.query_params:
    del st.query_params["range"]

probs = result.probs[layer].mean(axis=0) if mean else result.probs[layer, head]
which = "mean of heads" if mean else f"head {head}"
st.plotly_chart(attention_heatmap(np.asarray(probs), result.tokens, result.tokens,
                                  title=f"Layer {layer}, {which}", auto_range=auto_range), config=CHART_CONFIG)
st.caption(f"{T} tokens · {layers} layers × {heads} heads · all-MiniLM-L6-v2")
