"""Step by step: the decoding from <bos>, one word at a time. At step t the decoder reads <bos> w1 .. wt (the
target shifted right), attends to those words only (the causal mask blocks the later ones) and to the Chinese
characters (cross-attention), and scores every word of its vocabulary for w(t+1). The decoding is computed once
(views.translate.run); the step, layer and head only pick what is shown."""
import streamlit as st

from locales import _
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.markdown import code, plain
from views.translate.page import PLAYING, Translate
from views.translate.run import Decoded, decoded, download, translation_line
from views.widgets import notices
from views.widgets.next_word import BEAM, SAMPLE, step_controls, way_controls, which_heads
from views.widgets.pickers import layer_head, pick
from viz.decoding import causal_step_spec, next_word_spec, source_row_spec


def chosen_caption(d: Decoded, kind: str, t: int) -> str:
    word = plain(d.words[t])
    if kind == SAMPLE:
        return _("Blue: the probability each word is drawn with, after the temperature and the cuts; grey: a word "
                 "cut by top-k or top-p (its probability before the cut). Orange: the word drawn, {word}.").format(
            word=word)
    if kind == BEAM:
        return _("Orange: {word}, the word of the best sentence the beam search found; it need not be the most "
                 "likely word at this step.").format(word=word)
    return _("Greedy decoding writes the most likely word: {word} (orange).").format(word=word)


def beams_table(d: Decoded, t: int) -> None:
    """The beam after step t: the open prefixes and the sentences finished so far, with their log-probabilities."""
    beam = d.beams[min(t, len(d.beams) - 1)]
    rows = [(mark, " ".join(d.vocabulary[i] for i in ids), round(score, 3))
            for mark, entries in ((_("open"), beam.open), (_("finished"), beam.finished)) for ids, score in entries]
    st.dataframe({_("state"): [r[0] for r in rows], _("prefix"): [r[1] for r in rows], "log p": [r[2] for r in rows]},
                 hide_index=True)


def section(t: Translate) -> None:
    with lecture.sidebar():  # in front of a class the charts come first
        way = way_controls()
        d = decoded(t.src, way, t.heads_off)
        config = t.loaded.translator.config
        layer, head, mean = layer_head(config.num_layers, config.nhead)
        step = step_controls(len(d.words) - 1, PLAYING)
        notices.show_notices()
        st.markdown(translation_line(way, d))
    read = " ".join(plain(w) for w in d.inputs[:step + 1])
    st.markdown(_("**Step {step}.** The decoder reads (the target shifted right): {read} → writes "
                  "**{word}**").format(step=step, read=read, word=plain(d.words[step])))
    which = which_heads(layer, head, mean)
    left, right = st.columns(2)
    with left:
        show_chart(causal_step_spec(pick(d.decoder, layer, head, mean), d.inputs, step,
                                    _("Decoder self-attention, {which}").format(which=which)), key="translate-causal")
        st.caption(_("Rows: the words read so far, one per step. Grey: blocked by the causal mask (a later word, "
                     "which the decoder may not see); empty rows: steps not taken yet."))
    with right:
        show_chart(source_row_spec(pick(d.cross, layer, head, mean)[step], d.src_tokens,
                                   _("Step {step}: cross-attention, {which}").format(step=step, which=which)),
                   key="translate-cross-row")
        st.caption(_("Where step {step} looks in the Chinese sentence (the encoder's output): one row of the "
                     "cross-attention, summing to 1.").format(step=step))
        words = [d.vocabulary[i] for i in d.candidates[step]]
        chosen = int(d.chosen[step])
        show_chart(next_word_spec(words, d.final[step], d.tempered[step], chosen if chosen >= 0 else None,
                                  _("Step {step}: the {n} most likely next words").format(step=step, n=len(words))),
                   key="translate-next")
        st.caption(chosen_caption(d, way.kind, step))
    if way.kind == BEAM and d.beams:
        st.markdown(_("**The beam after step {step}** ({n} prefixes kept, by summed log probability; a sentence is "
                      "finished when it writes `<eos>`)").format(step=step, n=code(str(way.beam))))
        beams_table(d, step)
    download(d)
