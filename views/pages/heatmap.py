"""Attention heatmap: one layer, one head (or their mean), token x token."""
import numpy as np
import streamlit as st

from locales import _
from views.charts.head_chart import preloads, selection, show_head_chart
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import downloads, special_tokens, state
from views.widgets.pickers import first_head
from viz.attention import heatmap_spec


def view(page: Page) -> None:
    run = page.run
    # One row, not st.columns: every block (a row, a column) is one more message to the browser on every rerun.
    controls = lecture.place() or st.container(horizontal=True, gap="medium", vertical_alignment="center")
    mean = state.toggle(_("Mean of heads"), "mean", False, container=controls)
    auto_range = state.toggle(_("Auto colour range"), "auto", False, container=controls)
    shown = special_tokens.switch(run, controls)
    attentions, tokens = shown.maps(run.attentions), shown.tokens(run.tokens)  # (layers, heads, T, T) as drawn
    first = first_head(page.choice, run.num_layers, run.num_heads)
    in_browser = preloads(attentions)  # small: the chart draws its own sliders and swaps the maps itself
    if in_browser:
        layer, head = selection("heatmap", run.num_layers, run.num_heads, first)
    else:
        layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=controls)
        head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=controls, disabled=mean)
    state.show_notices()

    probs = attentions[layer].mean(axis=0) if mean else attentions[layer, head]
    # what was run goes in the chart (and in its PNG), not in a caption: one element less per rerun; the chart's own
    # sliders fill {layer} and {head} in the browser
    title = _("Layer {layer}, mean of heads") if mean else _("Layer {layer}, head {head}")
    note = _("{tokens} tokens · {layers} layers × {heads} heads · {model}").format(
        tokens=len(tokens), layers=run.num_layers, heads=run.num_heads, model=run.label)
    figure = heatmap_spec(probs, tokens, tokens, title=title.format(layer=layer, head=head),
                          auto_range=auto_range, note=note)
    if in_browser:
        maps = attentions.mean(axis=1, keepdims=True) if mean else attentions  # (layers, heads or 1, T, T)
        show_head_chart(figure, maps, title, "heatmap", (layer, head), run.num_heads)
    else:
        show_chart(figure, key="heatmap")
    shown.say()

    downloads.button(_("Download this map (CSV)"), lambda: downloads.head_csv(np.asarray(probs), tokens),
                     f"attention_layer{layer}_{'mean' if mean else f'head{head}'}.csv", "text/csv")
    downloads.button(_("Download the whole trace (NumPy .npz)"), lambda: downloads.trace_npz(run),
                     "attention_trace.npz", "application/octet-stream")
