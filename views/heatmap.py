"""Attention heatmap: one layer, one head (or their mean), token x token."""
import numpy as np
import streamlit as st

from views import downloads, shared, state
from viz.attention import heatmap_spec

st.title("Attention heatmap")
st.caption("Each row is a query token; its cells are the softmax probabilities over the keys it attends to. "
           "Every row sums to 1.")

choice = shared.model_choice()


@state.fragment
def head_view(choice: shared.Choice) -> None:
    """Sentence, sliders, map and downloads: typing or moving a slider reruns only this part (not the sidebar)."""
    text = shared.sentence()
    run = shared.run(choice, text)
    # One row, not st.columns: every block (a row, a column) is one more message to the browser on every rerun.
    controls = st.container(horizontal=True, gap="medium", vertical_alignment="center")
    mean = state.toggle("Mean of heads", "mean", False, container=controls)
    auto_range = state.toggle("Auto colour range", "auto", False, container=controls)
    layer = state.int_slider("Layer", "layer", 0, run.num_layers - 1, 0, container=controls)
    head = state.int_slider("Head", "head", 0, run.num_heads - 1, 0, container=controls, disabled=mean)
    state.show_notices()

    probs = run.attentions[layer].mean(axis=0) if mean else run.attentions[layer, head]
    which = "mean of heads" if mean else f"head {head}"
    # what was run goes in the chart (and in its PNG), not in a caption: one element less per rerun
    st.plotly_chart(heatmap_spec(probs, run.tokens, run.tokens, title=f"Layer {layer}, {which}",
                                 auto_range=auto_range, note=f"{len(run.tokens)} tokens · {run.num_layers} "
                                 f"layers × {run.num_heads} heads · {run.label}"), config=shared.chart_config())

    downloads.button("Download this map (CSV)", lambda: shared.head_csv(np.asarray(probs), run.tokens),
                     f"attention_layer{layer}_{'mean' if mean else f'head{head}'}.csv", "text/csv")
    downloads.button("Download the whole trace (NumPy .npz)", lambda: shared.trace_npz(run), "attention_trace.npz",
                     "application/octet-stream")


head_view(choice)
