"""The next word: the prompt read, the ten most likely next words as bars, and the writing step by step. At step t
the model reads the prompt and the t words it wrote, attends only to what came before (the causal mask blocks the
later words), and scores every word of its vocabulary for the next one. The writing is computed once
(views.language_model.run); the step, layer and head only pick what is shown."""
import streamlit as st

from locales import _
from views.charts.mounted import show_chart
from views.language_model.page import PLAYING, LanguageModel
from views.language_model.run import download, writing, writing_line
from views.shell import lecture
from views.shell.markdown import plain
from views.widgets import notices
from views.widgets.next_word import GREEDY, SAMPLE, step_controls, way_controls, which_heads
from views.widgets.pickers import first_head, layer_head, pick
from viz.decoding import causal_step_spec, next_word_spec


def chosen_caption(word: str, kind: str) -> str:
    if kind == SAMPLE:
        return _("Blue: the probability each word is drawn with, after the temperature and the cuts; grey: a word "
                 "cut by top-k or top-p (its probability before the cut). Orange: the word drawn, {word}.").format(
            word=plain(word))
    return _("Greedy decoding writes the most likely word: {word} (orange).").format(word=plain(word))


def section(lm: LanguageModel) -> None:
    config = lm.model.config
    with lecture.sidebar():  # in front of a class the charts come first
        way = way_controls((GREEDY, SAMPLE))
        w = writing(lm, way)
        first = first_head(lm.choice, config.n_layer, config.n_head)  # the toy GPT's induction head
        layer, head, mean = layer_head(config.n_layer, config.n_head, layer=first[0], head=first[1])
        step = step_controls(len(w.words) - 1, PLAYING)
        notices.show_notices()
        st.markdown(writing_line(way, w))
    read = " ".join(plain(t) for t in w.tokens[:w.row(step) + 1][-24:])
    st.markdown(_("**Step {step}.** The model reads {n} tokens, ending: … {read} → writes **{word}**").format(
        step=step, n=w.row(step) + 1, read=read, word=plain(w.words[step])))
    which = which_heads(layer, head, mean)
    left, right = lecture.charts_row(2)
    with left:
        show_chart(causal_step_spec(pick(w.attentions, layer, head, mean), w.tokens, w.row(step),
                                    _("Causal self-attention, {which}").format(which=which), outline=True),
                   key="lm-causal")
        st.caption(_("Rows: every token read so far; the outlined row is the one this step adds (the last word read), "
                     "and its attention decides what comes next. Grey: blocked by the causal mask (a later token); "
                     "empty rows: steps not taken yet."))
    with right:
        chosen = int(w.chosen[step])
        show_chart(next_word_spec(w.candidates[step], w.final[step], w.tempered[step], chosen if chosen >= 0 else None,
                                  _("Step {step}: the {n} most likely next words").format(
                                      step=step, n=len(w.candidates[step]))), key="lm-next")
        st.caption(chosen_caption(w.words[step], way.kind))
    download(w, step)
