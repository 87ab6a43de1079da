"""The process's one memory budget (views/cache.py), and what is computed once in it, shared by every session."""
import threading
from collections import Counter

import streamlit as st

from locales import _
from views.cache import BoundedCache
from views.errors import or_stop


@st.cache_resource
def budget() -> BoundedCache:
    """The process's one memory budget (views/cache.py): models, forward passes, recomputed layers, images."""
    return BoundedCache()


COMPUTED: Counter = Counter()  # what cache misses computed, by kind: "forward" (whole model), "layer", ...
_COMPUTED_LOCK = threading.Lock()


def cached(key, compute, what: str | None = None, kind: str = "forward"):
    """compute() once per key in the process's budget, then shared by every session.

    Errors (a missing package, an unreadable checkpoint, a bad config, a model too big for the server) stop the
    page with a message that says `what` failed (in the session's language; default "The model").
    """
    def counted():
        result = compute()  # a long pass shows its spinner (on_model_thread)
        with _COMPUTED_LOCK:
            COMPUTED[kind] += 1
        return result

    return or_stop(what or _("The model"), budget().get_or_build, key, counted, kind)
