"""Copying from context: the induction circuit on a repeat probe (random words, then the same words again; a button
draws new ones, ?probe_seed=) or on the prompt where it repeats a word (?source=). The previous-token head and the
induction head are found by their scores on what is shown (model.causal.probes), never named in advance."""
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from locales import _
from model.analysis.head_stats import induction_pairs
from model.causal.probes import (
    PROBE_LENGTH,
    copy_accuracy,
    induction_scores,
    previous_token_scores,
    repeat_probes,
    text_induction_scores,
)
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.language_model import survey
from views.language_model.page import LanguageModel, head_name
from views.shell import lecture
from views.shell.errors import cached
from views.widgets import notices, state
from viz.attention import heatmap_spec
from viz.language_model import position_loss_spec

MAX_SEED = 9_999


@dataclass(frozen=True)
class Circuit:
    """One text read with the page's heads off: each word's loss, where copying could predict it, every head's
    induction and previous-token score, and the attention maps; read-only, shared."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    nll: np.ndarray  # (T-1,) loss of word t+1 read after words 0..t
    copied: np.ndarray  # (T-1,) bool: word t+1 follows an earlier occurrence of word t (copying predicts it)
    copies: np.ndarray  # (T-1,) bool: the argmax at t is what followed word t's earlier occurrence
    induction: np.ndarray  # (layers, heads)
    previous: np.ndarray  # (layers, heads)
    attentions: np.ndarray  # (layers, heads, T, T), NaN above the diagonal
    accuracy: float | None  # copy accuracy, on a probe

    def heads(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(the induction head, the previous-token head): the best induction score in a layer after the first (any
        layer in a one-layer model), the best previous-token score in a layer before it."""
        layers = self.induction.shape[0]
        later = self.induction[1:] if layers > 1 else self.induction
        layer, head = np.unravel_index(int(np.argmax(later)), later.shape)
        layer += 1 if layers > 1 else 0
        earlier = self.previous[:max(layer, 1)]
        p_layer, p_head = np.unravel_index(int(np.argmax(earlier)), earlier.shape)
        return (int(layer), int(head)), (int(p_layer), int(p_head))


def _frozen(a, dtype=np.float32) -> np.ndarray:
    out = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    out.flags.writeable = False
    return out


def read_circuit(model, ids: tuple[int, ...], tokens: tuple[str, ...], heads_off, probe: bool) -> Circuit:
    x = torch.tensor(ids, dtype=torch.long)
    with torch.inference_mode():
        out = model(x[None], off=model.heads_off(heads_off))
    logits, rows = out.logits[0], out.attentions  # (T, V), per layer (1, heads, T, T)
    nll = -torch.log_softmax(logits[:-1], -1).gather(-1, x[1:, None])[:, 0]
    rows_i, cols_j = induction_pairs(x)  # i repeats the word at cols_j - 1: copying predicts word cols_j at i
    copied = np.zeros(len(ids) - 1, dtype=bool)
    copies = np.zeros(len(ids) - 1, dtype=bool)
    predicted = logits.argmax(-1)
    for i, j in zip(rows_i.tolist(), cols_j.tolist()):
        if i < len(ids) - 1:
            copied[i] = ids[i + 1] == ids[j]
            copies[i] = int(predicted[i]) == ids[j]
    attentions = torch.stack([r[0] for r in rows])  # (layers, heads, T, T)
    T = attentions.size(-1)
    induction = induction_scores(rows) if probe else text_induction_scores(rows, x)
    attentions[..., torch.ones(T, T, dtype=torch.bool).triu(1)] = float("nan")
    return Circuit(ids, tokens, _frozen(nll), _frozen(copied, bool), _frozen(copies, bool),
                   _frozen(induction if induction is not None else torch.zeros(attentions.shape[:2])),
                   _frozen(previous_token_scores(rows)), _frozen(attentions),
                   copy_accuracy(logits[None], x[None]) if probe else None)


def probe_of(lm: LanguageModel, seed: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """L random words of the model's vocabulary (the toy GPT's words; a GPT-2 checkpoint's tokens), then the same L."""
    vocabulary = getattr(lm.loaded, "vocabulary", None)
    if vocabulary is not None:
        ids = repeat_probes(len(vocabulary.words), 1, seed)[0].tolist()
    else:
        ids = repeat_probes(lm.model.config.vocab_size, 1, seed, first_id=0)[0].tolist()
    return tuple(ids), tuple(lm.reader.token(i) for i in ids)


def circuit(lm: LanguageModel, ids, tokens, probe: bool) -> Circuit:
    return cached(("lm-circuit", lm.choice, ids, tuple(sorted(lm.heads_off))),
                  lambda: on_model_thread(read_circuit, lm.model, ids, tokens, lm.heads_off, probe),
                  _("The language model"), kind=Kind.CIRCUIT)


def _new_probe() -> None:
    st.session_state["probe_seed"] = (st.session_state.get("probe_seed", 0) * 7919 + 1) % (MAX_SEED + 1)


def scores_table(c: Circuit) -> None:
    layers, heads = c.induction.shape
    rows = sorted(((layer, head) for layer in range(layers) for head in range(heads)),
                  key=lambda lh: -c.induction[lh])
    st.dataframe({_("head"): [head_name(*lh) for lh in rows],
                  _("induction score"): [round(float(c.induction[lh]), 3) for lh in rows],
                  _("previous-token score"): [round(float(c.previous[lh]), 3) for lh in rows]},
                 hide_index=True, height=min(400, 36 + 35 * len(rows)))


def section(lm: LanguageModel) -> None:
    with lecture.sidebar():
        labels = {"probe": _("Random words, repeated"), "text": _("The prompt")}
        source = state.choice(_("Read"), "source", list(labels), "probe", widget="segmented_control",
                              format_func=labels.__getitem__)
        seed = state.int_param("probe_seed", 0, MAX_SEED, 0)
        if source == "probe":
            st.button(_("New random words"), icon=":material/casino:", on_click=_new_probe)
        notices.show_notices()
    probe = source == "probe"
    ids, tokens = probe_of(lm, seed) if probe else (lm.ids, lm.tokens)
    if not probe and not induction_pairs(torch.tensor(ids))[0].size:
        st.info(_("No word of the prompt comes back later in it, so there is nothing to copy from context: write a "
                  "sentence and then its start again (the page's first prompt does), or read random words, repeated."),
                icon=":material/info:")
        return
    c = circuit(lm, ids, tokens, probe)
    (layer, head), (p_layer, p_head) = c.heads()
    if probe:
        st.markdown(_("**{n} random words, then the same {n} again.** Copy accuracy on the second copy: **{acc:.0%}** "
                      "(words {first} to {last} predicted by argmax; the copy's first word cannot be known).").format(
            n=PROBE_LENGTH, acc=c.accuracy, first=PROBE_LENGTH + 2, last=2 * PROBE_LENGTH))
    else:
        st.markdown(_("**The prompt.** Where a word comes back, the model predicts what followed it the first time "
                      "at {k} of {n} places.").format(k=int(c.copies[c.copied].sum()), n=int(c.copied.sum())))
    # in front of a class the stripe comes first (each map is the whole width there); else side by side, in the order
    # the circuit reads: the previous-token head, then the induction head
    left, right = st.columns(2) if not lecture.on() else (st.container(), st.container())
    if lecture.on():
        left, right = right, left
    induction_caption = (_("A stripe {offset} below the diagonal: each word of the second copy looks at the word "
                           "after its first occurrence, and copies it into the prediction.").format(
        offset=PROBE_LENGTH - 1) if probe else _("Each word that came before looks at the word after its earlier "
                                                 "occurrence, and copies it into the prediction."))
    for column, (ly, hd), title, scores, key, caption in (
            (left, (p_layer, p_head), _("Previous-token head: {head} (score {score:.2f})"), c.previous, "lm-previous",
             _("The line just below the diagonal: each word looks at the word before it, and writes into its own "
               "position what that word was.")),
            (right, (layer, head), _("Induction head: {head} (score {score:.2f})"), c.induction, "lm-induction",
             induction_caption)):
        with column:
            show_chart(heatmap_spec(c.attentions[ly, hd], tokens, tokens,
                                    title.format(head=head_name(ly, hd), score=scores[ly, hd])), key=key)
            st.caption(caption)
    st.markdown(_("**How the two heads work together.** The previous-token head, in an earlier layer, puts into every "
                  "position the word just before it. The induction head's query is the current word; its key at "
                  "each position is the word *before* that position, written there by the first head. So it finds "
                  "the place right after the current word's earlier occurrence, and its value there is the word that "
                  "came next: the model predicts it again."))
    show_chart(position_loss_spec(tokens, c.nll, c.copied, _("Each word's loss: orange where copying from context "
                                                             "can predict it")), key="lm-losses")
    if probe:
        first, second = float(c.nll[:PROBE_LENGTH - 1].mean()), float(c.nll[PROBE_LENGTH:].mean())
        st.caption(_("Mean loss of the first copy's words: {first:.2f} nats (they are random: nothing predicts "
                     "them); of the second copy's, after its first word: {second:.2f} nats.").format(
            first=first, second=second))
    with st.expander(_("Every head's scores on this text")):
        scores_table(c)
    if probe:
        survey.section(lm)
