"""What every first visitor needs, prepared once when the server starts (serve.py runs this in a background thread),
so that the first student of a fresh server waits no longer than the tenth: every page's code imported, the default
model loaded with its compiled pass traced, its pass on the default sentence, the models this project ships loaded
(the translator, the toy GPT), and the packaged LLM (SmolLM2) when it is installed.

It fills the same process-wide caches a page reads (runtime.memory's budget, st.cache_resource), so a page finds it
all there; a student who arrives while it runs waits for the same build, never starts a second one."""
import importlib
import logging
import time
from collections.abc import Callable, Iterator

from model.kinds import SourceKey, SourceKind
from model.loading.sources import DEFAULT_KEY
from runtime.models import Choice, compiling, loaded_model, sources
from runtime.runs import shared_run
from views.shell import registry
from views.widgets.pickers import DEFAULT_TEXT

log = logging.getLogger("attnviz.warm")


def _imports() -> None:
    importlib.import_module("app")  # the entry point's own imports: the shell, the widgets, the charts
    for spec in registry.PAGES:  # each page's module, imported by the page frame on its first visit
        importlib.import_module(spec.module)


def steps() -> Iterator[tuple[str, Callable[[], object]]]:
    """(what, how) in the order a first visitor needs them: the default page first."""
    default = Choice(DEFAULT_KEY)
    yield "imports", _imports
    yield "default model", lambda: loaded_model(default)
    yield "default pass", lambda: shared_run(default, DEFAULT_TEXT)
    yield "compiled pass", lambda: compiling(default).wait()
    for source in sources():  # the models this project trains and ships (the translator, the toy GPT)
        if source.kind == SourceKind.SHIPPED and source.available:
            yield source.key, lambda key=source.key: loaded_model(Choice(key))
    # the LLM a class asks at once ("now ask it something"): without it a fresh replica's class waited for its load,
    # the Ask page's open 6.7-8.3 s at p95 through the compose stack
    llm = next((s for s in sources() if s.key == SourceKey.SMOLLM2 and s.available), None)
    if llm is not None:
        yield llm.key, lambda: loaded_model(Choice(llm.key))
        # and each layer's batch step, which a class's first question traced while the class asked (1.0-1.6 s of CPU)
        yield f"{llm.key} batch layers", lambda: compiling(Choice(llm.key)).wait_batch()


def warm_up() -> dict[str, float]:
    """Run every step; seconds per step. A step that fails is logged and skipped: its page shows the error to whoever
    asks for it, as without a warm-up, and the server still serves every other page."""
    took = {}
    for what, how in steps():
        start = time.perf_counter()
        try:
            how()
        except Exception:  # noqa: BLE001 - logged for the operator; the page that needs it says what went wrong
            log.exception("warm-up: %s failed", what)
        took[what] = time.perf_counter() - start
    return took
