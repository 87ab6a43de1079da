"""The attention sink, measured on the student's own question: for every layer and head, the share of attention the
answer's tokens give the first token; the layers where it is over half; and StreamingLLM's experiment (model.causal.
sink): the first token evicted from the key/value cache for the answer's queries, against an ordinary token evicted
the same way: the answer's loss, and the answer written again. The experiment (about 15 passes and two writings) runs
when it is switched on (?evict=1): a class moving through the part costs the server only the maps already computed."""
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from locales import _
from model.causal.sink import answer_loss, evicting, first_token_share, greedy_evicting, hiding
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.ask.page import Asked
from views.ask.text import text_html
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.errors import cached
from views.shell.markdown import code
from views.widgets import downloads, state
from views.widgets.heads_off import KEY as OFF
from viz.ask import loss_bars_spec, sink_layers_spec
from viz.head_grid import head_grid_spec

ORDINARY = 12  # ordinary tokens evicted one at a time: the question's, evenly spread
SINK_HEADS = 10  # the strongest sink heads a button switches off
DOMINATES = 0.5  # a layer "dominated" by the sink: its heads give the first token over half on average


@dataclass(frozen=True)
class Experiment:
    loss: float  # the answer's loss, nothing evicted (nats a token)
    first: float  # with the first token evicted from the cache for the answer's queries
    ordinary: tuple[float, ...]  # with each ordinary token evicted the same way
    positions: tuple[int, ...]  # those tokens' positions
    hidden: float  # with the first token hidden from every query from the start
    next_share: float  # what the answer's queries then give the second token (mean of every head)
    rewritten: tuple[int, ...]  # the answer written again, greedy, the first token evicted
    ordinary_rewritten: tuple[int, ...]  # ... the question token the answer attends to most evicted
    most_attended: int  # that token's position


def ordinary_positions(asked: Asked) -> tuple[int, ...]:
    asked_at = asked.question.conversation.question_positions
    if len(asked_at) <= ORDINARY:
        return asked_at
    return tuple(asked_at[i] for i in np.linspace(0, len(asked_at) - 1, ORDINARY).round().astype(int))


def experiment(asked: Asked) -> Experiment:
    """Once per answer, shared: about ORDINARY + 2 passes and two writings on a model thread (a few seconds)."""
    a, c, q = asked.answer, asked.question.conversation, asked.question
    P = len(c.ids)
    ids = torch.tensor(c.ids + a.writing.ids, dtype=torch.long)
    T = ids.numel()
    rows = list(range(P - 1, T - 1))
    positions = ordinary_positions(asked)
    attended = a.writing.attentions[:, :, rows][..., list(c.question_positions)]  # (L, H, N, Q)
    most = c.question_positions[int(np.nanmean(attended, axis=(0, 1, 2)).argmax())]

    def compute(model):
        off = model.heads_off(q.heads_off)
        base, _ = answer_loss(model, ids, P, None, off)
        first, _ = answer_loss(model, ids, P, evicting(T, 0, P - 1), off)
        ordinary = tuple(answer_loss(model, ids, P, evicting(T, p, P - 1), off)[0] for p in positions)
        hidden, maps = answer_loss(model, ids, P, hiding(T, 0), off)
        next_share = float(maps[:, :, rows, 1].mean())
        prompt = torch.tensor(c.ids, dtype=torch.long)
        stop = {c.end_of_turn}
        return Experiment(base, first, ordinary, positions, hidden, next_share,
                          tuple(greedy_evicting(model, prompt, q.most, 0, stop, off)),
                          tuple(greedy_evicting(model, prompt, q.most, most, stop, off)), most)

    return cached(("ask-sink", q.key), lambda: on_model_thread(compute, asked.model), _("The experiment"),
                  kind=Kind.ATTRIBUTION)


def switch_off(heads: list[str]) -> None:
    st.session_state[OFF] = heads


def section(asked: Asked) -> None:
    w = asked.answer.writing
    P = w.prompt_tokens
    rows = range(P - 1, len(w.tokens))
    share = first_token_share(w.attentions, rows)  # (L, H)
    by_layer = share.mean(1)
    first = code(w.tokens[0])
    left, right = lecture.charts_row(2)
    with left:
        title = _("The answer's attention to the first token {token}, by layer and head").format(token=w.tokens[0])
        show_chart(head_grid_spec(share, title, _("layer %{y}, head %{x}<br>to the first token: %{z:.3f}"), _("layer"),
                                  _("head")), key="ask-sink-grid")
    with right:
        show_chart(sink_layers_spec(by_layer, DOMINATES, _("Its mean over each layer's heads")), key="ask-sink-layers")
    dominated = [str(i) for i in np.flatnonzero(by_layer > DOMINATES)]
    st.markdown(_("Averaged over the answer's {n} tokens, the first token {token} takes **{share}** of all the "
                  "attention (every head of every layer), and over half of it in layers {layers}.").format(
        n=len(rows), token=first, share=f"{share.mean():.0%}", layers=", ".join(dominated) or "—"))
    order = np.argsort(-share, axis=None)[:SINK_HEADS]
    strongest = [f"{i // share.shape[1]}.{i % share.shape[1]}" for i in order]
    row = st.container(horizontal=True)
    row.button(_("Switch off the strongest sink head ({head})").format(head=strongest[0]), on_click=switch_off,
               args=(strongest[:1],), key="ask-sink-one")
    row.button(_("Switch off the {n} strongest sink heads").format(n=len(strongest)), on_click=switch_off,
               args=(strongest,), key="ask-sink-ten")
    st.caption(_("A head switched off adds nothing to its layer's output: the answer is then written again, beside "
                 "the model's own, above."))
    downloads.button(_("Download the sink shares (CSV)"), lambda: csv_of(share), "ask_sink.csv", "text/csv")
    st.subheader(_("Is the sink load-bearing? Evict it"))
    if state.toggle(_("Run the eviction experiment"), "evict", False,
                    help=_("About 15 passes of the model and two answers written again: several seconds, once per "
                           "answer (then shared by everyone who asks the same).")):
        evicted(asked, experiment(asked))
    else:
        st.caption(_("Switch it on to read the answer again without the first token, and without ordinary ones."))


def evicted(asked: Asked, e: Experiment) -> None:
    w, reader = asked.answer.writing, asked.loaded.reader
    st.markdown(_("StreamingLLM keeps a window of recent tokens in the key/value cache and drops the oldest. Here the "
                  "answer is read again with one token dropped from the cache for every query that writes it (the "
                  "tokens before the answer still saw it): the first token, or an ordinary one."))
    labels = [w.tokens[0]] + [w.tokens[p] for p in e.positions]
    show_chart(loss_bars_spec(labels, np.array([e.first, *e.ordinary]), e.loss,
                              _("The answer's loss with one token evicted (nats a token; the line: nothing evicted)")),
               key="ask-sink-loss")
    ordinary = np.array(e.ordinary) if e.ordinary else np.array([e.loss])
    st.markdown(_("Nothing evicted: **{base:.3f}**. The first token evicted: **{first:.3f}** ({ratio:.1f}×). An "
                  "ordinary token evicted: {low:.3f} to {high:.3f}.").format(
        base=e.loss, first=e.first, ratio=e.first / max(e.loss, 1e-9), low=ordinary.min(), high=ordinary.max()))
    left, right = st.columns(2)
    left.markdown(_("**Written again, the first token evicted:**"))
    end = asked.question.conversation.end_of_turn
    left.html(text_html(reader.joined([i for i in e.rewritten if i != end]), kind="rewritten"))
    right.markdown(_("**Written again, {token} evicted** (the question token the answer attends to most):").format(
        token=code(w.tokens[e.most_attended])))
    right.html(text_html(reader.joined([i for i in e.ordinary_rewritten if i != end]), kind="rewritten"))
    st.caption(_("Hidden from every query from the start instead, the first token is not missed (loss {hidden:.3f}): "
                 "the second token then sees only itself, as a first token does, and becomes the sink, taking "
                 "{share} of the answer's attention. The sink is whichever token comes first, not a word.").format(
        hidden=e.hidden, share=f"{e.next_share:.0%}"))


def csv_of(share: np.ndarray) -> bytes:
    lines = ["layer,head,share_to_first_token"] + [f"{layer},{head},{share[layer, head]:.6f}"
                                                   for layer in range(share.shape[0]) for head in range(share.shape[1])]
    return downloads.csv_lines(lines)
