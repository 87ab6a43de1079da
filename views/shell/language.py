"""The language a session reads: ?lang=zh or ?lang=en, else the one it chose in the sidebar, else its browser's.

app.py calls resolve() before anything is drawn and switch() in the sidebar; every _() of the run (and of its
fragments and callbacks, which run without app.py) then reads the session's language through the resolver
installed here (locales.set_resolver).
"""
import threading

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import locales
from locales import LANGUAGES, _
from views.widgets import state

NAME = "lang"  # ?lang= and the switch's key
_SESSION = "_language"  # the session's language, for the runs that do not call resolve()


# This thread's run and its language. A page calls _() a hundred times a run, and each read of st.session_state goes
# through Streamlit's locks and widget tables: the language is read once a run (resolve() and switch() keep what they
# set), a few tenths of a millisecond a run.
_memo = threading.local()


def _run_of(ctx) -> object:
    """What tells one run of a session from the next (a script thread may run several in turn): ScriptRunContext.reset()
    gives every run, a fragment's too, a new `cursors` dict, and the memo holds the one it saw, so no later run's can
    be the same object."""
    return ctx.cursors


def _session_language() -> str:
    ctx = get_script_run_ctx()
    if ctx is None:  # a thread of no session (a cache's worker, a bench): English
        return locales.DEFAULT
    if getattr(_memo, "run", None) is not _run_of(ctx):
        _memo.run, _memo.lang = _run_of(ctx), st.session_state.get(_SESSION, locales.DEFAULT)
    return _memo.lang


def _keep(lang: str) -> None:
    """The session's language from now on: for the rest of this run, and for the runs that do not call resolve()."""
    st.session_state[_SESSION] = lang
    ctx = get_script_run_ctx()
    if ctx is not None:
        _memo.run, _memo.lang = _run_of(ctx), lang


locales.set_resolver(_session_language)


def browser_language() -> str:
    """The language of the visitor's browser (navigator.language), if the app has it; else English."""
    try:
        tag = (st.context.locale or "").lower()
    except Exception:  # noqa: BLE001 - an older browser or a test without a context: English
        tag = ""
    return "zh" if tag.startswith("zh") else locales.DEFAULT


def resolve() -> str:
    """The session's language for this run, from the switch, the link or the browser; also kept for fragments."""
    value = st.session_state.get(NAME) or st.session_state.get(_SESSION)
    raw = st.query_params.get(NAME)
    if NAME not in st.session_state and raw is not None:
        value = raw if raw in LANGUAGES else value
    lang = value if value in LANGUAGES else browser_language()
    _keep(lang)
    return lang


def switch(lang: str, container=None) -> str:
    """The sidebar's language switch, bound to ?lang=, starting from resolve()'s lang (a bad value in the link is
    ignored with a notice)."""
    container = container or st.sidebar
    chosen = state.choice(_("Language"), "lang", list(LANGUAGES), lang, container=container,
                          widget="segmented_control", format_func=LANGUAGES.get)
    _keep(chosen)
    return chosen
