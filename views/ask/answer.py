"""The answer to a question: written once per (model, question, way of choosing, length, heads switched off) on a
model thread, together with the other questions in flight (runtime.batching: a class asking at once is answered in
one batch), shown word by word as it comes (runtime.streams), then kept in the budget and shared by every session.
It keeps what every step of the page reads, so that moving the step, the layer or the head never runs the model: the
writing (views.language_model.run: candidates, probabilities, every attention map) and each layer's output at the
token each step reads (the logit lens reads a step's row of them)."""
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from locales import _, ngettext
from model.causal.chat import Conversation
from model.causal.rows import Written
from runtime import batching, memory, streams
from runtime.budget import Kind
from runtime.model_thread import may_trace
from runtime.models import Choice, compiling, model_key
from views.ask.text import text_html
from views.language_model.run import Writing, _frozen, as_writing
from views.shell.errors import cached
from views.widgets import link_writes
from views.widgets.next_word import SAMPLE, Way

LOOK = 0.25  # s at most between two looks at an answer being written: a page wakes at each word, or after this
GAP = 0.1  # s at least between two writes of the answer to the page (one alone writes ~20 words a second)
# While a class asks, a page rewrites its answer less often: with 40 answers streaming, each page rewriting its own
# at every word (one every 0.3 s) is 130 page writes a second, Python that competes with the model for the cores.
# GAP for up to CALM answers streaming at once, then GAP per CALM of them, MOST_GAP at most (2 writes a second).
CALM, MOST_GAP = 8, 0.5
FOLLOWING = "_ask_following"  # a session key read while the answer is written: never set


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
    hidden: np.ndarray  # (layers, N, E) each block's output at the token each step reads, before the final norm

    @property
    def steps(self) -> int:
        return len(self.writing.words)

    def row(self, step: int) -> int:
        return self.writing.row(step)


def read_ids(c: Conversation, w: Writing) -> tuple[int, ...]:
    """Every token the answer's last step read: the conversation, then the answer but its last word."""
    return c.ids + w.ids[:len(w.tokens) - len(c.ids)]


def from_batch(reader, c: Conversation, written: Written) -> Answer:
    """The Answer of a question written in the model's batch (runtime.batching, model.causal.batch)."""
    w = as_writing(reader, c.tokens, written.written.tolist(), written.candidates, written.final, written.tempered,
                   written.attentions)
    T, P = len(w.tokens), len(c.ids)
    asked = np.zeros(T, dtype=bool)
    asked[:P] = c.asked
    template = np.zeros(T, dtype=bool)
    template[:P] = ~np.asarray(c.asked)
    ended = bool(w.ids) and w.ids[-1] == c.end_of_turn
    text = reader.joined(w.ids[:-1] if ended else w.ids)
    return Answer(w, _frozen(asked, bool), _frozen(template, bool), ended, text, _frozen(written.hidden))


def start(loaded, q: Question):
    """How the answer is started: in the model's batch (runtime.batching), with the other questions in flight. A chat
    model is a Llama (model.llama.source), whose rotary positions let each answer be at its own."""
    model, c = loaded.model, q.conversation
    sampling = q.way.sampling() if q.way.kind == SAMPLE else None
    heads = tuple(sorted(q.heads_off))
    shared = c.asked.index(True) if True in c.asked else 0  # the template's system prompt: every question's

    def done(written: Written) -> Answer:  # on the model thread: into the budget at once, for every session
        finished = from_batch(loaded.reader, c, written)
        memory.computed(q.key, finished, Kind.WRITING)
        return finished

    def ask(say):  # only when the stream starts: a session following another's answer makes no writer
        traced = compiling(q.choice)  # the batch's layer graphs: traced in the background after the first question
        layers = None if traced is None else traced.ready_batch()
        if traced is not None and layers is None and not traced.batch_started and may_trace(q.choice):
            traced.start_batch()  # a link's random model only so many times a process (may_trace)
        writer = batching.writer(("ask", q.choice, heads), model, model.heads_off(heads),
                                 spare=(model_key(q.choice),), layers=layers)
        return writer.ask(torch.tensor(c.ids, dtype=torch.long), q.most, sampling, {c.end_of_turn}, say, shared, done)

    return ask


def gap(streaming: int) -> float:
    """s at least between two writes of an answer to its page, while `streaming` answers stream at once."""
    return min(MOST_GAP, GAP * max(1.0, streaming / CALM))


def waiting_text(ahead: int) -> str:
    if ahead == 0:
        return _("The server is answering a full class: your question is next…")
    return ngettext("The server is answering a full class: your question waits, {n} question ahead of it…",
                    "The server is answering a full class: your question waits, {n} questions ahead of it…",
                    ahead).format(n=ahead)


def answer(loaded, q: Question, box=None) -> Answer:
    """The answer to q: from the budget if it was written before; else written now, word by word into `box` (an
    st.empty) as it comes, while any other session asking the same follows the same writing. A session that stops
    following it (its page rerun, reloaded or closed) says so: the last one to leave frees its place at once."""
    found = memory.budget().get(q.key, count_miss=False)
    if found is not None:
        return found
    try:
        stream = streams.stream(q.key, start(loaded, q))
    except streams.BusyError:
        st.warning(_("The server is writing {n} answers at once: ask again in a moment.").format(
            n=streams.MOST_STREAMS), icon=":material/hourglass_top:")
        link_writes.stop()
    box = box or st.empty()
    shown, seen = None, 0
    try:
        while not stream.done:
            st.session_state.get(FOLLOWING)  # a rerun or a closed page is noticed here (Streamlit's yield point)
            looked = time.monotonic()
            ahead = stream.ahead()
            if ahead is not None:
                said = waiting_text(ahead)
                if said != shown:
                    box.info(said, icon=":material/hourglass_top:")
            else:
                words = stream.so_far()
                seen = len(words)
                said = loaded.reader.joined(words)
                if said != shown:
                    box.html(text_html(said, cursor=True))
            shown = said
            if seen:  # words on the page: the next write after a pause (its first word is written at once)
                stream.until_end(max(0.0, looked + gap(streams.under_way()) - time.monotonic()))
            stream.wait(seen, LOOK)  # the next word, the end, or LOOK s (the line moves without words)
    finally:
        streams.leave(q.key, stream)
    box.empty()
    try:
        return cached(q.key, stream.future.result, _("The language model"), kind=Kind.WRITING)
    finally:
        streams.forget(q.key, stream)
