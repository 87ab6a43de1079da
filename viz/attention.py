"""Attention heatmaps: queries down, keys across, one cell per probability."""
import html

import numpy as np
import plotly.graph_objects as go

from locales import _
from model.printable import visible
from viz import wire
from viz.labels import tick_angle
from viz.spec import FigureSpec

# The chart toolbar: PNG download by default, no plotly logo.
CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def axis_labels(tokens) -> list[str]:
    """Token strings made safe and unique for a plotly category axis.

    Plotly merges equal categories, so the n-th repeat of a token gets an invisible suffix: n in
    binary written with two zero-width characters (short even for 500 repeats of one word);
    '<' and '&' are escaped because plotly renders a little HTML in labels; a control character is drawn as its
    picture (model.printable.visible).
    """
    seen: dict[str, int] = {}
    labels = []
    for tok in tokens:
        safe = html.escape(visible(str(tok)), quote=False)
        n = seen.get(safe, 0)
        seen[safe] = n + 1
        labels.append(safe + (f"{n:b}".translate(_INVISIBLE_BITS) if n else ""))
    return labels


_INVISIBLE_BITS = str.maketrans({"0": "\u200b", "1": "\u200c"})  # zero-width space, zero-width non-joiner


VIRIDIS = go.Heatmap(colorscale="Viridis").colorscale  # the stops plotly's check turns "Viridis" into


def attention_heatmap(probs, query_tokens, key_tokens, title: str = "", auto_range: bool = False,
                      note: str = "") -> go.Figure:
    """probs (L, S) in [0, 1]; NaN cells (blocked) are drawn as gaps. Colour range fixed to 0..1 unless auto_range.
    A note is a line of small text under the map (in the chart, so also in its PNG)."""
    return heatmap_spec(probs, query_tokens, key_tokens, title, auto_range, note).figure()


def heatmap_spec(probs, query_tokens, key_tokens, title: str = "", auto_range: bool = False,
                 note: str = "", exact_cells: int = wire.EXACT_CELLS, keys: str | None = None,
                 queries: str | None = None, key_angle: int | None = None) -> FigureSpec:
    """attention_heatmap as plotly's dicts, for a page that draws it on every rerun (see viz.spec).
    A map of more than `exact_cells` cells is marked to travel as ten-thousandths (see viz.wire). keys, queries: the
    axes' titles (plain text: escaped here; by default "key (attended to)" and "query (attending)"); key_angle: the
    key labels' slant (None: upright for Chinese characters, else slanted: viz.labels.tick_angle)."""
    z = np.asarray(probs, dtype=np.float32)
    if z.ndim != 2 or z.shape != (len(query_tokens), len(key_tokens)):
        raise ValueError(f"probs of shape {z.shape} do not fit {len(query_tokens)} queries x {len(key_tokens)} keys")
    heat = {
        "type": "heatmap", "z": z, "x": axis_labels(key_tokens), "y": axis_labels(query_tokens),
        "colorscale": VIRIDIS, "hoverongaps": False, "colorbar": {"title": {"text": "p"}},
        "hovertemplate": _("query: %{y}<br>key: %{x}<br>p = %{z:.4f}<extra></extra>"),
    }
    if wire.quantized(z, exact_cells):
        heat.update(wire.units_marker(signed=False))
    if not auto_range:
        heat.update(zmin=0.0, zmax=1.0)
    layout = map_layout(max(z.shape), title, key_tokens, keys, queries, key_angle, bottom=34 if note else 10)
    if note:
        layout["annotations"] = [{"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0, "y": 0,
                                  "xanchor": "left", "yanchor": "top", "yshift": -10, "font": {"size": 13}}]
    return FigureSpec([heat], layout)


def map_layout(size: int, title: str, key_tokens, keys: str | None = None, queries: str | None = None,
               key_angle: int | None = None, bottom: int = 10) -> dict:
    """The layout of a query x key map of `size` tokens a side (heatmap_spec's, the masks page's maps'), so that maps
    drawn side by side line up: keys across the top, queries down; keys, queries: the axes' titles (plain text,
    escaped here); key_angle: the key labels' slant (None: viz.labels.tick_angle); bottom: the bottom margin."""
    keys = _("key (attended to)") if keys is None else keys
    queries = _("query (attending)") if queries is None else queries
    side = max(360, min(900, 22 * size + 160))
    return {
        # the title sits above the key labels and their axis title, not on them
        "title": {"text": title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}},
        "height": side + 70 + bottom, "margin": {"l": 10, "r": 10, "t": 130, "b": bottom},
        "xaxis": {"title": {"text": html.escape(keys, quote=False)}, "side": "top",
                  "tickangle": tick_angle(key_tokens) if key_angle is None else key_angle,
                  "type": "category"},
        "yaxis": {"title": {"text": html.escape(queries, quote=False)}, "autorange": "reversed", "type": "category"},
    }
