"""What every page needs: the model picker, the sentence, cached forward passes, downloads."""
import io
import logging
import os
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import streamlit as st

from views import state
from views.cache import BoundedCache, OverBudget
from viz.attention import CHART_CONFIG

MAX_TEXT_CHARS = 20_000  # longer text is cut before tokenising; the model reads at most its positions anyway
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
D_MODELS = (32, 64, 96, 128, 192, 256, 384, 512, 768)
_log = logging.getLogger(__name__)
SPINNER_AFTER = 0.25  # s: a model pass still running by then gets a spinner on the page


@dataclass(frozen=True)
class Choice:
    """Which model: a source key, and the config when it is the random model."""

    key: str
    random: object = None  # model.sources.RandomConfig or None


@dataclass(frozen=True)
class Mask:
    """What the masks page asks for; the other pages use Mask() (no mask)."""

    kind: str = "none"  # one of model.masks.MASK_KINDS
    pad_to: int = 0  # padding: the sequence is padded with [PAD] up to this many tokens
    blocked: tuple[int, ...] = ()  # custom: key positions no query may see


@dataclass(frozen=True)
class Run:
    """One forward pass, kept small: every attention map and each layer's input, nothing more.

    The rest of the trace (Q, K, V, scores, residuals, the FFN, the embeddings) is recomputed one layer at a
    time when a page asks for it, from that layer's input: the same computation, so the same numbers, bit for
    bit. At bert-base size and 128 tokens a cached run is 14.5 MB instead of 87 MB for the whole trace.
    Shared by every session: never modify what it holds.
    """

    key: tuple  # (Choice, text, Mask): what was run, and the cache key of the recomputed parts
    label: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    padding: np.ndarray  # (T,) bool, True at [PAD] positions
    truncated: bool
    total_tokens: int
    attentions: np.ndarray  # (layers, heads, T, T) float32, read-only
    hidden: object  # torch.Tensor (layers, T, E): each layer's input
    mask: object  # torch.Tensor or None: the additive mask every layer applied, broadcastable to (1, heads, T, T)

    @property
    def num_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def num_heads(self) -> int:
        return self.attentions.shape[1]

    def layer(self, index: int, cache: bool = True):
        """model.trace.LayerTrace of one layer (batch of 1), recomputed from its input (and cached)."""
        if not cache:
            return self._recompute(index)
        return cached(("layer", self.key, index), lambda: self._recompute(index), kind="layer")

    def attention(self, index: int):
        """The AttentionTrace of one layer (batch of 1)."""
        return self.layer(index).self_attn

    @property
    def trace(self) -> "RunTrace":
        """The run as a model.trace.StackTrace would show it: embeddings, layers, output (recomputed on access)."""
        return RunTrace(self)

    def _recompute(self, index: int | None):
        """Layer `index`'s trace, or the embeddings' (index None), with the forward pass's masks."""
        import torch

        choice, _, mask = self.key
        model = loaded_model(choice).model
        if index is None:
            return on_model_thread(model.trace_embeddings, torch.tensor([self.ids]))
        return on_model_thread(model.trace_layer, index, self.hidden[index:index + 1],
                               *model_masks(mask, self.padding))


class RunTrace:
    """A Run read like a model.trace.StackTrace (embeddings, layers, output); parts are recomputed on access."""

    def __init__(self, run: Run, cache: bool = True):
        self._run, self._cache = run, cache

    @property
    def embeddings(self):
        run = self._run
        if not self._cache:
            return run._recompute(None)
        return cached(("embeddings", run.key), lambda: run._recompute(None), kind="embeddings")

    @property
    def layers(self) -> "_Layers":
        return _Layers(self._run, self._cache)

    @property
    def output(self):
        """The stack's output (1, T, E): the last layer's, recomputed, after a Pre-LN stack's final norm."""
        run = self._run
        return on_model_thread(loaded_model(run.key[0]).model.stack_output, self.layers[-1].output)


class _Layers(Sequence):
    def __init__(self, run: Run, cache: bool):
        self._run, self._cache = run, cache

    def __len__(self) -> int:
        return self._run.num_layers

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._run.layer(index % len(self), self._cache)


@st.cache_resource
def budget() -> BoundedCache:
    """The process's one memory budget (views/cache.py): models, forward passes, recomputed layers, images."""
    return BoundedCache()


@st.cache_resource(ttl=60, show_spinner=False)
def sources():
    from model.sources import list_sources

    return list_sources()


def torch_threads(environ=os.environ) -> int | None:
    """ATTNVIZ_TORCH_THREADS: threads per forward pass (torch's default: one per core). With several
    replicas on one machine, or many students at once, 1 per replica serves more passes per second."""
    raw = environ.get("ATTNVIZ_TORCH_THREADS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"ATTNVIZ_TORCH_THREADS must be a whole number of threads >= 1, not {raw!r}")
    return int(raw)


def _apply_torch_threads() -> int:
    """ATTNVIZ_TORCH_THREADS, if set, for the whole process (the same for every session); torch's threads."""
    import torch

    threads = torch_threads()
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


@dataclass(frozen=True)
class Resident:
    """A loaded model and its compiled pass: one entry of the budget, so that they are dropped together."""

    loaded: object  # model.sources.LoadedModel or LoadedSeq2Seq
    compiling: "Compiling | None"

    def settle(self) -> None:
        """Once dropped from the budget: no tracing of it left queued or running, so that it can be freed now."""
        if self.compiling is not None:
            self.compiling.settle()


def loaded_model(choice: Choice):
    """One model per (source, config) per process, shared by every session, never mutated. Room is made in the
    budget before it is built; the default model stays. Raises OverBudget, CheckpointError, ConfigError."""
    return resident(choice).loaded


def model_key(choice: Choice, encoder_decoder: bool = False) -> tuple:
    return "model", choice, encoder_decoder


def resident(choice: Choice, encoder_decoder: bool = False) -> Resident:
    """The budget's entry for a model: built (or read) once, with room made first. encoder_decoder: the random
    encoder-decoder of choice.random, for the encoder-decoder page."""
    from model.footprint import module_bytes
    from model.sources import DEFAULT_KEY, find_source, footprint, load, load_encoder_decoder

    source = find_source(choice.key)
    if source is None:
        raise ValueError(f"unknown model {choice.key!r}")

    def build() -> Resident:
        _apply_torch_threads()
        with st.spinner("Building the random encoder-decoder…" if encoder_decoder else "Loading the model…"):
            if encoder_decoder:
                return Resident(load_encoder_decoder(choice.random), None)
            loaded = load(source, choice.random)
        return Resident(loaded, Compiling(loaded.model))

    return budget().get_or_build(model_key(choice, encoder_decoder), build, kind="model",
                                 estimate=footprint(source, choice.random, encoder_decoder),
                                 size=lambda r: module_bytes(r.loaded.model),
                                 pinned=choice == Choice(DEFAULT_KEY) and not encoder_decoder)


@st.cache_resource
def _model_threads() -> ThreadPoolExecutor:
    """The process's long-lived threads for the model: as many as the cores hold passes at once."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return ThreadPoolExecutor(max(1, cores // _apply_torch_threads()), thread_name_prefix="attnviz-model")


def on_model_thread(fn: Callable, *args):
    """fn(*args) under torch.inference_mode() on one of the process's long-lived model threads; its result,
    or its exception raised here. fn must not call Streamlit (no session there) nor on_model_thread.

    Streamlit runs every rerun in a thread of its own, and a forward pass costs more CPU in a thread that has
    never run one: MiniLM, 30 tokens, 15.4 ms against 13.9 ms on a reused thread with one torch thread, 23.7
    against 20.7 ms of process CPU with two.

    The page shows a spinner only for a pass still running after SPINNER_AFTER s (st.spinner then waits
    0.5 s more before it draws): st.spinner starts a thread and sends a message even for a 14 ms pass.
    """
    future = _model_threads().submit(_inference, fn, args)
    try:
        return future.result(timeout=SPINNER_AFTER)
    except TimeoutError:  # a long pass (a big model, a long text, a busy server): say so on the page
        with st.spinner("Running the model…"):
            return future.result()


def _inference(fn: Callable, args: tuple):
    import torch

    with torch.inference_mode():
        return fn(*args)


def model_choice(container=None) -> Choice:
    """The model picker (sidebar by default): available sources, the unavailable ones with why."""
    from model.sources import DEFAULT_KEY, RANDOM_KEY

    container = container or st.sidebar
    all_sources = sources()
    available = [s for s in all_sources if s.available]
    labels = {s.key: s.label for s in all_sources}
    if not available:
        st.error("No model is available: " + "; ".join(f"{s.label}: {s.reason}" for s in all_sources))
        state.stop()
    default = DEFAULT_KEY if any(s.key == DEFAULT_KEY for s in available) else available[0].key
    # What is missing, and why, in the picker's tooltip: an expander and its text were two more messages to
    # the browser on every page run.
    missing = [f"- **{s.label}**: {s.reason}" for s in all_sources if not s.available]
    key = state.choice("Model", "model", [s.key for s in available], default, container=container,
                       format_func=lambda k: labels.get(k, k),
                       help="\n".join(["Not available on this server:", *missing]) if missing else None)
    config = random_config(container) if key == RANDOM_KEY else None
    chart_format(container)
    return Choice(key, config)


def chart_format(container=None) -> None:
    """What every chart's camera button downloads: PNG or SVG (?img=svg), chosen in the sidebar."""
    state.choice("Chart download format", "img", ("png", "svg"), "png", container=container or st.sidebar,
                 widget="segmented_control", format_func=str.upper,
                 help="The camera button in each chart's toolbar saves the chart in this format.")


def chart_config() -> dict:
    """The plotly toolbar config for this session: the chosen download format, no plotly logo."""
    image = {**CHART_CONFIG["toImageButtonOptions"], "format": st.session_state.get("img", "png")}
    return {**CHART_CONFIG, "toImageButtonOptions": image}


def random_config(container=None):
    """Sliders for the random model; only divisors of d_model are offered as head counts."""
    from model.sources import RandomConfig

    c = container or st.sidebar
    d_model = state.choice("d_model", "d_model", D_MODELS, 128, container=c)
    divisors = [h for h in range(1, 17) if d_model % h == 0]
    heads = state.choice("Heads (divisors of d_model)", "heads", divisors, 4 if 4 in divisors else divisors[-1],
                         container=c)
    layers = state.int_slider("Layers", "layers", 1, 12, 2, container=c)
    d_ff = state.choice("d_ff", "d_ff", (64, 128, 256, 512, 1024, 2048, 3072), 512, container=c)
    activation = state.choice("Activation", "activation", ("gelu", "relu"), "gelu", container=c, widget="radio",
                              horizontal=True)
    norm = state.choice("Normalisation", "norm", ("post-LN", "pre-LN"), "post-LN", container=c, widget="radio",
                        horizontal=True)
    positional = state.choice("Positions", "positional", ("sinusoidal", "learned"), "sinusoidal", container=c,
                              widget="radio", horizontal=True)
    seed = state.int_slider("Seed", "seed", 0, 99, 0, container=c)
    return RandomConfig(d_model, heads, layers, d_ff, activation, norm == "pre-LN", positional, seed)


def sentence(label: str = "Sentence", name: str = "text", default: str = DEFAULT_TEXT) -> str:
    """The text box bound to ?text=; on empty text it says what to do and stops the page."""
    value = state.text(label, name, default, MAX_TEXT_CHARS, height=80)
    if not value.strip():
        st.info("Type a sentence above to see its attention.")
        state.stop()
    return value


def model_masks(mask: Mask, padding: np.ndarray) -> tuple:
    """What the model is given for `mask` over a sequence padded where `padding` is True:
    (attention_mask (1, T), 1 = token, or None; attn_mask (T, T), True = blocked, or None)."""
    import torch

    from model.masks import attention_mask_of

    attention_mask = torch.tensor([[0 if p else 1 for p in padding]]) if padding.any() else None
    return attention_mask, attention_mask_of(mask.kind, len(padding), mask.blocked)


def compute_run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """Tokenise, apply the mask, run the model; keep the attention maps and each layer's input (what
    model.inputs_and_attentions returns of a recorded pass)."""
    import torch

    from model.footprint import encoder_pass_bytes, stack_sizes
    from model.masks import pads

    model = resident(choice)
    loaded = model.loaded
    encoded = loaded.encode(text)
    ids = encoded.input_ids[0].tolist()
    tokens = list(encoded.tokens)
    pad = 0
    if pads(mask.kind) and mask.pad_to > len(ids):
        pad = min(mask.pad_to, loaded.facts.max_positions) - len(ids)
        pad_token, pad_id = loaded.facts.special_tokens.pad or ("[PAD]", 0)
        ids, tokens = ids + [pad_id] * pad, tokens + [pad_token] * pad
    padding = np.array([False] * (len(ids) - pad) + [True] * pad)
    attention_mask, attn_mask = model_masks(mask, padding)
    plain = attention_mask is None and attn_mask is None  # what the compiled graph computes: no mask, no padding
    compiled = model.compiling.ready() if plain else None
    with budget().room(encoder_pass_bytes(*stack_sizes(loaded.model.encoder), len(ids)), spare=(model_key(choice),)):
        if compiled is not None:  # the same numbers, without waiting for the GIL between operations
            (hidden, attentions), additive = on_model_thread(compiled, torch.tensor([ids])), None
        else:
            hidden, attentions, additive = on_model_thread(loaded.model.inputs_and_attentions,
                                                           torch.tensor([ids]), attention_mask, attn_mask)
            hidden, attentions = hidden[:, 0], attentions[:, 0]  # a sequence of one
            if plain and not model.compiling.started and may_trace(choice):
                model.compiling.start()  # for the next pass of this model
    attentions = attentions.numpy()  # (layers, heads, T, T), shared by every session: read-only
    attentions.flags.writeable = False
    return Run((choice, text, mask), loaded.source.label, tuple(tokens), tuple(ids), padding, encoded.truncated,
               encoded.total_tokens, attentions, hidden, additive)


MAX_TRACED_RANDOM = 4  # random models traced per process; the rest run eagerly (same numbers, more CPU under load)
_random_traces = 0
_traced_lock = threading.Lock()


def may_trace(choice: Choice) -> bool:
    """Whether this model may be traced now: checkpoints always (the operator lists them, so they are few), random
    models built from links only MAX_TRACED_RANDOM times per process. torch.jit.trace keeps about 0.9 MB per layer
    for the life of the process, even once the traced model is freed (11 MB for 12 layers, at any width), so
    tracing every link's model would grow the process without bound."""
    global _random_traces
    if choice.random is None:
        return True
    with _traced_lock:
        if _random_traces >= MAX_TRACED_RANDOM:
            return False
        _random_traces += 1
        return True


class Compiling:
    """A model's model.compiled.CompiledPass, traced on a model thread after the model's first pass (which runs
    eagerly), so that neither a cold model nor a one-off random configuration waits for the tracing (0.08 s
    for MiniLM; 0.18 s and a 0.05 s warm-up call at bert-base size). Per model, never per request."""

    def __init__(self, model):
        self._model, self._future, self._lock = model, None, threading.Lock()

    def ready(self):
        """The compiled pass once it is built; None before, or if this torch cannot trace the model."""
        future = self._future
        return future.result() if future is not None and future.done() and not future.cancelled() else None

    @property
    def started(self) -> bool:
        return self._future is not None

    def start(self) -> None:
        with self._lock:
            if self._future is None:
                # a weak reference: a model dropped from the budget while its tracing waits in the queue is freed,
                # not kept alive (and traced for nothing) by the queue
                self._future = _model_threads().submit(_inference, _trace_and_warm, (weakref.ref(self._model),))

    def settle(self) -> None:
        """Cancel the tracing if it waits in the queue, or wait for it to end if it runs (a few tenths of a s)."""
        future = self._future
        if future is not None and not future.cancel():
            future.exception()  # the end of it, whatever it was: a failed trace only means the eager pass serves

    def wait(self):
        """Build it now if it is not being built, and return it (tests, benchmarks)."""
        self.start()
        return self._future.result()


def _trace_and_warm(model_ref: weakref.ref):
    import torch

    from model.compiled import compiled_pass

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


def compiling(choice: Choice) -> Compiling:
    """The model's Compiling, dropped with the model."""
    return resident(choice).compiling


COMPUTED: Counter = Counter()  # what cache misses computed, by kind: "forward" (whole model), "layer", ...
_COMPUTED_LOCK = threading.Lock()


def cached(key, compute, what: str = "The model", kind: str = "forward"):
    """compute() once per key in the process's budget, then shared by every session.

    Errors (a missing package, an unreadable checkpoint, a bad config, a model too big for the server) stop the
    page with a message.
    """
    def counted():
        result = compute()  # a long pass shows its spinner (on_model_thread)
        with _COMPUTED_LOCK:
            COMPUTED[kind] += 1
        return result

    return or_stop(what, budget().get_or_build, key, counted, kind)


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


_HELD = "_held_runs"  # session state: claims on the runs this session's page drew last (a page draws at most two)


def run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """The run for (model, text, mask): computed once, then shared through the budget.

    The session also holds the runs its page drew last, so that a slider move does not run the model again when
    the rest of the class fills the budget: held runs go last, only if the budget needs their room. The claims
    are released with the session."""
    key = (choice, text, mask)
    result = cached(key, lambda: compute_run(choice, text, mask))
    held = [h for h in st.session_state.get(_HELD, ()) if h.key != key]
    claim = budget().hold(key)
    st.session_state[_HELD] = tuple(h for h in (claim, *held) if h is not None)[:2]
    if result.truncated:
        state.notice(f"The text has {result.total_tokens} tokens; the model reads at most {len(result.tokens)}, "
                     "so the rest was cut.")
    return result


def token_label(tokens, i: int) -> str:
    return f"{i}: {tokens[i]}"


def long_text_labels(tokens, limit: int = 64) -> tuple[str, ...]:
    """Tokens as axis labels; beyond `limit`, "i: token" says where each is and stays unique on repeats."""
    return tuple(tokens) if len(tokens) <= limit else tuple(token_label(tokens, i) for i in range(len(tokens)))


def head_csv(probs: np.ndarray, tokens, key_tokens=None) -> bytes:
    """One head's (L, S) probabilities as CSV: a header row of keys, one row per query."""
    key_tokens = tokens if key_tokens is None else key_tokens
    buf = io.StringIO()
    header = ["query \\ key"] + [f"{j}:{t}" for j, t in enumerate(key_tokens)]
    buf.write(",".join(_csv_cell(h) for h in header) + "\n")
    for i, row in enumerate(probs):
        buf.write(_csv_cell(f"{i}:{tokens[i]}") + "," + ",".join(f"{p:.8g}" for p in row) + "\n")
    return buf.getvalue().encode("utf-8")


def _csv_cell(text: str) -> str:
    if any(c in text for c in ',"\n') or text[:1] in "=+-@":  # quoted; no formula injection in spreadsheets
        return '"' + text.replace('"', '""') + '"'
    return text


def trace_npz(r: Run) -> bytes:
    """The whole trace as NumPy arrays: per layer q, k, v, scores, probs, context, and hidden states."""
    arrays = {"tokens": np.array(r.tokens), "padding": r.padding}
    trace = RunTrace(r, cache=False)  # a download recomputes every layer once rather than filling the cache
    emb = trace.embeddings
    if emb is not None:
        for name in ("token", "position", "summed", "output"):
            arrays[f"embeddings_{name}"] = getattr(emb, name)[0].numpy()
    for i, layer in enumerate(trace.layers):
        a = layer.self_attn
        for name in ("q", "k", "v", "scores", "probs", "context"):
            arrays[f"layer{i}_{name}"] = getattr(a, name)[0].numpy()
        arrays[f"layer{i}_output"] = layer.output[0].numpy()
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()
