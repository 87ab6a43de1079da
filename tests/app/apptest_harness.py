"""What the AppTest page tests share: the app's path, opening a page as a shared link, plotly arrays."""
import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 120


def open_page(url_path: str, title: str, **params) -> AppTest:
    """A fresh session whose first run is /url_path?params, as a browser opening a shared link.

    st.Page keys a page by the hash of its url_path; setting it (a private AppTest field) lands on
    the page directly, and the title check makes any change in that mechanism fail loudly.
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at._page_hash = calc_hash(url_path)
    at.run()
    assert at.title[0].value == title
    return at


def plotly_array(value) -> np.ndarray:
    """A plotly array from the chart's JSON: binary {dtype, bdata, shape} or a plain list."""
    if isinstance(value, dict):
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return data.reshape([int(n) for n in value["shape"].split(",")]) if "shape" in value else data
    return np.asarray(value)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def switch_to(page_file: str, **params) -> AppTest:
    """A fresh session with ?params that switches straight to views/<page_file> for its first run."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at.switch_page(f"views/{page_file}").run()
