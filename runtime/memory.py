"""The process's one memory budget (runtime/budget.py), and what is computed once in it, shared by every session."""
import threading
from collections import Counter

import streamlit as st

from locales import _
from runtime.budget import BoundedCache, Kind
from runtime.heap import bound_heap_growth


@st.cache_resource
def budget() -> BoundedCache:
    """The process's one memory budget (runtime/budget.py): models, forward passes, recomputed layers, images. Made
    once per process, before any model: the heap's growth bounded first (runtime.heap.bound_heap_growth)."""
    bound_heap_growth()
    return BoundedCache()


COMPUTED: Counter = Counter()  # what cache misses computed, by kind: "forward" (whole model), "layer", ...
_COMPUTED_LOCK = threading.Lock()


def cached(key, compute, kind: Kind = Kind.FORWARD, pinned: bool = False):
    """compute() once per key in the process's budget, then shared by every session (pinned: kept for the life of
    the process; only for what is small, costly and of a bounded number of keys). Errors are raised: a page calls it
    through views.shell.errors.cached, which says them on the page."""
    def counted():
        result = compute()  # a long pass shows its spinner (on_model_thread)
        with _COMPUTED_LOCK:
            COMPUTED[kind] += 1
        return result

    return budget().get_or_build(key, counted, kind, pinned=pinned, waiting=shared_wait)


def computed(key, value, kind: Kind):
    """Put what was computed elsewhere (an answer written in a batch, on a model thread) in the budget, counted as
    cached() counts what it computes."""
    budget().put(key, value, kind)
    with _COMPUTED_LOCK:
        COMPUTED[kind] += 1


def shared_wait():
    """What a page says while it waits for what another session is computing (the same key): a class pressing the
    same button at once costs one computation, and each student knows why the page waits (st.spinner draws only
    after half a second)."""
    return st.spinner(_("Someone else asked for the same a moment ago: it is being computed once, for both of you…"))
