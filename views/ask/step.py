"""Where each word looked: pick a word of the answer (the step) and see its attention over the whole conversation in
one head, the mean of a layer's heads, or every head of every layer at once; the question's words ranked by how much
that word drew on them (attention, and gradient x input beside it); the heads that looked most at each question word;
the ten most likely next words; and the logit lens of that step. Everything but the saliency and the lens (a step's
row, once per step) is read from the answer (views.ask.answer): no step, layer or head change runs the model."""
import numpy as np
import streamlit as st
import torch

from locales import _
from model.analysis.rollout import word_saliency
from model.lens import logit_lens
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.ask.answer import read_ids
from views.ask.page import PLAYING, Asked
from views.ask.text import token_strip
from views.charts.mounted import show_chart
from views.language_model.run import distribution_csv, npz
from views.language_model.writing import chosen_caption
from views.shell import lecture
from views.shell.errors import cached
from views.shell.markdown import code
from views.widgets import downloads, notices, special_tokens, state
from views.widgets.next_word import step_controls, which_heads
from views.widgets.pickers import first_head, layer_head, pick
from viz.ask import every_head_spec, ranking_spec
from viz.decoding import causal_step_spec, next_word_spec
from viz.lens import lens_figure
from viz.spec import FigureSpec

TOP_HEADS = 3  # heads named per question word
MOST_BUTTONS = 12  # question words with a button that opens their strongest head


def saliency_at(asked: Asked, step: int) -> np.ndarray:
    """(row + 1,) the norm of gradient x input of log p(the word written at `step`), once per (answer, step)."""
    a, row = asked.answer, asked.answer.row(step)
    ids = torch.tensor([read_ids(asked.question.conversation, a.writing)[:row + 1]], dtype=torch.long)

    def compute():
        return on_model_thread(word_saliency, asked.model, ids, row, a.writing.ids[step])[1]

    return cached(("ask-saliency", asked.question.key, step), compute, _("The saliency"), kind=Kind.ATTRIBUTION)


def lens_at(asked: Asked, step: int):
    """Each layer's output at the step's row read out as if it were the last: the logit lens of one step, once per
    (answer, step). The 30 layers are read as one batch of rows (given to model.lens as 30 positions of one layer):
    the output matrix is then read once, 15 ms, not once a layer, 185 ms."""
    a = asked.answer
    outputs = torch.from_numpy(np.array(a.hidden[None, :, step]))  # (1, layers, E)
    chosen = torch.tensor([a.writing.ids[step]]).expand(outputs.size(1))

    def compute():
        lens = on_model_thread(logit_lens, outputs, asked.model.read_out, chosen, False)
        return (lens.top_ids[0, :, None].numpy(), lens.top_p[0, :, None].numpy(), lens.chosen_p[0, :, None].numpy(),
                lens.chosen_rank[0, :, None].numpy())  # each (layers, 1, ...): one column

    return cached(("ask-lens", asked.question.key, step), compute, _("The logit lens"), kind=Kind.ATTRIBUTION)


def open_head(layer: int, head: int) -> None:
    st.session_state.update(layer=layer, head=head, mean=False, every=False)


def strongest_heads(attentions: np.ndarray, row: int, positions: np.ndarray, k: int = TOP_HEADS) -> list:
    """For each position: its k (layer, head, p) with the most attention from `row`, most first."""
    layers, heads = attentions.shape[:2]
    out = []
    for pos in positions:
        p = attentions[:, :, row, pos].ravel()  # (layers * heads,)
        best = np.argsort(-p, kind="stable")[:k]
        out.append([(int(i // heads), int(i % heads), float(p[i])) for i in best])
    return out


def section(asked: Asked) -> None:
    a, w, config = asked.answer, asked.answer.writing, asked.model.config
    with lecture.sidebar():  # in front of a class the charts come first
        first = first_head(asked.question.choice, config.n_layer, config.n_head)
        layer, head, mean = layer_head(config.n_layer, config.n_head, layer=first[0], head=first[1])
        row_of = st.columns(2, vertical_alignment="bottom")
        every = state.toggle(_("Every layer and head at once"), "every", False, container=row_of[0])
        grad = state.toggle(_("Gradient × input too"), "grad", False, container=row_of[1],
                            help=_("Beside the attention, each question word's gradient × input: a backward pass "
                                   "through the 30 layers, about half a second for each answer token the first time "
                                   "it is shown."))
        mode = special_tokens.choose()
        step = step_controls(a.steps - 1, PLAYING)
        notices.show_notices()
    row = a.row(step)
    shown = special_tokens.hidden(mode, [(w.attentions, a.template, a.template)], zip(w.tokens, a.template))[0]
    said = _("**Token {step} of the answer.** The model reads {n} tokens and writes **{word}**.")
    st.markdown(said.format(step=step, n=row + 1, word=code(w.words[step])))
    if not lecture.on():  # in front of a class the chart comes first
        st.caption(_("The last tokens it reads (grey: the chat template's):"))
        token_strip(w.tokens[max(0, row - 15):row + 1], a.template[max(0, row - 15):row + 1])
    tokens = shown.key_tokens(w.tokens[:row + 1])
    if lecture.on():  # in front of a class the lesson's chart first: which question words this word drew on
        question_words(asked, step, layer, head, mean, shown, grad)
    left, right = lecture.charts_row(2)
    with left:
        if every:
            rows = shown.key_rows(w.attentions[:, :, row, :row + 1].reshape(-1, row + 1))
            show_chart(every_head_spec(rows, tokens, config.n_head, _("Token {step}: its attention in every head of "
                                                                       "every layer").format(step=step)),
                       key="ask-every")
            st.caption(_("A row per head (layer.head, layer 0 at the top), a column per token read; the brighter, the "
                         "more of the head's attention goes to that token."))
        else:
            shown_row = int(shown.keep[:row].sum())
            show_chart(causal_step_spec(shown.maps(pick(w.attentions, layer, head, mean)), shown.tokens(w.tokens),
                                        shown_row, _("Attention, {which}").format(which=which_heads(layer, head, mean)),
                                        outline=True), key="ask-map")
            st.caption(_("Rows: every token read; the outlined row is this step's (the last token read), and its "
                         "attention decides the next word. Grey: blocked by the causal mask; empty rows: steps not "
                         "taken yet."))
        shown.say()
    with right:
        chosen = int(w.chosen[step])
        show_chart(next_word_spec(w.candidates[step], w.final[step], w.tempered[step], chosen if chosen >= 0 else None,
                                  _("Token {step}: the {n} most likely next tokens").format(
                                      step=step, n=len(w.candidates[step]))), key="ask-next")
        st.caption(chosen_caption(w.words[step], asked.question.way.kind))
    if not lecture.on():
        question_words(asked, step, layer, head, mean, shown, grad)
    lens_part(asked, step)
    downloads_row(asked, step)


def question_words(asked: Asked, step: int, layer: int, head: int, mean: bool, shown, grad: bool) -> None:
    """The question's words ranked by this step's attention (and saliency), and each word's strongest heads."""
    a, w = asked.answer, asked.answer.writing
    row = a.row(step)
    positions = np.flatnonzero(a.asked[:row + 1])
    if positions.size == 0:
        return
    words = [w.tokens[i] for i in positions]
    # the row over the keys drawn (the question's words are never hidden), renormalised as the switch says
    attention = shown.key_rows(pick(w.attentions, layer, head, mean)[row, :row + 1])
    drawn = np.flatnonzero(a.asked[:row + 1][shown.kept_keys[:row + 1]])
    share = None
    if grad:
        norm = saliency_at(asked, step)
        share = norm[positions] / max(float(norm[positions].sum()), 1e-12)
    title = _("Question words by attention, {which}").format(which=which_heads(layer, head, mean))
    if lecture.on():  # the question in the chart's title: on a projector the chart must fit under the answer
        title = _("What {word} drew on: {title}").format(word=w.words[step].strip() or w.words[step], title=title)
    else:
        st.subheader(_("Which words of the question did {word} draw on?").format(word=code(w.words[step])))
    left, right = lecture.charts_row(2)
    with left:
        show_chart(ranking_spec(words, attention[drawn], share, title), key="ask-rank")
        st.caption(_("Blue: the attention this step's row gives each question word.") + " " + (
            _("Orange: each word's share of gradient × input over the question's words, where y is the "
              "log-probability of the word written: how much the answer word changes with that word's input "
              "vector.") if grad else _("Switch on gradient × input above to compare it with the attention.")))
    with right:
        strongest = strongest_heads(w.attentions, row, positions)
        table = {_("question word"): words}
        for k in range(TOP_HEADS):
            table[_("head {rank}").format(rank=k + 1)] = [f"{best[k][0]}.{best[k][1]}  ({best[k][2]:.2f})"
                                                           for best in strongest]
        st.markdown(_("**The heads that looked most at each question word** (layer.head, and its attention):"))
        st.dataframe(table, hide_index=True, width="stretch")
        buttons = st.container(horizontal=True, gap="small")
        order = np.argsort([-best[0][2] for best in strongest], kind="stable")[:MOST_BUTTONS]
        for i in order:
            top = strongest[i][0]
            buttons.button(f"{code(words[i])} → {top[0]}.{top[1]}", key=f"ask-head-{i}",
                           on_click=open_head, args=top[:2], type="tertiary",
                           help=_("Show layer {layer} head {head} above").format(layer=top[0], head=top[1]))


def lens_spec(asked: Asked, step: int) -> FigureSpec:
    a, w = asked.answer, asked.answer.writing
    top_ids, top_p, chosen_p, rank = lens_at(asked, step)
    token = asked.loaded.reader.token
    words = [[[token(int(i)) for i in cell] for cell in layer] for layer in top_ids.tolist()]
    return lens_figure(chosen_p, words, top_p, rank, [f"{w.tokens[a.row(step)]} → {w.words[step]}"],
                       _("Token {step}: each layer read out as if it were the last").format(step=step),
                       columns=_("the token read → the token written"),
                       hover=_("layer %{y}<br>the token written: p = %{z:.3f}, rank %{customdata[1]}<br>top "
                               "tokens:<br>%{customdata[0]}<extra></extra>"))


def lens_part(asked: Asked, step: int) -> None:
    st.subheader(_("Which word would each layer have written?"))
    show_chart(lens_spec(asked, step), key="ask-lens")
    st.caption(_("Each layer's output at this step, through the final RMSNorm and the output matrix: the token it "
                 "would write and its probability; the colour is that layer's probability of the token the model "
                 "wrote."))


def downloads_row(asked: Asked, step: int) -> None:
    w = asked.answer.writing
    row = st.columns(2)
    downloads.button(_("Download this answer (NumPy .npz)"), lambda: npz(w), "ask_answer.npz",
                     "application/octet-stream", container=row[0])
    downloads.button(_("Download token {step}'s distribution (CSV)").format(step=step),
                     lambda: distribution_csv(w, step), f"ask_step{step}.csv", "text/csv", container=row[1])
