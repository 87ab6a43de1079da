"""The answer to a question: written once per (model, question, way of choosing, length, heads switched off) on a
model thread, shown word by word as it comes (runtime.streams), then kept in the budget and shared by every session.
It keeps what every step of the page reads, so that moving the step, the layer or the head never runs the model: the
writing (views.language_model.run: candidates, probabilities, every attention map) and each layer's output at every
token read (the logit lens reads a step's row of them)."""
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from locales import _
from model.causal.chat import Conversation
from model.causal.logit_lens import layer_outputs
from runtime import streams
from runtime.budget import Kind
from runtime.memory import budget
from runtime.model_thread import may_trace
from runtime.models import Choice, compiling
from views.ask.text import text_html
from views.language_model.run import Writing, _frozen, write
from views.shell.errors import cached
from views.widgets import link_writes
from views.widgets.next_word import Way

POLL = 0.1  # s between two looks at an answer being written (a look holds the GIL the model's steps need)


@dataclass(frozen=True)
class Question:
    """What an answer depends on, read-only: its cache key."""

    choice: Choice
    conversation: Conversation
    most: int  # tokens written at most (fewer when the model ends its turn)
    way: Way
    heads_off: tuple[tuple[int, int], ...] = ()

    @property
    def key(self) -> tuple:
        return ("ask-answer", self.choice, self.conversation.ids, self.most, self.way, tuple(sorted(self.heads_off)))


@dataclass(frozen=True)
class Answer:
    """A finished answer. Step t reads tokens[:P + t] and writes words[t] (P: the conversation's tokens)."""

    writing: Writing
    asked: np.ndarray  # (P + N - 1,) bool: a token of the question
    template: np.ndarray  # (P + N - 1,) bool: a token of the chat template (turn markers, roles, the system prompt)
    ended: bool  # the model ended its turn: its last word is the end-of-turn token (not in `text`)
    text: str  # the answer as text
    hidden: np.ndarray  # (layers, P + N - 1, E) each block's output at every token read, before the final norm

    @property
    def steps(self) -> int:
        return len(self.writing.words)

    def row(self, step: int) -> int:
        return self.writing.row(step)


def read_ids(c: Conversation, w: Writing) -> tuple[int, ...]:
    """Every token the answer's last step read: the conversation, then the answer but its last word."""
    return c.ids + w.ids[:len(w.tokens) - len(c.ids)]


def compute(model, reader, q: Question, step, say) -> Answer:
    """On a model thread: the answer, each word's id said as it is written; step: the model's compiled step or
    None."""
    c = q.conversation
    w = write(model, reader, c.ids, c.tokens, q.most, q.way, q.heads_off, step, {c.end_of_turn}, say)
    T, P = len(w.tokens), len(c.ids)
    read = torch.tensor(read_ids(c, w), dtype=torch.long)
    asked = np.zeros(T, dtype=bool)
    asked[:P] = c.asked
    template = np.zeros(T, dtype=bool)
    template[:P] = ~np.asarray(c.asked)
    ended = bool(w.ids) and w.ids[-1] == c.end_of_turn
    text = reader.joined(w.ids[:-1] if ended else w.ids)
    hidden = layer_outputs(model, read, q.heads_off)  # (layers, T, E)
    return Answer(w, _frozen(asked, bool), _frozen(template, bool), ended, text, _frozen(hidden))


def answer(loaded, q: Question, box=None) -> Answer:
    """The answer to q: from the budget if it was written before; else written now, word by word into `box` (an
    st.empty) as it comes, while any other session asking the same follows the same writing."""
    found = budget().get(q.key, count_miss=False)
    if found is not None:
        return found
    traced = compiling(q.choice)
    step = traced.ready_step() if not q.heads_off else None  # the same numbers as the eager steps (model.compiled)
    try:
        stream = streams.stream(q.key, lambda say: compute(loaded.model, loaded.reader, q, step, say))
    except streams.BusyError:
        st.warning(_("The server is writing {n} answers at once: ask again in a moment.").format(
            n=streams.MOST_STREAMS), icon=":material/hourglass_top:")
        link_writes.stop()
    box = box or st.empty()
    shown = None
    while not stream.done:
        if stream.waiting:
            said = _("The server is busy: your question waits for a free model thread…")
            if said != shown:
                box.info(said, icon=":material/hourglass_top:")
        else:
            said = loaded.reader.joined(stream.so_far())
            if said != shown:
                box.html(text_html(said, cursor=True))
        shown = said
        time.sleep(POLL)
    box.empty()
    try:
        return cached(q.key, stream.future.result, _("The language model"), kind=Kind.WRITING)
    finally:
        streams.forget(q.key, stream)
        if step is None and not traced.step_started and may_trace(q.choice):
            traced.start_step()  # for the next answer of this model
