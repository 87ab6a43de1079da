"""Ask: a student asks a real chat model (SmolLM2-135M-Instruct) a question of their own and sees where its answer came
from. The question (?q=) goes into the model's chat template; the answer is written word by word as the model writes
it (views.ask.answer), then every word of it can be picked and looked into (views.ask.step), and the attention sink
measured on it (views.ask.sink). Heads switched off in the sidebar (?off=) rewrite the answer, shown beside the
model's own."""
from dataclasses import dataclass, replace

import streamlit as st

from locales import N_, _
from model.causal.chat import Conversation, conversation
from views.ask.answer import Answer, Question, answer
from views.ask.text import labelled_html, text_html, token_strip
from views.language_model.page import heads_off
from views.shell import lecture
from views.shell.frame import Page
from views.shell.markdown import code
from views.shell.parts import show_part
from views.widgets import link_writes, notices, state
from views.widgets.next_word import GREEDY, SAMPLE, way_controls
from views.widgets.pickers import chat_model_choice

# ?part= -> (label, module): each module has section(asked: Asked)
PARTS = {
    "look": (N_("Where each word looked"), "views.ask.step"),
    "sink": (N_("The attention sink"), "views.ask.sink"),
}
DEFAULT_QUESTION = "What is the capital of France?"
EXAMPLES = (DEFAULT_QUESTION, "Why is the sky blue?", "What do cats eat?", "Translate to English: 我有一只猫")
MAX_QUESTION_CHARS = 2_000  # a question, not a document
MAX_QUESTION_TOKENS = 160  # and at most this many tokens of it (500 Chinese characters can be 1,500 tokens)
MOST, DEFAULT_MOST = 128, 48  # answer tokens written at most (?most=)
PLAYING = "_ask_playing"  # session key: the step part is playing (its fragment reruns by itself)


@dataclass(frozen=True)
class Asked:
    """What every part of the page gets, read-only."""

    question: Question
    loaded: object  # the chat model, loaded (shared by every session: never mutated)
    answer: Answer  # with the sidebar's heads off
    original: Answer | None  # the model's own answer, when heads are off

    @property
    def model(self):
        return self.loaded.model


def intro() -> None:
    st.info(_("SmolLM2-135M-Instruct is a real chat model, the block of today's LLMs (RoPE, RMSNorm, SwiGLU, "
              "grouped-query attention) at 135 million parameters. Ask it something: it reads your question inside "
              "its chat template and writes the answer one token at a time. Then pick any word of the answer and see "
              "which words of your question it drew on, in which layer and head."), icon=":material/chat:")


def question_box() -> str:
    """The question (?q=) and example questions; an empty question says what to do and stops."""
    question = state.text(_("Your question"), "q", DEFAULT_QUESTION, MAX_QUESTION_CHARS, area=False,
                          placeholder=_("e.g. What is the capital of France?"))
    state.examples("q", EXAMPLES)
    if not question.strip():
        st.info(_("Type a question above, for example: What is the capital of France?"), icon=":material/edit:")
        notices.show_notices()
        link_writes.stop()
    return question


def read_question(tokenizer, question: str) -> Conversation:
    """The question in the chat template, cut to its first MAX_QUESTION_TOKENS tokens (said in a notice)."""
    pieces = tokenizer(question, return_offsets_mapping=True, add_special_tokens=False)["offset_mapping"]
    if len(pieces) > MAX_QUESTION_TOKENS:
        notices.notice(_("This question has {total} tokens; the page reads at most {most} of a question, so it reads "
                         "only the first {most}: the rest was cut.").format(total=len(pieces),
                                                                            most=MAX_QUESTION_TOKENS))
        question = question[:pieces[MAX_QUESTION_TOKENS - 1][1]]
    return conversation(tokenizer, question)


def first_difference(a: Answer, b: Answer) -> int | None:
    """The first step where the two answers write different words (None: the same words)."""
    for i, (x, y) in enumerate(zip(a.writing.ids, b.writing.ids)):
        if x != y:
            return i
    return None if len(a.writing.ids) == len(b.writing.ids) else min(len(a.writing.ids), len(b.writing.ids))


def show_answers(asked: Asked) -> None:
    a, o = asked.answer, asked.original
    ended = _("(end of turn)") if a.ended else _("(cut at {n} tokens)").format(n=a.steps)
    lines = 2 if lecture.on() else None  # on a projector the chart below must fit: the rest of the answer scrolls
    if o is None and lecture.on():
        st.html(labelled_html(_("Answer {ended}:").format(ended=ended), a.text, 2))
        return
    if o is None:
        st.markdown(_("**Answer** {ended}:").format(ended=ended))
        st.html(text_html(a.text))
        return
    left, right = st.columns(2)
    left.markdown(_("**The model's own answer:**"))
    left.html(text_html(o.text, lines=lines))
    right.markdown(_("**With the heads switched off:**"))
    right.html(text_html(a.text, lines=lines))
    part = first_difference(o, a)
    if part is None:
        st.caption(_("The same answer, word for word: the heads switched off did not change it."))
    else:
        st.caption(_("They part at token {step}: {own} against {off}.").format(
            step=part, own=code(o.writing.words[part]) if part < o.steps else "—",
            off=code(a.writing.words[part]) if part < a.steps else "—"))


def view(page: Page) -> None:
    choice = chat_model_choice()
    loaded = page.model(choice)
    off = heads_off(loaded.model)
    with lecture.sidebar():  # in front of a class the charts come first
        question = question_box()
        most = state.int_slider(_("Answer tokens at most"), "most", 1, MOST, DEFAULT_MOST)
        way = way_controls((GREEDY, SAMPLE))
        c = read_question(loaded.tokenizer, question)
        notices.show_notices()
    if not lecture.on():  # in front of a class the answer and the charts come first
        with st.expander(_("The conversation as the model reads it: {n} tokens (grey: the chat template's)").format(
                n=len(c.ids)), expanded=False):
            token_strip(c.tokens, [not a for a in c.asked])
    q = Question(choice, c, most, way, off)
    original = answer(loaded, replace(q, heads_off=())) if off else None
    asked = Asked(q, loaded, answer(loaded, q), original)
    show_answers(asked)
    with lecture.sidebar():
        part = state.choice(_("Show"), "part", list(PARTS), "look", widget="segmented_control",
                            format_func={key: _(label) for key, (label, _m) in PARTS.items()}.__getitem__)
    show_part(PARTS, part, "look", PLAYING, asked)
