"""Language model: a decoder-only GPT (the toy GPT trained here, or a GPT-2 checkpoint the server has) reads a prompt
and writes the next word, one at a time; its induction head copies from context, and a class can watch it form.

The page holds what its parts share: the model (?model=, language models only), the prompt (?prompt=) as the model
reads it, the heads switched off (?off=, in the sidebar, for every part), and which part is shown (?part=). Each part
is a module with section(lm: LanguageModel), drawn in a fragment: a slider in it reruns only it.
"""
from dataclasses import dataclass

import streamlit as st

from locales import N_, _
from model.causal.reading import Reader
from model.family import Capability, Reads
from model.loading.sources import Loaded
from runtime.models import Choice
from views.shell import lecture
from views.shell.frame import Page
from views.shell.markdown import code
from views.shell.parts import show_part
from views.shell.reading import unknown_notice
from views.widgets import heads_off as heads_off_widget
from views.widgets import link_writes, notices, state
from views.widgets.pickers import language_model_choice

# ?part= -> (label, module): each module has section(lm: LanguageModel)
PARTS = {
    "next": (N_("The next word"), "views.language_model.writing"),
    "induction": (N_("Copying from context"), "views.language_model.induction"),
    "heads": (N_("Switch heads off"), "views.language_model.heads"),
    "lens": (N_("Layers (logit lens)"), "views.language_model.lens"),
    "learning": (N_("Watch it learn"), "views.language_model.learning"),
    "live": (N_("Train it live"), "views.language_model.live"),
}
TOY_ONLY = ("learning", "live")  # parts about the toy GPT's own training
# a toy sentence, then its start again: the induction head makes the toy GPT write the rest of it
DEFAULT_PROMPT = "the teacher saw two red birds at school . the teacher saw"
EXAMPLES = ("the teacher saw", "my friend has two", "yesterday she bought a red car . yesterday she")
MAX_PROMPT_CHARS = 2_000  # the prompt box; the model then reads at most PAGE_TOKENS of it
PAGE_TOKENS = 256  # at most this many tokens read, however long the model's context (bounds every map's size)
MAX_WORDS, DEFAULT_WORDS = 20, 10  # words written after the prompt (?words=)
PLAYING = "_language_model_playing"  # session key: the writing part is playing (its fragment reruns by itself)


@dataclass(frozen=True)
class LanguageModel:
    """What every part of the page gets, read-only."""

    choice: Choice
    loaded: Loaded  # a loaded language model (the toy GPT, a GPT-2 checkpoint): shared by every session
    reader: Reader  # text <-> ids: the loaded model's own
    prompt: str  # as typed
    ids: tuple[int, ...]  # what the model reads: the prompt's last tokens (see read_prompt)
    tokens: tuple[str, ...]  # those tokens as shown
    words: int  # words to write after the prompt
    heads_off: tuple[tuple[int, int], ...]  # (layer, head)...: switched off in the sidebar

    @property
    def model(self):
        return self.loaded.model  # model.gpt.GPT, shared: never mutated

    @property
    def toy(self) -> bool:
        """A model trained here (the toy GPT: its snapshots and its live training are on this page)."""
        return self.loaded.source.can(Capability.SNAPSHOTS)

    @property
    def key(self) -> tuple:
        """What a computation on this prompt depends on (a cache key's start)."""
        return self.choice, self.ids, tuple(sorted(self.heads_off))


def intro() -> None:
    st.info(_("A language model reads the words so far and scores every word of its vocabulary for the next one; it "
              "writes one, reads it, and goes on. Its attention is causal: a word sees only the words before it. The "
              "toy GPT was trained by this project in under two minutes on toy English, where copying from context "
              "pays; SmolLM2-135M-Instruct is a real LLM of 30 layers. Both have induction heads: watch them find the "
              "earlier occurrence of a word and copy what came after it."),
            icon=":material/edit_note:")


def head_name(layer: int, head: int) -> str:
    return _("layer {layer} · head {head}").format(layer=layer, head=head)


def heads_off(model) -> tuple[tuple[int, int], ...]:
    """The sidebar's heads switched off, bound to ?off=1.2,0.3 (layer.head), as (layer, head) pairs."""
    c = model.config
    picked = heads_off_widget.chosen(model.head_blocks, c.n_layer, c.n_head, lambda h: head_name(h.layer, h.head))
    return tuple((h.layer, h.head) for h in picked)


def prompt_box(toy: bool) -> str:
    """The prompt (?prompt=) and, for the toy GPT, example prompts; an empty prompt says what to do and stops."""
    prompt = state.text(_("Prompt (what the model reads before it writes)"), "prompt", DEFAULT_PROMPT,
                        MAX_PROMPT_CHARS, area=False, placeholder=_("e.g. the teacher saw"))
    if toy:
        state.examples("prompt", EXAMPLES)
    if not prompt.strip():
        st.info(_("Type a prompt above: a few words for the model to go on from, for example: the teacher saw"),
                icon=":material/edit:")
        notices.show_notices()
        link_writes.stop()
    return prompt


def read_prompt(reader, prompt: str, positions: int, words: int, toy: bool) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The prompt's ids and tokens as the model reads them: its last tokens, so that the words to write still fit in
    the model's context (and in PAGE_TOKENS); what was cut or unknown said in a notice."""
    read = reader.read(prompt)
    room = max(1, min(positions, PAGE_TOKENS) - words)
    ids, tokens = read.ids[-room:], read.tokens[-room:]
    if len(read.ids) > room:
        said = _("This prompt has {total} tokens; with {words} words to write, the model reads at most {room} "
                 "(its context is {positions} tokens), so it reads only the last {room}: the rest was cut.")
        if positions > PAGE_TOKENS:  # the page's bound, not the model's
            said = _("This prompt has {total} tokens; with {words} words to write, the model reads at most {room} "
                     "(this page writes within {positions} tokens), so it reads only the last {room}: the rest was "
                     "cut.")
        notices.notice(said.format(total=len(read.ids), words=words, room=room, positions=min(positions,
                                                                                             PAGE_TOKENS)))
    if toy and read.unknown:
        notices.notice(unknown_notice(read.unknown, "gpt-word"))
    if not toy:
        st.caption(_("The checkpoint's own tokenizer reads the prompt as {n} tokens: {tokens}").format(
            n=len(tokens), tokens=" ".join(code(t) for t in tokens[:60]) + (" …" if len(tokens) > 60 else "")))
    return tuple(ids), tuple(tokens)


def view(page: Page) -> None:
    choice = language_model_choice()
    loaded = page.model(choice)
    off = heads_off(loaded.model)
    toy = loaded.source.can(Capability.SNAPSHOTS)
    words_of_toy_english = loaded.source.reads == Reads.TOY_ENGLISH
    with lecture.sidebar():  # in front of a class the charts come first
        prompt = prompt_box(words_of_toy_english)
        words = state.int_slider(_("Words to write"), "words", 1, MAX_WORDS, DEFAULT_WORDS)
        reader = loaded.reader
        ids, tokens = read_prompt(reader, prompt, loaded.model.max_positions, words, words_of_toy_english)
        notices.show_notices()
        parts = [p for p in PARTS if toy or p not in TOY_ONLY]
        labels = {key: _(PARTS[key][0]) for key in parts}  # translated now (see heads_off)
        part = state.choice(_("Show"), "part", parts, "next", widget="segmented_control",
                            format_func=labels.__getitem__)
    lm = LanguageModel(choice, loaded, reader, prompt, ids, tokens, words, off)
    show_part(PARTS, part, "next", PLAYING, lm)
