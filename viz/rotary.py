"""RoPE's figures (the Positional encoding page): each dimension pair of a query turning with the position, the pairs'
frequencies, and the score of one query and one key at every pair of positions, rotated against added."""
import html

import numpy as np

from locales import _
from viz.colours import DIVERGING
from viz.spec import FigureSpec

PAIR_COLOURS = ("#3b6ea8", "#e4572e", "#2a9d8f", "#8e6c8a")
MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


def rotation_spec(thetas, pairs, positions: int, title: str) -> FigureSpec:
    """Pair i's unit vector turned to each position m = 0..positions-1 (angle m theta_i): a point per position on the
    unit circle, one colour per pair; thetas (d/2,) the pairs' frequencies."""
    traces = []
    m = np.arange(positions)
    for colour, i in zip(PAIR_COLOURS, pairs):
        angle = m * float(thetas[i])
        traces.append({"type": "scatter", "mode": "lines+markers", "x": np.cos(angle).astype(np.float32),
                       "y": np.sin(angle).astype(np.float32), "name": _("pair {i}").format(i=i),
                       "marker": {"color": colour, "size": 6}, "line": {"color": colour, "width": 1},
                       "customdata": m, "hovertemplate": _("pair {i}, position %{{customdata}}").format(i=i)
                       + "<extra></extra>"})
    return FigureSpec(traces, {
        "title": {"text": html.escape(title, quote=False)}, "height": 460, "margin": MARGIN,
        "xaxis": {"range": [-1.15, 1.15], "scaleanchor": "y", "title": {"text": _("cos(m θᵢ)")}},
        "yaxis": {"range": [-1.15, 1.15], "title": {"text": _("sin(m θᵢ)")}}})


def frequencies_spec(thetas, title: str) -> FigureSpec:
    """Each pair's frequency theta_i = base^(-2i/d) (radians per position), on a log axis."""
    thetas = np.asarray(thetas, dtype=np.float64)
    return FigureSpec([{"type": "scatter", "mode": "lines+markers", "x": np.arange(len(thetas)), "y": thetas,
                        "marker": {"size": 4}, "hovertemplate": _("pair %{x}: θ = %{y:.3g} radians a position, one "
                                                                  "turn every %{customdata:.3g} positions")
                        + "<extra></extra>", "customdata": 2 * np.pi / thetas}], {
        "title": {"text": html.escape(title, quote=False)}, "height": 460, "margin": MARGIN,
        "xaxis": {"title": {"text": _("dimension pair i")}},
        "yaxis": {"title": {"text": _("θᵢ (radians a position)")}, "type": "log"}})


def scores_spec(scores, title: str) -> FigureSpec:
    """(P, P) a query's score with a key, the query at position m (rows) and the key at n (columns)."""
    z = np.asarray(scores, dtype=np.float32)
    limit = max(float(np.abs(z).max()), 1e-6)
    return FigureSpec([{"type": "heatmap", "z": z, "colorscale": DIVERGING, "zmin": -limit, "zmax": limit,
                        "hovertemplate": _("query at %{y}, key at %{x}: %{z:.4f}") + "<extra></extra>"}], {
        "title": {"text": html.escape(title, quote=False)}, "height": 460, "margin": MARGIN,
        "xaxis": {"title": {"text": _("key's position n")}},
        "yaxis": {"title": {"text": _("query's position m")}, "autorange": "reversed"}})
