"""The app's pages, built once per process and copied for each run.

Building an st.Page resolves its file on disk, for every page on every rerun. A copy is a handful of
attribute copies. A copy, not the object itself: st.navigation marks on a page that this run may call it,
and two sessions may run the same page at once."""
import copy
import threading
from collections.abc import Callable

_built: list = []
_lock = threading.Lock()


def pages(build: Callable[[], list]) -> list:
    """build() the first time (it needs a script run, for the app's folder), then copies of what it built."""
    with _lock:
        if not _built:
            _built.extend(build())
    return [copy.copy(page) for page in _built]
