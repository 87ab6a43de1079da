"""Switch heads off: what the heads switched off in the sidebar (?off=) change. The copy accuracy on held-out repeat
probes and the loss on held-out single toy sentences, with and without them; the prompt's writing with and without
them; and a table of every single head switched off, computed once per process (model.causal.ablation: a head's context
zeroed before W_O)."""
import functools
import time
from dataclasses import dataclass, replace

import streamlit as st
import torch

from locales import _, ngettext
from model.causal.ablation import Ablated, probe_accuracy, sentence_loss
from model.causal.probes import PROBE_SEED, PROBES, repeat_probes
from runtime.budget import Kind
from runtime.memory import budget, shared_wait
from runtime.model_thread import on_model_thread
from training import gpt_data
from training.toy_language import sample
from views.language_model.page import LanguageModel, head_name
from views.language_model.run import writing
from views.shell.errors import cached, or_stop
from views.shell.markdown import plain
from views.widgets import heads_off as heads_off_widget
from views.widgets.next_word import Way

SENTENCES, SENTENCE_SEED = 2000, 99  # the held-out single sentences the toy GPT's training measures on
CHECKPOINT_PROBES, CHECKPOINT_SENTENCES = 100, 300  # fewer for a GPT-2 checkpoint: every pass costs more
MOST_HEADS = 64  # the table of single heads for a model of at most this many heads (one pass set per head)


@dataclass(frozen=True)
class HeldOut:
    probes: torch.Tensor  # (n, 2L) repeat probes
    sentences: tuple[tuple[int, ...], ...]  # single toy sentences, as the model reads them


@functools.cache
def _toy_sentences() -> tuple[tuple[int, ...], ...]:
    return tuple(map(tuple, gpt_data.sentence_ids(gpt_data.vocabulary(), SENTENCES, SENTENCE_SEED, held_out=True)))


def held_out(lm: LanguageModel) -> HeldOut:
    """What every score is on: the toy GPT's own held-out probes and sentences (as in its metrics.json), or for a
    GPT-2 checkpoint fewer probes of its tokens and toy sentences read by its tokenizer."""
    vocabulary = getattr(lm.loaded, "vocabulary", None)
    if vocabulary is not None:
        return HeldOut(repeat_probes(len(vocabulary.words), PROBES, PROBE_SEED), _toy_sentences())
    texts = [s.english() for s in sample(CHECKPOINT_SENTENCES, SENTENCE_SEED, held_out=True)]
    rows = tuple(tuple(lm.reader.read(t).ids[:lm.model.max_positions]) for t in texts)
    return HeldOut(repeat_probes(lm.model.config.vocab_size, CHECKPOINT_PROBES, PROBE_SEED, first_id=0),
                   tuple(r for r in rows if len(r) > 1))


def _score(model, data: HeldOut, heads: tuple) -> Ablated:
    return Ablated(heads, probe_accuracy(model, data.probes, heads), sentence_loss(model, data.sentences, heads))


def score_of(lm: LanguageModel, heads: tuple) -> Ablated:
    """Copy accuracy and sentence loss with `heads` off: once per (model, set of heads), shared."""
    heads = tuple(sorted(heads))
    return cached(("lm-heads off", lm.choice, heads),
                  lambda: on_model_thread(_score, lm.model, held_out(lm), heads), _("Scoring the language model"),
                  kind=Kind.ABLATION)


def singles(lm: LanguageModel) -> tuple[tuple[Ablated, ...], float]:
    """(every single head switched off, by copy accuracy, lowest first; the seconds it took): once per process, with
    a progress bar while the first session computes it."""
    c = lm.model.config
    heads = [((layer, head),) for layer in range(c.n_layer) for head in range(c.n_head)]

    def build():
        bar, start = st.progress(0.0), time.perf_counter()
        out = []
        for i, h in enumerate(heads):
            bar.progress(i / len(heads), _("Switching off each head in turn: {name} ({i} of {n}), once for this "
                                           "server").format(name=head_name(*h[0]), i=i + 1, n=len(heads)))
            out.append(score_of(lm, h))
        bar.empty()
        return tuple(sorted(out, key=lambda a: (a.copy_accuracy, -a.loss))), time.perf_counter() - start

    return or_stop(_("Switching heads off"), budget().get_or_build, ("lm-single heads", lm.choice), build,
                   "ablation", 0, lambda _: 0, True, shared_wait)


def _switch_off(names: list[str]) -> None:
    st.session_state[heads_off_widget.KEY] = names  # the sidebar's multiselect (views.widgets.heads_off), ?off=


def scores(lm: LanguageModel) -> None:
    data = held_out(lm)
    whole = score_of(lm, ())
    left, right = st.columns(2)
    left.metric(_("Copy accuracy, whole model"), f"{whole.copy_accuracy:.1%}")
    left.metric(_("Loss on single sentences, whole model"), _("{loss:.3f} nats").format(loss=whole.loss))
    st.caption(_("Copy accuracy: on {probes} held-out repeat probes (random words, then the same words again), the "
                 "share of the second copy's words predicted. Loss: nats per word on {sentences} held-out toy "
                 "sentences, each read alone (words 2 to n).").format(probes=len(data.probes),
                                                                       sentences=len(data.sentences)))
    if not lm.heads_off:
        right.caption(_("No head is switched off: pick some in the sidebar or with a button below, and the figures "
                        "without them appear here."))
        return
    off = score_of(lm, lm.heads_off)
    right.metric(_("Copy accuracy without those heads"), f"{off.copy_accuracy:.1%}",
                 delta=_("{points} points").format(points=f"{100 * (off.copy_accuracy - whole.copy_accuracy):+.1f}"))
    right.metric(_("Loss without those heads"), _("{loss:.3f} nats").format(loss=off.loss),
                 delta=f"{off.loss - whole.loss:+.3f}", delta_color="inverse")


def writings(lm: LanguageModel) -> None:
    """The prompt's greedy writing by the whole model and without the heads switched off."""
    whole = writing(replace(lm, heads_off=()), Way())
    left, right = st.columns(2)
    left.markdown(_("**The whole model writes:** {words}").format(words=" ".join(plain(w) for w in whole.words)))
    if lm.heads_off:
        off = writing(lm, Way())
        n = len(lm.heads_off)
        words = " ".join(plain(w) if i < len(whole.words) and w == whole.words[i] else f":red[**{plain(w)}**]"
                         for i, w in enumerate(off.words))
        right.markdown(ngettext("**Without the {n} head switched off:** {words}",
                                "**Without the {n} heads switched off:** {words}", n).format(n=n, words=words))


def table(lm: LanguageModel) -> None:
    st.header(_("Every head switched off alone"))
    c = lm.model.config
    if c.n_layer * c.n_head > MOST_HEADS:
        st.caption(_("This model has {n} heads: switching each off in turn would take this server too long. Pick heads "
                     "in the sidebar to score them.").format(n=c.n_layer * c.n_head))
        return
    ranked, seconds = singles(lm)
    whole = score_of(lm, ())
    copy = _("copy accuracy")
    st.dataframe({_("switched off"): [head_name(*a.heads[0]) for a in ranked], copy: [a.copy_accuracy for a in ranked],
                  _("loss (nats)"): [round(a.loss, 3) for a in ranked],
                  _("loss change"): [round(a.loss - whole.loss, 3) for a in ranked]},
                 hide_index=True, height=min(36 * (len(ranked) + 1) + 2, 400),
                 column_config={copy: st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})
    st.caption(_("Lowest copy accuracy first (computed once for this server, in {seconds} s). A head whose loss "
                 "rises a lot while copying stays is a grammar head; a head without which copying falls is part of "
                 "the induction circuit. When two heads share the work, each alone leaves copying almost whole: "
                 "switch both off in the sidebar.").format(seconds=f"{seconds:.1f}"))
    row = st.container(horizontal=True)
    top = ranked[0].heads[0]
    row.button(_("Switch off the head copying needs most: {head}").format(head=head_name(*top)), key="lm-off-top",
               on_click=_switch_off, args=([f"{top[0]}.{top[1]}"],))
    row.button(_("Switch every head back on"), key="lm-off-none", on_click=_switch_off, args=([],),
               disabled=not lm.heads_off, icon=":material/restart_alt:")


def section(lm: LanguageModel) -> None:
    scores(lm)
    writings(lm)
    table(lm)
