"""Failures as plain messages on the page: never a traceback, a server path or an allocator's error."""
import logging
from collections.abc import Callable
from contextlib import contextmanager
from typing import NoReturn

import streamlit as st

from locales import _
from model.bert import CheckpointError
from model.loading.sources import ConfigError
from runtime import memory
from runtime.budget import Kind, OverBudget
from views.widgets import link_writes

_log = logging.getLogger(__name__)


def or_stop(what: str, fn: Callable, *args):
    """fn(*args), or a plain message on the page and the page stopped: never a traceback, a server path or an
    allocator's error in front of a student. what: what failed, in the session's language (_("The model"))."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure becomes a message; the unexpected ones are logged
        _say_and_stop(what, e)


def cached(key, compute, what: str | None = None, kind: Kind = Kind.FORWARD, pinned: bool = False):
    """runtime.memory.cached (compute() once per key in the process's budget, shared by every session), or a plain
    message that says `what` failed (in the session's language; default "The model") and the page stopped: a
    missing package, an unreadable checkpoint, a bad config, a model too big for the server."""
    return or_stop(what or _("The model"), memory.cached, key, compute, kind, pinned)


@contextmanager
def said(what: str):
    """Inside: the failures a page can cause (too big for the budget, a bad checkpoint or config, out of memory) said
    on the page as or_stop says them, and the page stopped; any other exception is raised (a bug, not a visitor)."""
    try:
        yield
    except (OverBudget, CheckpointError, ConfigError, MemoryError) as e:
        _say_and_stop(what, e)


def _say_and_stop(what: str, e: Exception) -> NoReturn:
    st.error(failure(what, e), icon=":material/error:")
    link_writes.stop()


def failure(what: str, e: Exception) -> str:
    """What to tell the user about an exception: our own errors say what to change; the rest is logged."""
    if isinstance(e, OverBudget):
        return _("{what} was not run, to keep the server up for everyone: {reason}. Pick a smaller model (fewer "
                 "layers or heads, a smaller d_model or d_ff) or a shorter text.").format(what=what, reason=str(e))
    if isinstance(e, (CheckpointError, ConfigError)):
        return _("{what} could not run: {reason}").format(what=what, reason=str(e))  # str(): in this language
    if isinstance(e, MemoryError) or "alloc" in str(e).lower():
        return _("{what} could not run: the server ran out of memory for it. Try a smaller model or a shorter "
                 "text.").format(what=what)
    _log.exception("%s could not run", what)
    return _("{what} could not run: an unexpected error ({error}); the server's log has the details.").format(
        what=what, error=type(e).__name__)
