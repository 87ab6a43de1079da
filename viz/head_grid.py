"""Every head of every layer as one cell of a grid (layers down, heads across): a score per head, on a fixed 0..1
scale. The Ask page's attention sink, the Language model page's induction and previous-token scores."""
import html

import numpy as np

from viz.attention import VIRIDIS
from viz.spec import FigureSpec


def head_grid_spec(scores, title: str, hover: str, layer: str, head: str, height: int = 560) -> FigureSpec:
    """scores (layers, heads) in 0..1; hover: the cell's hover template (%{y} the layer, %{x} the head, %{z} the
    score); layer, head: the axes' titles."""
    scores = np.asarray(scores, dtype=np.float32)
    layers, heads = scores.shape
    return FigureSpec([{
        "type": "heatmap", "z": scores, "x": list(range(heads)), "y": list(range(layers)), "zmin": 0.0, "zmax": 1.0,
        "colorscale": VIRIDIS, "colorbar": {"title": {"text": "p"}}, "hovertemplate": hover + "<extra></extra>"}], {
        "title": {"text": html.escape(title, quote=False)}, "height": height,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "xaxis": {"title": {"text": html.escape(head, quote=False)}, "dtick": 1},
        "yaxis": {"title": {"text": html.escape(layer, quote=False)}, "autorange": "reversed",
                  "dtick": 1 if layers <= 12 else 2}})
