"""Translate: the trained translator writes 我有一只猫 as I have a cat, one word at a time, and the page shows why.

The page holds what its parts share: the Chinese source (?src=), whether it is a sentence of the toy language and
its correct translation, the heads switched off (?off=, in the sidebar, for every part), and which part is shown
(?part=). Each part is a module with section(t: Translate), drawn in a fragment: a slider in it reruns only it.
"""
from dataclasses import dataclass

import streamlit as st

from locales import N_, _
from model.heads import Head, head_id
from model.loading.source_types import Encoded
from model.translator import BLOCKS
from model.translator.source import LoadedTranslator
from model.translator.vocabulary import chinese_tokens
from runtime.models import loaded_translator
from training.toy_language import LONGEST_CHINESE, index_of, is_held_out, parse
from views.shell import lecture
from views.shell.frame import Page
from views.shell.parts import show_part
from views.shell.reading import unknown_notice
from views.widgets import heads_off as heads_off_widget
from views.widgets import link_writes, notices, state
from views.widgets.pickers import CHINESE_SOURCE, MAX_TEXT_CHARS

# ?part= -> (label, module): each module has section(t: Translate)
PARTS = {
    "steps": (N_("Step by step"), "views.translate.steps"),
    "alignment": (N_("Alignment"), "views.translate.alignment"),
    "heads": (N_("Switch heads off"), "views.translate.heads"),
    "forcing": (N_("Teacher forcing"), "views.translate.forcing"),
    "lens": (N_("Layers (logit lens)"), "views.translate.lens"),
    "learning": (N_("Watch it learn"), "views.translate.learning"),
    "live": (N_("Train it live"), "views.translate.live"),
}
# a head's name by its block, the whole phrase (Chinese does not glue "encoder self" and "-attention")
HEAD_NAMES = {"encoder": N_("encoder self-attention · layer {layer} · head {head}"),
              "decoder": N_("decoder self-attention · layer {layer} · head {head}"),
              "cross": N_("cross-attention · layer {layer} · head {head}")}
# a statement, a reordering (the time word goes last), a question, a negation
EXAMPLES = ("我有一只猫", "昨天我买了一本书", "明天老师在公园看见三只小鸟吗", "他不喜欢狗")
PLAYING = "_translate_playing"  # session key: the step part is playing (its fragment reruns by itself)


@dataclass(frozen=True)
class Translate:
    """What every part of the page gets, read-only."""

    src: str  # the Chinese text as typed
    loaded: LoadedTranslator  # the shipped translator, shared by every session
    source: Encoded  # src as the translator reads it (.input_ids (1, S), .tokens, .unknown)
    heads_off: tuple[Head, ...]  # Head("cross", 1, 3)...: switched off in the sidebar
    reference: str | None  # the correct English when src is a sentence of the toy language, else None
    held_out: bool  # src is a sentence of the held-out split: the translator never trained on it


def intro() -> None:
    st.info(_("A small Transformer trained by this project (in about a minute, on this kind of machine) on a toy "
              "Chinese → English language of about 430,000 sentences. Step through its decoding word by word, see "
              "which characters each English word looks at, switch heads off, and watch it learn."),
            icon=":material/translate:")


def head_name(name: str) -> str:
    """"cross.1.3" -> "cross-attention · layer 1 · head 3", in the session's language."""
    block, layer, head = name.split(".")
    return _(HEAD_NAMES[block]).format(layer=layer, head=head)


def heads_off(config) -> tuple[Head, ...]:
    """The sidebar's heads switched off, bound to ?off=encoder.0.1,cross.1.3."""
    return heads_off_widget.chosen(BLOCKS, config.num_layers, config.nhead, lambda h: head_name(head_id(h, BLOCKS)))


def source_text() -> str:
    """The Chinese source box (?src=); empty text, or text without a Chinese character, says what to do and stops."""
    src = state.text(_("Chinese sentence (what the encoder reads)"), "src", CHINESE_SOURCE, MAX_TEXT_CHARS,
                     area=False, placeholder=_("e.g. 我有一只猫"))
    state.examples("src", EXAMPLES)
    if not src.strip():
        st.info(_("Type a Chinese sentence above, for example 我有一只猫 (I have a cat) or 昨天她买了两本书."),
                icon=":material/edit:")
        notices.show_notices()
        link_writes.stop()
    if not any("\u3400" <= c <= "\u9fff" for c in chinese_tokens(src)):
        st.info(_("The translator reads Chinese characters, one token each, and this text has none (only Latin "
                  "letters, digits or punctuation). Try 我有一只猫."), icon=":material/translate:")
        notices.show_notices()
        link_writes.stop()
    return src




def say_what_it_is(t: Translate) -> None:
    """Unknown characters, a cut text, a sentence outside the language: plain notices above the parts."""
    total = t.source.total_tokens
    if total > len(t.source.tokens):
        notices.notice(_("This text has {total} characters; the translator reads at most {read} (a sentence of its "
                       "language has at most {longest}), so it reads only the first {read}.").format(
            total=total, read=len(t.source.tokens), longest=LONGEST_CHINESE))
    if t.source.unknown:
        notices.notice(unknown_notice(t.source.unknown, "character"))
    notices.show_notices()
    if t.reference is None:
        st.caption(":material/help: " + _("Not a sentence of the toy language (see the project's "
                                           "docs/toy-language.md): the translation below is the model's guess, and no "
                                           "answer is right or wrong."))
    elif t.held_out:
        st.caption(":material/check_circle: " + _("A sentence of the toy language (held out: the translator never "
                                                   "saw it in training). Its translation: *{english}*").format(
            english=t.reference))
    else:
        st.caption(":material/check_circle: " + _("A sentence of the toy language (from the training split). Its "
                                                   "translation: *{english}*").format(english=t.reference))


def view(page: Page) -> None:
    loaded = loaded_translator()
    off = heads_off(loaded.translator.config)
    with lecture.sidebar():  # in front of a class the charts come first
        src = source_text()
        sentence = parse(src)
        t = Translate(src, loaded, loaded.encode(src), off, None if sentence is None else sentence.english(),
                      sentence is not None and is_held_out(index_of(sentence)))
        say_what_it_is(t)
        labels = {key: _(label) for key, (label, _module) in PARTS.items()}  # translated now (see heads_off)
        part = state.choice(_("Show"), "part", list(PARTS), "steps", widget="segmented_control",
                            format_func=labels.__getitem__)
    show_part(PARTS, part, "steps", PLAYING, t)
