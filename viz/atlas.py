"""The head atlas's pictures: one small image per head, and the share of attention each special token receives."""
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from locales import _
from viz.mosaic import build_mosaic

THUMBNAIL_PX = 48  # a head's map in the table: long sentences max-pooled to this many pixels


def thumbnails(attentions: np.ndarray, size: int = THUMBNAIL_PX) -> list[list[bytes]]:
    """attentions (layers, heads, T, T) -> [layer][head] a PNG of that head's map (fixed 0..1 colours, max-pooled
    to `size` px for long sentences, a few hundred bytes to 3 KB each)."""
    return [[build_mosaic(attentions[layer:layer + 1, head:head + 1], tile=size).png
             for head in range(attentions.shape[1])] for layer in range(attentions.shape[0])]


def grid_figure(values: np.ndarray, title: str, zmax: float, fmt: str = ".2f") -> go.Figure:
    """values (layers, heads) of one measurement as a layers x heads map, each cell's value written in it; colours
    from 0 to zmax. NaN cells (nothing to measure) are gaps."""
    z = np.asarray(values, dtype=np.float32)
    layers, heads = z.shape
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(heads), y=np.arange(layers), zmin=0.0, zmax=zmax, colorscale="Viridis",
        colorbar={"thickness": 12}, texttemplate="%{z:" + fmt + "}", hoverongaps=False,
        hovertemplate=_("layer %{y}, head %{x}<br>%{z:.4f}<extra></extra>")))
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=max(260, 40 * layers + 120),
                      margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      xaxis={"title": _("head"), "dtick": 1}, yaxis={"title": _("layer"), "dtick": 1,
                                                                     "autorange": "reversed"})
    return fig


def shares_figure(shares: dict[str, np.ndarray], title: str = "") -> go.Figure:
    """shares {token: (layers, heads) in 0..1}: one layers x heads map per special token, side by side, the share
    written in each cell. A head whose cell is near 1 parks its attention on that token (an attention sink)."""
    names = list(shares)
    fig = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=names, horizontal_spacing=0.08)
    for i, name in enumerate(names):
        z = np.asarray(shares[name], dtype=np.float32)
        layers, heads = z.shape
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(heads), y=np.arange(layers), zmin=0.0, zmax=1.0, colorscale="Viridis",
            showscale=i == len(names) - 1, colorbar={"thickness": 12}, texttemplate="%{z:.2f}",
            hovertemplate=_("layer %{y}, head %{x}<br>{token} receives %{z:.3f} of the attention<extra></extra>")
            .replace("{token}", name),
        ), row=1, col=i + 1)
        fig.update_xaxes(title_text=_("head"), dtick=1, row=1, col=i + 1)
        fig.update_yaxes(title_text=_("layer") if i == 0 else None, dtick=1, autorange="reversed", row=1, col=i + 1)
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=max(220, 34 * max(
        (np.shape(v)[0] for v in shares.values()), default=1) + 120), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
