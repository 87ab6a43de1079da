"""The From 2017 to today page's figures (views.pages.modern): a pair's score moved along the text, rotated against
added; a residual vector and its two norms; which query heads share a key/value head."""
import html

import numpy as np

from locales import _
from viz.decoding import BAR_BLUE, CHOSEN_ORANGE
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
