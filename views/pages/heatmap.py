"""Attention heatmap: one layer, one head (or their mean), token x token."""
import numpy as np
import streamlit as st

from locales import _
from runtime.runs import Run
from views.charts.head_chart import preloads, selection, show_head_chart
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import downloads, link_writes, notices, special_tokens, state
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
    layer = first[0]  # the layer whose trace is offered, if the whole is too big (never for maps this small)
    if preloads(attentions):  # small: the chart draws its own sliders and swaps the maps itself
        _chart_and_files(run, attentions, tokens, first, mean, auto_range, shown)
    else:
        layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=controls)
        head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=controls, disabled=mean)
        notices.show_notices()
        _draw(run, attentions, tokens, (layer, head), mean, auto_range, shown, in_browser=False)
    # the same file whatever the selection: outside the fragment, not sent again with each move
    downloads.trace_button(run, layer)


@link_writes.fragment
def _chart_and_files(run: Run, attentions: np.ndarray, tokens, first: tuple[int, int], mean: bool, auto_range: bool,
                     shown: special_tokens.Shown) -> None:
    """The chart with its own sliders, and what follows its selection (the link, the download of this map).

    A fragment inside the page's: a move of the chart's sliders reruns only this, with the arguments of the page's
    last run (the same run and maps, which the browser already has, held by the session until its next page run),
    not the text box and the toggles above. At 40 students a move took 4.5 ms of the server's CPU and 14 messages as
    part of the page, 3.2 ms and 7-8 on its own, and its p95 fell from 33-52 ms to 13-15 ms, the plain Streamlit
    page's (bench/load.py, bench/results/load.md)."""
    layer, head = selection("heatmap", run.num_layers, run.num_heads, first)
    notices.show_notices()
    _draw(run, attentions, tokens, (layer, head), mean, auto_range, shown, in_browser=True)


def _draw(run: Run, attentions: np.ndarray, tokens, chosen: tuple[int, int], mean: bool, auto_range: bool,
          shown: special_tokens.Shown, in_browser: bool) -> None:
    """The map of `chosen` (layer, head), or its layer's mean of heads; with every map preloaded (in_browser) the
    chart's own sliders swap them in the browser. Then the download of the map shown."""
    layer, head = chosen
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
        show_head_chart(figure, maps, title, "heatmap", chosen, run.num_heads)
    else:
        show_chart(figure, key="heatmap")
    shown.say()

    downloads.button(_("Download this map (CSV)"), lambda: downloads.head_csv(np.asarray(probs), tokens),
                     f"attention_layer{layer}_{'mean' if mean else f'head{head}'}.csv", "text/csv")
