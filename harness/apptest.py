"""What the AppTest page tests share: the app's path, opening a page as a shared link, its charts, plotly arrays."""
import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from views.charts import mounted, payload
from views.shell import registry

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 120


def _app_starting_at(start: str) -> None:
    """The app, with the page at /start served at / (the body of AppTest's script)."""
    import app  # noqa: PLC0415 - AppTest runs this function's source alone

    app.main(start)


def open_page(url_path: str, title: str | None = None, **params) -> AppTest:
    """A fresh session whose first run is /url_path?params, as a browser opening a shared link: the app itself
    (app.main), with that page as the one served at /. The title is the registry's, unless one is given."""
    at = AppTest.from_function(_app_starting_at, args=(url_path,), default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert at.title[0].value == (title or registry.by_path(url_path).title)
    return at


def plotly_array(value) -> np.ndarray:
    """A plotly array from the chart's JSON: binary {dtype, bdata, shape} or a plain list."""
    if isinstance(value, dict):
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return data.reshape([int(n) for n in value["shape"].split(",")]) if "shape" in value else data
    return np.asarray(value)


def link_value(at: AppTest, name: str) -> str | None:
    """The value of ?name= in the link the page wrote (None if it has none)."""
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


@dataclass(frozen=True)
class Chart:
    """A chart as the browser gets it: plotly's figure and config (as first drawn), the bytes the figure took, and
    for a chart with its own Layer and Head sliders (views/charts/head_chart.py) what the payload says of them."""
    figure: dict
    config: dict
    size: int
    sliders: dict | None = None  # the payload's "heads": stack, labels, head_max, head_disabled, layer, head...
    payload: bytes = field(default=b"", repr=False)
    label: str = ""  # its text alternative: st.plotly_chart's alt, the mounted chart's aria-label (viz.describe)


def charts(at: AppTest) -> list[Chart]:
    """The page's charts: st.plotly_chart's in page order, then the mounted ones (views.charts.mounted) in page
    order."""
    found = [Chart(json.loads(c.proto.spec), json.loads(c.proto.config or "{}"), len(c.proto.spec),
                   label=c.proto.alt) for c in at.get("plotly_chart")]
    for element in at.get("bidi_component"):
        if element.proto.component_name == mounted.COMPONENT:
            figure, config = payload.received(element.proto.bytes)
            sliders = payload.unpacked(element.proto.bytes).get("heads")
            found.append(Chart(figure, config, len(element.proto.bytes), sliders, element.proto.bytes,
                               payload.label(element.proto.bytes)))
    return found


def slider_value(at: AppTest, name: str):
    """The value of the slider bound to ?name=: a chart's own Layer or Head slider (views/charts/head_chart.py), as the
    chart starts from it, else Streamlit's slider keyed `name`."""
    own = [c.sliders[name] for c in charts(at) if c.sliders is not None and name in c.sliders["labels"]]
    return own[0] if own else at.slider(key=name).value


def figures(at: AppTest) -> list[dict]:
    return [c.figure for c in charts(at)]


def bundled_traces() -> frozenset[str]:
    """The trace types the mounted charts' plotly.js (views/charts/plotly/plotly.min.js, a partial bundle) can draw."""
    source = (Path(mounted.PLOTLY_JS) / "plotly.min.js").read_text()
    return frozenset(re.findall(r'moduleType:"trace",name:"(\w+)"', source))
