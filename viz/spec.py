"""A figure given as plotly's own dicts, for the charts drawn again on every rerun.

st.plotly_chart sends the browser `figure.to_dict()`. For a figure built from dicts, that is a round trip:
plotly turns each dict into its objects (go.Figure, 0.6 ms for a 30-token heatmap even unchecked), then
`to_dict()` deep-copies them back into dicts (0.4 ms more). A FigureSpec keeps the dicts and hands them over
as `to_dict()` would: the same JSON reaches the browser (tests/viz/test_unchecked_figures.py compares them,
and tests/views/test_figure_spec.py the message st.plotly_chart sends), for a tenth of the CPU.

Only for dicts in plotly's final form: traces with their "type", properties as plotly's check would leave them
(a colour scale as its list of stops, not its name), since nothing checks them. `figure()` gives the
go.Figure, for tests and for anyone who wants to change the figure.
"""
import copy
import functools

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_skipped_key, to_typed_array_spec
from plotly.basedatatypes import BaseFigure
from plotly.subplots import make_subplots


def unchecked_figure(data: list[dict], layout: dict) -> go.Figure:
    """go.Figure(data, layout) without plotly's check and coercion of every property, which costs about 1 ms
    per heatmap. Same conditions as a FigureSpec."""
    return go.Figure(data, layout, _validate=False)


class FigureSpec(BaseFigure):
    """data (a list of trace dicts) and layout (a dict), as a figure st.plotly_chart accepts.

    A BaseFigure so that Streamlit takes its to_dict() as it takes a Figure's; but none of plotly's objects
    is built, so only to_dict() and figure() work (not .data, .layout, update_layout, ...)."""

    def __init__(self, data: list[dict], layout: dict):  # noqa: D107 - BaseFigure.__init__ deliberately not called
        self._spec = (data, layout)

    def figure(self) -> go.Figure:
        return unchecked_figure(*self._spec)

    def to_dict(self) -> dict:
        """What go.Figure(data, layout).to_dict() gives: fresh dicts and lists (the spec is not changed),
        numpy arrays as plotly's base64 typed arrays, and the default template in the layout. The template is
        plotly's own dict, shared: Streamlit only reads it (copying its 7 KB would cost half of this call)."""
        data, layout = _plain(self._spec)
        template = _template(pio.templates.default)
        if template is not None and "template" not in layout:
            layout["template"] = template
        return {"data": data, "layout": layout}

    def parts(self) -> tuple[list[dict], dict]:
        """The traces and the layout as a new list and dict (each trace shared): to build a figure on this one."""
        data, layout = self._spec
        return list(data), dict(layout)

    def __repr__(self) -> str:
        return f"FigureSpec({len(self._spec[0])} traces)"


def figure_dicts(fig) -> dict:
    """A figure as plotly's dicts ({"data", "layout"}), to read or change: a dict as it is, a FigureSpec's own traces
    and layout (new list and dict, not converted), a go.Figure's to_dict()."""
    if isinstance(fig, dict):
        return fig
    if isinstance(fig, FigureSpec):
        data, layout = fig.parts()
        return {"data": data, "layout": layout}
    return fig.to_dict()


def _plain(value, key: str | None = None):
    """A copy of the dicts, lists and tuples in `value` (strings and numbers shared), where a numpy array that
    is a dict's value becomes plotly's base64 typed array, as Figure.to_dict() converts it (convert_to_base64,
    which also skips the same keys)."""
    if isinstance(value, dict):
        return {k: _plain(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if key is not None and isinstance(value, np.ndarray) and not is_skipped_key(key):
        return to_typed_array_spec(value)
    return value


@functools.lru_cache(maxsize=4)
def _template(name) -> dict | None:
    """The template go.Figure puts in a layout that sets none: plotly's default template, as a dict."""
    return go.Figure().to_dict()["layout"].get("template")


def subplots_layout(**options) -> dict:
    """The layout make_subplots(**options) gives (its axes, their domains, the subplot titles), as a new dict to
    change: built once per options (make_subplots takes 5-15 ms), then copied (without the template, which a
    FigureSpec adds). Lists among the options are given as lists or tuples."""
    return copy.deepcopy(_subplots(tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                                for k, v in options.items()))))


@functools.lru_cache(maxsize=64)
def _subplots(options: tuple) -> dict:
    layout = make_subplots(**{k: list(v) if isinstance(v, tuple) else v for k, v in options}).to_dict()["layout"]
    layout.pop("template", None)
    return layout
