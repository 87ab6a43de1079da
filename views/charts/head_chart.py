"""A heatmap that owns its Layer and Head sliders: a move repaints the chart in the browser, with no server round trip.

Through Streamlit, a slider move took 185-290 ms from the key press to the painted chart (bench/README.md, "A slider
move to the repainted chart"): the slider's message, the fragment's rerun and its 15 messages, React, and only then
the chart. For a run whose maps are small together (PRELOAD_BYTES), the chart gets all of them at once, every
layer x head (or each layer's mean of heads), as ten-thousandths (two bytes a cell, divided back in the browser), and
draws its own Layer and Head sliders (views/charts/static/heads.js): a move swaps the map and the title in the browser.
Then the selection goes to the component's state, and the rerun it causes does what a Streamlit slider's did: the
link (?layer=&head=), the values kept for other pages, the download of this map. On the heatmap page that rerun is of
a fragment holding only the chart and that download (views/pages/heatmap.py), not the page's text box and toggles.

That rerun neither sends the maps again nor redraws the chart. The payload carries the selection the chart starts
from; while the chart stays mounted it is sent unchanged (the same bytes, whatever the selection is now), so
Streamlit sends it as a reference to the browser's copy (its cache of messages of 10 KB or more), and chart.js, given
the bytes it already shows, draws nothing: the slider the visitor is moving is not reset.

A bigger run keeps the server path: the page's Streamlit sliders, one map per rerun (views/charts/mounted.py
show_chart).
"""
import functools
import hashlib
import json

import numpy as np
import streamlit as st
from plotly.utils import PlotlyJSONEncoder

from locales import N_, _
from views.charts.mounted import element_key, show_payload
from views.charts.payload import pack
from views.shell import lecture
from views.widgets import state
from views.widgets.pickers import chart_config
from viz import wire
from viz.describe import describe

# All the maps of a run together, on the wire, at most: MiniLM (6 x 12 heads) up to 45 tokens, the default sentence
# (16 tokens) in 37 KB. Past it, each move goes through the server (a 512-token page stays under 1 MB).
PRELOAD_BYTES = 300_000
LABELS = {"layer": N_("Layer"), "head": N_("Head")}  # the sliders' labels; their values: ?layer= and ?head=
GROUP = N_("Which map")  # what a screen reader says of the two sliders together
# session: (digest of its ingredients, payload) last sent to a chart, by key; the payload is at most PRELOAD_BYTES and
# its header (137 KB for a 30-token sentence on MiniLM), one per chart a session has drawn
_SENT = "_head_chart_sent_"
_APPLIED = "_head_chart_applied_"  # session: the selection of a chart's sliders last applied, by key


def preloads(maps: np.ndarray) -> bool:
    """Whether a run's maps (layers, heads, R, C) go to the chart all at once; else the page takes the server path
    (always for maps read a layer at a time, runtime.layer_maps: they are never small)."""
    return isinstance(maps, np.ndarray) and maps.size * 2 <= PRELOAD_BYTES


def chart_key(key: str) -> str:
    """The chart's name on the page (views/charts/mounted.py): apart from the server path's chart of the same page, so a
    change of path mounts a new chart and drops the other's state."""
    return f"{key}-heads"


def _chart_state(key: str) -> dict | None:
    """The component's state: {"selection": {"layer", "head"}} once its sliders moved; None while the chart is not
    on the page, or was mounted by this run's page visit and not moved yet."""
    value = st.session_state.get(element_key(chart_key(key)))
    return value if isinstance(value, dict) else None


def _valid(chosen, layers: int, heads: int) -> bool:
    """Whether a selection from the browser is one of this run's (whatever a client sends is checked)."""
    return (isinstance(chosen, dict) and all(type(chosen.get(k)) is int for k in LABELS)
            and 0 <= chosen["layer"] < layers and 0 <= chosen["head"] < heads)


def take_move(key: str, layers: int, heads: int) -> None:
    """The selection of the chart's sliders, if they moved since it was last taken, into st.session_state["layer"]
    and ["head"], where views.widgets.state finds it. The component's callback (so before any run, even one that leaves
    the page at once), and again in selection()."""
    chart = _chart_state(key)
    if chart is None:  # the chart left the page: a new one starts from the link's selection
        st.session_state.pop(_APPLIED + key, None)
        return
    chosen = chart.get("selection")
    if chosen != st.session_state.get(_APPLIED + key) and _valid(chosen, layers, heads):
        st.session_state[_APPLIED + key] = chosen
        st.session_state["layer"], st.session_state["head"] = chosen["layer"], chosen["head"]


def selection(key: str, layers: int, heads: int, default: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """(layer, head) the chart `key` shows: its sliders' when they moved since the last run, else ?layer=&head= of the
    link, else the values kept from another page (views.widgets.state); checked, and written back to the link."""
    take_move(key, layers, heads)
    return (state.int_param("layer", 0, layers - 1, default[0]),
            state.int_param("head", 0, heads - 1, default[1]))


def show_head_chart(figure, maps: np.ndarray, title: str, key: str, chosen: tuple[int, int], heads: int,
                    container=None) -> None:
    """Draw `figure` as the chart `key`, with its own Layer and Head sliders over `maps`.

    figure: a viz figure (FigureSpec or go.Figure) of one of the maps: the sliders change its first heatmap's z
    and its title. maps: (layers, heads, R, C), or
    (layers, 1, R, C) for each layer's mean of heads (the Head slider is then shown disabled). title: the chart's
    title, with {layer} and {head} where the selection goes. chosen: (layer, head) from selection(); heads: how many
    the model has."""
    fig = lecture.figure(figure.to_dict())
    trace = next(i for i, t in enumerate(fig["data"]) if t.get("type") == "heatmap")
    del fig["data"][trace]["z"]  # the sliders' map goes in its place, in the browser
    fig["layout"]["title"] = {**fig["layout"].get("title", {}), "text": title}
    mean = maps.shape[1] == 1 and heads > 1
    config = chart_config(key, layer="{layer}", **({"mean": True} if mean else {"head": "{head}"}))
    sliders = {"trace": trace, "title": title,
               "labels": {name: _(label) for name, label in LABELS.items()}, "group": _(GROUP),
               "head_max": heads - 1, "head_disabled": mean}

    # What the payload is made of, but the selection and the maps' two-byte form: the same ingredients make the same
    # bytes, so the mounted chart is sent the bytes it has without packing them again (0.4 ms of a move's 3.4)
    ingredients = _digest(json.dumps([fig, config, sliders], cls=PlotlyJSONEncoder, separators=(",", ":")).encode(),
                          np.ascontiguousarray(maps), f"{maps.dtype} {maps.shape}".encode())
    sent = st.session_state.get(_SENT + key)
    if _chart_state(key) is not None and sent is not None and sent[0] == ingredients:
        data = sent[1]  # the chart on the page has these bytes, whatever its sliders show now
    else:
        label = describe(fig, shape=maps.shape[2:])  # {layer} and {head} in its title: the browser fills them in
        data = pack(fig, config, {**sliders, "stack": wire.units_array(maps), "layer": chosen[0], "head": chosen[1]},
                    label=label)
        st.session_state[_SENT + key] = (ingredients, data)
    show_payload(data, chart_key(key), container,
                 on_selection_change=functools.partial(take_move, key, maps.shape[0], heads))


def _digest(*parts) -> bytes:
    """One digest of bytes and arrays (a C-contiguous array by its memory, not copied)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        view = memoryview(part).cast("B")
        digest.update(len(view).to_bytes(8, "little"))  # where each part ends: ("ab", "c") is not ("a", "bc")
        digest.update(view)
    return digest.digest()
