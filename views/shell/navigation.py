"""The app's pages, built once per process and copied for each run.

Building the st.Page objects for every page on every rerun is wasted work; a copy is a handful of attribute
copies. A copy, not the object itself: st.navigation marks on a page that this run may call it, and two sessions
may run the same page at once."""
import copy
import threading
from collections.abc import Callable, Hashable

import streamlit as st

from locales import _
from views.shell.registry import by_path

_built: dict[Hashable, list] = {}
_lock = threading.Lock()


def pages(key: Hashable, build: Callable[[], list]) -> list:
    """build() the first time for this key (it needs a script run), then copies of what it built."""
    with _lock:
        if key not in _built:
            _built[key] = build()
        built = _built[key]
    return [copy.copy(page) for page in built]


def link_to(path: str):
    """What st.page_link takes to link the page at /path (a registry path). st.page_link finds a page by its URL path
    alone, so this page's callable is never called: the page drawn is the one app.py's navigation holds."""
    spec = by_path(path)
    return st.Page(_linked, title=_(spec.title), icon=spec.icon, url_path=spec.path)


def _linked() -> None:
    """Never called (link_to)."""
