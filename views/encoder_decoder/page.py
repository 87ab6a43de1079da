"""Encoder-decoder: the decoder's masked self-attention and its cross-attention to the encoder, per layer and head.

Two models: the translator trained by this project (the default: Chinese in, English out,
views.encoder_decoder.translator_part), or a seeded random encoder-decoder of any size with the default model's English
vocabulary."""
import io
from functools import partial

import numpy as np
import streamlit as st

from locales import _
from model.family import Capability
from model.loading.footprint import encoder_decoder_pass_bytes
from model.loading.sources import RANDOM_KEY
from model.translator.vocabulary import chinese_tokens
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from runtime.models import Choice, loaded_translator, model_key, resident
from views.charts.mounted import show_chart
from views.encoder_decoder import translator_part
from views.encoder_decoder.run import Seq2SeqRun, attentions
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.shell.reading import unknown_notice
from views.widgets import downloads, link_writes, notices, special_tokens, state
from views.widgets.pickers import (
    CHINESE_TEXTS,
    ENGLISH_TEXTS,
    MAX_TEXT_CHARS,
    layer_head,
    pick,
    seq2seq_choice,
    source_of,
)
from viz.attention import heatmap_spec

DEFAULT_SRC, DEFAULT_TGT = ENGLISH_TEXTS


def seq2seq_model(config):
    """One seeded random TextTransformer per config per process, in the server's memory budget; never mutated."""
    return resident(Choice(RANDOM_KEY, config), encoder_decoder=True).loaded


def compute_run(config, src: str, tgt: str) -> Seq2SeqRun:
    """The random encoder-decoder: tokenise both texts (cut to the model's positions) and record one pass."""
    loaded = seq2seq_model(config)
    source, target = loaded.encode(src), loaded.encode(tgt)
    need = encoder_decoder_pass_bytes(config.num_layers, config.nhead, config.d_model, config.d_ff,
                                      source.input_ids.shape[1], target.input_ids.shape[1])
    with budget().room(need, spare=(model_key(Choice(RANDOM_KEY, config), True),)):
        _, trace = on_model_thread(partial(loaded.model, record=True), source.input_ids, target.input_ids)
        return attentions(trace, source.tokens, target.tokens, source.total_tokens, target.total_tokens,
                          source.input_ids, target.input_ids, loaded.facts.special_tokens)


def texts(translator: bool) -> tuple[str, str]:
    """Source and target boxes bound to ?src= and ?tgt=; an empty one says what to do and stops the page. The
    translator's target may be empty: it then writes its own."""
    left, right = lecture.controls(2)
    default_src, default_tgt = CHINESE_TEXTS if translator else ENGLISH_TEXTS
    if translator:
        labels = (_("Source: Chinese (what the encoder reads)"),
                  _("Target: English (what the decoder reads; empty: the translator's own translation)"))
    else:
        labels = (_("Source (what the encoder reads)"), _("Target (what the decoder reads, one token at a time)"))
    src = state.text(labels[0], "src", default_src, MAX_TEXT_CHARS, container=left, area=False)
    tgt = state.text(labels[1], "tgt", default_tgt, MAX_TEXT_CHARS, container=right, area=False,
                     placeholder=_("empty: the translator's own translation") if translator else None)
    missing = []
    if not src.strip():
        missing.append(_("Type a source sentence above to see the encoder-decoder attention."))
    elif translator and not chinese_tokens(src):
        missing.append(_("Type a Chinese sentence (not only punctuation) above to see the encoder-decoder attention."))
    if not translator and not tgt.strip():
        missing.append(_("Type a target sentence above to see the encoder-decoder attention."))
    for message in missing:
        st.info(message)
    if missing:
        notices.show_notices()
        link_writes.stop()
    return src, tgt


def cached_run(config, src: str, tgt: str) -> Seq2SeqRun:
    """The pass for (config, src, tgt): computed once, then shared; a slider move never re-runs it."""
    result = cached(("encoder-decoder", config, src, tgt), lambda: compute_run(config, src, tgt),
                    _("The encoder-decoder"))
    say_what_was_cut(result)
    return result


def say_what_was_cut(result: Seq2SeqRun) -> None:
    for total, tokens, message in (
            (result.src_total, result.src_tokens,
             _("The source has {total} tokens; the model reads at most {read}, so the rest was cut.")),
            (result.tgt_total, result.tgt_tokens,
             _("The target has {total} tokens; the model reads at most {read}, so the rest was cut."))):
        if total > len(tokens):
            notices.notice(message.format(total=total, read=len(tokens)))


def npz(r: Seq2SeqRun) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, src_tokens=np.array(r.src_tokens), tgt_tokens=np.array(r.tgt_tokens),
                        encoder_self=r.encoder_self, decoder_self=r.decoder_self, cross=r.cross)
    return buf.getvalue()


def shapes_table(config, S: int, T: int) -> str:  # config: a RandomConfig or a TranslatorConfig
    """The shapes of the three attentions of this pass, as a Markdown table."""
    h = config.nhead
    rows = ((_("encoder self"), _("source, S = {S}").format(S=S), _("source"), f"(1, {h}, {S}, {S})"),
            (_("decoder masked self"), _("target, T = {T}").format(T=T), _("target (earlier only)"),
             f"(1, {h}, {T}, {T})"),
            (_("decoder cross"), _("target, T = {T}").format(T=T), _("source (encoder output)"),
             f"(1, {h}, {T}, {S})"))
    header = (_("attention"), _("queries"), _("keys / values"), _("probabilities"))
    lines = ["| " + " | ".join(cells) + " |" for cells in (header, ("---",) * 4, *rows)]
    title = _("**Shapes in this pass** ({h} heads, d_model {d_model}, d_k {d_k})").format(
        h=h, d_model=config.d_model, d_k=config.d_model // h)
    return "\n" + title + "\n\n" + "\n".join(lines) + "\n"


def random_intro() -> None:
    st.info(_("No pretrained encoder-decoder is available offline, so this model's weights are random (seeded, "
              "configurable in the sidebar). The maps show the mechanism (the causal mask, which tokens each query "
              "may see, the shapes of cross-attention), not learned alignments such as *chat* ↔ *cat*."),
            icon=":material/info:")


def view(page: Page) -> None:
    """The model (the translator, or a random one and its settings), the two texts, then the three kinds of
    attention of one layer and head."""
    choice = seq2seq_choice()
    source = source_of(choice.key)
    translator = source is not None and source.can(Capability.TRANSLATION)
    if not lecture.on():  # in front of a class the charts come first
        (translator_part.intro if translator else random_intro)()
    src, tgt = texts(translator)
    decoded = None
    if translator:
        st.sidebar.caption(translator_part.facts_caption())
        run, decoded = translator_part.cached_run(src, tgt)
        say_what_was_cut(run)
        for unknown, what in ((decoded.unknown_source, "character"), (decoded.unknown_target, "word")):
            if unknown:
                notices.notice(unknown_notice(unknown, what))
        config = loaded_translator().translator.config
    else:
        config = choice.random
        st.sidebar.caption(_("{n} encoder and {n} decoder layers; both texts share one token embedding (vocabulary "
                             "of all-MiniLM-L6-v2).").format(n=config.num_layers))
        run = cached_run(config, src, tgt)

    col1, col2, col3 = lecture.controls([2, 2, 1])
    layer, head, mean = layer_head(config.num_layers, config.nhead, containers=(col1, col2, col3))
    mode = special_tokens.choose(lecture.place() or st)
    notices.show_notices()
    if decoded is not None:
        with st.sidebar if lecture.on() else st.container():
            translator_part.show_translation(run, decoded)
    maps(run, config, layer, head, mean, translator, mode)


def maps(run: Seq2SeqRun, config, layer: int, head: int, mean: bool, translator: bool = False,
         mode: str = "show") -> None:
    """Decoder self-attention and cross-attention, the encoder's for reference, the shapes, the download; the
    special tokens shown or hidden as `mode` says (special_tokens.MODES)."""
    which = (_("layer {layer}, mean of heads") if mean else _("layer {layer}, head {head}")).format(
        layer=layer, head=head)
    S, T = len(run.src_tokens), len(run.tgt_tokens)  # as the model read them (the shapes below)
    src, tgt = run.src_special, run.tgt_special
    decoder_self, cross, encoder_self = special_tokens.hidden(
        mode, [(run.decoder_self, tgt, tgt), (run.cross, tgt, src), (run.encoder_self, src, src)],
        [*zip(run.tgt_tokens, tgt), *zip(run.src_tokens, src)])
    source, target = ((_("Chinese character"), _("English word")) if translator
                      else (_("source token"), _("target token")))

    def draw(shown, attentions, queries, keys, title: str, key_label: str, query_label: str, key: str) -> None:
        """One kind of attention of the layer and head (or their mean), the special tokens as `mode` says."""
        show_chart(heatmap_spec(pick(shown.maps(attentions), layer, head, mean), shown.tokens(queries),
                                shown.key_tokens(keys), title, keys=key_label, queries=query_label), key=key)

    if translator:
        causal = _("({T} × {T}) target × target. The causal mask blocks every later token (the empty upper triangle): "
                   "while predicting, a target token can only see the ones before it and itself. `<bos>` (begin) is "
                   "the start-of-sequence token.")
    else:
        causal = _("({T} × {T}) target × target. The causal mask blocks every later token (the empty upper triangle): "
                   "while predicting, a target token can only see the ones before it and itself. [CLS] plays the "
                   "start-of-sequence token.")
    left, right = st.columns(2)
    with left:
        draw(decoder_self, run.decoder_self, run.tgt_tokens, run.tgt_tokens,
             _("Decoder masked self-attention, {which}").format(which=which),
             _("key: {token} (earlier)").format(token=target), _("query: {token}").format(token=target),
             "decoder-self")
        st.caption(causal.format(T=T))
    with right:
        draw(cross, run.cross, run.tgt_tokens, run.src_tokens, _("Cross-attention, {which}").format(which=which),
             _("key: {token} (encoder output)").format(token=source), _("query: {token}").format(token=target),
             "cross")
        st.caption(_("({T} × {S}): queries are the target tokens (from the decoder), keys and values the source "
                     "tokens (the encoder's output). No mask: every target token may look at the whole source.").format(
            T=T, S=S))

    decoder_self.say()
    left, right = st.columns(2)
    with left:
        draw(encoder_self, run.encoder_self, run.src_tokens, run.src_tokens,
             _("Encoder self-attention, {which}").format(which=which), _("key: {token}").format(token=source),
             _("query: {token}").format(token=source), "encoder-self")
        st.caption(_("({S} × {S}) source × source, for reference: the encoder sees every source token in both "
                     "directions.").format(S=S))
    with right:
        st.markdown(shapes_table(config, S, T))
        downloads.button(_("Download these attentions (NumPy .npz)"), lambda: npz(run), "encoder_decoder_attention.npz",
                         "application/octet-stream")
