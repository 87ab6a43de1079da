"""Names of the files a page gives away (downloads, and the charts' camera button): page, model, what, layer, head.

A class saves many files from many pages: heatmap_all-MiniLM-L6-v2_layer2_head5.csv says where each came from.
The page frame says which page this is (views.widgets.state.set_page) and the model picker which model (set_model, per
session; new_page() forgets the model of the page before); the
layer and head are those of the sliders this run drew (drawn()), so a page without them names none.
Names are ASCII letters, digits, "-" and "_" only, and one "." before the extension (a model
directory's name is the operator's, and a browser or a spreadsheet may not take every character), and at most
MAX_CHARS long. They are the same in every language: a file a lecturer names on a slide is found by the same name
in both.
"""
import re

import streamlit as st

from runtime.models import sources
from views.widgets import state

MAX_CHARS = 120  # with the extension
_CONTEXT = "_file_names"  # session state: {"model": the model's name in file names}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_EXTENSION = re.compile(r"[A-Za-z0-9]{1,8}")


def new_page() -> None:
    """The frame, as it draws a page: no model until a picker sets one."""
    st.session_state[_CONTEXT] = {"model": None}
    begin_run()


def begin_run() -> None:
    """A page (or its fragment) starts drawing: drawn() forgets the widgets of the run before."""
    st.session_state[state.DRAWN] = {}


def drawn() -> dict:
    """{name: value} of the widgets bound to the link (views.widgets.state) drawn since begin_run(): whether this page
    shows a layer and a head, and which."""
    return st.session_state.get(state.DRAWN, {})


def set_model(key: str, random=None) -> None:
    """The model picker: the model of this page's files (a source key and a random model's config)."""
    st.session_state.setdefault(_CONTEXT, {})["model"] = model_name(key, random)


def model_name(key: str, random=None) -> str:
    """all-MiniLM-L6-v2, translator, random-d128-h4-l2-seed0, or a directory's or a cached checkpoint's name."""
    if random is not None:
        return (f"{key}-d{random.d_model}-h{random.nhead}-l{random.num_layers}"
                + ("" if random.seed == 0 else f"-seed{random.seed}"))
    named = next((s.name for s in sources() if s.key == key and s.name), None)  # a built-in's own name
    return named or key.split(":", 1)[-1].rsplit("/", 1)[-1]


def safe(part: str) -> str:
    """part with every run of other characters than ASCII letters, digits, "-" and "_" as one "-"."""
    return _UNSAFE.sub("-", part).strip("-")


def name(*what: str, layer=None, head=None, mean: bool = False, ext: str = "") -> str:
    """page_model_what_layerL_headH.ext: the parts known (page and model from the frame, layer and head as given,
    else the sliders this run drew), each made safe(), the whole cut to MAX_CHARS. layer, head: a number or a
    placeholder ("{layer}"), kept as it is for the chart's own sliders to fill in."""
    context = st.session_state.get(_CONTEXT, {})
    shown = drawn()
    if layer is None:
        layer = shown.get("layer")
    if head is None and not mean:
        mean = bool(shown.get("mean"))
        head = None if mean else shown.get("head")
    page = state.page()
    parts = [page, context.get("model"), *(w for w in what if w != page)]  # the heatmap's chart "heatmap" once
    parts = [safe(str(p)) for p in parts if p]
    parts += [f"layer{layer}"] if layer is not None else []
    parts += ["mean"] if mean else [f"head{head}"] if head is not None else []
    ext = ext.lstrip(".") if _EXTENSION.fullmatch(ext.lstrip(".")) else ""
    return _bounded("_".join(p for p in parts if p) or "attention", ext)


def _bounded(stem: str, ext: str) -> str:
    """stem.ext, the stem cut so the whole is at most MAX_CHARS."""
    return stem[:MAX_CHARS - len(ext) - 1].rstrip("-_") + (f".{ext}" if ext else "")


def given(file_name: str) -> str:
    """A name a page gave a download ("attention_layer2_head5.csv"), with the page and the model in front (unless
    it already starts with them), made safe and bounded."""
    stem, dot, ext = file_name.rpartition(".")
    if not dot or not _EXTENSION.fullmatch(ext):
        stem, ext = file_name, ""
    context = st.session_state.get(_CONTEXT, {})
    front = [safe(str(p)) for p in (state.page(), context.get("model")) if p]
    stem = safe(stem)
    if front and stem.startswith("_".join(front)):
        front = []
    return _bounded("_".join([*front, stem] if stem else front) or "download", ext)
