"""The link written back as one message per run: Streamlit sends the browser the whole query string on each write,
so a run's writes wait in a batch (per thread: a page and its fragments) and go together; stopping a page or rerunning
a fragment sends them first."""
import functools
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import NoReturn

import streamlit as st

_writes = threading.local()  # .pending: the URL writes of the run in this thread, or None outside a batch


def pending() -> dict | None:
    """The writes of this thread's batch not yet sent, or None outside a batch."""
    return getattr(_writes, "pending", None)


@contextmanager
def url_writes():
    """Send the URL writes made inside as one message, when the block ends.

    Streamlit sends the browser the whole query string on each write: a first visit writes six or more
    parameters. Nested blocks (a fragment run inside its page's run) join the outer one. A run interrupted
    by a rerun sends nothing: the next run writes again. Stop a page with stop(), which sends them first."""
    if pending() is not None:
        yield
        return
    _writes.pending = {}
    try:
        yield
        send_url_writes()
    finally:
        _writes.pending = None


def send_url_writes() -> None:
    writes = pending()
    if writes:
        st.query_params.update(writes)
        writes.clear()


def stop() -> NoReturn:
    """st.stop(), after sending the URL writes made so far (Streamlit sends nothing once a stop is asked)."""
    send_url_writes()
    st.stop()


def fragment(fn: Callable, run_every: float | None = None) -> Callable:
    """st.fragment whose URL writes are sent as one message (a fragment's rerun runs without its page);
    run_every: it also reruns by itself every so many seconds."""
    @functools.wraps(fn)
    def batched(*args, **kwargs):
        with url_writes():
            return fn(*args, **kwargs)

    return st.fragment(batched, run_every=run_every)


def url_params() -> dict[str, str]:
    """The page's query parameters as they will be after this run: the URL, and the writes not yet sent."""
    return {**st.query_params.to_dict(), **(pending() or {})}
