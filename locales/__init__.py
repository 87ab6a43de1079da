"""The interface's two languages: gettext message catalogs (locales/<lang>/LC_MESSAGES/messages.po), read with Babel.

Every string a user sees is written in English in the code, marked with _() (or N_() where it is defined and
translated later, or ngettext() where it counts), and looked up in the catalog of the language of the current
session. scripts/i18n.py extracts the marked strings and updates both catalogs; tests/test_catalogs.py fails when a
catalog misses one. Pure Python: model/, viz/ and views/ all use it; views.shell.language says which language a session
reads (?lang=, the sidebar switch, the browser's language).

The .po files are compiled in memory once per process (no .mo file to forget to rebuild).
"""
import functools
import gettext
import io
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

LANGUAGES = {"en": "English", "zh": "中文"}  # code -> its name, in itself
DEFAULT = "en"
DIRECTORY = Path(__file__).parent
DOMAIN = "messages"

_local = threading.local()  # .lang: a language set by use() in this thread, over the resolver's
_resolver: Callable[[], str] | None = None  # the session's language, when no use() applies (views.shell.language)


def catalog_path(lang: str) -> Path:
    return DIRECTORY / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of lang (a gettext GNUTranslations), built once per process."""
    with catalog_path(lang).open("rb") as f:
        catalog = read_po(f, locale=lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def set_resolver(resolver: Callable[[], str] | None) -> None:
    """resolver() says the current session's language (views.shell.language installs one that reads Streamlit's
    state)."""
    global _resolver
    _resolver = resolver


def current() -> str:
    """The language strings are translated into here: use()'s, else the session's, else English."""
    lang = getattr(_local, "lang", None)
    if lang is None and _resolver is not None:
        lang = _resolver()
    return lang if lang in LANGUAGES else DEFAULT


@contextmanager
def use(lang: str):
    """Translate into lang inside the block, in this thread (the CLI, benches, tests)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGUAGES)}")
    before = getattr(_local, "lang", None)
    _local.lang = lang
    try:
        yield
    finally:
        _local.lang = before


def _(message: str) -> str:
    """message in the current language."""
    return translations(current()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """singular or plural (for n), in the current language."""
    return translations(current()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """message in the current language, where the same English means different things (context tells which)."""
    return translations(current()).pgettext(context, message)


def N_(message: str) -> str:
    """Mark message for the catalog where it is defined (a constant); translate it with _() where it is shown."""
    return message


_FIELD = re.compile(r"(?<!\{)\{([^{}!:]*)[^{}]*\}(?!\})")


def fields(message: str) -> set[str]:
    """The str.format fields of message: a translation must keep every one."""
    return set(_FIELD.findall(message))
