"""Positional-encoding figures: the table, its sin/cos curves, and the similarity of positions."""
import math

import numpy as np

from locales import _
from viz.colours import DIVERGING
from viz.spec import FigureSpec

MAX_CELLS = 100_000  # per heatmap: about 0.5 MB of JSON, so the page stays a few MB at 2048 x 1024


def stride_for(rows: int, cols: int, max_cells: int = MAX_CELLS) -> int:
    """The smallest step s such that taking every s-th row and column leaves at most max_cells cells."""
    s = 1
    while math.ceil(rows / s) * math.ceil(cols / s) > max_cells:
        s += 1
    return s


def similarity(table, cosine: bool = False) -> np.ndarray:
    """(P, d) -> (P, P) float32 dot products PE @ PE^T (cosine similarities if cosine)."""
    t = np.asarray(table, dtype=np.float64)  # (P, d)
    if cosine:
        norms = np.linalg.norm(t, axis=1, keepdims=True)  # (P, 1)
        t = t / np.where(norms == 0, 1.0, norms)
    return (t @ t.T).astype(np.float32)


def robust_limit(values, percentile: float = 99.0) -> float:
    """A symmetric colour limit at the given percentile of |values|, so a few outliers do not wash out the rest."""
    v = np.abs(np.asarray(values, dtype=np.float32))
    return max(float(np.percentile(v, percentile)) if v.size else 0.0, 1e-6)


def _heatmap_layout(title: str, x_title: str, y_title: str, height: int = 520) -> dict:
    return {"title": {"text": title}, "height": height, "margin": {"l": 10, "r": 10, "t": 50 if title else 10, "b": 10},
            "xaxis": {"title": {"text": x_title}}, "yaxis": {"title": {"text": y_title}, "autorange": "reversed"}}


def table_heatmap(table, positions, dims, title: str = "", limit: float | None = 1.0) -> FigureSpec:
    """table (P, D) of encodings at the given position and dimension numbers; diverging colours in ±limit.

    limit=None: symmetric around 0 at the largest |value| (for learned embeddings, which are not bounded by 1).
    The figures of this module are plotly's dicts (viz.spec): the positional page draws three to five on every
    rerun, and as checked go.Figures they took most of its time.
    """
    z = np.asarray(table, dtype=np.float32)  # (P, D)
    if z.ndim != 2 or z.shape != (len(positions), len(dims)):
        raise ValueError(f"table of shape {z.shape} does not fit {len(positions)} positions x {len(dims)} dims")
    if limit is None:
        limit = max(float(np.abs(z).max()) if z.size else 0.0, 1e-6)
    heat = {
        "type": "heatmap", "z": z, "x": np.asarray(dims, dtype=np.int32), "y": np.asarray(positions, dtype=np.int32),
        "colorscale": DIVERGING, "zmin": -limit, "zmax": limit, "colorbar": {"title": {"text": _("value")}},
        "hovertemplate": _("position %{y}<br>dimension %{x}<br>value = %{z:.4f}") + "<extra></extra>",
    }
    return FigureSpec([heat], _heatmap_layout(title, _("dimension"), _("position")))


def similarity_heatmap(table, positions, title: str = "", cosine: bool = False,
                       limit: float | None = None) -> FigureSpec:
    """Every pair of the given rows of table (P, d): PE @ PE^T (or cosine), diverging colours centred at 0.

    The colour range is ±limit; by default ±1 for cosine, else ± the largest |dot product|.
    """
    z = similarity(table, cosine)  # (P, P)
    if z.shape[0] != len(positions):
        raise ValueError(f"table of {z.shape[0]} rows does not fit {len(positions)} positions")
    if limit is None:
        limit = 1.0 if cosine else max(float(np.abs(z).max()) if z.size else 0.0, 1e-6)
    pos = np.asarray(positions, dtype=np.int32)
    measure = _("cos") if cosine else _("dot")
    heat = {
        "type": "heatmap", "z": z, "x": pos, "y": pos, "colorscale": DIVERGING, "zmin": -limit, "zmax": limit,
        "colorbar": {"title": {"text": measure}},
        "hovertemplate": _("position %{y} · position %{x}<br>{measure} = %{z:.4f}").replace("{measure}", measure)
        + "<extra></extra>",
    }
    layout = _heatmap_layout(title, _("position"), _("position"))
    layout["xaxis"]["constrain"] = "domain"
    layout["yaxis"].update(scaleanchor="x", constrain="domain")  # square cells, without widening the axis range
    return FigureSpec([heat], layout)


def dimension_name(dim: int, d_model: int, base: float) -> str:
    """'dim 4: sin, wavelength 12.6' (even dims are sines, odd ones cosines of the same frequency)."""
    two_i = dim - dim % 2
    wavelength = 2 * math.pi * base ** (two_i / d_model)
    return _("dim {dim}: {wave}, wavelength {wavelength}").format(dim=dim, wave="cos" if dim % 2 else "sin",
                                                                  wavelength=f"{wavelength:.3g}")


def curves_figure(table, dims, d_model: int, base: float, title: str = "") -> FigureSpec:
    """One line per chosen dimension of table (P, d) against position 0..P-1."""
    t = np.asarray(table, dtype=np.float32)  # (P, d)
    positions = np.arange(t.shape[0], dtype=np.int32)
    lines = [{"type": "scatter", "x": positions, "y": t[:, dim], "mode": "lines",
              "name": dimension_name(dim, d_model, base),
              "hovertemplate": _("position %{x}<br>value = %{y:.4f}") + "<extra>" + _("dim {dim}").format(dim=dim)
              + "</extra>"} for dim in dims]
    layout = {"title": {"text": title}, "height": 380, "margin": {"l": 10, "r": 10, "t": 50 if title else 10, "b": 10},
              "xaxis": {"title": {"text": _("position")}}, "yaxis": {"title": {"text": _("PE value")},
                                                                     "range": [-1.1, 1.1]},
              "legend": {"orientation": "h", "y": -0.2}}
    return FigureSpec(lines, layout)
