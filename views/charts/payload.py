"""The mounted chart's payload (views/charts/mounted.py), written and read without Streamlit: a plotly figure, its
config and a chart's own sliders (views/charts/head_chart.py) packed as chart.js reads them, and read back as the
browser draws them (the tests and the load generator read what travelled)."""
import base64
import copy
import json
import struct

import numpy as np
from _plotly_utils.utils import to_typed_array_spec
from plotly.utils import PlotlyJSONEncoder

from viz import wire


def pack(figure: dict, config: dict, heads: dict | None = None, clicks: bool = False, label: str = "") -> bytes:
    """figure (plotly's dict: data, layout), config and heads (a chart's own sliders: views/charts/head_chart.py) as
    chart.js reads them: a 4-byte little-endian length, that many bytes of JSON, then the raw bytes of each typed array,
    named in the JSON by {"at": offset, "bytes": n}. A typed array is plotly's (base64 "bdata") or raw bytes; one with
    "units" is integers that chart.js divides by units (see viz/wire.py). clicks: the chart reports a click on a
    point as its "click" state (show_chart's on_click). label: the chart's text alternative (viz.describe), its
    aria-label; with sliders, {layer} and {head} in it are the selection's."""
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
    if label:
        header["label"] = label
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
    carries (views/charts/head_chart.py)."""
    header = unpacked(payload)
    figure = _as_drawn(header["figure"])
    if "heads" in header:
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


def label(payload: bytes) -> str:
    """The chart's text alternative as the browser first sets it (chart.js): pack()'s label, with a chart's own sliders'
    selection in place of {layer} and {head}."""
    header = unpacked(payload)
    text, sliders = header.get("label", ""), header.get("heads")
    if sliders is None:
        return text
    return text.replace("{layer}", str(sliders["layer"])).replace("{head}", str(sliders["head"]))


def chosen_config(config: dict, sliders: dict) -> dict:
    """The config a chart with its own sliders draws with (as heads.js): the camera's file name of the selection."""
    image = config.get("toImageButtonOptions", {})
    if "filename" not in image:
        return config
    filename = image["filename"].replace("{layer}", str(sliders["layer"])).replace("{head}", str(sliders["head"]))
    return {**config, "toImageButtonOptions": {**image, "filename": filename}}


def chosen_figure(figure: dict, sliders: dict) -> dict:
    """The figure a chart with its own sliders first draws (what heads.js does with a new payload): the map and the
    title of the selection the payload carries."""
    stack = wire.from_units(sliders["stack"])
    layer, head = sliders["layer"], sliders["head"]
    figure = copy.deepcopy(figure)
    figure["data"][sliders["trace"]]["z"] = to_typed_array_spec(stack[layer, head if stack.shape[1] > 1 else 0])
    text = sliders["title"].replace("{layer}", str(layer)).replace("{head}", str(head))
    figure["layout"]["title"] = {**figure["layout"].get("title", {}), "text": text}
    return figure
