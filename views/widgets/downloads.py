"""Downloads: buttons whose file is built on click (and which say so on the page when building it fails), and the
files of what a page shows (one head as CSV, the whole trace as NumPy arrays).

Streamlit runs a download's callable when the button is clicked, on a server thread outside the page script: it
cannot write to the page, an exception it raises reaches only the server log, and the browser shows a generic
"Failed to generate file for download" under the button for five seconds, without the reason. The click also
reruns the page, and the button's on_click runs first in that rerun, in the page's thread. So on_click waits
for this click's file and, if it could not be built, leaves a message that the button draws below itself.

The file is handed over only once its click's rerun has begun. When a run starts, Streamlit (1.67) clears the
messages not yet sent to the browser, the answer to a download among them: a file built faster than the rerun
starts (a CSV) was lost in 2 of 15 clicks on a busy machine, and the button did nothing. A run's start is
queued on the server's event loop before its on_click runs, and the finished file is queued after, so the
answer now comes after the clearing.
"""
import io
import threading
from collections.abc import Callable

import numpy as np
import streamlit as st

from locales import _
from runtime.runs import Run, RunTrace
from views.widgets import file_names

STARTS_WITHIN = 5.0  # s: the browser asks for the file as it sends the click; past this it is not coming
BUILDS_WITHIN = 300.0  # s: the longest the rerun waits for the file (the whole trace of a long text and big model)
BOM = "\ufeff"  # the UTF-8 byte order mark, as a character: its bytes EF BB BF start every CSV
_FAILED = "_download_failed"  # session state: {file name: message} of the download that just failed


class LazyFile:
    """The callable a download button is given: build() on click, remembering whether it failed."""

    def __init__(self, build: Callable[[], bytes], file_name: str):
        self._build, self.file_name = build, file_name
        self._started, self._clicked, self._finished = threading.Event(), threading.Event(), threading.Event()
        self.failure: str | None = None

    def __call__(self) -> bytes:
        """On Streamlit's thread, when the button is clicked. Re-raises: no half-made file is downloaded."""
        self.failure = None
        self._finished.clear()
        self._started.set()
        try:
            return self._build()
        except Exception as e:
            # The type only: the message may name server paths. Streamlit logs the traceback.
            self.failure = _("{file} could not be made ({error}), so nothing was downloaded. The server's log has "
                             "the details.").format(file=self.file_name, error=type(e).__name__)
            raise
        finally:
            self._clicked.wait(STARTS_WITHIN)  # the click's rerun has begun: its start no longer drops the answer
            self._finished.set()

    def after_click(self) -> None:
        """on_click: at the start of the rerun the click causes, before the page is drawn again. Waits for the
        file this click asked for and, if it could not be made, leaves the message for button() to show."""
        self._clicked.set()
        if self._started.wait(STARTS_WITHIN) and self._finished.wait(BUILDS_WITHIN) and self.failure is not None:
            st.session_state[_FAILED] = {self.file_name: self.failure}


def button(label: str, build: Callable[[], bytes], file_name: str, mime: str, container=None) -> None:
    """st.download_button of build() (called on click, not on every run), and below it, after a click whose
    file could not be built, the reason. file_name: what the file is ("attention_layer2_head5.csv"); the page and
    the model go in front of it (views.widgets.file_names)."""
    container = container or st
    file_name = file_names.given(file_name)
    file = LazyFile(build, file_name)
    container.download_button(label, file, file_name=file_name, mime=mime, on_click=file.after_click)
    failure = st.session_state.get(_FAILED, {}).pop(file_name, None)
    if failure is not None:
        container.error(failure, icon=":material/error:")


def head_csv(probs: np.ndarray, tokens, key_tokens=None) -> bytes:
    """One head's (L, S) probabilities as CSV: a header row of keys, one row per query. UTF-8 with a byte order mark
    in front: without it Excel reads the file in the computer's own code page and Chinese tokens come out garbled."""
    key_tokens = tokens if key_tokens is None else key_tokens
    buf = io.StringIO()
    buf.write(BOM)
    header = [_("query \\ key")] + [f"{j}:{t}" for j, t in enumerate(key_tokens)]
    buf.write(",".join(csv_cell(h) for h in header) + "\n")
    for i, row in enumerate(probs):
        buf.write(csv_cell(f"{i}:{tokens[i]}") + "," + ",".join(f"{p:.8g}" for p in row) + "\n")
    return buf.getvalue().encode("utf-8")


def csv_lines(lines) -> bytes:
    """Lines of CSV (a header, then rows) as a file: UTF-8 with the byte order mark in front, each line ended."""
    return (BOM + "\n".join(lines) + "\n").encode("utf-8")


def csv_cell(text: str) -> str:
    if any(c in text for c in ',"\n') or text[:1] in "=+-@":  # quoted; no formula injection in spreadsheets
        return '"' + text.replace('"', '""') + '"'
    return text


WHOLE_TRACE_BYTES = 64 * 2**20  # float32 bytes of a trace offered whole; past them, the trace of the layer shown


def trace_bytes(r: Run, layers: int | None = None) -> int:
    """Float32 bytes of trace_npz's arrays for `layers` layers (all by default): per layer Q, K, V, the context and
    the output (T, E each), the scores and the probabilities (heads, T, T); the embeddings (T, E) four times."""
    t, e = len(r.tokens), r.hidden.shape[-1]
    per_layer = 5 * t * e + 2 * r.num_heads * t * t
    return 4 * (4 * t * e + per_layer * (r.num_layers if layers is None else layers))


def trace_button(r: Run, layer: int, masked: bool = False, container=None) -> None:
    """The whole trace as NumPy arrays; past WHOLE_TRACE_BYTES (a long text on a big model: SmolLM2's at 512 tokens
    would be 900 MB) the embeddings and the trace of `layer`, the layer the page shows."""
    kind = r.key[2].kind
    if trace_bytes(r) <= WHOLE_TRACE_BYTES:
        label = _("Download the whole masked trace (NumPy .npz)") if masked else _(
            "Download the whole trace (NumPy .npz)")
        name, layers = f"masked_trace_{kind}.npz" if masked else "attention_trace.npz", None
    else:
        label = (_("Download layer {layer}'s masked trace (NumPy .npz)") if masked else _(
            "Download layer {layer}'s trace (NumPy .npz)")).format(layer=layer)
        name = f"masked_trace_{kind}_layer{layer}.npz" if masked else f"attention_trace_layer{layer}.npz"
        layers = (layer,)
    button(label, lambda: trace_npz(r, layers), name, "application/octet-stream", container)


def trace_npz(r: Run, layers: tuple[int, ...] | None = None) -> bytes:
    """The trace as NumPy arrays: per layer (all, or `layers`) q, k, v, scores, probs, context, and hidden states."""
    arrays = {"tokens": np.array(r.tokens), "padding": r.padding}
    trace = RunTrace(r, cache=False)  # a download recomputes every layer once rather than filling the cache
    emb = trace.embeddings
    if emb is not None:
        for name in ("token", "position", "summed", "output"):
            arrays[f"embeddings_{name}"] = getattr(emb, name)[0].numpy()
    for i in range(r.num_layers) if layers is None else layers:
        layer = trace.layers[i]
        a = layer.self_attn
        for name in ("q", "k", "v", "scores", "probs", "context"):
            arrays[f"layer{i}_{name}"] = getattr(a, name)[0].numpy()
        arrays[f"layer{i}_output"] = layer.output[0].numpy()
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()
