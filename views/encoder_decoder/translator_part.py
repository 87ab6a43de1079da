"""The translator on the encoder-decoder page: the Chinese source, and as the target either the model's own
translation (greedy, decoded word by word from <bos>) or the English a visitor typed (teacher forcing); then the
three attentions of that one recorded pass, as the random encoder-decoder's (views.encoder_decoder.run.Seq2SeqRun)."""
from dataclasses import dataclass
from functools import partial

import streamlit as st
import torch

from locales import _
from model.loading.footprint import encoder_decoder_pass_bytes
from model.translator.decoding import generate
from model.translator.source import TRANSLATOR_KEY as KEY
from model.translator.vocabulary import BOS, BOS_ID, english_text
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from runtime.models import Choice, loaded_translator, model_key
from views.encoder_decoder.run import attentions
from views.shell.errors import cached
from views.shell.markdown import code, plain


@dataclass(frozen=True)
class Decoded:
    """What the translator wrote, or read of a typed target, beside the attentions."""

    translation: str | None  # its own translation, when no target was typed
    predicted: tuple[str, ...]  # the word it predicts after each target token (the decoder's output, teacher forced)
    unknown_source: tuple[str, ...]  # Chinese characters it has never seen
    unknown_target: tuple[str, ...]  # typed English words it has never seen


def compute_run(src: str, tgt: str):
    """Greedy decoding when tgt is empty, then one recorded pass of the source and the target (<bos> first)."""
    loaded = loaded_translator()
    model, c = loaded.translator, loaded.translator.config
    source = loaded.encode(src)
    need = encoder_decoder_pass_bytes(c.num_layers, c.nhead, c.d_model, c.d_ff, source.input_ids.shape[1],
                                      model.max_positions)
    with budget().room(need, spare=(model_key(Choice(KEY)),)):
        if tgt.strip():
            target = loaded.target(tgt)
            words, ids, unknown, translation = target.words, target.ids, target.unknown, None
        else:
            written = on_model_thread(generate, model, source.input_ids)[0].tolist()
            words = tuple(model.target.words(written))  # up to <eos>
            ids, unknown, translation = model.target.ids(words), (), english_text(list(words))
        tgt_ids = [BOS_ID, *ids][:model.max_positions]
        logits, trace = on_model_thread(partial(model, record=True), source.input_ids, torch.tensor([tgt_ids]))
    predicted = tuple(model.target.tokens[i] for i in logits[0].argmax(-1).tolist())
    run = attentions(trace, source.tokens, (BOS, *words)[:len(tgt_ids)], source.total_tokens, len(words) + 1,
                     source.input_ids, tgt_ids, loaded.facts.special_tokens)
    return run, Decoded(translation, predicted, source.unknown, unknown)


def cached_run(src: str, tgt: str):
    """(Seq2SeqRun, Decoded) for (src, tgt): computed once, then shared."""
    return cached(("translation", src, tgt), lambda: compute_run(src, tgt), _("The translator"))


def facts_caption() -> str:
    loaded = loaded_translator()
    model = loaded.translator
    return _("{summary}. Its own vocabularies: {characters} Chinese characters, {words} English words, and "
             "`<pad> <bos> <eos> <unk>`.").format(summary=model.facts.summary(), characters=len(model.source) - 4,
                                                   words=len(model.target) - 4)


def intro() -> None:
    st.info(_("A translator trained by this project on a toy Chinese → English language (about 430,000 sentences, "
              "each with one correct translation): 我有一只猫 → *I have a cat*. Leave the target empty to see its own "
              "translation, written word by word from `<bos>`; type one to see how it attends while reading your "
              "words (teacher forcing, as in training)."), icon=":material/translate:")


def show_translation(run, decoded: Decoded) -> None:
    """The translation, or what the model would write after each word of a typed target."""
    if decoded.translation is not None:
        words = " ".join(plain(w) for w in decoded.translation.split())
        if words:
            st.markdown(_("**Translation:** {words}").format(words=words))
        else:
            st.markdown(_("**Translation:** (nothing: it wrote {eos} first)").format(eos=code("<eos>")))
        st.caption(_("Greedy decoding: the most likely word at each step, until `<eos>`. The maps below are of the "
                     "decoder reading that translation back, `<bos>` first."))
        return
    pairs = " · ".join(f"{code(word)} → {plain(nxt)}" for word, nxt in zip(run.tgt_tokens, decoded.predicted))
    st.markdown(_("**With your target** (teacher forcing), the word the translator predicts after each one: "
                  "{pairs}").format(pairs=pairs))
