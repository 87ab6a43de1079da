"""How the model read the text, said when it read it badly: Chinese (or any script it barely knows) on an English model.

all-MiniLM-L6-v2 learned English. Given 我有一只猫 it reads 我 有 一 and two [UNK]: attention over [UNK] shows
nothing about the sentence, and the page would draw it without a word. So below the text box the frame shows the
tokens as the model sees them, how many are [UNK], and for Chinese points to the model trained here that reads it
(the Translate page, with the text as its source). A text the model reads in its own words says nothing, even when
a long English word is cut into word pieces (token ##izer): those pieces are the model's vocabulary at work.
"""
import re
import unicodedata

import streamlit as st

from locales import _, ngettext
from model.family import Reads
from model.loading.loaded import MAX_TOKENS
from runtime import runs
from runtime.models import Choice, loaded_model
from runtime.runs import Mask, Run
from views.shell.errors import or_stop
from views.shell.markdown import code
from views.shell.navigation import link_to
from views.widgets import notices

SHOWN_TOKENS = 40  # tokens written out; the rest are counted
LINK_CHARS = 200  # the most of the text the link to the Translate page carries (?src=)
_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def badly_read(tokens, unk: str | None, specials) -> tuple[int, int, bool]:
    """(how many of the text's tokens are unk, how many tokens the text has, whether a word of a script other than
    the Latin alphabet was cut into word pieces: "##р"). specials: the tokens the model adds ([CLS], [SEP])."""
    text_tokens = [t for t in tokens if t not in specials or t == unk]
    unknown = sum(t == unk for t in text_tokens) if unk else 0
    foreign_pieces = any(t.startswith("##") and not _latin(t[2:]) for t in text_tokens)
    return unknown, len(text_tokens), foreign_pieces


def _latin(piece: str) -> bool:
    """Whether a word piece is ASCII or Latin letters with accents: what an English model cuts as its own."""
    return all(ord(c) < 128 or "LATIN" in unicodedata.name(c, "") for c in piece)


def chinese(text: str) -> bool:
    return bool(_CHINESE.search(text))


def show(tokens, unk: str | None, specials, text: str, translator: bool) -> bool:
    """The notice below the text box, if the model read the text badly; whether it was shown. translator: the
    translator is available (the Translate page can read a Chinese text)."""
    unknown, total, pieces = badly_read(tokens, unk, specials)
    if not unknown and not pieces:
        return False
    st.warning(_notice(tokens, unk, unknown, total), icon=":material/translate:")
    if translator and chinese(text):

        st.page_link(link_to("translate"), label=_("Read it with the translator, which reads Chinese"),
                     icon=":material/g_translate:", query_params={"src": source_for_link(text)})
    return True


def _notice(tokens, unk, unknown: int, total: int) -> str:
    shown = " ".join(code(t) for t in tokens[:SHOWN_TOKENS])
    more = len(tokens) - SHOWN_TOKENS
    if more > 0:
        shown = ngettext("{tokens} and {n} more", "{tokens} and {n} more", more).format(tokens=shown, n=more)
    lines = [_("The model reads this text in pieces it was not trained on. The tokens as it sees them: "
               "{tokens}").format(tokens=shown)]
    if unknown:
        lines.append(ngettext("{n} of {total} tokens is {unk} (unknown): its attention says nothing about the word "
                              "it stands for.",
                              "{n} of {total} tokens are {unk} (unknown): their attention says nothing about the "
                              "words they stand for.", unknown).format(n=unknown, total=total, unk=code(unk)))
    else:
        lines.append(_("Words in another alphabet are cut into single letters (the pieces with ##): the model "
                       "knows their letters, not the words."))
    return "\n\n".join(lines)


def source_for_link(text: str) -> str:
    """The text as the Translate page's ?src=: its first LINK_CHARS characters (at most 12 bytes each in the link),
    runs of spaces and line ends as one space."""
    return " ".join(text.split())[:LINK_CHARS]


def run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """The run for (model, text, mask) (runtime.runs.run: computed once, shared through the budget), with what the
    page says of how the model read the text: cut to its positions, characters it has never seen."""
    result = or_stop(_("The model"), runs.run, choice, text, mask)
    if result.truncated:
        cut = _("The text has {total} tokens; a page reads at most {read}, so the rest was cut.") if len(
            result.tokens) == MAX_TOKENS else _("The text has {total} tokens; the model reads at most {read}, so the "
                                                "rest was cut.")
        notices.notice(cut.format(total=result.total_tokens, read=len(result.tokens)))
    if result.unknown:  # only the models trained here name them: the translator (characters), a toy GPT (words)
        words = or_stop(_("The model"), loaded_model, choice).source.reads == Reads.TOY_ENGLISH
        notices.notice(unknown_notice(result.unknown, "gpt-word" if words else "character"))
    return result


def unknown_notice(unknown, what: str, limit: int = 20) -> str:
    """What the page says of tokens a model trained here has never seen (a visitor's text: each in a code span); what:
    "character" (of the translator's source), "word" (of its target) or "gpt-word" (of a toy GPT's text)."""
    shown = " ".join(code(t) for t in unknown[:limit])
    more = len(unknown) - limit
    if more > 0:
        shown = ngettext("{tokens} and {n} more", "{tokens} and {n} more", more).format(tokens=shown, n=more)
    if what == "gpt-word":
        message = ngettext("The toy GPT has never seen this word: {tokens}. It reads it as {unk} (unknown); the other "
                           "words are read as they are.", "The toy GPT has never seen these words: {tokens}. It reads "
                           "each as {unk} (unknown); the other words are read as they are.", len(unknown))
    elif what == "word":
        message = ngettext("The translator has never seen this word: {tokens}. It reads it as {unk} (unknown), and "
                           "still answers.", "The translator has never seen these words: {tokens}. It reads each as "
                           "{unk} (unknown), and still answers.", len(unknown))
    else:
        message = ngettext("The translator has never seen this character: {tokens}. It reads it as {unk} (unknown), "
                           "and still answers.", "The translator has never seen these characters: {tokens}. It reads "
                           "each as {unk} (unknown), and still answers.", len(unknown))
    return message.format(tokens=shown, unk=code("<unk>"))
