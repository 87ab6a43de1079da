"""Alignment: the whole cross-attention of the finished translation, English words (rows) over Chinese characters
(columns), beside the decoder's self-attention. In the toy language a time word comes first in Chinese and last in
English, and a measure word (只, 本, 辆, 个) has no English word: the map shows both."""
import functools

import numpy as np
import streamlit as st

from locales import _
from views.charts.mounted import show_chart
from views.shell.markdown import code, plain
from views.translate.page import Translate
from views.translate.run import decoded, download, translation_line
from views.widgets import notices
from views.widgets.next_word import way_controls, which_heads
from views.widgets.pickers import layer_head, pick
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
    notices.show_notices()
    which = which_heads(layer, head, mean)
    cross = pick(d.cross, layer, head, mean)
    st.markdown(translation_line(way, d))
    left, right = st.columns([3, 2])
    with left:
        show_chart(heatmap_spec(cross, d.words, d.src_tokens, _("Cross-attention, {which}").format(which=which),
                                keys=_("key: Chinese character (encoder output)"),
                                queries=_("query: the step writing")),
                   key="translate-alignment")
        st.caption(_("Row *cat* is the step that wrote *cat* (its query is the word before, read by the decoder). "
                     "Read across a row to see which characters that word came from."))
    with right:
        show_chart(heatmap_spec(pick(d.decoder, layer, head, mean), d.words, d.inputs,
                                _("Decoder self-attention, {which}").format(which=which), keys=_("key: a word read"),
                                queries=_("query: the step writing")), key="translate-alignment-self")
        st.caption(_("The same steps over the English words read so far: the upper triangle is empty, the causal "
                     "mask blocks every later word."))
    st.markdown(_("**Where each word looks most** ({which}): {links}").format(
        which=which, links=strongest_links(cross, d.words, d.src_tokens)))
    measures = unattended(cross, d.src_tokens)
    if measures:
        each = [_("{word} at most {share}").format(word=code(c), share=f"{p:.0%}") for c, p in measures]
        shown = functools.reduce(lambda items, item: _("{items}, {item}").format(items=items, item=item), each)
        st.caption(_("Measure words have no English word: {measures} of any step's attention here. A time word "
                     "(今天, 昨天, 明天) opens the Chinese sentence and closes the English one: its row is at the "
                     "bottom, its column at the left: try 昨天我买了一本书.").format(measures=shown))
    download(d)
