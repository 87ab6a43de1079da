"""The head atlas's pictures: one small image per head, and the share of attention each special token receives."""
import numpy as np

from locales import _
from viz.attention import VIRIDIS
from viz.mosaic import build_mosaic
from viz.spec import FigureSpec, subplots_layout

THUMBNAIL_PX = 48  # a head's map in the table: long sentences max-pooled to this many pixels


def thumbnails(attentions: np.ndarray, size: int = THUMBNAIL_PX) -> list[list[bytes]]:
    """attentions (layers, heads, T, T) -> [layer][head] a PNG of that head's map (fixed 0..1 colours, max-pooled
    to `size` px for long sentences, a few hundred bytes to 3 KB each)."""
    return [[build_mosaic(attentions[layer:layer + 1, head:head + 1], tile=size).png
             for head in range(attentions.shape[1])] for layer in range(attentions.shape[0])]


def grid_figure(values: np.ndarray, title: str, zmax: float, fmt: str = ".2f") -> FigureSpec:
    """values (layers, heads) of one measurement as a layers x heads map, each cell's value written in it; colours
    from 0 to zmax. NaN cells (nothing to measure) are gaps. The figures of this module are plotly's dicts
    (viz.spec)."""
    z = np.asarray(values, dtype=np.float32)
    layers, heads = z.shape
    heat = {"type": "heatmap", "z": z, "x": np.arange(heads), "y": np.arange(layers), "zmin": 0.0, "zmax": zmax,
            "colorscale": VIRIDIS, "colorbar": {"thickness": 12}, "texttemplate": "%{z:" + fmt + "}",
            "hoverongaps": False, "hovertemplate": _("layer %{y}, head %{x}<br>%{z:.4f}<extra></extra>")}
    layout = {"title": {"text": title, "font": {"size": 14}}, "height": max(260, 40 * layers + 120),
              "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "xaxis": {"title": {"text": _("head")}, "dtick": 1},
              "yaxis": {"title": {"text": _("layer")}, "dtick": 1, "autorange": "reversed"}}
    return FigureSpec([heat], layout)


def shares_figure(shares: dict[str, np.ndarray], title: str = "") -> FigureSpec:
    """shares {token: (layers, heads) in 0..1}: one layers x heads map per special token, side by side, the share
    written in each cell. A head whose cell is near 1 parks its attention on that token (an attention sink)."""
    names = list(shares)
    layout = subplots_layout(rows=1, cols=max(1, len(names)), subplot_titles=names, horizontal_spacing=0.08)
    traces = []
    for i, name in enumerate(names):
        z = np.asarray(shares[name], dtype=np.float32)
        layers, heads = z.shape
        axis = "" if i == 0 else str(i + 1)
        traces.append({
            "type": "heatmap", "z": z, "x": np.arange(heads), "y": np.arange(layers), "zmin": 0.0, "zmax": 1.0,
            "colorscale": VIRIDIS, "showscale": i == len(names) - 1, "colorbar": {"thickness": 12},
            "texttemplate": "%{z:.2f}",
            "hovertemplate": _("layer %{y}, head %{x}<br>{token} receives %{z:.3f} of the attention<extra></extra>")
            .replace("{token}", name), "xaxis": "x" + axis, "yaxis": "y" + axis})
        layout["xaxis" + axis].update(title={"text": _("head")}, dtick=1)
        layout["yaxis" + axis].update(dtick=1, autorange="reversed")
        if i == 0:
            layout["yaxis"]["title"] = {"text": _("layer")}
    layout.update(title={"text": title, "font": {"size": 14}}, height=max(220, 34 * max(
        (np.shape(v)[0] for v in shares.values()), default=1) + 120), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return FigureSpec(traces, layout)
