"""A plotly chart that stays mounted across reruns: moving a slider changes its figure, not the chart.

Why not st.plotly_chart: its element id hashes the figure (Streamlit 1.67, even with a key), so on every slider move
the browser unmounts the chart and plots a new one from scratch (Plotly.newPlot, then a second pass), 190-600 ms
(bench/README.md, "A slider move to the repainted chart"). Here one Streamlit components-v2 element per `key`
(no iframe: its div is in the page) keeps one graph div, and views/charts/static/chart.js draws each new figure
into it with Plotly.react, which changes only what changed.

Offline: plotly.js is views/charts/plotly/plotly.min.js, plotly's cartesian partial bundle (npm
plotly.js-cartesian-dist-min, the version of the installed plotly package's own plotly.min.js: the traces the app draws,
heatmap, bar, scatter and image, in 1.5 MB instead of 4.8, 0.5 MB gzipped instead of 1.5: a student's first visit
costs the classroom's Wi-Fi a third less; tests/views/test_mounted_chart.py keeps the two versions equal). It is served
with chart.js and theme.json by Streamlit's component file route (/component/views.charts.mounted.plotly/...,
/component/views.charts.mounted.static/ ...); the browser fetches them once (HTTP, cached), not with every rerun.

On the wire, a figure is one bytes payload (pack()): its JSON, then the raw bytes of every typed array plotly made
of a numpy array (st.plotly_chart sends those as base64 in JSON, with each "/" escaped: 1.44 bytes a byte, here 1).
The look is Streamlit's chart theme for this app (views/charts/static/theme.json, what st.plotly_chart draws with
.streamlit/config.toml; tests/e2e/test_mounted_chart_browser.py compares the two) and the same toolbar (chart_config()).
"""
import contextlib
import hashlib
import json
from pathlib import Path

import plotly
import streamlit as st
import streamlit.components.v1 as components_v1
from streamlit import config as st_config
from streamlit import runtime

from views.charts.payload import pack
from views.shell import lecture
from views.widgets.pickers import chart_config
from viz.describe import describe
from viz.spec import figure_dicts

STATIC = Path(__file__).with_name("static")
PLOTLY_JS = Path(__file__).with_name("plotly")  # plotly.min.js: the cartesian bundle, and its licence


def _version() -> str:
    """A tag of our files (plotly.js included) and plotly's version, in their URLs: browsers and nginx keep them a year
    (deploy/nginx.conf), so a changed file must have a new URL."""
    digest = hashlib.sha256(plotly.__version__.encode())
    for path in (STATIC / "chart.js", STATIC / "heads.js", STATIC / "theme.json", PLOTLY_JS / "plotly.min.js"):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _loader() -> str:
    """The element's JavaScript, sent with every rerun, so a few lines: import chart.js (once per page), draw."""
    base = "/".join(p for p in st_config.get_option("server.baseUrlPath").split("/") if p)
    module = f"/{base + '/' if base else ''}component/views.charts.mounted.static/chart.js?v={_version()}"
    return (f"const MODULE = new URL({json.dumps(module)}, document.baseURI).href;\n"
            "export default async function (component) { return (await import(MODULE)).draw(component); }\n")


# Streamlit serves a declared component's folder at /component/<module>.<name>/, once it is declared to the server's
# runtime: declare_component does that only while a script runs, and this module may be imported before any does
# (serve.py's warm-up imports the pages at start-up), so each mount makes sure of it (_declared).
_FOLDERS = (components_v1.declare_component("static", path=str(STATIC)),
            components_v1.declare_component("plotly", path=str(PLOTLY_JS)))
COMPONENT = "attnviz_chart"  # the components-v2 name of every chart element
_mount = st.components.v2.component(COMPONENT, js=_loader(), isolate_styles=False)


def element_key(key: str) -> str:
    """The Streamlit key of the chart named `key`: its component's state is st.session_state[element_key(key)]."""
    return f"chart-{key}"


def show_chart(figure, key: str, config: dict | None = None, container=None, lecture_height: int | None = None,
               on_click=None, alt_name: str = "") -> None:
    """Draw a plotly figure (a go.Figure or a viz FigureSpec) here, or in `container`, as the chart named `key`
    (unique on the page): the same key on the next rerun redraws the same chart. config: plotly's (toolbar, PNG or
    SVG download); default chart_config(). lecture_height: its height in lecture mode (default lecture's). on_click:
    called (before the rerun) when a point is clicked; clicked(key) says which. alt_name: what the chart's text
    alternative calls it (viz.describe; default its title): for a figure without a title."""
    figure = lecture.figure(figure.to_dict(), lecture_height)
    payload = pack(figure, chart_config(key) if config is None else config, clicks=on_click is not None,
                   label=describe(figure, alt_name))
    show_payload(payload, key, container, **({"on_click_change": on_click} if on_click is not None else {}))


def clicked(key: str) -> tuple[int, int] | None:
    """(trace, point) of the last click on the chart named `key` (show_chart's on_click), as the browser said it:
    whatever a client sends is checked here for its types, and by the caller for its range."""
    value = st.session_state.get(element_key(key))
    click = value.get("click") if isinstance(value, dict) else None
    if isinstance(click, dict) and type(click.get("curve")) is int and type(click.get("point")) is int:
        return click["curve"], click["point"]
    return None


def streamlit_chart(figure, name: str | None = None, container=None, alt_name: str = "", **kwargs) -> None:
    """st.plotly_chart of a figure (in `container`), with the session's toolbar (name: in the camera's file name),
    its text alternative (viz.describe, as st.plotly_chart's alt; alt_name: what it calls a chart without a title),
    and for a projector in lecture mode: the charts a page draws with Streamlit's own element (one it reruns rarely,
    or that is clicked); kwargs: st.plotly_chart's (key, on_select...)."""
    drawn = lecture.figure(figure)
    (container or st).plotly_chart(drawn, config=chart_config(name), alt=describe(figure_dicts(drawn), alt_name),
                                   **kwargs)


def show_payload(payload: bytes, key: str, container=None, **callbacks) -> None:
    """show_chart of a payload made by pack() (views/charts/head_chart.py makes its own); callbacks:
    on_<state>_change."""
    _declared()
    with container if container is not None else contextlib.nullcontext():
        _mount(key=element_key(key), data=payload, **callbacks)


def _declared() -> None:
    """The folders chart.js and plotly.js are served from, declared to this server's runtime if they are not yet."""
    if not runtime.exists():
        return
    registry = runtime.get_instance().component_registry
    for folder in _FOLDERS:
        if registry.get_component_path(folder.name) is None:
            registry.register_component(folder)
