"""A plotly chart that stays mounted across reruns: moving a slider changes its figure, not the chart.

Why not st.plotly_chart: its element id hashes the figure (Streamlit 1.67, even with a key), so on every slider move
the browser unmounts the chart and plots a new one from scratch (Plotly.newPlot, then a second pass), 190-600 ms
(bench/README.md, "A slider move to the repainted chart"). Here one Streamlit components-v2 element per `key`
(no iframe: its div is in the page) keeps one graph div, and views/chart_static/chart.js draws each new figure
into it with Plotly.react, which changes only what changed.

Offline: plotly.js is the installed plotly package's own plotly/package_data/plotly.min.js, served with chart.js
and theme.json by Streamlit's component file route (/component/views.chart.plotly/..., /component/views.chart.static/
...); the browser fetches them once per page load (HTTP, cached), not with every rerun.

On the wire, a figure is one bytes payload (pack()): its JSON, then the raw bytes of every typed array plotly made
of a numpy array (st.plotly_chart sends those as base64 in JSON, with each "/" escaped: 1.44 bytes a byte, here 1).
The look is Streamlit's chart theme for this app (views/chart_static/theme.json, what st.plotly_chart draws with
.streamlit/config.toml; tests/e2e/test_mounted_chart_browser.py compares the two) and the same toolbar (chart_config()).
"""
import base64
import contextlib
import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import plotly
import streamlit as st
import streamlit.components.v1 as components_v1
from _plotly_utils.utils import to_typed_array_spec
from plotly.utils import PlotlyJSONEncoder
from streamlit import config as st_config

from views import lecture
from views.pickers import chart_config
from viz import wire

STATIC = Path(__file__).with_name("chart_static")
PLOTLY_JS = Path(plotly.__file__).parent / "package_data"  # plotly.min.js, plotly's own datasets and templates


def _version() -> str:
    """A tag of our files and plotly's version, in their URLs: a new release is not taken from a cache."""
    digest = hashlib.sha256(plotly.__version__.encode())
    for name in ("chart.js", "heads.js", "theme.json"):
        digest.update((STATIC / name).read_bytes())
    return digest.hexdigest()[:12]


def _loader() -> str:
    """The element's JavaScript, sent with every rerun, so a few lines: import chart.js (once per page), draw."""
    base = "/".join(p for p in st_config.get_option("server.baseUrlPath").split("/") if p)
    module = f"/{base + '/' if base else ''}component/views.chart.static/chart.js?v={_version()}"
    return (f"const MODULE = new URL({json.dumps(module)}, document.baseURI).href;\n"
            "export default async function (component) { return (await import(MODULE)).draw(component); }\n")


# Streamlit serves a declared component's folder at /component/<module>.<name>/; declared while a script runs
# (the first run imports this module), that is for the server's one runtime.
components_v1.declare_component("static", path=str(STATIC))
components_v1.declare_component("plotly", path=str(PLOTLY_JS))
COMPONENT = "attnviz_chart"  # the components-v2 name of every chart element
_mount = st.components.v2.component(COMPONENT, js=_loader(), isolate_styles=False)


def pack(figure: dict, config: dict, heads: dict | None = None, clicks: bool = False) -> bytes:
    """figure (plotly's dict: data, layout), config and heads (a chart's own sliders: views/head_chart.py) as chart.js
    reads them: a 4-byte little-endian length, that many bytes of JSON, then the raw bytes of each typed array, named
    in the JSON by {"at": offset, "bytes": n}. A typed array is plotly's (base64 "bdata") or raw bytes; one with
    "units" is integers that chart.js divides by units (see viz/wire.py). clicks: the chart reports a click on a
    point as its "click" state (show_chart's on_click)."""
    blobs: list[bytes] = []
    at = 0

    def binary(value):
        nonlocal at
        if isinstance(value, dict):
            if isinstance(value.get("dtype"), str) and isinstance(value.get("bdata"), (str, bytes)):
                raw = value["bdata"] if isinstance(value["bdata"], bytes) else base64.b64decode(value["bdata"])
                blobs.append(raw)
                at += len(raw)
                return {**value, "bdata": {"at": at - len(raw), "bytes": len(raw)}}
            return {k: binary(v) for k, v in value.items()}
        if isinstance(value, list):
            return [binary(v) for v in value]
        return value

    header = {"figure": binary(_wire_form(figure)), "config": config}
    if heads is not None:
        header["heads"] = binary(heads)
    if clicks:
        header["clicks"] = True
    header = json.dumps(header, cls=PlotlyJSONEncoder, separators=(",", ":")).encode()
    return b"".join([struct.pack("<I", len(header)), header, *blobs])


def _wire_form(figure: dict) -> dict:
    """figure, where each trace marked by viz.wire.units_marker() has its z as wire.units_array (two bytes a cell)."""
    data = []
    for trace in figure.get("data", []):
        meta = trace.get("meta")
        signed = {"u2": False, "i2": True}.get(meta.get("z_units")) if isinstance(meta, dict) else None
        if signed is not None and trace.get("z") is not None:
            trace = {**trace, "z": wire.units_array(_values(trace["z"]), signed)}
        data.append(trace)
    return {**figure, "data": data}


def _values(z) -> np.ndarray:
    """A plotly array as numpy: a typed array ({dtype, bdata, shape}) or a list."""
    if isinstance(z, dict):
        values = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return values.reshape([int(n) for n in str(z["shape"]).split(",")]) if "shape" in z else values
    return np.asarray(z, dtype=np.float32)


def unpacked(payload: bytes) -> dict:
    """The header pack() was given ({figure, config, heads?}), typed arrays in plotly's base64 form again."""
    (length,) = struct.unpack_from("<I", payload)
    header = json.loads(payload[4:4 + length])
    blobs = memoryview(payload)[4 + length:]

    def typed(value):
        if isinstance(value, dict):
            if isinstance(value.get("dtype"), str) and isinstance(value.get("bdata"), dict):
                at, n = value["bdata"]["at"], value["bdata"]["bytes"]
                return {**value, "bdata": base64.b64encode(blobs[at:at + n]).decode("ascii")}
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        return value

    return typed(header)


def received(payload: bytes) -> tuple[dict, dict]:
    """(figure, config) as a chart draws them when the payload mounts it: pack()'s, with ten-thousandths divided back
    (float32, as chart.js does), and for a chart with its own sliders, the map and title of the selection the payload
    carries (views/head_chart.py)."""
    header = unpacked(payload)
    figure = _as_drawn(header["figure"])
    if "heads" in header:
        from views.head_chart import chosen_config, chosen_figure

        return chosen_figure(figure, header["heads"]), chosen_config(header["config"], header["heads"])
    return figure, header["config"]


def _as_drawn(value):
    """value, with each typed array of units (wire.units_array) as plotly's float32 typed array of its values."""
    if isinstance(value, dict):
        if "units" in value and isinstance(value.get("dtype"), str):
            return to_typed_array_spec(wire.from_units(value))
        return {k: _as_drawn(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_drawn(v) for v in value]
    return value


def element_key(key: str) -> str:
    """The Streamlit key of the chart named `key`: its component's state is st.session_state[element_key(key)]."""
    return f"chart-{key}"


def show_chart(figure, key: str, config: dict | None = None, container=None, lecture_height: int | None = None,
               on_click=None) -> None:
    """Draw a plotly figure (a go.Figure or a viz FigureSpec) here, or in `container`, as the chart named `key`
    (unique on the page): the same key on the next rerun redraws the same chart. config: plotly's (toolbar, PNG or
    SVG download); default chart_config(). lecture_height: its height in lecture mode (default lecture's). on_click:
    called (before the rerun) when a point is clicked; clicked(key) says which."""
    figure = lecture.figure(figure.to_dict(), lecture_height)
    payload = pack(figure, chart_config(key) if config is None else config, clicks=on_click is not None)
    show_payload(payload, key, container, **({"on_click_change": on_click} if on_click is not None else {}))


def clicked(key: str) -> tuple[int, int] | None:
    """(trace, point) of the last click on the chart named `key` (show_chart's on_click), as the browser said it:
    whatever a client sends is checked here for its types, and by the caller for its range."""
    value = st.session_state.get(element_key(key))
    click = value.get("click") if isinstance(value, dict) else None
    if isinstance(click, dict) and type(click.get("curve")) is int and type(click.get("point")) is int:
        return click["curve"], click["point"]
    return None


def plotly(figure, name: str | None = None, container=None, **kwargs) -> None:
    """st.plotly_chart of a figure (in `container`), with the session's toolbar (name: in the camera's file name),
    and for a projector in lecture mode: the charts a page draws with Streamlit's own element (one it reruns rarely,
    or that is clicked); kwargs: st.plotly_chart's (key, on_select...)."""
    (container or st).plotly_chart(lecture.figure(figure), config=chart_config(name), **kwargs)


def show_payload(payload: bytes, key: str, container=None, **callbacks) -> None:
    """show_chart of a payload made by pack() (views/head_chart.py makes its own); callbacks: on_<state>_change."""
    with container if container is not None else contextlib.nullcontext():
        _mount(key=element_key(key), data=payload, **callbacks)
