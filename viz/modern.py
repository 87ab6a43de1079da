"""The From 2017 to today page's figures (views.pages.modern): a pair's score moved along the text, rotated against
added; a residual vector and its two norms; the feed-forward's activations and SwiGLU's gates on a text; which query
heads share a key/value head; what each block's modules cost."""
import html
import math

import numpy as np

from locales import _
from viz.attention import axis_labels
from viz.colours import CATEGORIES
from viz.decoding import BAR_BLUE, CHOSEN_ORANGE
from viz.matrix import SIGNED_COLORSCALE, signed_limit
from viz.spec import FigureSpec

MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}
LEGEND_BELOW = {"orientation": "h", "y": -0.22, "yanchor": "top"}  # not on the title, whatever its size (a projector)


def shifted_spec(shifts, rotated, added, title: str) -> FigureSpec:
    """Two lines over the shift s: the score with RoPE (flat) and with the table added (not)."""
    lines = [{"type": "scatter", "mode": "lines", "x": np.asarray(shifts), "y": np.asarray(values, dtype=np.float32),
              "name": name, "line": {"color": colour, "width": 3 if colour == CHOSEN_ORANGE else 2},
              "hovertemplate": hover + "<extra></extra>"}
             for values, name, colour, hover in (
                 (added, _("sinusoidal table added to x (2017)"), BAR_BLUE, _("s = %{x}: score %{y:.3f}, added")),
                 (rotated, _("RoPE: q and k rotated"), CHOSEN_ORANGE, _("s = %{x}: score %{y:.5f}, RoPE")))]
    return FigureSpec(lines, {
        "title": {"text": html.escape(title, quote=False)}, "height": 420, "margin": {**MARGIN, "b": 80},
        "legend": LEGEND_BELOW,
        "xaxis": {"title": {"text": _("s: both words moved s positions further")}},
        "yaxis": {"title": {"text": _("score q·k / √d")}}})


def norms_spec(x, layer_norm, rms_norm, title: str, dims: int = 64) -> FigureSpec:
    """The first `dims` dimensions of a vector, its LayerNorm and its RMSNorm (no gains), as grouped bars."""
    index = np.arange(min(dims, len(x)))
    bars = [{"type": "bar", "x": index, "y": np.asarray(values[:len(index)], dtype=np.float32), "name": name,
             "marker": {"color": colour}, "hovertemplate": _("dimension %{x}: %{y:.3f}") + "<extra></extra>"}
            for values, name, colour in ((x, _("x"), "#9a9a9a"), (layer_norm, _("LayerNorm(x)"), BAR_BLUE),
                                         (rms_norm, _("RMSNorm(x)"), CHOSEN_ORANGE))]
    return FigureSpec(bars, {
        "title": {"text": html.escape(title, quote=False)}, "height": 420, "margin": {**MARGIN, "b": 80},
        "barmode": "group", "legend": LEGEND_BELOW,
        "xaxis": {"title": {"text": _("dimension")}}, "yaxis": {"title": {"text": _("value")}}})


def sharing_spec(heads: int, kv_heads: int, title: str) -> FigureSpec:
    """A (kv_heads, heads) grid: 1 where a query head reads that key/value head (consecutive groups, as Hugging
    Face's repeat_kv orders them)."""
    group = heads // kv_heads
    z = np.array([[1.0 if q // group == g else 0.0 for q in range(heads)] for g in range(kv_heads)], np.float32)
    return FigureSpec([{"type": "heatmap", "z": z, "x": list(range(heads)), "y": list(range(kv_heads)),
                        "colorscale": [[0, "#f2f2f2"], [1, BAR_BLUE]], "showscale": False, "xgap": 3, "ygap": 3,
                        "hovertemplate": _("query head %{x}, key/value head %{y}") + "<extra></extra>"}], {
        "title": {"text": html.escape(title, quote=False)}, "height": 90 + 50 * kv_heads, "margin": MARGIN,
        "xaxis": {"title": {"text": _("query head")}, "dtick": 1},
        "yaxis": {"title": {"text": _("key/value head")}, "dtick": 1, "autorange": "reversed"}})


def activations_spec(edges, shares, title: str) -> FigureSpec:
    """ReLU, GELU and SiLU over the gate's range, over the histogram of a layer's gate values on a text (shares of
    all its gates per bin, edges: the bins' bounds) on a second axis."""
    x = np.linspace(float(edges[0]), float(edges[-1]), 241)
    gelu = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    silu = x / (1.0 + np.exp(-x))
    curves = [{"type": "scatter", "mode": "lines", "x": x.astype(np.float32), "y": np.asarray(y, np.float32),
               "name": name, "line": {"color": colour, "width": 3, "dash": dash},
               "hovertemplate": name + ": %{x:.2f} → %{y:.3f}<extra></extra>"}
              for y, name, colour, dash in ((np.maximum(x, 0), "ReLU (2017)", CATEGORIES[0], "dot"),
                                            (gelu, "GELU (GPT-2)", CATEGORIES[2], "dash"),
                                            (silu, _("SiLU (SwiGLU's gate)"), CHOSEN_ORANGE, "solid"))]
    centres = (np.asarray(edges[:-1]) + np.asarray(edges[1:])) / 2
    bars = {"type": "bar", "x": centres.astype(np.float32), "y": np.asarray(shares, np.float32) * 100,
            "width": float(edges[1] - edges[0]), "yaxis": "y2", "name": _("the gate's values on this text"),
            "marker": {"color": "#b8b8b8"}, "opacity": 0.6,
            "hovertemplate": _("gate ≈ %{x:.2f}: %{y:.2f}% of the gates") + "<extra></extra>"}
    return FigureSpec([bars, *curves], {
        "title": {"text": html.escape(title, quote=False)}, "height": 420, "margin": {**MARGIN, "b": 80},
        "legend": LEGEND_BELOW, "bargap": 0,
        "xaxis": {"title": {"text": _("gate value g (before the activation)")}},
        "yaxis": {"title": {"text": _("activation(g)")}, "range": [-1.0, float(edges[-1])]},
        "yaxis2": {"title": {"text": _("share of the gates")}, "overlaying": "y", "side": "right", "showgrid": False,
                   "rangemode": "tozero", "tickmode": "auto", "ticksuffix": "%"}})


def gates_spec(opened, up, tokens, neurons, title: str) -> FigureSpec:
    """SiLU(gate) of a few hidden units (columns) for every token of a text (rows), blue below 0 and orange above;
    the hover gives the up value and their product, what the down matrix reads."""
    opened, up = np.asarray(opened, np.float32), np.asarray(up, np.float32)
    limit = signed_limit(opened, 99.0)
    columns = [str(n) for n in neurons]
    rows = axis_labels([f"{i}: {t}" for i, t in enumerate(tokens)])  # escaped: the student's text
    custom = np.stack([up, opened * up], axis=-1).astype(np.float32)
    return FigureSpec([{"type": "heatmap", "z": opened, "x": columns, "y": rows, "customdata": custom,
                        "colorscale": SIGNED_COLORSCALE, "zmin": -limit, "zmax": limit,
                        "colorbar": {"title": {"text": "SiLU(g)"}, "thickness": 12},
                        "hovertemplate": _("%{y}, unit %{x}<br>SiLU(gate) %{z:.3f} × up %{customdata[0]:.3f} = "
                                           "%{customdata[1]:.3f}") + "<extra></extra>"}], {
        "title": {"text": html.escape(title, quote=False)}, "height": max(300, 120 + 16 * len(rows)),
        "margin": MARGIN, "xaxis": {"title": {"text": _("hidden unit")}, "type": "category"},
        "yaxis": {"type": "category", "autorange": "reversed", "automargin": True, "dtick": 1}})


def shares_spec(names, parts: dict[str, tuple[list[float], str]], title: str) -> FigureSpec:
    """One horizontal bar per model, split into its modules' shares (parts: a module's label -> its values, one per
    model, and its colour, light: a share of 10 % or more is written on it in dark); each model's bar sums to 100 %."""
    totals = np.sum([values for values, _colour in parts.values()], axis=0)
    bars = [{"type": "bar", "orientation": "h", "y": list(names), "x": np.asarray(values) / totals * 100,
             "name": label, "marker": {"color": colour},
             "text": [f"{v / t:.0%}" if v / t >= 0.1 else "" for v, t in zip(values, totals)],
             "textposition": "inside", "textangle": 0, "insidetextfont": {"color": "#222"},
             "hovertemplate": label + ": %{x:.1f}%<extra></extra>"}
            for label, (values, colour) in parts.items()]
    return FigureSpec(bars, {
        "title": {"text": html.escape(title, quote=False)}, "height": 330, "margin": {**MARGIN, "b": 80},
        "barmode": "stack", "legend": {**LEGEND_BELOW, "y": -0.12, "traceorder": "normal"},
        "xaxis": {"range": [0, 100], "ticksuffix": "%"},
        "yaxis": {"autorange": "reversed", "automargin": True}})
