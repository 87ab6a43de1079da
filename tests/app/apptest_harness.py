"""What the AppTest page tests share: the app's path, opening a page as a shared link, plotly arrays."""
import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from views import registry

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 120


def _app_starting_at(start: str) -> None:
    """The app, with the page at /start served at / (the body of AppTest's script)."""
    import app

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


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
