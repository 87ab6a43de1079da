"""Alignment: the whole cross-attention of the finished translation, English words (rows) over Chinese characters
(columns), beside the decoder's self-attention. In the toy language a time word comes first in Chinese and last in
English, and a measure word (只, 本, 辆, 个) has no English word: the map shows both."""
import numpy as np
import streamlit as st

from views import state
from views.chart import show_chart
from views.markdown import code
from views.pickers import layer_head, pick
from views.translate import Translate
from views.translate_run import decoded, download, way_controls
from views.translation import plain
from viz.attention import heatmap_spec

MEASURE_WORDS = "只本辆个"


def strongest_links(cross: np.ndarray, words, src_tokens) -> str:
    """Each English word -> the Chinese character its step attends to most."""
    links = [f"{plain(word)} → {code(src_tokens[int(row.argmax())])}" for word, row in zip(words, cross)]
    return " · ".join(links)


def unattended(cross: np.ndarray, src_tokens) -> list[tuple[str, float]]:
    """Measure words of the source and the most attention any step gives them."""
    return [(c, float(cross[:, i].max())) for i, c in enumerate(src_tokens) if c in MEASURE_WORDS]


def section(t: Translate) -> None:
    way = way_controls()
    d = decoded(t.src, way, t.heads_off)
    config = t.loaded.translator.config
    layer, head, mean = layer_head(config.num_layers, config.nhead)
    state.show_notices()
    which = f"layer {layer}, " + ("mean of heads" if mean else f"head {head}")
    cross = pick(d.cross, layer, head, mean)
    st.markdown(f"**Translation** ({way.describe()}): {' '.join(plain(w) for w in d.translation.split()) or '—'}")
    left, right = st.columns([3, 2])
    with left:
        show_chart(heatmap_spec(cross, d.words, d.src_tokens, f"Cross-attention, {which}",
                                keys="key: Chinese character (encoder output)", queries="query: the step writing"),
                   key="translate-alignment")
        st.caption("Row *cat* is the step that wrote *cat* (its query is the word before, read by the decoder). "
                   "Read across a row to see which characters that word came from.")
    with right:
        show_chart(heatmap_spec(pick(d.decoder, layer, head, mean), d.words, d.inputs,
                                f"Decoder self, {which}", keys="key: a word read",
                                queries="query: the step writing"), key="translate-alignment-self")
        st.caption("The same steps over the English words read so far: the upper triangle is empty, the causal "
                   "mask blocks every later word.")
    st.markdown(f"**Where each word looks most** ({which}): {strongest_links(cross, d.words, d.src_tokens)}")
    measures = unattended(cross, d.src_tokens)
    if measures:
        shown = ", ".join(f"{code(c)} at most {p:.0%}" for c, p in measures)
        st.caption(f"Measure words have no English word: {shown} of any step's attention here. A time word "
                   "(今天, 昨天, 明天) opens the Chinese sentence and closes the English one: its row is at the "
                   "bottom, its column at the left: try 昨天我买了一本书.")
    download(d)
