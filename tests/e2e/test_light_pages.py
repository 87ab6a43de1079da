"""512-token maps in a real browser: sent as two-byte integers (never JSON lists), drawn as their values, and the
hover says the right cell and its value (p = 0.4213, the browser divided the ten-thousandths back).

What the browser received is read back from the websocket (Streamlit's ForwardMsg, the chart's own payload); where the
mouse is, from the plot area's box: so the test checks what a user sees, not our code's view of itself.
"""
import base64
import json
import math
import re
from urllib.parse import quote

import numpy as np
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from views.charts.mounted import COMPONENT
from views.charts.payload import received, unpacked

CHART = ".js-plotly-plot .main-svg"
TIMEOUT = 180_000
LONG = sentence(512)  # 512 tokens of the default model


def charts_received(page) -> list:
    """page.charts: the plotly figures (parsed JSON) the browser has received so far, as drawn; page.sent: for the
    mounted charts, the figures as they travelled (views.charts.payload.unpacked). Call before page.goto."""
    page.charts, page.sent = [], []

    def on_frame(payload) -> None:
        if not isinstance(payload, bytes):
            return
        msg = ForwardMsg.FromString(payload)
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "plotly_chart":
                page.charts.append(json.loads(element.plotly_chart.spec))
            elif element.WhichOneof("type") == "bidi_component" and element.bidi_component.component_name == COMPONENT:
                page.charts.append(received(element.bidi_component.bytes)[0])  # a chart of views.charts.mounted
                page.sent.append(unpacked(element.bidi_component.bytes)["figure"])

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    return page.charts


def open_long(page, server, path: str, **params) -> dict:
    """The page with the 512-token text; the last chart received once it is drawn."""
    charts = charts_received(page)
    page.set_viewport_size({"width": 1400, "height": 2400})  # the whole 900-pixel map on screen, for the mouse
    query = "&".join(f"{k}={quote(str(v))}" for k, v in {"text": LONG, **params}.items())
    page.goto(f"{server}/{path}?{query}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    assert charts, "no chart received"
    return charts[-1], page.sent[-1]


def typed_array(z: dict) -> np.ndarray:
    """A plotly typed array ({"dtype", "bdata", "shape"}) as numpy; fails on anything else (a JSON list)."""
    assert isinstance(z, dict) and set(z) == {"dtype", "bdata", "shape"}, f"not a typed array: {str(z)[:80]}"
    shape = [int(n) for n in str(z["shape"]).split(",")]
    return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)


def hover_cell(page, rows: int, cols: int, row: int, col: int) -> str:
    """Move the mouse to the centre of cell (row, col) of the first chart's plot area; the hover label's text."""
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] - 40, box["y"] - 40)  # off the map first: the last cell's label goes away
    page.locator(".hoverlayer .hovertext").first.wait_for(state="detached", timeout=10_000)
    # the cell's centre, kept a pixel inside the plot: the browser rounds the mouse to whole pixels, and at 512 tokens
    # the edge cells' centres are 0.8 px from the edge, which a fractional box can put outside the plot
    x = min(max(box["x"] + (col + 0.5) * box["width"] / cols, math.ceil(box["x"]) + 1), box["x"] + box["width"] - 1)
    y = min(max(box["y"] + (row + 0.5) * box["height"] / rows, math.ceil(box["y"]) + 1), box["y"] + box["height"] - 1)
    page.mouse.move(x, y)
    label = page.locator(".hoverlayer .hovertext").first
    label.wait_for(timeout=10_000)
    return "\n".join(label.locator("tspan.line").all_text_contents())  # one tspan per line of the template


def check_hover(text: str, heat: dict, z: np.ndarray, row: int, col: int) -> None:
    """The hover names a query (row) and a key (column) at the mouse, and the value drawn for that very cell.

    Labels are unique (repeats carry invisible suffixes), so they say which cell the hover is about; at 512 tokens
    a cell is 1.6 pixels, so the mouse may land on a neighbour of the cell aimed at (plus or minus one)."""
    query = re.search(r"query: (.*)", text).group(1).strip()
    key = re.search(r"key: (.*)", text).group(1).strip()
    hovered_row, hovered_col = heat["y"].index(query), heat["x"].index(key)
    assert abs(hovered_row - row) <= 1 and abs(hovered_col - col) <= 1, (text, row, col)
    value = re.search(r"p = (\d\.\d{4})$", text, re.MULTILINE).group(1)  # the value, as the small maps show it
    assert value == f"{z[hovered_row, hovered_col]:.4f}", (text, z[hovered_row, hovered_col])


def test_512_token_heatmap_is_two_byte_integers_and_hovers_the_right_cell(page, server):
    figure, sent = open_long(page, server, "", layer=1, head=2)
    wire_z = sent["data"][0]["z"]
    assert (wire_z["dtype"], wire_z["units"], len(base64.b64decode(wire_z["bdata"]))) == ("u2", 10_000, 512 * 512 * 2)
    heat = figure["data"][0]
    z = typed_array(heat["z"])
    assert z.shape == (512, 512) and z.dtype == np.float32  # divided back in the browser: 0.5 MB sent, not 1
    assert (heat["zmin"], heat["zmax"]) == (0, 1)
    given = page.evaluate("() => { const z = document.querySelector('.attnviz-chart').data[0].z;"
                          " return [z.dtype, Array.from(new Float32Array(z.bdata))]; }")
    assert given[0] == "f4"  # what chart.js gave plotly: the same float32 values
    np.testing.assert_array_equal(np.array(given[1], dtype=np.float32).reshape(512, 512), z)
    for row, col in ((0, 0), (200, 37), (511, 300)):
        check_hover(hover_cell(page, 512, 512, row, col), heat, z, row, col)
    assert not page.errors, page.errors


def test_512_token_masked_attention_keeps_its_gaps(page, server, shoot):
    figure, sent = open_long(page, server, "masks", mask="causal", layer=0, head=0, mask_map="attention")
    heat = figure["data"][0]
    z = typed_array(heat["z"])
    assert z.shape == (512, 512) and sent["data"][0]["z"]["dtype"] == "u2"
    assert z[0, 0] == 1.0 and np.isnan(z[np.triu_indices(512, 1)]).all()  # causal: row 0 sees only key 0
    assert "images" not in figure["layout"]  # the gaps are NaN again, drawn by plotly as on a small map
    check_hover(hover_cell(page, 512, 512, 300, 120), heat, z, 300, 120)
    assert not page.errors, page.errors
    shoot(page, "masks-512-causal")
