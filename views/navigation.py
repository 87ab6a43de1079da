"""The app's pages, built once per process and copied for each run.

Building the st.Page objects for every page on every rerun is wasted work; a copy is a handful of attribute
copies. A copy, not the object itself: st.navigation marks on a page that this run may call it, and two sessions
may run the same page at once."""
import copy
import threading
from collections.abc import Callable, Hashable

_built: dict[Hashable, list] = {}
_lock = threading.Lock()


def pages(key: Hashable, build: Callable[[], list]) -> list:
    """build() the first time for this key (it needs a script run), then copies of what it built."""
    with _lock:
        if key not in _built:
            _built[key] = build()
        built = _built[key]
    return [copy.copy(page) for page in built]
