"""Where the model runs: the process's long-lived model threads, torch's thread count, and each model's compiled
pass (model.compiled), traced in the background after its first eager pass."""
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import streamlit as st
import torch

from locales import _, ngettext
from model.causal.compiled_batch import compiled_batch_layers
from model.compiled import compiled_pass, compiled_step

SPINNER_AFTER = 0.25  # s: a model pass still running by then gets a spinner on the page


def torch_threads(environ=os.environ) -> int | None:
    """ATTNVIZ_TORCH_THREADS: threads per forward pass (torch's default: one per core). With several
    replicas on one machine, or many students at once, 1 per replica serves more passes per second."""
    raw = environ.get("ATTNVIZ_TORCH_THREADS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"ATTNVIZ_TORCH_THREADS must be a whole number of threads >= 1, not {raw!r}")
    return int(raw)


def apply_torch_threads() -> int:
    """ATTNVIZ_TORCH_THREADS, if set, for the whole process (the same for every session); torch's threads."""
    threads = torch_threads()
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def workers() -> int:
    """How many passes run at once: as many as the cores hold, at torch's threads per pass."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // apply_torch_threads())


# s a thread waits for Python's GIL before asking its holder to let go (Python's default: 0.005). A model thread
# returns to Python between two of its graphs (a batch's layers: model.causal.compiled_batch) and must not wait 5 ms
# behind a page's script each time: beside a busy Python thread a 40-row step of SmolLM2 through its layer graphs
# took 306-336 ms at 5 ms, 267-277 ms at 0.2 ms; eagerly at 5 ms, 336-373 ms (bench/batch_layers.py, two runs).
SWITCH_INTERVAL = 0.0002


@st.cache_resource
def model_threads() -> ThreadPoolExecutor:
    """The process's long-lived threads for the model, workers() of them (and the process's GIL switch interval,
    SWITCH_INTERVAL, set once they exist)."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    return ThreadPoolExecutor(workers(), thread_name_prefix="attnviz-model")


class _Queue:
    """Where each job submitted to the model threads stands: they start in the order they were submitted (one FIFO
    queue), so the jobs ahead of a waiting one are those submitted before it that have neither started nor been
    cancelled."""

    def __init__(self):
        self._lock = threading.Lock()
        self._count = 0
        self._waiting: set[int] = set()  # the places of the jobs not started yet

    def submit(self, fn: Callable, args: tuple):
        """(future, its place: the how-manieth job submitted)."""
        with self._lock:
            self._count += 1
            place = self._count
            self._waiting.add(place)
            future = model_threads().submit(self._run, place, fn, args)
        future.add_done_callback(lambda _: self._leave(place))  # a job cancelled while queued leaves the line too
        return future, place

    def ahead(self, place: int) -> int:
        with self._lock:
            return sum(p < place for p in self._waiting)

    def _leave(self, place: int) -> None:
        with self._lock:
            self._waiting.discard(place)

    def _run(self, place: int, fn: Callable, args: tuple):
        self._leave(place)
        return _inference(fn, args)


QUEUE = _Queue()


def on_model_thread(fn: Callable, *args):
    """fn(*args) under torch.inference_mode() on one of the process's long-lived model threads; its result,
    or its exception raised here. fn must not call Streamlit (no session there) nor on_model_thread.

    Streamlit runs every rerun in a thread of its own, and a forward pass costs more CPU in a thread that has
    never run one: MiniLM, 30 tokens, 15.4 ms against 13.9 ms on a reused thread with one torch thread, 23.7
    against 20.7 ms of process CPU with two. And the threads are few (workers()), so that a class asking at once
    runs as many jobs as the cores hold, the others queued in order.

    Said on the page only for a job not done after SPINNER_AFTER s: while it waits its turn, how many jobs are ahead
    of it; once it runs, a spinner (st.spinner waits 0.5 s more before it draws): st.spinner starts a thread and
    sends a message even for a 14 ms pass.
    """
    future, place = QUEUE.submit(fn, args)
    try:
        return future.result(timeout=SPINNER_AFTER)
    except TimeoutError:  # a long pass (a big model, a long text, a busy server): say so on the page
        pass
    if not future.running() and not future.done():
        _wait_in_line(future, place)
    with st.spinner(_("Running the model…")):
        return future.result()


def _wait_in_line(future, place: int) -> None:
    """Until the job starts: how many are ahead of it, said on the page and kept up to date."""
    notice, said = st.empty(), None
    try:
        while not (future.running() or future.done()):
            ahead = QUEUE.ahead(place)
            if ahead != said:
                notice.info(ngettext("The server is busy: your request is queued, {n} request ahead of it…",
                                     "The server is busy: your request is queued, {n} requests ahead of it…",
                                     ahead).format(n=ahead) if ahead else
                            _("The server is busy: your request is next, as soon as a model thread is free…"),
                            icon=":material/hourglass_top:")
                said = ahead
            time.sleep(0.1)
    finally:
        notice.empty()


def _inference(fn: Callable, args: tuple):
    with torch.inference_mode():
        return fn(*args)


MAX_TRACED_RANDOM = 4  # random models traced per process; the rest run eagerly (same numbers, more CPU under load)
random_traces = 0
_traced_lock = threading.Lock()


def may_trace(choice) -> bool:
    """Whether this model may be traced now: checkpoints always (the operator lists them, so they are few), random
    models built from links only MAX_TRACED_RANDOM times per process. torch.jit.trace keeps about 0.9 MB per layer
    for the life of the process, even once the traced model is freed (11 MB for 12 layers, at any width), so
    tracing every link's model would grow the process without bound."""
    global random_traces
    if choice.random is None:
        return True
    with _traced_lock:
        if random_traces >= MAX_TRACED_RANDOM:
            return False
        random_traces += 1
        return True


class Compiling:
    """A model's model.compiled.CompiledPass, traced on a model thread after the model's first pass (which runs
    eagerly), so that neither a cold model nor a one-off random configuration waits for the tracing (0.08 s
    for MiniLM; 0.18 s and a 0.05 s warm-up call at bert-base size); and, for a model that writes, its
    CompiledStep, traced after its first generation (1.4 s for SmolLM2); for a chat model, its batch's layer graphs,
    traced after its first question (about 1 s for SmolLM2). Per model, never per request."""

    def __init__(self, model):
        self._model, self._futures, self._lock = model, {}, threading.Lock()

    def ready(self):
        """The compiled pass once it is built; None before, or if this torch cannot trace the model."""
        return self._ready(_trace_and_warm)

    def ready_step(self):
        """The compiled generation step once it is built; None before, or if it could not be built."""
        return self._ready(_trace_step)

    def ready_batch(self):
        """The batch's layer graphs (model.causal.compiled_batch) once built; None before, or if they could not be."""
        return self._ready(_trace_batch)

    def _ready(self, build):
        future = self._futures.get(build)
        return future.result() if future is not None and future.done() and not future.cancelled() else None

    @property
    def started(self) -> bool:
        return bool(self._futures)

    @property
    def step_started(self) -> bool:
        return _trace_step in self._futures

    @property
    def batch_started(self) -> bool:
        return _trace_batch in self._futures

    def start(self, build=None) -> None:
        """Queue the pass's tracing (or build: _trace_step for the generation step's), once."""
        build = build or _trace_and_warm
        with self._lock:
            if build not in self._futures:
                # a weak reference: a model dropped from the budget while its tracing waits in the queue is freed,
                # not kept alive (and traced for nothing) by the queue
                self._futures[build], _ = QUEUE.submit(build, (weakref.ref(self._model),))

    def start_step(self) -> None:
        self.start(_trace_step)

    def start_batch(self) -> None:
        self.start(_trace_batch)

    def settle(self) -> None:
        """Cancel the tracings waiting in the queue, or wait for those running to end (a second or so)."""
        for future in list(self._futures.values()):
            if not future.cancel():
                future.exception()  # the end of it, whatever it was: a failed trace only means the eager pass serves

    def wait(self):
        """Build the pass now if it is not being built, and return it (tests, benchmarks, the warm-up)."""
        self.start()
        return self._futures[_trace_and_warm].result()

    def wait_batch(self):
        """Build the batch's layer graphs now if they are not being built, and return them (the warm-up)."""
        self.start_batch()
        return self._futures[_trace_batch].result()


def _trace_and_warm(model_ref: weakref.ref):
    model = model_ref()
    if model is None:
        return None
    compiled = compiled_pass(model, model.max_positions)
    try:
        if compiled is not None:
            compiled(torch.zeros(1, 2, dtype=torch.long))  # the graph's first call sets it up: not a student's
    except Exception:  # noqa: BLE001 - a graph that cannot run is not used: the eager pass serves, as before
        return None
    return compiled


def _trace_step(model_ref: weakref.ref):
    model = model_ref()
    return None if model is None else compiled_step(model)


def _trace_batch(model_ref: weakref.ref):
    model = model_ref()
    return None if model is None else compiled_batch_layers(model)
