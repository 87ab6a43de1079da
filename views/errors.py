"""Failures as plain messages on the page: never a traceback, a server path or an allocator's error."""
import logging
from collections.abc import Callable

import streamlit as st

from views import state
from views.cache import OverBudget

_log = logging.getLogger(__name__)


def or_stop(what: str, fn: Callable, *args):
    """fn(*args), or a plain message on the page and the page stopped: never a traceback, a server path or an
    allocator's error in front of a student."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure becomes a message; the unexpected ones are logged
        st.error(failure(what, e), icon=":material/error:")
        state.stop()


def failure(what: str, e: Exception) -> str:
    """What to tell the user about an exception: our own errors say what to change; the rest is logged."""
    from model.bert import CheckpointError
    from model.sources import ConfigError

    if isinstance(e, OverBudget):
        return (f"{what} was not run, to keep the server up for everyone: {e}. Pick a smaller model "
                "(fewer layers or heads, a smaller d_model or d_ff) or a shorter text.")
    if isinstance(e, (CheckpointError, ConfigError)):
        return f"{what} could not run: {e}"
    if isinstance(e, MemoryError) or "alloc" in str(e).lower():
        return f"{what} could not run: the server ran out of memory for it. Try a smaller model or a shorter text."
    _log.exception("%s could not run", what)
    return f"{what} could not run: an unexpected error ({type(e).__name__}); the server's log has the details."
