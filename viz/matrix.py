"""A generic matrix heatmap for the step-by-step walk: tokens down, tokens or dimensions across."""
import numpy as np

from locales import _
from viz import wire
from viz.attention import VIRIDIS, axis_labels
from viz.colours import DIVERGING
from viz.spec import FigureSpec

SIGNED_COLORSCALE = DIVERGING  # blue negative, white 0, orange positive (viz.colours)


def window(width: int, start: int, size: int) -> tuple[int, int]:
    """The [lo, hi) slice of at most `size` columns from `start`, moved left so it stays inside `width`."""
    size = min(size, width)
    lo = max(0, min(start, width - size))
    return lo, lo + size


def shape_label(symbols: str, shape) -> str:
    """'(T, d_k) = (11, 32)': the symbolic shape beside the numbers."""
    return f"({symbols}) = ({', '.join(str(int(n)) for n in shape)})"


def signed_limit(z: np.ndarray, percentile: float = 99.0) -> float:
    """Half-width of a colour range centred at 0: a high percentile of |z|, so one outlier cannot wash out the rest."""
    finite = np.abs(z[np.isfinite(z)])
    if finite.size == 0:
        return 1.0
    limit = float(np.percentile(finite, percentile)) if percentile < 100 else float(finite.max())
    return limit or float(finite.max()) or 1.0


def matrix_spec(values, row_labels, col_labels=None, title: str = "", kind: str = "signed", col_offset: int = 0,
                highlight: tuple[int, int] | None = None, percentile: float = 99.0,
                exact_cells: int = wire.EXACT_CELLS) -> FigureSpec:
    """values (R, C) as a heatmap; rows are tokens; columns are tokens, or dimension numbers when col_labels is None.

    kind "signed": diverging colours centred at 0 (range +-percentile of |values|; hover shows the true value);
    kind "probability": fixed 0..1, sent as ten-thousandths above `exact_cells` cells (see viz.wire). NaN cells
    (blocked) are gaps. `highlight` (lo, hi) boxes columns lo..hi-1.

    Plotly's dicts in their final form (viz.spec): the step-by-step page draws sixteen of these on every rerun, and
    building each as a checked go.Figure took 5-6 ms.
    """
    z = np.asarray(values, dtype=np.float32)  # (R, C)
    if z.ndim != 2 or z.shape[0] != len(row_labels) or (col_labels is not None and z.shape[1] != len(col_labels)):
        cols = "dimensions" if col_labels is None else len(col_labels)
        raise ValueError(f"values of shape {z.shape} do not fit {len(row_labels)} rows x {cols} columns")
    if kind not in ("signed", "probability"):
        raise ValueError(f"kind must be 'signed' or 'probability', not {kind!r}")
    dims = col_labels is None
    x = np.arange(col_offset, col_offset + z.shape[1], dtype=np.int32) if dims else axis_labels(col_labels)
    if kind == "probability":
        colors = {"colorscale": VIRIDIS, "zmin": 0.0, "zmax": 1.0}
        if wire.quantized(z, exact_cells):
            colors.update(wire.units_marker(signed=False))
    else:
        limit = signed_limit(z, percentile)
        colors = {"colorscale": SIGNED_COLORSCALE, "zmin": -limit, "zmax": limit}
    hover = (_("token: %{y}<br>dim: %{x}<br>%{z:.4f}<extra></extra>") if dims
             else _("token: %{y}<br>key: %{x}<br>%{z:.4f}<extra></extra>"))
    heat = {"type": "heatmap", "z": z, "x": x, "y": axis_labels(row_labels), "hoverongaps": False,
            "colorbar": {"thickness": 12}, **colors, "hovertemplate": hover}
    rows = z.shape[0]
    layout = {
        "title": {"text": title, "font": {"size": 14}}, "height": max(240, min(700, 18 * rows + 130)),
        "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "xaxis": {"title": {"text": _("dimension") if dims else _("key")}, "type": "linear" if dims else "category",
                  "tickangle": 0 if dims else -60, "side": "bottom"},
        "yaxis": {"autorange": "reversed", "type": "category"},
    }
    if highlight is not None:
        layout["shapes"] = [{"type": "rect", "x0": highlight[0] - 0.5, "x1": highlight[1] - 0.5, "y0": 0, "y1": 1,
                             "yref": "paper", "line": {"color": "black", "width": 2}}]
    return FigureSpec([heat], layout)
